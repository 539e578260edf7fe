package conformance

import "github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"

// The front ends, each run through the table by its own test package with
// its real tool (the package in Where), with what each cannot do.
var (
	PostRenderer = FrontEnd{ID: "PostRenderer", Name: "the Helm 3 post-renderer", Where: "integration/helm3"}
	Helm4Plugin  = FrontEnd{ID: "Helm4Plugin", Name: "the Helm 4 plugin", Where: "integration/helm4"}
	ChartWrapper = FrontEnd{ID: "ChartWrapper", Name: "the chart wrapper (aws-ccm-renderer template)", Where: "integration/wrapper"}
	KRMFunction  = FrontEnd{ID: "KRMFunction", Name: "the KRM function under kustomize", Where: "integration/krm"}
	Overlays     = FrontEnd{ID: "Overlays", Name: "the kustomize overlays", Where: "integration/overlays"}
	ArgoCD       = FrontEnd{ID: "ArgoCD", Name: "the Argo CD plugin", Where: "integration/gitops",
		Quiet: "Argo CD shows a plugin's stderr only when the generation fails: the strict parameter (true by default) makes a warning fail the sync"}
	Helmfile     = FrontEnd{ID: "Helmfile", Name: "helmfile", Where: "integration/gitops"}
	WrapperChart = FrontEnd{ID: "WrapperChart", Name: "the wrapper chart", Where: "integration/wrapperchart", Limits: map[string]Limit{
		"auto install": {Want: Refused, Words: "distro auto needs a node affinity",
			Why: "the upstream chart has no value for a node affinity, which distro auto needs"},
		"rke2 install, chart 0.0.8": {Want: Inexpressible,
			Why: "the wrapper chart's dependency is the upstream chart version it is released with (Chart.lock)"},
		"rke2 install, the CCM of another minor, strict": {Want: Warned, Words: renderer.VerdictSkewInstall.Reason,
			Why: "a chart cannot be strict about a warning: it warns in its notes, which helm install and Rancher's Apps show"},
		"rke2 migrate, the cluster's version not told": {Want: Inexpressible,
			Why: "a chart always sees a cluster version (.Capabilities.KubeVersion: the cluster's, or Helm's assumption in helm template)"},
	}}
	Fleet = FrontEnd{ID: "Fleet", Name: "the Fleet bundle", Where: "e2e/fleet", PinsRelease: true, Guard: true, Limits: fleetLimits()}
)

// FrontEnds lists them.
var FrontEnds = []*FrontEnd{&PostRenderer, &Helm4Plugin, &ChartWrapper, &KRMFunction, &Overlays, &ArgoCD, &Helmfile, &WrapperChart, &Fleet}

// fleetLimits: the example bundle installs, one chart version for every
// cluster, with the CCM release of each cluster's minor label.
func fleetLimits() map[string]Limit {
	l := map[string]Limit{
		"rke2 install, chart 0.0.8": {Want: Inexpressible,
			Why: "one bundle serves every cluster: its chart version is fleet.yaml's helm.version, the same for all"},
		"rke2 install, the CCM of another minor": {Want: Rendered,
			Why: "the bundle deploys the CCM release of the cluster's kubernetes-minor label, never another minor's"},
		"rke2 install, the CCM of another minor, strict": {Want: Rendered,
			Why: "the bundle deploys the CCM release of the cluster's kubernetes-minor label, never another minor's"},
		"kubeadm install, the CCM of a 1.33 cluster": {Want: Rendered, Distro: renderer.DistroAuto,
			Why: "Rancher gives a kubeadm cluster no provider.cattle.io value of its own: it gets the auto component"},
	}
	for _, c := range Cases() {
		if c.Mode == renderer.ModeMigrate {
			l[c.Name] = Limit{Want: Inexpressible,
				Why: "the install bundle skips clusters on the in-tree provider; docs/fleet.md's staged migration moves them with the migrate components"}
		}
	}
	return l
}
