package e2e

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	helmv1 "github.com/k3s-io/helm-controller/pkg/apis/helm.cattle.io/v1"
	"github.com/k3s-io/helm-controller/pkg/controllers/extjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// helmControllerCRD is the HelmChart CRD of the helm-controller release the
// e2e module pins (RKE2 and K3s embed it), read from its module at run time.
func helmControllerCRD(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/k3s-io/helm-controller")
	cmd.Dir = filepath.Join(testtools.Root(), "e2e")
	dir, err := cmd.Output()
	if err != nil {
		t.Fatalf("finding the helm-controller module of the e2e module: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "pkg", "crds", "yaml", "generated", "helm.cattle.io_helmcharts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crds, err := harness.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return crds
}

// docHelmCharts returns the HelmChart manifests docs/wrapper-chart.md shows
// inside an RKE2 cluster's additionalManifest, unindented.
func docHelmCharts(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testtools.Root(), "docs", "wrapper-chart.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		block := m[1]
		i := strings.Index(block, "apiVersion: helm.cattle.io/v1")
		if i < 0 {
			continue
		}
		indent := block[strings.LastIndex(block[:i], "\n")+1 : i]
		var lines []string
		for _, line := range strings.Split(block[i-len(indent):], "\n") {
			lines = append(lines, strings.TrimPrefix(line, indent))
		}
		out = append(out, strings.Join(lines, "\n"))
	}
	if len(out) != 2 {
		t.Fatalf("docs/wrapper-chart.md shows %d HelmChart manifests, want the two of its RKE2 section", len(out))
	}
	return out
}

// TestRKE2HelmChart: the HelmChart manifests of docs/wrapper-chart.md, as
// RKE2's helm-controller (github.com/k3s-io/helm-controller v0.17.9) takes
// them: each decodes strictly into its HelmChart type and is accepted by
// the API server under its CRD with strict field validation; its values,
// as the controller hands them to the install Job (valuesContent as the
// first values file, spec.values converted by its extjson.TryToYAML as the
// second; the file order of setValuesSecret, which is not exported),
// render the wrapper chart (the chart of chartContent: the package, base64)
// with the real Helm 3 into what the distribution and mode mean. What
// helm-controller does after that, a Job running Helm in a pod on a node,
// needs a kubelet and runs only on a real RKE2 node.
func TestRKE2HelmChart(t *testing.T) {
	ctx := context.Background()
	if err := cp.Apply(ctx, helmControllerCRD(t)); err != nil {
		t.Fatal(err)
	}
	if err := cp.WaitServed(ctx, "helm.cattle.io/v1", "helmcharts", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	charts := dyn.Resource(schema.GroupVersionResource{Group: "helm.cattle.io", Version: "v1", Resource: "helmcharts"})
	chartDir := testtools.WrapperChart(t)
	pkgDir := t.TempDir()
	testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "package", chartDir, "--destination", pkgDir)
	pkgs, err := filepath.Glob(filepath.Join(pkgDir, "*.tgz"))
	if err != nil || len(pkgs) != 1 {
		t.Fatalf("helm package wrote %v (%v)", pkgs, err)
	}
	pkg, err := os.ReadFile(pkgs[0])
	if err != nil {
		t.Fatal(err)
	}
	nodes := testtools.Fixtures(t)
	for i, doc := range docHelmCharts(t) {
		doc = regexp.MustCompile(`<base64 of [^>]+>`).ReplaceAllString(doc, base64.StdEncoding.EncodeToString(pkg))
		var hc helmv1.HelmChart
		if err := yaml.UnmarshalStrict([]byte(doc), &hc); err != nil {
			t.Fatalf("HelmChart %d of docs/wrapper-chart.md is not one as helm-controller reads it: %v\n%s", i, err, doc)
		}
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetName(u.GetName() + "-" + string(rune('a'+i)))
		if _, err := charts.Namespace(u.GetNamespace()).Create(ctx, &u, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			t.Fatalf("the API server refuses HelmChart %d of docs/wrapper-chart.md under helm-controller's CRD: %v", i, err)
		}
		t.Cleanup(func() { _ = charts.Namespace(u.GetNamespace()).Delete(ctx, u.GetName(), metav1.DeleteOptions{}) })

		if (hc.Spec.Chart == "") == (hc.Spec.ChartContent == "") {
			t.Fatalf("HelmChart %d: chart %q and chartContent of %d bytes; the docs show one of them", i, hc.Spec.Chart, len(hc.Spec.ChartContent))
		}
		if hc.Spec.Chart != "" && hc.Spec.Chart != "aws-ccm-rancher" {
			t.Errorf("HelmChart %d installs chart %q, not the wrapper chart", i, hc.Spec.Chart)
		}
		// The second manifest elides the rest of the preset it names: a
		// user pastes the whole preset, whose lines the manifest shows.
		if m := regexp.MustCompile(`# (presets/[a-z0-9-]+\.yaml)`).FindStringSubmatch(hc.Spec.ValuesContent); m != nil {
			preset, err := os.ReadFile(filepath.Join(chartDir, m[1]))
			if err != nil {
				t.Fatal(err)
			}
			shown, whole := presetValues(t, hc.Spec.ValuesContent), presetValues(t, string(preset))
			if shown.Distro != whole.Distro || shown.Mode != whole.Mode || !slices.Equal(shown.Chart.Args, whole.Chart.Args) {
				t.Fatalf("HelmChart %d shows %+v, not what %s holds (%+v)", i, shown, m[1], whole)
			}
			hc.Spec.ValuesContent = string(preset)
		}
		dir := t.TempDir()
		args := []string{"template", hc.Name, chartDir, "--namespace", hc.Spec.TargetNamespace}
		for j, values := range []string{hc.Spec.ValuesContent, extjson.TryToYAML(hc.Spec.Values)} {
			if values == "" {
				continue
			}
			path := filepath.Join(dir, []string{"values-0-000-HelmChart-ValuesContent.yaml", "values-0-001-HelmChart-Values.yaml"}[j])
			testtools.WriteFile(t, path, []byte(values))
			args = append(args, "--values", path)
		}
		own := presetValues(t, hc.Spec.ValuesContent)
		if own.Distro != distros.RKE2 || !slices.Contains([]renderer.Mode{renderer.ModeInstall, renderer.ModeMigrate}, own.Mode) {
			t.Fatalf("HelmChart %d: distro %q mode %q, want rke2 in install or migrate mode", i, own.Distro, own.Mode)
		}
		// The cluster the manifest is for: a migration's, or in install
		// mode one of the minor of the CCM it pins (the chart refuses
		// another minor's).
		switch {
		case own.Mode == renderer.ModeMigrate:
			args = append(args, "--kube-version", "v1.26.15")
		case own.Chart.Image.Tag != "":
			args = append(args, "--kube-version", own.Chart.Image.Tag)
		default:
			t.Fatalf("HelmChart %d installs the upstream chart's CCM whatever the cluster's minor: pin aws-cloud-controller-manager.image.tag", i)
		}
		out := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), args...)
		objs, err := manifest.Split(out)
		if err != nil {
			t.Fatal(err)
		}
		testtools.CheckMeaning(t, objs, nodes, own.Distro, own.Mode)
	}

	// A misspelt field (valueContent) is refused by both readers, rather
	// than installing the chart without the values.
	typo := strings.Replace(docHelmCharts(t)[0], "valuesContent:", "valueContent:", 1)
	var hc helmv1.HelmChart
	if err := yaml.UnmarshalStrict([]byte(typo), &hc); err == nil || !strings.Contains(err.Error(), `unknown field "valueContent"`) {
		t.Errorf("helm-controller's type reads a misspelt valuesContent: %v", err)
	}
	var u unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(typo), &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetName("typo")
	_, err = charts.Namespace(u.GetNamespace()).Create(ctx, &u, metav1.CreateOptions{FieldValidation: "Strict"})
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.valueContent"`) {
		t.Errorf("the API server takes a HelmChart with a misspelt valuesContent: %v", err)
	}
}

// wrapperValues are the wrapper chart's values the test reads.
type wrapperValues struct {
	Distro distros.Distro `json:"distro"`
	Mode   renderer.Mode  `json:"mode"`
	Chart  struct {
		Args  []string `json:"args"`
		Image struct {
			Tag string `json:"tag"`
		} `json:"image"`
	} `json:"aws-cloud-controller-manager"`
}

func presetValues(t *testing.T, values string) wrapperValues {
	t.Helper()
	var v wrapperValues
	if err := yaml.Unmarshal([]byte(values), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
