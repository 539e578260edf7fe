package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/wrapperchart"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// WrapperChart returns a copy of charts/aws-ccm-rancher with its dependency,
// the upstream chart, in charts/ (from ../shared/charts, never committed).
func wrapperChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "aws-ccm-rancher")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(testtools.Root(), "charts", "aws-ccm-rancher"))); err != nil {
		t.Fatal(err)
	}
	dep := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	b, err := os.ReadFile(dep)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "charts", filepath.Base(dep)), b)
	return dir
}

// TestWrapperChart renders the wrapper chart with the real Helm 3 CLI with
// each preset and checks it means what the post-renderer's output means.
func TestWrapperChart(t *testing.T) {
	nodes := fixtures(t)
	chart := wrapperChart(t)
	env := testtools.HelmEnv(t)
	for _, d := range wrapperchart.Distros {
		for _, mode := range renderer.Modes {
			t.Run(string(d)+"-"+string(mode), func(t *testing.T) {
				out := testtools.MustRun(t, env, testtools.Helm3(t), "template", "aws-ccm", chart, "--namespace", "kube-system",
					"-f", filepath.Join(chart, "presets", string(d)+"-"+string(mode)+".yaml"))
				objs, err := manifest.Split(out)
				if err != nil {
					t.Fatal(err)
				}
				checkMeaning(t, objs, nodes, d, mode)
			})
		}
	}
	t.Run("defaults are rke2 install", func(t *testing.T) {
		objs, err := manifest.Split(testtools.MustRun(t, env, testtools.Helm3(t), "template", "aws-ccm", chart, "--namespace", "kube-system"))
		if err != nil {
			t.Fatal(err)
		}
		checkMeaning(t, objs, nodes, renderer.DistroRKE2, renderer.ModeInstall)
	})
	t.Run("own values pass through", func(t *testing.T) {
		out := testtools.MustRun(t, env, testtools.Helm3(t), "template", "aws-ccm", chart, "--namespace", "kube-system",
			"-f", filepath.Join(chart, "presets", "rke-migrate.yaml"), "--set", "aws-cloud-controller-manager.image.tag=v1.34.0,leaderName=kcm-lock")
		if !strings.Contains(string(out), "cloud-controller-manager:v1.34.0") || !strings.Contains(string(out), `leaderName: "kcm-lock"`) {
			t.Errorf("values not passed through:\n%s", out)
		}
	})
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"auto":                    {[]string{"--set", "distro=auto"}, "distro auto needs a node affinity"},
		"unknown distro":          {[]string{"--set", "distro=eks"}, `unknown distro "eks"`},
		"distro without a preset": {[]string{"--set", "distro=rke"}, "do not fit distro=rke mode=install: install with -f presets/rke-install.yaml"},
		"mode without a preset":   {[]string{"--set", "mode=migrate"}, "args must include --enable-leader-migration=true"},
		"renamed in migrate":      {[]string{"-f", filepath.Join(chart, "presets", "k3s-migrate.yaml"), "--set", "aws-cloud-controller-manager.nameOverride=ccm"}, "extraVolumes must mount the ConfigMap ccm-leader-migration"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, err := testtools.Run(t, env, testtools.Helm3(t), append([]string{"template", "aws-ccm", chart}, c.args...)...)
			if err == nil || len(out) != 0 || !strings.Contains(string(errOut), c.want) {
				t.Errorf("err %v, %d bytes out, stderr %s", err, len(out), errOut)
			}
		})
	}
}
