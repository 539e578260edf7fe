// Package wrapperchart tests the wrapper chart charts/aws-ccm-rancher with
// the real Helm 3 CLI: every preset means what the post-renderer means.
package wrapperchart

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/nodefit"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/wrapperchart"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// TestWrapperChart renders the wrapper chart with the real Helm 3 CLI with
// each preset and checks it means what the post-renderer's output means.
func TestWrapperChart(t *testing.T) {
	nodes := testtools.Fixtures(t)
	chart := testtools.WrapperChart(t)
	env := testtools.HelmEnv(t)
	upstream := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	for _, d := range wrapperchart.Distros {
		for _, mode := range renderer.Modes {
			t.Run(string(d)+"-"+string(mode), func(t *testing.T) {
				t.Parallel()
				out := testtools.MustRun(t, env, testtools.Helm3(t), "template", "ccm", chart, "--namespace", "kube-system",
					"-f", filepath.Join(chart, "presets", string(d)+"-"+string(mode)+".yaml"))
				objs, err := manifest.Split(out)
				if err != nil {
					t.Fatal(err)
				}
				testtools.CheckMeaning(t, objs, nodes, d, mode)
				// The same as the upstream chart through the post-renderer.
				want, err := manifest.Split(testtools.HelmTemplate(t, upstream, []string{"--distro=" + string(d), "--mode=" + string(mode)}))
				if err != nil {
					t.Fatal(err)
				}
				sameMeaning(t, objs, want, nodes, string(d))
			})
		}
	}
	t.Run("defaults are rke2 install", func(t *testing.T) {
		objs, err := manifest.Split(testtools.MustRun(t, env, testtools.Helm3(t), "template", "aws-ccm", chart, "--namespace", "kube-system"))
		if err != nil {
			t.Fatal(err)
		}
		testtools.CheckMeaning(t, objs, nodes, renderer.DistroRKE2, renderer.ModeInstall)
	})
	t.Run("own values pass through", func(t *testing.T) {
		out := testtools.MustRun(t, env, testtools.Helm3(t), "template", "aws-ccm", chart, "--namespace", "kube-system",
			"-f", filepath.Join(chart, "presets", "rke-migrate.yaml"), "--set", "aws-cloud-controller-manager.image.tag=v1.34.0,leaderName=kcm-lock")
		if !strings.Contains(string(out), "cloud-controller-manager:v1.34.0") || !strings.Contains(string(out), `leaderName: "kcm-lock"`) {
			t.Errorf("values not passed through:\n%s", out)
		}
		// Flags of one's own beside the ones the renderer enforces.
		values := filepath.Join(t.TempDir(), "values.yaml")
		testtools.WriteFile(t, values, []byte("aws-cloud-controller-manager:\n  args: [--v=4, --cloud-provider=aws, --use-service-account-credentials=true, --configure-cloud-routes=false, --allocate-node-cidrs=false]\n"))
		out = testtools.MustRun(t, env, testtools.Helm3(t), "template", "aws-ccm", chart, "--namespace", "kube-system", "-f", values)
		if !strings.Contains(string(out), "- --v=4\n") || !strings.Contains(string(out), "- --allocate-node-cidrs=false\n") {
			t.Errorf("own flags not passed through:\n%s", out)
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

// sameMeaning checks that the wrapper chart's output (got) means what the
// post-renderer's output (want) means: the same objects; the same DaemonSet
// (landing on the same fixture nodes of every distribution), but for the
// options annotation the upstream chart has no value for; the same RBAC
// grants; the same leader migration configuration.
func sameMeaning(t *testing.T, got, want []manifest.Object, nodes map[string][]nodefit.Node, distro string) {
	t.Helper()
	for _, pair := range testtools.Paired(t, got, want) {
		g, w := pair[0], pair[1]
		switch g.Kind {
		case "DaemonSet":
			testtools.SamePodSpec(t, g, w, nodes, distro)
		case "ClusterRole", "Role":
			if gr, wr := testtools.Grants(g), testtools.Grants(w); !slices.Equal(gr, wr) {
				t.Errorf("%s grants %q, the post-renderer's %q", g.ID(), gr, wr)
			}
		case "ConfigMap":
			if !reflect.DeepEqual(g.Doc["data"], w.Doc["data"]) {
				t.Errorf("%s data %v, the post-renderer's %v", g.ID(), g.Doc["data"], w.Doc["data"])
			}
		default:
			if !reflect.DeepEqual(g.Doc, w.Doc) {
				t.Errorf("%s differs:\n%s\nthe post-renderer's:\n%s", g.ID(), g.Raw, w.Raw)
			}
		}
	}
}
