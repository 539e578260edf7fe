package renderer

import (
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// The plan: the ordered filters that patch the targets, built from the
// options, the distribution's profile and what identification found. Each
// filter is a kio.Filter in a file of its own; a step says which targets it
// runs on. To add a patch, write its filter and add its step here.

// stage says which targets a step's filter gets.
type stage int

const (
	onWorkload  stage = iota // the CCM's DaemonSet or Deployment
	onRole                   // the role the access decision patches in place
	onNarrowed               // the roles whose token grant the access decision narrows or restores
	onGenerated              // the objects earlier renders generated: the generators keep, replace, add or remove them
)

type step struct {
	name   string
	on     stage
	filter kio.Filter
}

// plan returns the steps for the targets, and warnings about the versions.
func (r *Renderer) plan(t *targets, warn func(error)) ([]step, error) {
	o := r.opts
	w := Workload{Containers: t.containers}
	v := ccmVersion(o, t.image)
	warnings, err := v.skew(o)
	if err != nil {
		return nil, t.workload.errorf("%w", err)
	}
	for _, w := range warnings {
		warn(w)
	}
	migrate := o.Mode == ModeMigrate
	rendered := migrate && o.LeaderMigrationConfig == LeaderMigrationRendered
	var api MigrationAPI
	if migrate {
		if v.ccm == nil {
			if rendered {
				return nil, t.workload.errorf("cannot tell the CCM's version from its image %q, and the leader migration configuration's "+
					"API version depends on it: pass the CCM's version with %s", t.image, OptValue{OptCCMVersion, releases.Tag(releases.LastInTreeMinor)})
			}
		} else if api, err = migrationAPI(v.ccm); err != nil {
			return nil, t.workload.errorf("the CCM (%s) %w", v.ccmSource, err)
		}
	}

	flags := make([]Flag, 0, len(requiredArgs)+3)
	risks := map[string]string{}
	for _, a := range requiredArgs {
		flags = append(flags, Flag{Name: a.name, Value: a.value})
		if a.risk != "" {
			risks[a.name] = a.risk
		}
	}
	gateEntry := Flag{Name: flagFeatureGates, Value: LeaderMigrationFeatureGate + "=true", Entries: true}
	switch {
	case !migrate:
		flags = append(flags, Flag{Name: flagEnableLeaderMigration, Remove: true}, Flag{Name: flagLeaderMigrationConfig, Remove: true})
		gateEntry.Remove = true
	case rendered:
		flags = append(flags, Flag{Name: flagEnableLeaderMigration, Value: "true"}, Flag{Name: flagLeaderMigrationConfig, Value: LeaderMigrationConfigPath})
	default:
		flags = append(flags, Flag{Name: flagEnableLeaderMigration, Value: "true"}, Flag{Name: flagLeaderMigrationConfig, Remove: true})
	}
	if !api.FeatureGate {
		gateEntry.Remove = true
	}
	flags = append(flags, gateEntry)
	user, err := o.userFlags()
	if err != nil {
		return nil, err
	}
	leaseNamespace := releases.LeaseNamespace
	if ns, ok := flagValue(MergeArgs(t.flags, append(flags, user...)), flagLeaseNamespace); ok && ns != "" {
		leaseNamespace = ns
	}
	guard := Guard{Image: o.GuardImage, Mode: o.Mode}
	if o.GuardImage != "" {
		if v.ccm == nil {
			return nil, t.workload.errorf("cannot tell the CCM's version from its image %q, and the guard judges it against the cluster's: pass the CCM's version with %s",
				t.image, OptValue{OptCCMVersion, releases.Newest()})
		}
		guard.CCMVersion = "v" + v.ccm.String()
	}
	workload := *t.workload.ref()
	account := ObjectRef{Kind: "ServiceAccount", Namespace: t.account.namespace, Name: t.account.name}
	steps := []step{
		{"record options", onWorkload, RecordOptions{Options: o}},
		{"placement", onWorkload, Placement{Record: r.profile}},
		{"tolerations", onWorkload, Tolerations{Tolerations: r.profile.Tolerations}},
		{"host network", onWorkload, HostNetwork{Enabled: *o.HostNetwork}},
		{"args", onWorkload, Args{Workload: w, Flags: flags, User: user, Risks: risks, Warn: warn}},
		{"leader migration mount", onWorkload, LeaderMigrationMount{Workload: w, Mount: rendered}},
		{"leader migration config", onGenerated, LeaderMigrationConfigMap{Want: rendered, Workload: workload, LeaderName: o.LeaderName, APIVersion: api.APIVersion}},
		{"migration lease RBAC", onGenerated, MigrationLeaseRBAC{Want: migrate, Workload: workload, Namespace: leaseNamespace, LeaderName: o.LeaderName, User: o.KCMUser}},
		{"service account RBAC", onGenerated, AccountRBAC{Want: t.access.dedicated, Account: account, Permissions: t.access.missing}},
		{"token RBAC", onGenerated, TokenRBAC{Want: o.narrow(), Account: account}},
		{"guard", onWorkload, guard},
		{"guard RBAC", onGenerated, GuardRBAC{Want: o.GuardImage != "", Account: account}},
	}
	if len(t.access.narrow) > 0 {
		steps = append(steps, step{"narrow token grant", onNarrowed, NarrowTokens{Narrow: o.narrow()}})
	}
	if t.access.patch != nil {
		steps = append(steps, step{"RBAC", onRole, RBAC{Permissions: t.access.missing}})
	}
	return steps, nil
}
