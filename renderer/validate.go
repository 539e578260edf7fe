package renderer

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Validation of the options: each value and their combinations, the first
// problem a *UsageError naming its option, and warnings about values that
// are allowed but unusual. The CCM flags a user sets or removes are held to
// the managed-flag policy (managedflags.go), the target to its parser
// (identify.go).

// Validate checks the options and their combinations. It returns a
// *UsageError naming the first problem.
func (o Options) Validate() error {
	_, err := o.check()
	return err
}

// check validates the options and returns warnings about values that are
// allowed but unusual.
func (o Options) check() (warnings []string, err error) {
	for _, op := range OptionTable {
		for _, v := range op.Text(o) {
			if err := safetext.Check(v); err != nil {
				return nil, &UsageError{Option: op.Opt, Err: err}
			}
		}
	}
	profile, ok := distros.RecordOf(o.Distro)
	if !ok {
		return nil, UnknownValue(OptDistro, string(o.Distro), stringsOf(distros.All), distros.Aliases)
	}
	if o.Mode != ModeInstall && o.Mode != ModeMigrate {
		return nil, UnknownValue(OptMode, string(o.Mode), stringsOf(Modes), nil)
	}
	if !slices.Contains(ModesOf(profile), o.Mode) {
		return nil, usageErrorf(OptMode, "%s: %s %s; its move to the AWS CCM is a switch, step by step in "+
			"`aws-ccm-renderer plan --distro %s`: render with %s", o.Mode, OptValue{OptDistro, string(o.Distro)},
			VerdictNoMigrateMode.Reason, o.Distro, OptValue{OptMode, string(ModeInstall)})
	}
	if o.HostNetwork == nil {
		return nil, usageErrorf(OptHostNetwork, "must be true or false")
	}
	switch o.LeaderMigrationConfig {
	case LeaderMigrationRendered, LeaderMigrationDefault:
	default:
		return nil, UnknownValue(OptLeaderMigrationConfig, o.LeaderMigrationConfig, []string{LeaderMigrationRendered, LeaderMigrationDefault}, nil)
	}
	if errs := validation.IsDNS1123Subdomain(o.LeaderName); len(errs) > 0 {
		return nil, usageErrorf(OptLeaderName, "%q is not a valid Lease name: %s", o.LeaderName, strings.Join(errs, "; "))
	}
	if o.Mode == ModeInstall && o.LeaderName != DefaultLeaderName {
		return nil, usageErrorf(OptLeaderName, "only applies to %s", OptValue{OptMode, string(ModeMigrate)})
	}
	if o.Mode == ModeMigrate && o.LeaderMigrationConfig == LeaderMigrationDefault && o.LeaderName != DefaultLeaderName {
		return nil, usageErrorf(OptLeaderName, "needs the rendered leader migration config, not the built-in default")
	}
	if o.KCMUser == "" {
		return nil, usageErrorf(OptKCMUser, "must not be empty")
	}
	if o.TokenScope != "" && !slices.Contains(TokenScopes, o.TokenScope) {
		return nil, usageErrorf(OptTokenScope, "%q is unknown: use one of %s", o.TokenScope, joinValues(TokenScopes))
	}
	if o.GuardImage != "" {
		if _, err := ParseDigestPinned(o.GuardImage); err != nil {
			return nil, usageErrorf(OptGuardImage, "%v: pin the image by digest (REGISTRY/REPOSITORY@sha256:<64 hex digits>): the guard runs in the CCM's pod with its service account", err)
		}
	}
	if _, err := parseTarget(o.Target); err != nil {
		return nil, err
	}
	for _, v := range []struct {
		opt Opt
		s   string
	}{{OptKubeVersion, o.KubeVersion}, {OptCCMVersion, o.CCMVersion}} {
		if _, err := kubeversion.Parse(v.s); v.s != "" && err != nil {
			return nil, usageErrorf(v.opt, "%v", err)
		}
	}
	flags, err := o.userFlags()
	if err != nil {
		return nil, err
	}
	for _, f := range flags {
		for _, r := range requiredArgs {
			if f.Name == r.name && !f.Remove && f.Value != r.value {
				warnings = append(warnings, fmt.Sprintf("--%s=%s: %s", f.Name, f.Value, r.risk))
			}
		}
	}
	return warnings, nil
}

func joinValues[T ~string](vs []T) string { return strings.Join(stringsOf(vs), ", ") }
