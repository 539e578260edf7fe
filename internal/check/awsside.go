package check

import (
	"context"
	"fmt"
	"slices"
)

// AWSSide is the AWS side of check (check --aws), package awscheck: it
// reads the account into the snapshot, works out once per view what its
// rules share, and checks the AWS rules of Rules. Rules lists them, with
// their areas, symptoms and fixes, so that the areas keep one order, and
// without a Check: the side gives it, by the rule's name. The command that
// assembles check composes the side in (Input.AWSSide); without one, check
// reads and judges the cluster alone.
type AWSSide struct {
	// Collect reads the account into s.AWS, as s.AWSOptions say.
	Collect func(ctx context.Context, s *Snapshot) error
	// NewView works out View.AWSView, when the snapshot has an account.
	NewView func(v *View) any
	// Instances maps each node to the instance the CCM finds for it.
	Instances func(v *View) map[string]string
	// Rules are the Check of each AWS rule, by its name in Rules.
	Rules map[string]func(v *View) []Finding
}

// Validate says whether the side's rules are exactly the AWS rules of
// Rules: a mismatch is a mistake in the program.
func (side *AWSSide) Validate() error {
	var names []string
	for _, r := range Rules {
		if r.Kind != AWSRule {
			continue
		}
		names = append(names, r.Name)
		if side.Rules[r.Name] == nil {
			return fmt.Errorf("check: the AWS side has no rule %q", r.Name)
		}
	}
	for name := range side.Rules {
		if !slices.Contains(names, name) {
			return fmt.Errorf("check: the AWS side's rule %q is no AWS rule of Rules", name)
		}
	}
	return nil
}

// check is the Check of rule r: its own, or for an AWS rule the side's
// (nil without one).
func (s *Snapshot) check(r Rule) func(v *View) []Finding {
	if r.Kind != AWSRule {
		return r.Check
	}
	if s.AWSSide == nil {
		return nil
	}
	return s.AWSSide.Rules[r.Name]
}

// collectAWS reads the account with the snapshot's AWS side, when
// AWSOptions ask for it.
func (s *Snapshot) collectAWS(ctx context.Context) error {
	if s.AWSOptions == nil {
		return nil
	}
	if s.AWSSide == nil {
		return &AWSError{Msg: "this program was built without the AWS side of check (package awscheck)"}
	}
	if err := s.AWSSide.Validate(); err != nil {
		return err
	}
	return s.AWSSide.Collect(ctx, s)
}
