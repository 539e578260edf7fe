package renderer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// What the renderer must know about versions, from the Kubernetes sources:
// the LeaderMigrationConfiguration API a CCM reads depends on the
// Kubernetes libraries it is built with (k8s.io/controller-manager, see
// MigrationAPI), and a CCM must not be newer than the cluster it runs in
// (the version skew policy, kubernetes/website
// content/en/releases/version-skew-policy.md).

// LeaderMigrationFeatureGate is the feature gate leader migration needs in
// a 1.21 controller manager, where it is alpha.
const LeaderMigrationFeatureGate = "ControllerManagerLeaderMigration"

// lastInTree is releases.LastInTreeMinor as a version.
var lastInTree = version.MajorMinor(1, releases.LastInTreeMinor)

// MigrationAPI is a LeaderMigrationConfiguration API version and the first
// Kubernetes minor whose controller managers read it.
type MigrationAPI struct {
	Since       string // "1.22"
	APIVersion  string
	FeatureGate bool // needs LeaderMigrationFeatureGate
	// ResourceLock: the file must say resourceLock: leases. v1alpha1 and
	// v1beta1 have no default for it and ValidateLeaderMigrationConfiguration
	// (k8s.io/controller-manager v0.21–v0.23, pkg/leadermigration/config)
	// rejects an empty value, so the controller manager exits; v1 has no
	// such field (its conversion sets leases).
	ResourceLock bool
}

// MigrationAPIs are the versions, oldest first: v1alpha1 from 1.21 (behind
// the feature gate), v1beta1 from 1.22, v1 from 1.24. A CCM older than the
// first has no leader migration.
var MigrationAPIs = []MigrationAPI{
	{Since: "1.21", APIVersion: "controllermanager.config.k8s.io/v1alpha1", FeatureGate: true, ResourceLock: true},
	{Since: "1.22", APIVersion: "controllermanager.config.k8s.io/v1beta1", ResourceLock: true},
	{Since: "1.24", APIVersion: "controllermanager.config.k8s.io/v1"},
}

// MigrationAPIOf returns the entry of MigrationAPIs for a
// LeaderMigrationConfiguration apiVersion; false when none has it.
func MigrationAPIOf(apiVersion string) (MigrationAPI, bool) {
	for _, a := range MigrationAPIs {
		if a.APIVersion == apiVersion {
			return a, true
		}
	}
	return MigrationAPI{}, false
}

// migrationAPI returns the newest LeaderMigrationConfiguration API a CCM of
// version v reads.
func migrationAPI(v *version.Version) (MigrationAPI, error) {
	var api MigrationAPI
	for _, a := range MigrationAPIs {
		if v.AtLeast(version.MustParseGeneric(a.Since)) {
			api = a
		}
	}
	if api.APIVersion == "" {
		return api, fmt.Errorf("has no leader migration (it came with Kubernetes %s): "+
			"migrate with a CCM of the cluster's minor version, %s or later", MigrationAPIs[0].Since, MigrationAPIs[0].Since)
	}
	return api, nil
}

// versions are the CCM's and the cluster's, as far as known.
type versions struct {
	ccm, kube *version.Version
	ccmSource string // where the CCM's version comes from, for messages
}

// ccmVersion reads the CCM's version from the override or its image tag;
// nil when neither tells.
func ccmVersion(o Options, image string) versions {
	var v versions
	if o.KubeVersion != "" {
		v.kube, _ = kubeversion.Parse(o.KubeVersion)
	}
	if o.CCMVersion != "" {
		v.ccm, _ = kubeversion.Parse(o.CCMVersion)
		v.ccmSource = "version " + o.CCMVersion
		return v
	}
	if tag := ImageTag(image); tag != "" {
		if ccm, err := kubeversion.Parse(tag); err == nil {
			v.ccm, v.ccmSource = ccm, "image "+image
		}
	}
	return v
}

func minorOf(v *version.Version) string { return fmt.Sprintf("%d.%d", v.Major(), v.Minor()) }

// pin says what to pin for a cluster of the given minor.
func pin(minor uint) string {
	tag := releases.Tag(int(minor))
	return fmt.Sprintf("pin the CCM release of the cluster's minor, %s (with the upstream chart: --set image.tag=%s)", tag, releases.PinHint(tag))
}

// skew checks the CCM's version against the cluster's: the AWS CCM is
// released per Kubernetes minor and meant to run at the cluster's, and a
// leader migration hands the in-tree controllers of a cluster of 1.26 or
// older over to a CCM of the cluster's minor. In migrate mode it refuses,
// unless the options allow skew, a CCM of another minor than the cluster's
// (when the cluster's version is known), a CCM newer than any cluster that
// can migrate (when it is not) and a cluster with no in-tree provider; in
// install mode a CCM of another minor is a warning.
func (v versions) skew(o Options) ([]error, error) {
	if v.ccm == nil {
		return nil, nil
	}
	ccm := version.MajorMinor(v.ccm.Major(), v.ccm.Minor())
	migrate := o.Mode == ModeMigrate
	// refuse returns the problem as the error, or as a warning when the
	// options allow skew.
	refuse := func(format string, args ...any) ([]error, error) {
		if o.AllowVersionSkew {
			return []error{errorf(format+" (rendered anyway: %s)", append(args, OptAllowVersionSkew)...)}, nil
		}
		return nil, errorf(format+", or pass %s to render it anyway", append(args, OptAllowVersionSkew)...)
	}
	if v.kube == nil {
		if migrate && ccm.GreaterThan(lastInTree) {
			tag := releases.Tag(releases.LastInTreeMinor)
			return refuse("the CCM (%s) is %s, %s (the in-tree AWS provider ends with %s): "+
				"pin the CCM release of the cluster's minor (for a %s cluster %s, with the upstream chart: --set image.tag=%s) and give the cluster's version with %s",
				v.ccmSource, minorOf(v.ccm), VerdictClusterUnknown.Reason, minorOf(lastInTree), minorOf(lastInTree), tag, releases.PinHint(tag), OptKubeVersion)
		}
		return nil, nil
	}
	kube := version.MajorMinor(v.kube.Major(), v.kube.Minor())
	switch {
	case migrate && kube.GreaterThan(lastInTree):
		return refuse("the cluster (%s %s) is %s and %s (it ends with %s): use %s",
			OptKubeVersion, o.KubeVersion, minorOf(kube), VerdictNoInTree.Reason, minorOf(lastInTree), OptValue{OptMode, string(ModeInstall)})
	case !ccm.EqualTo(kube) && migrate:
		return refuse("the CCM (%s) is %s and the cluster (%s %s) %s: %s; %s",
			v.ccmSource, minorOf(v.ccm), OptKubeVersion, o.KubeVersion, minorOf(kube), VerdictSkewMigrate.Reason, pin(kube.Minor()))
	case !ccm.EqualTo(kube):
		return []error{errorf("the CCM (%s) is %s and the cluster %s: %s; %s",
			v.ccmSource, minorOf(v.ccm), minorOf(kube), VerdictSkewInstall.Reason, pin(kube.Minor()))}, nil
	}
	return nil, nil
}
