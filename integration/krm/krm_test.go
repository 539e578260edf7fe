// Package krm tests the KRM function (aws-ccm-renderer fn) from the real
// kustomize CLI: options from a ConfigMap or a RendererConfig, output over
// rendered charts, errors as results, the example in examples/krm.
package krm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

var (
	latestOutputOnce sync.Once
	latestOutput     []byte
)

// latestChartOutput is `helm template` of the latest upstream chart with its
// defaults, computed once.
func latestChartOutput(t *testing.T) []byte {
	t.Helper()
	latestOutputOnce.Do(func() {
		latestOutput = testtools.HelmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), nil)
	})
	if latestOutput == nil {
		t.Fatal("helm template of the latest chart failed")
	}
	return latestOutput
}

// pinnedChartOutput is the latest chart's output with the CCM a migration
// pins, of the last minor that migrates.
func pinnedChartOutput(t *testing.T) []byte {
	t.Helper()
	return testtools.HelmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), nil,
		"--set", "image.tag="+releases.Tag(releases.LastInTreeMinor))
}

// TestKRMFunctionMigrateRefusals: from the real kustomize CLI, the
// function refuses in migrate mode what would break a migration: kustomize
// fails with the function's one line and prints nothing.
func TestKRMFunctionMigrateRefusals(t *testing.T) {
	for _, c := range []struct {
		name, fc string
		pinned   bool
		want     string
	}{
		{"the chart's CCM (1.35) on a 1.26 cluster", rendererConfigFC("distro: rke2\nmode: migrate\nkubeVersion: v1.26.15\n"), false,
			"the CCM (image registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0) is 1.35 and the cluster (kubeVersion v1.26.15) 1.26: " +
				"a migration runs the CCM of the cluster's minor; pin the CCM release of the cluster's minor, v1.26.14 (with the upstream chart: --set image.tag=" + releases.Pin("v1.26.14") + "), or pass allowVersionSkew to render it anyway"},
		{"the chart's CCM (1.35), the cluster not told", configMapFC("  distro: rke2\n  mode: migrate\n"), false, "newer than any cluster that can migrate"},
		{"a 1.26 CCM on a 1.25 cluster", configMapFC("  mode: migrate\n  kubeVersion: 1.25.16\n"), true, "is 1.26 and the cluster (kubeVersion 1.25.16) 1.25"},
		{"K3s", configMapFC("  distro: k3s\n  mode: migrate\n"), true, "mode migrate: distro: k3s has no migrate mode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := latestChartOutput(t)
			if c.pinned {
				in = pinnedChartOutput(t)
			}
			out, errOut, err := kustomizeBuild(t, kustomizeDir(t, in, c.fc))
			if err == nil || len(out) != 0 || !strings.Contains(string(errOut), "aws-ccm-renderer: ") || !strings.Contains(string(errOut), c.want) {
				t.Errorf("kustomize build: %v, %d bytes on stdout, stderr %s; want the refusal %q", err, len(out), errOut, c.want)
			}
		})
	}
}

