package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// cmpGenerate returns the generate command of the Argo CD plugin example.
func cmpGenerate(t *testing.T) []string {
	t.Helper()
	var plugin struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Generate struct {
				Command []string `yaml:"command"`
				Args    []string `yaml:"args"`
			} `yaml:"generate"`
		} `yaml:"spec"`
	}
	b, err := os.ReadFile(filepath.Join(testtools.Root(), "examples", "argocd", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &plugin); err != nil {
		t.Fatal(err)
	}
	if plugin.Kind != "ConfigManagementPlugin" || len(plugin.Spec.Generate.Command) == 0 {
		t.Fatalf("plugin.yaml: kind %q, generate %v", plugin.Kind, plugin.Spec.Generate)
	}
	return append(plugin.Spec.Generate.Command, plugin.Spec.Generate.Args...)
}

// runCMP runs the generate command the way Argo CD's CMP server does: in the
// application's source directory, with ARGOCD_APP_* and the Application's
// plugin env as ARGOCD_ENV_*, and helm and aws-ccm-renderer on PATH.
func runCMP(t *testing.T, env map[string]string, values string) (stdout, stderr []byte, err error) {
	t.Helper()
	bin := t.TempDir()
	for name, target := range map[string]string{"helm": testtools.Helm3(t), "aws-ccm-renderer": testtools.Renderer(t)} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "aws-ccm.yaml"), []byte("# marks the directory for the plugin\n"))
	if values != "" {
		writeFile(t, filepath.Join(src, "values.yaml"), []byte(values))
	}
	argv := cmpGenerate(t)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = src
	cmd.Env = append(testtools.HelmEnv(t), "PATH="+bin+":"+os.Getenv("PATH"),
		"ARGOCD_APP_NAME=aws-ccm", "ARGOCD_APP_NAMESPACE=kube-system", "ARGOCD_APP_REVISION=0123abc",
		"ARGOCD_APP_SOURCE_PATH=clusters/prod/aws-ccm", "ARGOCD_APP_SOURCE_REPO_URL=https://git.example.com/platform/cluster-config.git")
	for k, v := range env {
		cmd.Env = append(cmd.Env, "ARGOCD_ENV_"+k+"="+v)
	}
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return []byte(o.String()), []byte(e.String()), err
}

// TestArgoCDPlugin runs the example plugin's generate command for each
// distro and mode, with values and extra renderer args, and its failure.
func TestArgoCDPlugin(t *testing.T) {
	nodes := fixtures(t)
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	for _, d := range renderer.Distros {
		for _, mode := range renderer.Modes {
			t.Run(string(d)+"-"+string(mode), func(t *testing.T) {
				out, errOut, err := runCMP(t, map[string]string{"DISTRO": string(d), "MODE": string(mode), "CHART": chart}, "")
				if err != nil {
					t.Fatalf("%v\n%s", err, errOut)
				}
				objs, err := manifest.Split(out)
				if err != nil {
					t.Fatal(err)
				}
				checkMeaning(t, objs, nodes, d, mode)
			})
		}
	}
	t.Run("values and renderer args", func(t *testing.T) {
		out, errOut, err := runCMP(t, map[string]string{"DISTRO": "rke", "CHART": chart, "RENDERER_ARGS": "--set-arg=cluster-name=prod"},
			"nameOverride: my-ccm\n")
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		objs, err := manifest.Split(out)
		if err != nil {
			t.Fatal(err)
		}
		checkMeaning(t, objs, nodes, renderer.DistroRKE, renderer.ModeInstall)
		ccm, _ := manifest.CCM(objs)
		if v, _ := manifest.Flag(manifest.Args(ccm), "cluster-name"); ccm.Name != "my-ccm" || v != "prod" {
			t.Errorf("values or renderer args not applied: %s, --cluster-name=%q", ccm.ID(), v)
		}
	})
	t.Run("failure prints nothing", func(t *testing.T) {
		out, errOut, err := runCMP(t, map[string]string{"DISTRO": "bogus", "CHART": chart}, "")
		if err == nil {
			t.Fatal("the generate command succeeded")
		}
		if len(out) != 0 {
			t.Errorf("stdout is not empty: %d bytes", len(out))
		}
		if !strings.Contains(string(errOut), `unknown distro "bogus"`) {
			t.Errorf("stderr: %s", errOut)
		}
	})
	t.Run("a failing helm fails the command", func(t *testing.T) {
		out, _, err := runCMP(t, map[string]string{"CHART": filepath.Join(t.TempDir(), "missing.tgz")}, "")
		if err == nil || len(out) != 0 {
			t.Errorf("err %v, %d bytes on stdout", err, len(out))
		}
	})
}

// TestFleetBundle renders the example Fleet bundle the way Fleet does: the
// chart from fleet.yaml through helm, written as fleet-manifests.yaml into
// the chosen kustomize.dir and prepended to its resources, then the
// kustomize api library with root-only loading and plugins off.
func TestFleetBundle(t *testing.T) {
	var bundle struct {
		DefaultNamespace string `yaml:"defaultNamespace"`
		Helm             struct {
			Repo        string `yaml:"repo"`
			Chart       string `yaml:"chart"`
			Version     string `yaml:"version"`
			ReleaseName string `yaml:"releaseName"`
		} `yaml:"helm"`
		Kustomize struct {
			Dir string `yaml:"dir"`
		} `yaml:"kustomize"`
		TargetCustomizations []struct {
			Name            string `yaml:"name"`
			ClusterSelector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"clusterSelector"`
			Kustomize struct {
				Dir string `yaml:"dir"`
			} `yaml:"kustomize"`
		} `yaml:"targetCustomizations"`
	}
	src := filepath.Join(testtools.Root(), "examples", "fleet")
	b, err := os.ReadFile(filepath.Join(src, "fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &bundle); err != nil {
		t.Fatal(err)
	}
	if bundle.Helm.Chart != testtools.ChartName || bundle.Helm.Repo != testtools.ChartRepo || len(bundle.TargetCustomizations) != 2 {
		t.Fatalf("fleet.yaml: %+v", bundle)
	}
	chart := testtools.UpstreamChart(t, bundle.Helm.Version)
	out := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "template", bundle.Helm.ReleaseName, chart,
		"--namespace", bundle.DefaultNamespace)
	nodes := fixtures(t)
	for _, tc := range bundle.TargetCustomizations {
		t.Run(tc.Name, func(t *testing.T) {
			distro := renderer.Distro(tc.ClusterSelector.MatchLabels["provider.cattle.io"])
			if distro != renderer.Distro(tc.Name) {
				t.Fatalf("customization %s selects provider.cattle.io=%s", tc.Name, distro)
			}
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			kdir := filepath.Join(dir, filepath.FromSlash(tc.Kustomize.Dir))
			writeFile(t, filepath.Join(kdir, "fleet-manifests.yaml"), out)
			kust, err := os.ReadFile(filepath.Join(kdir, "kustomization.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var k map[string]any
			if err := yaml.Unmarshal(kust, &k); err != nil {
				t.Fatal(err)
			}
			resources, _ := k["resources"].([]any)
			k["resources"] = append([]any{"fleet-manifests.yaml"}, resources...)
			kb, err := yaml.Marshal(k)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(kdir, "kustomization.yaml"), kb)
			objs, err := manifest.Split(krustyBuild(t, kdir))
			if err != nil {
				t.Fatal(err)
			}
			checkMeaning(t, objs, nodes, distro, renderer.ModeInstall)
		})
	}
}
