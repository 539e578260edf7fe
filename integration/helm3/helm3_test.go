// Package helm3 tests the renderer as the real Helm 3 CLI runs it
// (--post-renderer): every upstream chart version, distro and mode against
// golden files and the node fixtures, renamed values, errors through Helm.
package helm3

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/termtest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestHelm3Template renders every upstream chart version with the real Helm 3
// CLI, for every distro and mode, compares with the golden files and checks
// what the output means. Migrate mode refuses, through Helm, a chart whose
// default CCM has no leader migration (0.0.2's v1.20) or is newer than any
// cluster that migrates (0.0.8 on), and K3s; those charts' migrate goldens
// are rendered with the CCM a migration pins (image.tag).
func TestHelm3Template(t *testing.T) {
	nodes := testtools.Fixtures(t)
	pin := releases.Tag(releases.LastInTreeMinor)
	for _, version := range testtools.ChartVersions {
		chart := testtools.UpstreamChart(t, version)
		plain := testtools.HelmTemplate(t, chart, nil)
		plainObjs, err := manifest.Split(plain)
		if err != nil {
			t.Fatal(err)
		}
		pinned := testtools.HelmTemplate(t, chart, nil, "--set", "image.tag="+pin)
		pinnedObjs, err := manifest.Split(pinned)
		if err != nil {
			t.Fatal(err)
		}
		defaultTag, _ := releases.DefaultImageTag(version)
		defaultMinor := minorOf(t, defaultTag)
		for _, distro := range distros.All {
			for _, mode := range renderer.Modes {
				name := fmt.Sprintf("%s/%s-%s", version, distro, mode)
				t.Run(name, func(t *testing.T) {
					args := []string{"--distro=" + string(distro), "--mode=" + string(mode)}
					var extra []string
					untouched := plainObjs
					if mode == renderer.ModeMigrate {
						refusal := ""
						switch {
						case distro == distros.K3s:
							refusal = "--mode migrate: --distro=k3s has no migrate mode"
						case defaultMinor < 21:
							refusal = "has no leader migration"
						case defaultMinor > releases.LastInTreeMinor:
							refusal = testtools.MigrationVersionWarning
						}
						if refusal != "" {
							out, errOut, err := helmTemplateErr(t, chart, args)
							if err == nil || len(out) != 0 || !strings.Contains(string(errOut), refusal) {
								t.Errorf("migrate mode with chart %s: %v, %d bytes on stdout, stderr %s; want the refusal %q", version, err, len(out), errOut, refusal)
							}
							if distro == distros.K3s {
								return
							}
							extra, untouched = []string{"--set", "image.tag=" + pin}, pinnedObjs
						}
					}
					out := testtools.HelmTemplate(t, chart, args, extra...)
					golden(t, filepath.Join("helm3", version, string(distro)+"-"+string(mode)+".yaml"), out)
					objs, err := manifest.Split(out)
					if err != nil {
						t.Fatal(err)
					}
					testtools.CheckMeaning(t, objs, nodes, distro, mode)
					checkUntouched(t, untouched, objs)
				})
			}
		}
	}
}

// minorOf is the minor of a CCM image tag.
func minorOf(t *testing.T, tag string) int {
	t.Helper()
	v, err := version.ParseGeneric(tag)
	if err != nil {
		t.Fatalf("image tag %q: %v", tag, err)
	}
	return int(v.Minor())
}

// helmTemplateErr runs `helm template` through the renderer and returns
// what it printed and how it ended.
func helmTemplateErr(t *testing.T, chart string, rendererArgs []string) ([]byte, []byte, error) {
	t.Helper()
	args := []string{"template", "ccm", chart, "--namespace", "kube-system", "--post-renderer", testtools.Renderer(t)}
	for _, a := range rendererArgs {
		args = append(args, "--post-renderer-args="+a)
	}
	return testtools.Run(t, testtools.HelmEnv(t), testtools.Helm3(t), args...)
}

// checkUntouched: every object the renderer does not patch comes out byte
// for byte, in the same order.
func checkUntouched(t *testing.T, plain, out []manifest.Object) {
	t.Helper()
	var want, got [][]byte
	for _, o := range plain {
		if o.Kind != "DaemonSet" && o.Kind != "ClusterRole" {
			want = append(want, o.Raw)
		}
	}
	for _, o := range out {
		generated, _ := manifest.Get(o.Doc, "metadata", "annotations", renderer.GeneratedAnnotation).(string)
		if o.Kind != "DaemonSet" && o.Kind != "ClusterRole" && generated == "" {
			got = append(got, o.Raw)
		}
	}
	if !slices.EqualFunc(want, got, bytes.Equal) {
		t.Errorf("untouched objects changed:\n%s\nvs\n%s", bytes.Join(want, nil), bytes.Join(got, nil))
	}
}