// kustomizeDir writes a kustomization whose resources are input and which
// runs the renderer on them as an exec transformer configured by
// functionConfig (a YAML document without the function annotation).
func kustomizeDir(t *testing.T, input []byte, functionConfig string) string {
	t.Helper()
	dir := t.TempDir()
	annotation := "  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + testtools.Renderer(t) + "\n        args: [fn]\n"
	fc := strings.Replace(functionConfig, "metadata:\n", "metadata:\n"+annotation, 1)
	testtools.WriteFile(t, filepath.Join(dir, "ccm.yaml"), input)
	testtools.WriteFile(t, filepath.Join(dir, "aws-ccm.yaml"), []byte(fc))
	testtools.WriteFile(t, filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- ccm.yaml\ntransformers:\n- aws-ccm.yaml\n"))
	return dir
}

func kustomizeBuild(t *testing.T, dir string) ([]byte, []byte, error) {
	t.Helper()
	return testtools.Run(t, testtools.HelmEnv(t), testtools.Kustomize(t), "build", "--enable-alpha-plugins", "--enable-exec", dir)
}

func configMapFC(data string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aws-ccm\ndata:\n" + data
}

func rendererConfigFC(fields string) string {
	return "apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\nmetadata:\n  name: aws-ccm\n" + fields
}

// checkNoBookkeeping: kustomize's output carries none of the KRM protocol's
// annotations.
func checkNoBookkeeping(t *testing.T, objs []manifest.Object) {
	t.Helper()
	for _, o := range objs {
		annotations, _ := manifest.Get(o.Doc, "metadata", "annotations").(map[string]any)
		for k := range annotations {
			if strings.Contains(k, "config.kubernetes.io/") || strings.Contains(k, "config.k8s.io/") {
				t.Errorf("%s carries the bookkeeping annotation %s", o.ID(), k)
			}
		}
	}
}

// TestKRMFunctionWithKustomize runs `aws-ccm-renderer fn` from the real
// kustomize CLI as an exec transformer over the latest chart's output,
// configured by a ConfigMap and by a RendererConfig, for every distro and
// mode.
func TestKRMFunctionWithKustomize(t *testing.T) {
	nodes := testtools.Fixtures(t)
	input := latestChartOutput(t)
	plain, err := manifest.Split(input)
	if err != nil {
		t.Fatal(err)
	}
	// A migration pins the CCM of the cluster's minor and says the
	// cluster's version.
	pinned := pinnedChartOutput(t)
	pinnedObjs, err := manifest.Split(pinned)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range distros.All {
		p, _ := distros.RecordOf(d)
		for _, mode := range renderer.ModesOf(p) {
			configs := map[string]string{
				"ConfigMap":      configMapFC("  distro: " + string(d) + "\n  mode: " + string(mode) + "\n"),
				"RendererConfig": rendererConfigFC("distro: " + string(d) + "\nmode: " + string(mode) + "\n"),
			}
			in, plain := input, plain
			if mode == renderer.ModeMigrate {
				in, plain = pinned, pinnedObjs
				configs["ConfigMap"] += "  kubeVersion: v1.26.15\n"
				configs["RendererConfig"] += "kubeVersion: v1.26.15\n"
			}
			for kind, fc := range configs {
				t.Run(string(d)+"-"+string(mode)+"/"+kind, func(t *testing.T) {
					t.Parallel()
					out, errOut, err := kustomizeBuild(t, kustomizeDir(t, in, fc))
					if err != nil {
						t.Fatalf("kustomize build: %v\n%s", err, errOut)
					}
					testtools.CheckStderr(t, string(errOut), mode)
					objs, err := manifest.Split(out)
					if err != nil {
						t.Fatal(err)
					}
					testtools.CheckMeaning(t, objs, nodes, d, mode)
					testtools.CheckUntouchedData(t, plain, objs)
					checkNoBookkeeping(t, objs)
				})
			}
		}
	}
}

// TestKRMFunctionOverRenderedOutput: kustomize resources that are already a
// migrate render (committed output, say) go through the function in install
// mode without the leader migration, and in migrate mode with its
// ConfigMap once.
func TestKRMFunctionOverRenderedOutput(t *testing.T) {
	nodes := testtools.Fixtures(t)
	migrated := testtools.HelmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), []string{"--distro=rke2", "--mode=migrate"},
		"--set", "image.tag="+releases.Tag(releases.LastInTreeMinor))
	for _, mode := range renderer.Modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			out, errOut, err := kustomizeBuild(t, kustomizeDir(t, migrated, configMapFC("  distro: rke2\n  mode: "+string(mode)+"\n")))
			if err != nil {
				t.Fatalf("kustomize build: %v\n%s", err, errOut)
			}
			objs, err := manifest.Split(out)
			if err != nil {
				t.Fatal(err)
			}
			testtools.CheckMeaning(t, objs, nodes, distros.RKE2, mode)
			checkNoBookkeeping(t, objs)
		})
	}
}

