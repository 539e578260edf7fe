package gitops

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance/conformancetest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestArgoCDConformance runs the conformance table through the example
// Argo CD plugin's generate command, with the Application's parameters
// and the destination cluster's version as Argo CD's repo server sends
// them. The chart is a package in the source directory (no network here).
func TestArgoCDConformance(t *testing.T) {
	conformancetest.Run(t, conformance.ArgoCD, func(t *testing.T, c conformance.Case) conformancetest.Result {
		pkg, err := os.ReadFile(testtools.UpstreamChart(t, c.ChartVersion))
		if err != nil {
			t.Fatal(err)
		}
		chart := "upstream/aws-cloud-controller-manager-" + c.ChartVersion + ".tgz"
		params := []argoParam{
			{Name: "distro", String: str(string(c.Distro))}, {Name: "mode", String: str(string(c.Mode))},
			{Name: "chart", String: str(chart)}, {Name: "chart-version", String: str(c.ChartVersion)},
			{Name: "strict", String: str(strconv.FormatBool(c.Strict))},
		}
		if c.CCMTag != "" {
			params = append(params, argoParam{Name: "helm-set", Array: []string{"image.tag=" + c.CCMTag}})
		}
		var r conformancetest.Result
		r.Stdout, r.Stderr, r.Err = cmpRun{params: params, kube: c.KubeVersion, files: map[string]string{chart: string(pkg)}}.run(t)
		return r
	})
}

// TestHelmfileConformance runs the conformance table through helmfile
// with the example helmfile.yaml.gotmpl, the case given as state values.
func TestHelmfileConformance(t *testing.T) {
	url := testtools.LoopbackChartRepoOf(t, testtools.ChartVersions...)
	file := exampleDir("helmfile", "helmfile.yaml.gotmpl")
	conformancetest.Run(t, conformance.Helmfile, func(t *testing.T, c conformance.Case) conformancetest.Result {
		// Each case its own Helm homes: helmfile's helm repo add rewrites
		// Helm's repositories.yaml, which the table's parallel cases
		// shared.
		env := helmfileEnv(t)
		state := map[string]any{"repo": url, "distro": c.Distro, "mode": c.Mode, "kubeVersion": c.KubeVersion, "chartVersion": c.ChartVersion}
		if c.CCMTag != "" {
			state["values"] = map[string]any{"image": map[string]any{"tag": c.CCMTag}}
		}
		if c.Strict {
			state["rendererArgs"] = []string{"--strict"}
		}
		b, err := yaml.Marshal(state)
		if err != nil {
			t.Fatal(err)
		}
		values := filepath.Join(t.TempDir(), "state.yaml")
		testtools.WriteFile(t, values, b)
		return conformancetest.Command(t, env, testtools.Helmfile(t), "--file", file, "--state-values-file", values, "template")
	})
}
