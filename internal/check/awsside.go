package check

import (
	"context"
	"fmt"
	"slices"
)

// AWSSide is the AWS side of check (check --aws), package awscheck: it
// reads the account into the snapshot, works out once per view what its
// rules share, and checks the AWS rules of Rules. Rules lists them, with
// their areas, symptoms and fixes, so that the areas keep one order; their
// Check is nil until awscheck registers (RegisterAWS, from its init), and
// Evaluate skips a nil one: without awscheck linked in, check reads and
// judges the cluster alone.
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

// awsSide is the registered AWS side; nil when nothing registered one.
var awsSide *AWSSide

// RegisterAWS registers the AWS side: it gives each AWS rule of Rules its
// Check. It panics when the side's rules are not exactly those, which is a
// mistake in the program.
func RegisterAWS(side *AWSSide) {
	var names []string
	for _, r := range Rules {
		if r.Kind != AWSRule {
			continue
		}
		names = append(names, r.Name)
		if side.Rules[r.Name] == nil {
			panic(fmt.Sprintf("check: the AWS side has no rule %q", r.Name))
		}
	}
	for name := range side.Rules {
		if !slices.Contains(names, name) {
			panic(fmt.Sprintf("check: the AWS side's rule %q is no AWS rule of Rules", name))
		}
	}
	for i := range Rules {
		if Rules[i].Kind == AWSRule {
			Rules[i].Check = side.Rules[Rules[i].Name]
		}
	}
	awsSide = side
}

// collectAWS reads the account with the registered AWS side, when
// AWSOptions ask for it.
func (s *Snapshot) collectAWS(ctx context.Context) error {
	if s.AWSOptions == nil {
		return nil
	}
	if awsSide == nil {
		return &AWSError{Msg: "this program was built without the AWS side of check (package awscheck)"}
	}
	return awsSide.Collect(ctx, s)
}
