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

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/termtest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestHelm3Template renders every upstream chart version with the real Helm 3
// CLI, for every distro and mode, compares with the golden files and checks
// what the output means.
func TestHelm3Template(t *testing.T) {
	nodes := testtools.Fixtures(t)
	for _, version := range testtools.ChartVersions {
		chart := testtools.UpstreamChart(t, version)
		plain := testtools.HelmTemplate(t, chart, nil)
		plainObjs, err := manifest.Split(plain)
		if err != nil {
			t.Fatal(err)
		}
		for _, distro := range renderer.Distros {
			for _, mode := range renderer.Modes {
				name := fmt.Sprintf("%s/%s-%s", version, distro, mode)
				t.Run(name, func(t *testing.T) {
					args := []string{"--distro=" + string(distro), "--mode=" + string(mode)}
					if version == "0.0.2" && mode == renderer.ModeMigrate {
						// Its CCM (v1.20) has no leader migration.
						_, errOut, err := helmTemplateErr(t, chart, args)
						if err == nil || !strings.Contains(string(errOut), "has no leader migration") {
							t.Errorf("migrate mode with chart 0.0.2: %v, stderr %s", err, errOut)
						}
						return
					}
					out := testtools.HelmTemplate(t, chart, args)
					golden(t, filepath.Join("helm3", version, string(distro)+"-"+string(mode)+".yaml"), out)
					objs, err := manifest.Split(out)
					if err != nil {
						t.Fatal(err)
					}
					testtools.CheckMeaning(t, objs, nodes, distro, mode)
					checkUntouched(t, plainObjs, objs)
				})
			}
		}
	}
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
	set := "nameOverride=my-ccm,namespace=cloud,clusterRoleName=my-ccm-role,serviceAccountName=my-ccm-sa"
	out := testtools.HelmTemplate(t, chart, []string{"--distro=rke2", "--mode=migrate"}, "--set", set)
	objs, err := manifest.Split(out)
	if err != nil {
		t.Fatal(err)
	}
	testtools.CheckMeaning(t, objs, nodes, renderer.DistroRKE2, renderer.ModeMigrate)
	ccm, _ := manifest.CCM(objs)
	if ccm.Name != "my-ccm" || ccm.Namespace != "cloud" {
		t.Fatalf("workload %s", ccm.ID())
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
		testtools.CheckMeaning(t, objs, nodes, renderer.DistroAuto, renderer.ModeInstall)
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
