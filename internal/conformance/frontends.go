package conformance

import (
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The front ends, each run through the table by its own test package with
// its real tool (the package in Where), with what each cannot do.
var (
	PostRenderer = FrontEnd{ID: "PostRenderer", Name: "the Helm 3 post-renderer", Where: "integration/helm3"}
	Helm4Plugin  = FrontEnd{ID: "Helm4Plugin", Name: "the Helm 4 plugin", Where: "integration/helm4",
		TerminalOnly: "Helm 4 shows a post-renderer plugin's stderr nowhere (it says the plugin exited with error): the renderer writes its refusal to the terminal, and without one (CI) only its exit code tells"}
	ChartWrapper = FrontEnd{ID: "ChartWrapper", Name: "the chart wrapper (aws-ccm-renderer template)", Where: "integration/wrapper"}
	KRMFunction  = FrontEnd{ID: "KRMFunction", Name: "the KRM function under kustomize", Where: "integration/krm"}
	Overlays     = FrontEnd{ID: "Overlays", Name: "the kustomize overlays", Where: "integration/overlays",
		Pins: ClusterRelease, Limit: overlaysLimit}
	ArgoCD = FrontEnd{ID: "ArgoCD", Name: "the Argo CD plugin", Where: "integration/gitops",
		Quiet: "Argo CD shows a plugin's stderr only when the generation fails: the strict parameter (true by default) makes a warning fail the sync",
		Limit: func(c Case) (Limit, bool) {
			if c.Kind == MigrateUnknown {
				return Limit{Want: Inexpressible, Why: "Argo CD's repo server always sends the destination cluster's version (KUBE_VERSION)"}, true
			}
			return Limit{}, false
		}}
	Helmfile     = FrontEnd{ID: "Helmfile", Name: "helmfile", Where: "integration/gitops"}
	WrapperChart = FrontEnd{ID: "WrapperChart", Name: "the wrapper chart", Where: "integration/wrapperchart",
		Pins: func(c Case) string {
			if c.Mode == renderer.ModeMigrate {
				return releases.Pin(releases.Tag(releases.LastInTreeMinor)) // the migrate preset's
			}
			return ""
		}, Limit: wrapperChartLimit,
		Unrecorded: "the upstream chart has no value for the DaemonSet's annotations: the options the renderer records there (aws-ccm-renderer.io/options) are missing"}
	Fleet = FrontEnd{ID: "Fleet", Name: "the Fleet bundle", Where: "e2e/fleet",
		Pins: ClusterRelease, Guard: true, Limit: fleetLimit}
)

// FrontEnds lists them.
var FrontEnds = []*FrontEnd{&PostRenderer, &Helm4Plugin, &ChartWrapper, &KRMFunction, &Overlays, &ArgoCD, &Helmfile, &WrapperChart, &Fleet}

const pinned = "the CCM release of the cluster's minor, never another minor's"

// overlaysLimit: the components, generated with the cluster's version, pin
// the CCM release of its minor.
func overlaysLimit(c Case) (Limit, bool) {
	switch c.Kind {
	case InstallSkew, InstallSkewStrict, MigrateSkew:
		return Limit{Want: Rendered, Why: "a component generated with --kube-version patches in " + pinned}, true
	case MigrateUnknown:
		return Limit{Want: Rendered, Why: "a migrate component generated without --kube-version patches in the CCM release of the last minor with the in-tree provider"}, true
	}
	return Limit{}, false
}

// wrapperChartLimit: the wrapper chart is the upstream chart of its
// release with a preset per distribution and mode, checked by templates.
func wrapperChartLimit(c Case) (Limit, bool) {
	switch {
	case c.Distro == distros.Auto:
		return Limit{Want: Refused, Words: "distro auto needs a node affinity",
			Why: "the upstream chart has no value for a node affinity, which distro auto needs"}, true
	case c.Kind == InstallOlder:
		return Limit{Want: Inexpressible, Why: "the wrapper chart's dependency is the upstream chart version it is released with (Chart.lock)"}, true
	case c.Kind == InstallSkew:
		return Limit{Want: Refused, Words: renderer.VerdictSkewInstall.Reason,
			Why: "as with --strict, naming the tag to set: a chart's notes reach no one where charts install with values alone (an RKE2 HelmChart); " +
				"allowVersionSkew renders it, and the notes warn"}, true
	case c.Kind == MigrateSkew:
		return Limit{Want: Rendered, Why: "the migrate preset pins " + pinned}, true
	case c.Kind == MigrateUnknown:
		return Limit{Want: Inexpressible,
			Why: "a chart always sees a cluster version (.Capabilities.KubeVersion: the cluster's, or Helm's assumption in helm template)"}, true
	}
	return Limit{}, false
}

// fleetLimit: the example bundle installs, one chart version for every
// cluster, with the CCM release of each cluster's minor label and the
// component of its Rancher provider label.
func fleetLimit(c Case) (Limit, bool) {
	p, _ := distros.RecordOf(c.Distro)
	switch {
	case c.Mode == renderer.ModeMigrate:
		return Limit{Want: Inexpressible,
			Why: "the install bundle skips clusters on the in-tree provider; docs/fleet.md's staged migration moves them with the migrate components"}, true
	case c.Kind == InstallOlder:
		return Limit{Want: Inexpressible, Why: "one bundle serves every cluster: its chart version is fleet.yaml's helm.version, the same for all"}, true
	case c.Kind == InstallSkew || c.Kind == InstallSkewStrict:
		return Limit{Want: Rendered, Why: "the bundle deploys, by the cluster's kubernetes-minor label, " + pinned}, true
	case c.Distro != distros.Auto && p.RancherProvider == "":
		return Limit{Want: Rendered, Distro: distros.Auto,
			Why: "its record names no value of Rancher's provider.cattle.io label for the example's customizations to select: its clusters get the auto component"}, true
	}
	return Limit{}, false
}