// TestKRMFunctionErrors: a bad functionConfig or input fails the kustomize
// build with the renderer's one-line message on stderr and nothing on
// stdout.
func TestKRMFunctionErrors(t *testing.T) {
	input := latestChartOutput(t)
	for name, c := range map[string]struct {
		input []byte
		fc    string
		want  string
	}{
		"unknown distro":      {input, configMapFC("  distro: bogus\n"), `aws-ccm-renderer: functionConfig ConfigMap aws-ccm: distro "bogus" is unknown: use one of auto, rke, rke2, k3s, kubeadm`},
		"unknown key":         {input, configMapFC("  distros: rke\n"), "aws-ccm-renderer: functionConfig ConfigMap aws-ccm: data.distros: unknown key"},
		"unknown field":       {input, rendererConfigFC("distros: rke\n"), `aws-ccm-renderer: functionConfig RendererConfig aws-ccm: line 2: unknown key "distros" (did you mean distro?); the keys: apiVersion, kind, metadata, distro,`},
		"contradictory flags": {input, configMapFC("  setArgs: v=1\n  removeArgs: v\n"), "removeArgs v contradicts v=1"},
		"no CCM in the input": {[]byte("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: x\n"), configMapFC("  distro: rke2\n"),
			"aws-ccm-renderer: no AWS cloud-controller-manager DaemonSet or Deployment among the 1 objects of the input (the CCM is recognised by its executable aws-cloud-controller-manager or its image .../provider-aws/cloud-controller-manager); name an unusual build with target: KIND/NAMESPACE/NAME, or pass allowMissingWorkload: true"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, errOut, err := kustomizeBuild(t, kustomizeDir(t, c.input, c.fc))
			if testtools.ExitCode(err) < 1 {
				t.Fatalf("kustomize build: %v, want a failure; stdout:\n%s", err, out)
			}
			if len(out) != 0 {
				t.Errorf("stdout is not empty:\n%s", out)
			}
			if !strings.Contains(string(errOut), c.want) {
				t.Errorf("stderr does not say %q:\n%s", c.want, errOut)
			}
		})
	}
}

// TestKRMExample runs examples/krm as its README says, from a copy of the
// repository's layout: the example's files as they are, its input generated
// by helm template, and the renderer at bin/aws-ccm-renderer, where the
// example's relative exec path (../../bin/aws-ccm-renderer) points.
func TestKRMExample(t *testing.T) {
	root := t.TempDir()
	example := filepath.Join(root, "examples", "krm")
	entries, err := os.ReadDir(filepath.Join(testtools.Root(), "examples", "krm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "ccm.yaml" || e.IsDir() { // the git-ignored input of a manual run; container/ (integration/images)
			continue
		}
		b, err := os.ReadFile(filepath.Join(testtools.Root(), "examples", "krm", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		testtools.WriteFile(t, filepath.Join(example, e.Name()), b)
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testtools.Renderer(t), filepath.Join(root, "bin", "aws-ccm-renderer")); err != nil {
		t.Fatal(err)
	}
	// bin/helm template ... > examples/krm/ccm.yaml
	testtools.WriteFile(t, filepath.Join(example, "ccm.yaml"), latestChartOutput(t))
	// bin/kustomize build --enable-alpha-plugins --enable-exec examples/krm
	cmd := []string{"build", "--enable-alpha-plugins", "--enable-exec", "examples/krm"}
	out, errOut, err := runIn(t, root, testtools.Kustomize(t), cmd...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	objs, err := manifest.Split(out)
	if err != nil {
		t.Fatal(err)
	}
	testtools.CheckMeaning(t, objs, testtools.Fixtures(t), distros.RKE2, renderer.ModeInstall)
	checkNoBookkeeping(t, objs)

	// The pitfall the docs warn of: without --enable-exec kustomize skips
	// the function silently and prints the chart's output unpatched.
	out, errOut, err = runIn(t, root, testtools.Kustomize(t), "build", "--enable-alpha-plugins", "examples/krm")
	if err != nil {
		t.Fatalf("without --enable-exec: %v\n%s", err, errOut)
	}
	if !strings.Contains(string(out), "node-role.kubernetes.io/control-plane: \"\"") {
		t.Errorf("kustomize without --enable-exec no longer skips the function; update docs/krm-function.md:\n%s", out)
	}
	if _, errOut, err = runIn(t, root, testtools.Kustomize(t), "build", "examples/krm"); err == nil || !strings.Contains(string(errOut), "external plugins disabled") {
		t.Errorf("without --enable-alpha-plugins: %v\n%s", err, errOut)
	}
}

// runIn runs a command in a directory.
func runIn(t *testing.T, dir, name string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}
