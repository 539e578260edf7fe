package renderer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
)

// What the renderer must know about versions, from the Kubernetes sources
// (SPEC §6): the LeaderMigrationConfiguration API a CCM reads depends on the
// Kubernetes libraries it is built with, and a CCM must not be newer than
// the cluster it runs in.

// LeaderMigrationFeatureGate is the feature gate leader migration needs in
// a 1.21 controller manager, where it is alpha.
const LeaderMigrationFeatureGate = "ControllerManagerLeaderMigration"

// lastInTree is the last Kubernetes minor with the in-tree AWS cloud
// provider: the clusters that migrate run it or an older one.
var lastInTree = version.MajorMinor(1, 26)

func parseVersion(s string) (*version.Version, error) { return version.ParseGeneric(s) }

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
		v.kube, _ = parseVersion(o.KubeVersion)
	}
	if o.CCMVersion != "" {
		v.ccm, _ = parseVersion(o.CCMVersion)
		v.ccmSource = "version " + o.CCMVersion
		return v
	}
	if tag := ImageTag(image); tag != "" {
		if ccm, err := parseVersion(tag); err == nil {
			v.ccm, v.ccmSource = ccm, "image "+image
		}
	}
	return v
}

func minorOf(v *version.Version) string { return fmt.Sprintf("%d.%d", v.Major(), v.Minor()) }

// skew checks the CCM's version against the cluster's: the AWS CCM is
// released per Kubernetes minor and meant to run at the cluster's, and a
// controller manager must never be newer than the API server. It returns
// warnings, or an error when migrate mode would run a CCM newer than the
// cluster and the options do not allow it.
func (v versions) skew(o Options) ([]error, error) {
	if v.ccm == nil {
		return nil, nil
	}
	ccm := version.MajorMinor(v.ccm.Major(), v.ccm.Minor())
	pin := func(minor string) string {
		return fmt.Sprintf("use a CCM release of the cluster's minor, %s (with the upstream chart: --set image.tag=v%s.<patch>)", minor, minor)
	}
	if v.kube == nil {
		if o.Mode == ModeMigrate && ccm.GreaterThan(lastInTree) {
			return []error{errorf("the CCM (%s) is %s, newer than any cluster that can migrate (the in-tree provider ends with %s): "+
				"use a CCM release of your cluster's minor (with the upstream chart, for a %s cluster: --set image.tag=v%s.<patch>); %s checks it",
				v.ccmSource, minorOf(v.ccm), minorOf(lastInTree), minorOf(lastInTree), minorOf(lastInTree), OptKubeVersion)}, nil
		}
		return nil, nil
	}
	kube := version.MajorMinor(v.kube.Major(), v.kube.Minor())
	switch {
	case ccm.GreaterThan(kube) && o.Mode == ModeMigrate && !o.AllowVersionSkew:
		return nil, errorf("the CCM (%s) is %s, newer than the cluster (%s %s): a controller manager must not be "+
			"newer than the API server; %s, or pass %s to render it anyway", v.ccmSource, minorOf(v.ccm), OptKubeVersion, o.KubeVersion, pin(minorOf(kube)), OptAllowVersionSkew)
	case !ccm.EqualTo(kube):
		return []error{errorf("the CCM (%s) is %s and the cluster %s: the AWS CCM is released per Kubernetes minor and meant to run at the cluster's; %s",
			v.ccmSource, minorOf(v.ccm), minorOf(kube), pin(minorOf(kube)))}, nil
	}
	return nil, nil
}
