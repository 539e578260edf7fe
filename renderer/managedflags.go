package renderer

import (
	"strings"
)

// The managed-flag policy: the CCM flags the renderer manages (those every
// render sets, requiredArgs; leader migration's, which follow the mode) and
// what a user's setArgs and removeArgs may do to them. The plan (plan.go)
// writes the flags; Validate and the plan read the user's through
// userFlags.

// The flags the renderer manages.
const (
	flagCloudProvider         = "cloud-provider"
	flagServiceAccountCreds   = "use-service-account-credentials"
	flagCloudRoutes           = "configure-cloud-routes"
	flagEnableLeaderMigration = "enable-leader-migration"
	flagLeaderMigrationConfig = "leader-migration-config"
	flagFeatureGates          = "feature-gates"
	flagLeaseNamespace        = "leader-elect-resource-namespace"
)

// requiredArgs are the flags every rendered CCM runs with. A user may
// change the value of those with a risk (a warning says which) but not of
// those without: the CCM must be the AWS one.
var requiredArgs = []struct {
	name, value string
	risk        string // why another value is unusual; "" when none is allowed
}{
	{name: flagCloudProvider, value: "aws"},
	{name: flagServiceAccountCreds, value: "true", risk: "every CCM controller then runs with the CCM's own service account " +
		"and its permissions, not a service account of its own"},
	{name: flagCloudRoutes, value: "false", risk: "the CCM's route controller then writes pod CIDR routes into the VPC's " +
		"route tables; only clusters whose pod network relies on cloud routes want that"},
}

// userFlags turns SetArgs and RemoveArgs into flag operations, rejecting
// those that contradict each other or undo what the renderer must do.
func (o Options) userFlags() ([]Flag, error) {
	var flags []Flag
	seen := map[string]string{}
	for _, s := range o.SetArgs {
		name, value, ok := strings.Cut(s, "=")
		name = strings.TrimLeft(name, "-")
		if !ok || !validFlagName(name) {
			return nil, usageErrorf(OptSetArgs, "%q: want FLAG=VALUE, e.g. %s", s, OptValue{OptSetArgs, "v=4"})
		}
		if err := checkManaged(OptSetArgs, name, value); err != nil {
			return nil, err
		}
		if prev, dup := seen[name]; dup {
			return nil, usageErrorf(OptSetArgs, "%s is given twice (%s and %s)", name, prev, s)
		}
		seen[name] = s
		flags = append(flags, Flag{Name: name, Value: value})
	}
	for _, s := range o.RemoveArgs {
		name := strings.TrimLeft(s, "-")
		if strings.IndexByte(name, '=') >= 0 || !validFlagName(name) {
			return nil, usageErrorf(OptRemoveArgs, "%q: want a flag name, e.g. %s", s, OptValue{OptRemoveArgs, "v"})
		}
		if prev, dup := seen[name]; dup {
			return nil, usageErrorf(OptRemoveArgs, "%s contradicts %s", s, prev)
		}
		if err := checkManaged(OptRemoveArgs, name, ""); err != nil {
			return nil, err
		}
		seen[name] = s
		flags = append(flags, Flag{Name: name, Remove: true})
	}
	return flags, nil
}

// checkManaged rejects user flags that would undo what the renderer needs.
func checkManaged(opt Opt, name, value string) error {
	for _, r := range requiredArgs {
		if r.name != name {
			continue
		}
		if opt == OptRemoveArgs && r.risk == "" {
			// No other value is allowed: no advice that the next
			// command would refuse.
			return usageErrorf(opt, "%s: the CCM must run with --%s=%s, which the renderer sets; drop this option",
				name, r.name, r.value)
		}
		if opt == OptRemoveArgs {
			return usageErrorf(opt, "%s: the renderer sets --%s=%s; to run the CCM with another value, use %s",
				name, r.name, r.value, OptValue{OptSetArgs, r.name + "=" + otherBool(r.value)})
		}
		if r.risk == "" && value != r.value {
			return usageErrorf(opt, "%s: the CCM must run with --%s=%s on a cluster moving off the in-tree provider; drop this option",
				name, r.name, r.value)
		}
	}
	switch name {
	case flagEnableLeaderMigration, flagLeaderMigrationConfig:
		return usageErrorf(opt, "%s: leader migration follows %s (migrate adds it, install removes it); drop this option", name, OptMode)
	}
	return nil
}

// otherBool is the other boolean value, as a flag's value.
func otherBool(v string) string {
	if v == "true" {
		return "false"
	}
	return "true"
}

func validFlagName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}