// TestHelm3Baseline keeps the failure users report as a test: the chart's
// defaults admit no node of RKE1, RKE2 or K3s.
func TestHelm3Baseline(t *testing.T) {
	nodes := testtools.Fixtures(t)
	for _, version := range testtools.ChartVersions {
		ccm, _ := testtools.CCMOf(t, testtools.HelmTemplate(t, testtools.UpstreamChart(t, version), nil))
		spec, err := manifest.PodSpec(ccm)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"rke", "rke2", "k3s"} {
			for _, n := range nodes[d] {
				if ok, _ := spec.Admits(n); ok {
					t.Errorf("chart %s at its defaults admits %s node %s", version, d, n.Name)
				}
			}
		}
	}
}

// TestHelm3RenamedValues: targets are found by meaning when every name the
// chart takes from values changes.
func TestHelm3RenamedValues(t *testing.T) {
	nodes := testtools.Fixtures(t)
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	set := "nameOverride=my-ccm,namespace=cloud,clusterRoleName=my-ccm-role,serviceAccountName=my-ccm-sa,image.tag=" + releases.Tag(releases.LastInTreeMinor)
	out := testtools.HelmTemplate(t, chart, []string{"--distro=rke2", "--mode=migrate"}, "--set", set)
	objs, err := manifest.Split(out)
	if err != nil {
		t.Fatal(err)
	}
	testtools.CheckMeaning(t, objs, nodes, distros.RKE2, renderer.ModeMigrate)
	ccm, _ := manifest.CCM(objs)
	if ccm.Name != "my-ccm" || ccm.Namespace != "cloud" {
		t.Fatalf("workload %s", ccm.ID())
	}
}

// TestHelm3MigrateVersions: through the real Helm 3 CLI, migrate mode
// refuses what would break a migration, with the renderer's one line, a
// failed helm and nothing on stdout; the cluster's version reaches the
// renderer as --post-renderer-args (Helm's own --kube-version does not).
func TestHelm3MigrateVersions(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	for _, c := range []struct {
		name     string
		args     []string // the renderer's
		set      string   // image.tag
		want     string   // the refusal; "" renders
		warnings int
	}{
		{"the chart's CCM (1.35), the cluster not told", []string{"--mode=migrate"}, "",
			"the CCM (image registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0) is 1.35, newer than any cluster that can migrate (the in-tree AWS provider ends with 1.26): " +
				"pin the CCM release of the cluster's minor (for a 1.26 cluster v1.26.14, with the upstream chart: --set image.tag=" + releases.Pin("v1.26.14") + ") and give the cluster's version with --kube-version, or pass --allow-version-skew to render it anyway", 0},
		{"the chart's CCM (1.35) on a 1.26 cluster", []string{"--mode=migrate", "--kube-version=v1.26.15"}, "",
			"is 1.35 and the cluster (--kube-version v1.26.15) 1.26: a migration runs the CCM of the cluster's minor; pin the CCM release of the cluster's minor, v1.26.14", 0},
		{"a 1.26 CCM on a 1.25 cluster", []string{"--mode=migrate", "--kube-version=v1.25.16"}, "v1.26.14",
			"is 1.26 and the cluster (--kube-version v1.25.16) 1.25: a migration runs the CCM of the cluster's minor; pin the CCM release of the cluster's minor, v1.25.15", 0},
		{"a 1.28 cluster", []string{"--mode=migrate", "--kube-version=v1.28.3"}, "v1.28.11",
			"the cluster (--kube-version v1.28.3) is 1.28 and has no in-tree AWS provider to migrate from (it ends with 1.26): use --mode=install", 0},
		{"K3s", []string{"--distro=k3s", "--mode=migrate"}, "v1.26.14", "`aws-ccm-renderer plan --distro k3s`", 0},
		{"the CCM of the cluster's minor", []string{"--mode=migrate", "--kube-version=v1.26.15"}, "v1.26.14", "", 0},
		{"skew allowed: a warning", []string{"--mode=migrate", "--kube-version=v1.26.15", "--allow-version-skew"}, "", "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var extra []string
			if c.set != "" {
				extra = []string{"--set", "image.tag=" + c.set}
			}
			args := []string{"template", "ccm", chart, "--namespace", "kube-system", "--post-renderer", testtools.Renderer(t)}
			for _, a := range c.args {
				args = append(args, "--post-renderer-args="+a)
			}
			out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Helm3(t), append(args, extra...)...)
			if c.want == "" {
				if err != nil || len(out) == 0 {
					t.Fatalf("%v, stderr %s", err, errOut)
				}
				return
			}
			if err == nil || len(out) != 0 {
				t.Fatalf("helm exits %v with %d bytes on stdout", err, len(out))
			}
			var lines []string
			for _, l := range strings.Split(string(errOut), "\n") {
				if strings.HasPrefix(l, "aws-ccm-renderer: ") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], c.want) {
				t.Errorf("the renderer's lines %q; want one saying %q", lines, c.want)
			}
		})
	}
}

