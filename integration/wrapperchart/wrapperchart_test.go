// Package wrapperchart tests the wrapper chart charts/aws-ccm-rancher with
// the real Helm 3 CLI: every preset means what the post-renderer means.
package wrapperchart

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/nodefit"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/wrapperchart"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestWrapperChart renders the wrapper chart with the real Helm 3 CLI with
// each preset and checks it means what the post-renderer's output means.
func TestWrapperChart(t *testing.T) {
	nodes := testtools.Fixtures(t)
	chart := testtools.WrapperChart(t)
	upstream := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	// The cluster a migration runs on, and a cluster of the minor of the
	// CCM the upstream chart deploys, as helm template is told them: the
	// chart refuses a CCM of another minor than the cluster's.
	migrateKube, installKube := fmt.Sprintf("v1.%d.15", releases.LastInTreeMinor), defaultTagKube(t)
	for _, d := range wrapperchart.Distros {
		p, _ := distros.RecordOf(d)
		for _, mode := range renderer.ModesOf(p) {
			t.Run(string(d)+"-"+string(mode), func(t *testing.T) {
				t.Parallel()
				kube := installKube
				if mode == renderer.ModeMigrate {
					kube = migrateKube
				}
				out := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "template", "ccm", chart, "--namespace", "kube-system",
					"-f", filepath.Join(chart, "presets", string(d)+"-"+string(mode)+".yaml"), "--kube-version", kube)
				objs, err := manifest.Split(out)
				if err != nil {
					t.Fatal(err)
				}
				testtools.CheckMeaning(t, objs, nodes, d, mode)
				// The same as the upstream chart through the post-renderer,
				// in migrate mode with the CCM the preset pins.
				var extra []string
				if mode == renderer.ModeMigrate {
					extra = []string{"--set", "image.tag=" + releases.Pin(releases.Tag(releases.LastInTreeMinor))}
				}
				want, err := manifest.Split(testtools.HelmTemplate(t, upstream, []string{"--distro=" + string(d), "--mode=" + string(mode), "--kube-version=" + kube}, extra...))
				if err != nil {
					t.Fatal(err)
				}
				sameMeaning(t, objs, want, nodes, string(d))
			})
		}
	}
	t.Run("defaults are rke2 install", func(t *testing.T) {
		objs, err := manifest.Split(testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "template", "aws-ccm", chart, "--namespace", "kube-system", "--kube-version", installKube))
		if err != nil {
			t.Fatal(err)
		}
		testtools.CheckMeaning(t, objs, nodes, distros.RKE2, renderer.ModeInstall)
	})
	t.Run("own values pass through", func(t *testing.T) {
		env := testtools.HelmEnv(t)
		out := testtools.MustRun(t, env, testtools.Helm3(t), "template", "aws-ccm", chart, "--namespace", "kube-system", "--kube-version", "v1.25.16",
			"-f", filepath.Join(chart, "presets", "rke-migrate.yaml"), "--set", "aws-cloud-controller-manager.image.tag=v1.25.15,leaderName=kcm-lock")
		if !strings.Contains(string(out), "cloud-controller-manager:v1.25.15") || !strings.Contains(string(out), `leaderName: "kcm-lock"`) {
			t.Errorf("values not passed through:\n%s", out)
		}
		// Flags of one's own beside the ones the renderer enforces.
		values := filepath.Join(t.TempDir(), "values.yaml")
		testtools.WriteFile(t, values, []byte("aws-cloud-controller-manager:\n  args: [--v=4, --cloud-provider=aws, --use-service-account-credentials=true, --configure-cloud-routes=false, --allocate-node-cidrs=false]\n"))
		out = testtools.MustRun(t, env, testtools.Helm3(t), "template", "aws-ccm", chart, "--namespace", "kube-system", "--kube-version", installKube, "-f", values)
		if !strings.Contains(string(out), "- --v=4\n") || !strings.Contains(string(out), "- --allocate-node-cidrs=false\n") {
			t.Errorf("own flags not passed through:\n%s", out)
		}
	})
	migrate := filepath.Join(chart, "presets", "rke2-migrate.yaml")
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"auto":                    {[]string{"--set", "distro=auto"}, "distro auto needs a node affinity"},
		"unknown distro":          {[]string{"--set", "distro=eks"}, `unknown distro "eks"`},
		"distro without a preset": {[]string{"--set", "distro=rke"}, "do not fit distro=rke mode=install: install with -f presets/rke-install.yaml"},
		"mode without a preset":   {[]string{"--set", "mode=migrate", "--kube-version", migrateKube}, "args must include --enable-leader-migration=true"},
		"renamed in migrate": {[]string{"-f", migrate, "--kube-version", migrateKube, "--set", "aws-cloud-controller-manager.nameOverride=ccm"},
			"extraVolumes must mount the ConfigMap ccm-leader-migration"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Helm3(t), append([]string{"template", "aws-ccm", chart}, c.args...)...)
			if err == nil || len(out) != 0 || !strings.Contains(string(errOut), c.want) {
				t.Errorf("err %v, %d bytes out, stderr %s", err, len(out), errOut)
			}
		})
	}
}

