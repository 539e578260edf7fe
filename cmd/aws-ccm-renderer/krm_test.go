package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// kustomizeDir writes a kustomization that takes the latest chart's default
// output and runs the renderer on it as an exec transformer configured by
// functionConfig (a YAML document without the function annotation).
func kustomizeDir(t *testing.T, functionConfig string) string {
	t.Helper()
	dir := t.TempDir()
	plain := helmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), nil)
	annotation := "  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + testtools.Renderer(t) + "\n        args: [fn]\n"
	fc := strings.Replace(functionConfig, "metadata:\n", "metadata:\n"+annotation, 1)
	files := map[string]string{
		"ccm.yaml":           string(plain),
		"aws-ccm.yaml":       fc,
		"kustomization.yaml": "resources:\n- ccm.yaml\ntransformers:\n- aws-ccm.yaml\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func kustomizeBuild(t *testing.T, dir string) ([]byte, []byte, error) {
	t.Helper()
	return testtools.Run(t, os.Environ(), testtools.Kustomize(t), "build", "--enable-alpha-plugins", "--enable-exec", dir)
}

// TestKRMFunctionWithKustomize runs `aws-ccm-renderer fn` from the real
// kustomize CLI as an exec transformer, configured by a ConfigMap and by a
// RendererConfig.
func TestKRMFunctionWithKustomize(t *testing.T) {
	nodes := fixtures(t)
	for _, d := range renderer.Distros {
		for _, mode := range renderer.Modes {
			configs := map[string]string{
				"ConfigMap":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aws-ccm\ndata:\n  distro: " + string(d) + "\n  mode: " + string(mode) + "\n",
				"RendererConfig": "apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\nmetadata:\n  name: aws-ccm\ndistro: " + string(d) + "\nmode: " + string(mode) + "\n",
			}
			for kind, fc := range configs {
				t.Run(string(d)+"-"+string(mode)+"/"+kind, func(t *testing.T) {
					out, errOut, err := kustomizeBuild(t, kustomizeDir(t, fc))
					if err != nil {
						t.Fatalf("kustomize build: %v\n%s", err, errOut)
					}
					objs, err := manifest.Split(out)
					if err != nil {
						t.Fatal(err)
					}
					checkMeaning(t, objs, nodes, d, mode)
					for _, o := range objs {
						annotations, _ := manifest.Get(o.Doc, "metadata", "annotations").(map[string]any)
						for k := range annotations {
							if strings.HasPrefix(k, "config.kubernetes.io/") || strings.HasPrefix(k, "internal.config.kubernetes.io/") {
								t.Errorf("%s carries the bookkeeping annotation %s", o.ID(), k)
							}
						}
					}
				})
			}
		}
	}
}

// TestKRMFunctionErrors: a bad functionConfig fails the kustomize build with
// the renderer's message.
func TestKRMFunctionErrors(t *testing.T) {
	for name, c := range map[string]struct{ fc, want string }{
		"unknown distro":      {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aws-ccm\ndata:\n  distro: rke3\n", `unknown distro "rke3"`},
		"unknown key":         {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aws-ccm\ndata:\n  distros: rke\n", "data.distros: unknown key"},
		"unknown field":       {"apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\nmetadata:\n  name: aws-ccm\ndistros: rke\n", "field distros not found"},
		"contradictory flags": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aws-ccm\ndata:\n  setArgs: v=1\n  removeArgs: v\n", "contradicts"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, err := kustomizeBuild(t, kustomizeDir(t, c.fc))
			if err == nil {
				t.Fatalf("kustomize build succeeded:\n%s", out)
			}
			if len(out) != 0 {
				t.Errorf("stdout is not empty")
			}
			if !strings.Contains(string(errOut), c.want) {
				t.Errorf("stderr does not say %q:\n%s", c.want, errOut)
			}
		})
	}
}

// TestKRMExample runs examples/krm in place, as its README says: the exec
// path in aws-ccm.yaml is relative to the example, ../../bin/aws-ccm-renderer.
func TestKRMExample(t *testing.T) {
	testtools.Renderer(t) // builds bin/aws-ccm-renderer when missing
	example := filepath.Join(testtools.Root(), "examples", "krm")
	input := filepath.Join(example, "ccm.yaml") // git-ignored
	writeFile(t, input, helmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), nil))
	t.Cleanup(func() { os.Remove(input) })
	out, errOut, err := kustomizeBuild(t, example)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	objs, err := manifest.Split(out)
	if err != nil {
		t.Fatal(err)
	}
	checkMeaning(t, objs, fixtures(t), renderer.DistroRKE2, renderer.ModeInstall)
}