// TestHelm3SampleChart renders the project's sample chart, as a DaemonSet and
// as a Deployment.
func TestHelm3SampleChart(t *testing.T) {
	nodes := testtools.Fixtures(t)
	for _, deployment := range []string{"false", "true"} {
		out := testtools.HelmTemplate(t, testtools.SampleChart(), []string{"--distro=auto"}, "--set", "deployment="+deployment)
		objs, err := manifest.Split(out)
		if err != nil {
			t.Fatal(err)
		}
		testtools.CheckMeaning(t, objs, nodes, distros.Auto, renderer.ModeInstall)
	}
}

// TestHelm3Errors: a renderer failure fails the Helm command with the
// renderer's message, and Helm prints no manifests.
func TestHelm3Errors(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"unknown distro": {[]string{"--distro=rke3"}, `--distro "rke3" is unknown`},
		"contradiction":  {[]string{"--set-arg=v=4", "--remove-arg=v"}, "contradicts"},
		"forced flag":    {[]string{"--remove-arg=cloud-provider"}, "--cloud-provider=aws"},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"template", "ccm", chart, "--post-renderer", testtools.Renderer(t)}
			for _, a := range c.args {
				args = append(args, "--post-renderer-args="+a)
			}
			out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Helm3(t), args...)
			if err == nil {
				t.Fatal("helm succeeded")
			}
			if len(out) != 0 {
				t.Errorf("stdout is not empty:\n%s", out)
			}
			if !strings.Contains(string(errOut), c.want) {
				t.Errorf("stderr %q does not say %q", errOut, c.want)
			}
		})
	}
}

// golden compares output with testdata/golden/<name>; -update rewrites it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testtools.Root(), "testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it)", path)
	}
}

// TestHelm3WarningOnTerminal: Helm 3 shows a post-renderer's stderr only
// when it fails (pkg/postrender/exec.go keeps it for its error), so the
// renderer also tells the person at the terminal: here a value of the
// chart's (args) that the renderer overrides. Without a terminal the
// warning is lost, as the docs say; --strict makes it Helm's error.
func TestHelm3WarningOnTerminal(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	env, helm := testtools.HelmEnv(t), testtools.Helm3(t)
	args := []string{"template", "ccm", chart, "--namespace", "kube-system", "--set", "args={--v=2,--cloud-provider=aws,--configure-cloud-routes=true}",
		"--post-renderer", testtools.Renderer(t), "--post-renderer-args=--distro=rke2"}
	warning := `aws-ccm-renderer: warning: DaemonSet kube-system/aws-cloud-controller-manager: container "aws-cloud-controller-manager" comes with ` +
		`--configure-cloud-routes=true (the chart's values), which the renderer replaces with --configure-cloud-routes=false; ` +
		`to keep true, pass --set-arg=configure-cloud-routes=true: the CCM's route controller then writes pod CIDR routes into the VPC's route tables; ` +
		`only clusters whose pod network relies on cloud routes want that`
	text := termtest.CheckTerminalWarning(t, env, helm, args, warning, false)
	if !strings.Contains(text, "- --configure-cloud-routes=false") {
		t.Errorf("the renderer's value is not in the output:\n%s", text)
	}

	out, errOut, err := testtools.Run(t, env, helm, append(args, "--post-renderer-args=--strict")...)
	if testtools.ExitCode(err) != 1 || len(out) != 0 || !strings.Contains(string(errOut), "want that (--strict: warnings are errors)") {
		t.Errorf("--strict: %v, %d bytes on stdout\n%s", err, len(out), errOut)
	}
}