// TestWrapperChartVersions: the chart refuses, with the real Helm 3 and
// Helm 4 CLIs and the cluster's version as charts see it
// (.Capabilities.KubeVersion: the cluster's on install and upgrade,
// --kube-version's in helm template, else the Kubernetes Helm is built
// with), a CCM of another minor than the cluster's in either mode (in
// install mode the upstream chart's default tag included), naming the tag
// to pin, and in migrate mode a cluster without the in-tree provider, and
// K3s; allowVersionSkew lets the skew through.
func TestWrapperChartVersions(t *testing.T) {
	chart := testtools.WrapperChart(t)
	migrate := filepath.Join(chart, "presets", "rke2-migrate.yaml")
	tag := func(tag string) []string { return []string{"--set", "aws-cloud-controller-manager.image.tag=" + tag} }
	def, _ := releases.DefaultImageTag(upstream.LatestChartVersion)
	older := minorOfTag(t, def) - 1
	olderKube := fmt.Sprintf("v1.%d.2", older)
	cases := []struct {
		name string
		args []string
		want string // the refusal; "" renders
	}{
		{"install: the chart's CCM on a cluster of its minor", []string{"--kube-version", defaultTagKube(t)}, ""},
		{"install: the chart's CCM on an older cluster", []string{"--kube-version", olderKube},
			fmt.Sprintf("mode install: the CCM %s is 1.%d and the cluster 1.%d (%s as Helm sees it; helm template and --dry-run without --kube-version assume one): "+
				"%s; set aws-cloud-controller-manager.image.tag to %s, or allowVersionSkew to true to install it anyway",
				def, older+1, older, olderKube, renderer.VerdictSkewInstall.Reason, releases.PinHint(releases.Tag(older)))},
		{"install: the tag of the cluster's minor", append([]string{"--kube-version", olderKube}, tag(releases.Tag(older))...), ""},
		{"install: skew allowed", []string{"--kube-version", olderKube, "--set", "allowVersionSkew=true"}, ""},
		{"install: helm template without --kube-version", nil,
			"mode install: the CCM " + def + " is 1." + fmt.Sprint(older+1) + " and the cluster 1."},
		{"the preset on a 1.26 cluster", []string{"-f", migrate, "--kube-version", "v1.26.15"}, ""},
		{"the chart's CCM (1.35) on a 1.26 cluster", append([]string{"-f", migrate, "--kube-version", "v1.26.15"}, tag("v1.35.0")...),
			"mode migrate: the CCM v1.35.0 is 1.35 and the cluster 1.26 (v1.26.15 as Helm sees it; helm template and --dry-run without --kube-version assume one): " +
				"a migration runs the CCM of the cluster's minor; set aws-cloud-controller-manager.image.tag to " + releases.PinHint("v1.26.14") + ", or allowVersionSkew to true to install it anyway"},
		{"the preset on a 1.25 cluster", []string{"-f", migrate, "--kube-version", "1.25.16+rke2r1"},
			"as Helm sees it; helm template and --dry-run without --kube-version assume one): " +
				"a migration runs the CCM of the cluster's minor; set aws-cloud-controller-manager.image.tag to " + releases.PinHint("v1.25.15")},
		{"the CCM of the cluster's minor, 1.25", append([]string{"-f", migrate, "--kube-version", "v1.25.16"}, tag("v1.25.15")...), ""},
		{"a minor without a known release", append([]string{"-f", migrate, "--kube-version", "v1.21.14"}, tag("v1.22.8")...),
			"set aws-cloud-controller-manager.image.tag to v1.21.<patch>"},
		{"a 1.28 cluster", append([]string{"-f", migrate, "--kube-version", "v1.28.3"}, tag("v1.28.11")...),
			"mode migrate: the cluster is 1.28 (v1.28.3 as Helm sees it; helm template and --dry-run without --kube-version assume one) and has no in-tree AWS provider to migrate from (it ends with 1.26): set mode to install"},
		{"helm template without --kube-version", []string{"-f", migrate}, "as Helm sees it; helm template and --dry-run without --kube-version assume one"},
		{"skew allowed", append([]string{"-f", migrate, "--kube-version", "v1.26.15", "--set", "allowVersionSkew=true"}, tag("v1.35.0")...), ""},
		{"K3s", []string{"-f", filepath.Join(chart, "presets", "k3s-install.yaml"), "--set", "mode=migrate", "--kube-version", "v1.26.15"},
			"mode migrate: distro k3s has no migrate mode: it is built without the in-tree cloud providers, so no in-tree controller manager hands over to the CCM; " +
				"its move to the AWS CCM is a switch, step by step in aws-ccm-renderer plan --distro k3s: set mode to install"},
	}
	for _, helm := range []struct{ name, path string }{{"helm3", testtools.Helm3(t)}, {"helm4", testtools.Helm4(t)}} {
		for _, c := range cases {
			t.Run(helm.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), helm.path, append([]string{"template", "aws-ccm", chart, "--namespace", "kube-system"}, c.args...)...)
				if c.want == "" {
					migrating := slices.Contains(c.args, migrate)
					if err != nil || !bytes.Contains(out, []byte("kind: DaemonSet")) || bytes.Contains(out, []byte("kind: LeaderMigrationConfiguration")) != migrating {
						t.Fatalf("%v, stderr %s", err, errOut)
					}
					return
				}
				if err == nil || len(out) != 0 || strings.Count(strings.TrimSpace(string(errOut)), "\n") > 2 || !strings.Contains(string(errOut), c.want) {
					t.Errorf("exit %v, %d bytes on stdout, stderr %s; want %q", err, len(out), errOut, c.want)
				}
			})
		}
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
