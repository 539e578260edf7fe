// Package wrapper tests the chart wrapper commands (template, install,
// upgrade, diff) of the built binaries against chart repositories on
// loopback, an OCI registry, local charts, and their error paths.
package wrapper

import (
	"bytes"
	"debug/buildinfo"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	helmregistry "helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/termtest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// chartRepo serves a chart repository on loopback: an index.yaml and the
// upstream packages of every tested version.
func chartRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, v := range testtools.ChartVersions {
		b, err := os.ReadFile(testtools.UpstreamChart(t, v))
		if err != nil {
			t.Fatal(err)
		}
		testtools.WriteFile(t, filepath.Join(dir, filepath.Base(testtools.UpstreamChart(t, v))), b)
	}
	return serveRepo(t, dir)
}

// serveRepo serves the chart packages in dir as a chart repository on
// loopback, with an index of them, and returns its URL.
func serveRepo(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close)
	index, err := repo.IndexDirectory(dir, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := index.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = httpFileServer(dir)
	return srv.URL
}

// runRenderer runs the aws-ccm-renderer binary with Helm's directories kept
// in the test's own.
func runRenderer(t *testing.T, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	return runWith(t, testtools.HelmEnv(t), "", args...)
}

// runWith runs the aws-ccm-renderer binary with an environment, in a
// directory ("" for the test's).
func runWith(t *testing.T, env []string, dir string, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	cmd := testtools.Command(t, env, testtools.Renderer(t), args...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.Bytes(), e.Bytes(), testtools.ExitCode(err)
}

// TestWrapperTemplate renders the upstream chart in-process with the Helm
// SDK from every kind of source: a chart repository on loopback (latest and
// pinned versions), a package, a directory and an OCI registry.
func TestWrapperTemplate(t *testing.T) {
	nodes := testtools.Fixtures(t)
	url := chartRepo(t)
	check := func(t *testing.T, out []byte, distro distros.Distro, mode renderer.Mode, chartVersion string) {
		t.Helper()
		objs, err := manifest.Split(out)
		if err != nil {
			t.Fatal(err)
		}
		testtools.CheckMeaning(t, objs, nodes, distro, mode)
		if chartVersion != "" && !bytes.Contains(out, []byte(`helm.sh/chart: "aws-cloud-controller-manager-`+chartVersion+`"`)) {
			t.Errorf("not chart version %s", chartVersion)
		}
	}
	t.Run("repository, latest", func(t *testing.T) {
		out, errOut, code := runRenderer(t, "template", "--repo", url, "--distro=rke2")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, out, distros.RKE2, renderer.ModeInstall, testtools.LatestChartVersion)
	})
	for _, v := range testtools.ChartVersions {
		t.Run("repository, version "+v, func(t *testing.T) {
			// A migration, with the CCM a migration pins.
			mode, pin := renderer.ModeMigrate, "image.tag="+releases.Tag(releases.LastInTreeMinor)
			out, errOut, code := runRenderer(t, "template", "ccm", "--repo", url, "--version", v, "--distro=rke", "--mode="+string(mode), "--set", pin)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			check(t, out, distros.RKE, mode, v)
			// The same bytes as helm template with the post-renderer.
			if want := testtools.HelmTemplate(t, testtools.UpstreamChart(t, v), []string{"--distro=rke", "--mode=" + string(mode)}, "--set", pin); !bytes.Equal(out, want) {
				t.Errorf("differs from helm template --post-renderer")
			}
		})
	}
	t.Run("package, values and renderer flags", func(t *testing.T) {
		values := filepath.Join(t.TempDir(), "values.yaml")
		testtools.WriteFile(t, values, []byte("nameOverride: my-ccm\n"))
		out, errOut, code := runRenderer(t, "template", "ccm", testtools.UpstreamChart(t, "0.0.9"), "-f", values,
			"--set", "namespace=cloud", "--distro=k3s", "--set-arg=v=4")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		objs, _ := manifest.Split(out)
		ccm, err := manifest.CCM(objs)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := manifest.Flag(manifest.Args(ccm), "v"); ccm.ID() != "DaemonSet cloud/my-ccm" || v != "4" {
			t.Errorf("values or flags not applied: %s --v=%s", ccm.ID(), v)
		}
	})
	t.Run("directory", func(t *testing.T) {
		out, errOut, code := runRenderer(t, "template", "sample", testtools.SampleChart(), "--distro=kubeadm")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, out, distros.Kubeadm, renderer.ModeInstall, "")
	})
	t.Run("OCI registry", func(t *testing.T) {
		reg := httptest.NewServer(registry.New(registry.Logger(nilLogger())))
		t.Cleanup(reg.Close)
		host := strings.TrimPrefix(reg.URL, "http://")
		client, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(), helmregistry.ClientOptWriter(&bytes.Buffer{}))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"0.0.10", testtools.LatestChartVersion} {
			data, err := os.ReadFile(testtools.UpstreamChart(t, v))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.Push(data, host+"/charts/aws-cloud-controller-manager:"+v); err != nil {
				t.Fatal(err)
			}
		}
		out, errOut, code := runRenderer(t, "template", "ccm", "oci://"+host+"/charts/aws-cloud-controller-manager",
			"--version", "0.0.10", "--plain-http", "--distro=auto")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, out, distros.Auto, renderer.ModeInstall, "0.0.10")
		// Without --version: the highest tag.
		out, errOut, code = runRenderer(t, "template", "ccm", "oci://"+host+"/charts/aws-cloud-controller-manager", "--plain-http", "--distro=rke2")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		check(t, out, distros.RKE2, renderer.ModeInstall, testtools.LatestChartVersion)
	})
}

// TestWrapperDiff: upstream → patched, object by object: only meaningful
// changes, helm-diff's headers, the summary; --detailed-exitcode and its
// alias --exit-code exit 2 with changes, 0 without, and a usage error then
// exits 1.
func TestWrapperDiff(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	out, errOut, code := runRenderer(t, "diff", "ccm", chart, "--distro=rke2")
	if code != 0 || len(errOut) != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	text := string(out)
	for _, want := range []string{
		"kube-system, system:cloud-controller-manager, ClusterRole (rbac.authorization.k8s.io) has changed:\n",
		"\nkube-system, aws-cloud-controller-manager, DaemonSet (apps) has changed:\n",
		"\n@@ spec.template.spec.hostNetwork @@\n",
		"\n-         node-role.kubernetes.io/control-plane: \"\"\n+         node-role.kubernetes.io/control-plane: \"true\"\n",
		"\n+             - --use-service-account-credentials=true\n",
		"\n+       hostNetwork: true\n",
		"\n\nSummary: 2 changed, 0 added, 0 removed, 3 unchanged (aws-cloud-controller-manager-0.0.11's output → patched by aws-ccm-renderer)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("diff lacks %q:\n%s", want, text)
		}
	}
	// The chart's spelling (double spaces, trailing spaces, block {} and
	// []) is not a change, and no "----" lines.
	for _, noise := range []string{"k8s-app:", "rules:", "securityContext", "env:", "----", "ServiceAccount", "RoleBinding"} {
		for _, l := range strings.Split(text, "\n") {
			if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && strings.Contains(l, noise) {
				t.Errorf("noise in the diff: %q", l)
			}
		}
	}
	if strings.Contains(text, "\x1b[") {
		t.Error("coloured output on a pipe")
	}
	for _, flag := range []string{"--detailed-exitcode", "--exit-code"} {
		if out2, _, code := runRenderer(t, "diff", "ccm", chart, "--distro=rke2", flag); code != 2 || !bytes.Equal(out2, out) {
			t.Errorf("%s with changes: exit %d, want 2, same output: %v", flag, code, bytes.Equal(out2, out))
		}
	}
	// A usage error exits 1 with --detailed-exitcode, so 2 means changes.
	for _, args := range [][]string{
		{"diff", "ccm", chart, "--distro=rke3", "--detailed-exitcode"},
		{"diff", "ccm", chart, "--bogus", "--exit-code"},
	} {
		if out, errOut, code := runRenderer(t, args...); code != 1 || len(out) != 0 || strings.Count(string(errOut), "\n") != 1 {
			t.Errorf("%v: exit %d, %q, %q", args, code, out, errOut)
		}
	}
	if _, _, code := runRenderer(t, "diff", "ccm", chart, "--distro=rke3"); code != 2 {
		t.Errorf("usage error without --detailed-exitcode: exit %d, want 2", code)
	}
	// The flags that say how the upgrade would go, or which options it
	// takes from the release, mean nothing to the chart's own diff: not
	// ignored, refused.
	for _, flag := range []string{"--reuse-values", "--reset-values", "--reset-then-reuse-values", "--reset-options"} {
		if out, errOut, code := runRenderer(t, "diff", "ccm", chart, "--distro=rke2", flag); code != 2 || len(out) != 0 ||
			strings.Count(string(errOut), "\n") != 1 || !strings.Contains(string(errOut), flag+" ") {
			t.Errorf("%s without a cluster: exit %d, %d bytes out, %q", flag, code, len(out), errOut)
		}
	}
	// A chart the renderer leaves alone: no diff, exit 0 even with
	// --detailed-exitcode.
	patched := filepath.Join(t.TempDir(), "patched")
	if err := os.CopyFS(patched, os.DirFS(testtools.SampleChart())); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runRenderer(t, "diff", "ccm", patched, "--allow-missing-workload", "--detailed-exitcode", "--set", "image=busybox,flags[0]=--v=2,flags[1]=--cloud-provider=gce")
	if code != 0 || len(out) != 0 {
		t.Errorf("nothing to change: exit %d, %q, %s", code, out, errOut)
	}
}

// TestWrapperErrors: one line on stderr, nothing on stdout, the right code.
func TestWrapperErrors(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	for name, c := range map[string]struct {
		args []string
		code int
		want string
	}{
		"unknown distro":   {[]string{"template", "ccm", chart, "--distro=rke3"}, 2, `--distro "rke3" is unknown (did you mean --distro=rke or --distro=rke2?): use one of auto, rke, rke2, k3s, kubeadm, detect`},
		"missing chart":    {[]string{"template", "ccm", filepath.Join(t.TempDir(), "none.tgz")}, 1, "none.tgz"},
		"bad values file":  {[]string{"template", "ccm", chart, "-f", "/nonexistent/values.yaml"}, 2, "values"},
		"too many args":    {[]string{"template", "a", "b", "c"}, 2, "accepts at most 2 arg(s)"},
		"no cluster":       {[]string{"install", "ccm", chart, "--kubeconfig", "/nonexistent/kubeconfig"}, 2, "--kubeconfig /nonexistent/kubeconfig: no such file"},
		"no workload here": {[]string{"template", "ccm", testtools.SampleChart(), "--set", "image=busybox,flags={--v=2}"}, 1, "no AWS cloud-controller-manager"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := runRenderer(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d (%s)", code, c.code, errOut)
			}
			if len(out) != 0 {
				t.Errorf("stdout: %s", out)
			}
			if strings.Count(string(errOut), "\n") != 1 || !strings.Contains(string(errOut), c.want) {
				t.Errorf("stderr %q, want one line with %q", errOut, c.want)
			}
		})
	}
}

func httpFileServer(dir string) http.Handler { return http.FileServer(http.Dir(dir)) }

func nilLogger() *log.Logger { return log.New(io.Discard, "", 0) }

// onTerminal runs the renderer with a pseudo-terminal as its controlling
// terminal, stdout and stderr, and returns what the terminal showed.
func onTerminal(t *testing.T, env []string, args ...string) string {
	t.Helper()
	code, screen := termtest.RunOnTerminal(t, env, testtools.Renderer(t), args...)
	if code != 0 && code != 2 {
		t.Fatalf("%v: exit %d\n%s", args, code, screen)
	}
	return screen
}

// TestWrapperDiffColour: colour on a terminal, unless $NO_COLOR is set,
// $TERM is dumb or --color=never / --no-color says so; --color=always
// colours a pipe too.
func TestWrapperDiffColour(t *testing.T) {
	args := []string{"diff", "ccm", testtools.UpstreamChart(t, testtools.LatestChartVersion), "--distro=rke2"}
	coloured := func(s string) bool {
		return strings.Contains(s, "\x1b[31m-") && strings.Contains(s, "\x1b[32m+") && strings.Contains(s, "\x1b[36m@@") && strings.Contains(s, "\x1b[1;33mkube-system, ")
	}
	env := append(testtools.HelmEnv(t), "TERM=xterm")
	if s := onTerminal(t, env, args...); !coloured(s) {
		t.Errorf("no colour on a terminal:\n%q", s)
	}
	for name, c := range map[string]struct {
		env  []string
		args []string
	}{
		"NO_COLOR":      {append(slices.Clone(env), "NO_COLOR=1"), nil},
		"TERM=dumb":     {append(testtools.HelmEnv(t), "TERM=dumb"), nil},
		"--color=never": {env, []string{"--color=never"}},
		"--no-color":    {env, []string{"--no-color"}},
	} {
		if s := onTerminal(t, c.env, append(slices.Clone(args), c.args...)...); strings.Contains(s, "\x1b[") || !strings.Contains(s, "has changed:") {
			t.Errorf("%s: colour on the terminal:\n%q", name, s)
		}
	}
	if s := onTerminal(t, append(slices.Clone(env), "NO_COLOR=1"), append(slices.Clone(args), "--color=always")...); !coloured(s) {
		t.Errorf("--color=always with NO_COLOR: no colour")
	}
	out, _, _ := runRenderer(t, append(slices.Clone(args), "--color=always")...)
	if !coloured(string(out)) {
		t.Errorf("--color=always on a pipe: no colour")
	}
	if _, errOut, code := runRenderer(t, append(slices.Clone(args), "--color=sometimes")...); code != 2 || !strings.Contains(string(errOut), "use auto, always or never") {
		t.Errorf("--color=sometimes: exit %d, %s", code, errOut)
	}
	if _, errOut, code := runRenderer(t, append(slices.Clone(args), "--color=always", "--no-color")...); code != 2 || !strings.Contains(string(errOut), "contradict") {
		t.Errorf("--color=always --no-color: exit %d, %s", code, errOut)
	}
}

// TestWrapperProgress: fetching a chart shows progress on a terminal (a
// line updated in place, then a done line), plain lines in CI, and nothing
// in a pipe.
func TestWrapperProgress(t *testing.T) {
	url := chartRepo(t)
	screen := onTerminal(t, append(testtools.HelmEnv(t), "TERM=xterm"), "template", "--repo", url, "--distro=rke2")
	for _, want := range []string{
		"\r\x1b[K| aws-ccm-renderer: looking up chart aws-cloud-controller-manager " + testtools.LatestChartVersion + " in " + url + " (0s)",
		"aws-ccm-renderer: looking up chart aws-cloud-controller-manager " + testtools.LatestChartVersion + " in " + url + ": done (",
		"aws-ccm-renderer: fetching chart " + url + "/aws-cloud-controller-manager-0.0.11.tgz: done (",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("no %q on the terminal:\n%q", want, screen)
		}
	}
	out, errOut, code := runWith(t, append(testtools.HelmEnv(t), "CI=true"), "", "template", "--repo", url, "--distro=rke2")
	want := "aws-ccm-renderer: looking up chart aws-cloud-controller-manager " + testtools.LatestChartVersion + " in " + url + " ...\n" +
		"aws-ccm-renderer: looking up chart aws-cloud-controller-manager " + testtools.LatestChartVersion + " in " + url + ": done ("
	if code != 0 || !strings.HasPrefix(string(errOut), want) || strings.Contains(string(errOut), "\r") || strings.Count(string(errOut), "\n") != 4 || len(out) == 0 {
		t.Errorf("in CI: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = runRenderer(t, "template", "--repo", url, "--distro=rke2")
	if code != 0 || len(errOut) != 0 {
		t.Errorf("without a terminal: exit %d, stderr %q", code, errOut)
	}
	// A failing step leaves no done line: the error is the only line.
	_, errOut, code = runWith(t, append(testtools.HelmEnv(t), "CI=true"), "", "template", "--repo", url, "--version", "9.9.9")
	if code != 1 || strings.Contains(string(errOut), "done") || !strings.HasSuffix(string(errOut), "\n") || !strings.Contains(string(errOut), "9.9.9") {
		t.Errorf("failing in CI: exit %d, stderr %q", code, errOut)
	}
}

// TestWrapperRepositoryDiff: diff of a pinned version from the loopback
// repository, and the repository's errors.
func TestWrapperRepositoryDiff(t *testing.T) {
	url := chartRepo(t)
	out, errOut, code := runRenderer(t, "diff", "--repo", url, "--version", "0.0.6", "--distro=rke", "--detailed-exitcode")
	if code != 2 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"(aws-cloud-controller-manager-0.0.6's output → patched by aws-ccm-renderer)\n",
		// 0.0.6 still selects the master label.
		"\n-         node-role.kubernetes.io/master: \"\"\n",
		"\n+         node-role.kubernetes.io/controlplane: \"true\"\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("diff lacks %q:\n%s", want, out)
		}
	}
	closed := httptest.NewServer(nil)
	closed.Close()
	for name, c := range map[string]struct {
		args []string
		code int
		want string
	}{
		"version not in the repository": {[]string{"template", "--repo", url, "--version", "9.9.9"}, 1, "9.9.9"},
		"chart not in the repository":   {[]string{"diff", "ccm", "no-such-chart", "--repo", url}, 1, "no-such-chart"},
		"repository unreachable": {[]string{"template", "--repo", closed.URL, "--version", "0.0.9"}, 3,
			closed.URL + " cannot be reached (", /* and how to use a package instead */
		},
		"repository unreachable, the hint": {[]string{"template", "--repo", closed.URL, "--version", "0.0.9"}, 3,
			"to use a chart package instead: where " + closed.URL + " can be reached, helm pull aws-cloud-controller-manager --repo " + closed.URL + " --version 0.0.9, then pass the package here: template aws-cloud-controller-manager ./aws-cloud-controller-manager-0.0.9.tgz",
		},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := runRenderer(t, c.args...)
			if code != c.code || len(out) != 0 || strings.Count(string(errOut), "\n") != 1 || !strings.Contains(string(errOut), c.want) {
				t.Errorf("exit %d (want %d), %d bytes out, stderr %q (want one line with %q)", code, c.code, len(out), errOut, c.want)
			}
		})
	}
}

// TestWrapperHelpAndCompletion: aws-ccm-renderer, which Helm runs as its
// post-renderer and has no Helm SDK, still gives the chart commands' full
// help and completes their flags (from aws-ccm-renderer-helm).
func TestWrapperHelpAndCompletion(t *testing.T) {
	for _, kind := range []string{"template", "install", "upgrade", "diff"} {
		for _, args := range [][]string{{kind, "--help"}, {"help", kind}} {
			out, errOut, code := runRenderer(t, args...)
			if code != 0 || !strings.Contains(string(out), "Examples:\n  # ") || !strings.Contains(string(out), "--distro string") ||
				!strings.Contains(string(out), "aws-ccm-renderer "+kind+" [RELEASE] [CHART] [flags]") ||
				!strings.Contains(string(out), "on the command line it shows in ps and the shell's history: prefer --password-stdin") {
				t.Errorf("%v: exit %d, %s\n%s", args, code, errOut, out)
			}
		}
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "template", "--distro", ""}, []string{"auto", "rke", "rke2", "k3s", "kubeadm", "detect", ":4"}},
		{[]string{"__complete", "diff", "ccm", "--mode", ""}, []string{"install", "migrate", ":4"}},
		{[]string{"__completeNoDesc", "upgrade", "--leader-migration-config", ""}, []string{"rendered", "default", ":4"}},
		{[]string{"__complete", "install", "--ato"}, []string{"--atomic\troll back (upgrade) or uninstall (install) when it fails; implies --wait", ":4"}},
	} {
		out, errOut, code := runRenderer(t, c.args...)
		if got := strings.Split(strings.TrimSpace(string(out)), "\n"); code != 0 || !slices.Equal(got, c.want) {
			t.Errorf("%v: exit %d, %q, want %q (%s)", c.args, code, got, c.want, errOut)
		}
	}
}

// TestWrapperKubeVersion: without a cluster, charts see the Kubernetes
// version the Helm CLI shows them (not the SDK's unstamped 1.20), or
// --kube-version.
func TestWrapperKubeVersion(t *testing.T) {
	chart := t.TempDir()
	testtools.WriteFile(t, filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: kube-version\nversion: 0.1.0\n"))
	testtools.WriteFile(t, filepath.Join(chart, "templates", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v\ndata:\n  version: {{ .Capabilities.KubeVersion.Version | quote }}\n"))
	want := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "template", "x", chart)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, string(want)},
		{[]string{"--kube-version", "1.31.2"}, "  version: \"v1.31.2\"\n"},
	} {
		out, errOut, code := runRenderer(t, append([]string{"template", "x", chart, "--allow-missing-workload"}, c.args...)...)
		if code != 0 || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "version: \"v1.") {
			t.Errorf("%v: exit %d, %s\n%s, want %s", c.args, code, errOut, out, c.want)
		}
	}
}

// TestWrapperWithoutHelmBuild: aws-ccm-renderer alone (no
// aws-ccm-renderer-helm beside it or on PATH) says what is missing.
func TestWrapperWithoutHelmBuild(t *testing.T) {
	alone := filepath.Join(t.TempDir(), "aws-ccm-renderer")
	b, err := os.ReadFile(testtools.Renderer(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(testtools.HelmEnv(t), "PATH="+t.TempDir())
	out, errOut, err := testtools.Run(t, env, alone, "template", "--distro=rke2")
	if code := testtools.ExitCode(err); code != 3 || len(out) != 0 ||
		string(errOut) != "aws-ccm-renderer: template, install, upgrade and diff need aws-ccm-renderer-helm next to this executable or on PATH (make build builds both)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The post-renderer itself needs nothing more.
	cmd := exec.Command(alone, "--distro=rke2")
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(testtools.HelmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), nil))
	if out, err := cmd.Output(); err != nil || !bytes.Contains(out, []byte("hostNetwork: true")) {
		t.Errorf("post-renderer alone: %v\n%s", err, out)
	}
}

// TestPostRendererLean: the post-renderer build links neither the Helm SDK
// nor a Kubernetes client, whose package initialisation alone would take
// longer than its whole render (docs/dev/chart-wrapper.md); its Helm build does.
func TestPostRendererLean(t *testing.T) {
	heavy := []string{"helm.sh/helm/v3", "k8s.io/client-go", "k8s.io/kubectl", "github.com/santhosh-tekuri/jsonschema/v6", "oras.land/oras-go/v2"}
	for _, c := range []struct {
		path   string
		linked bool
	}{
		{testtools.Renderer(t), false},
		{filepath.Join(filepath.Dir(testtools.Renderer(t)), "aws-ccm-renderer-helm"), true},
	} {
		bi, err := buildinfo.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		for _, mod := range heavy {
			linked := slices.ContainsFunc(bi.Deps, func(d *debug.Module) bool { return d.Path == mod })
			if linked != c.linked {
				t.Errorf("%s links %s: %v", filepath.Base(c.path), mod, linked)
			}
		}
	}
}

// TestWrapperWarnings: the chart commands print the renderer's warnings on
// their own stderr, where the person who ran them sees them (once on a
// terminal: they are not written to it a second time), with the manifests
// on stdout; --strict makes one an error, nothing on stdout.
func TestWrapperWarnings(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	args := []string{"template", "ccm", chart, "--distro=rke2", "--set", "args={--v=2,--cloud-provider=aws,--use-service-account-credentials=false}"}
	warning := `aws-ccm-renderer: warning: DaemonSet kube-system/aws-cloud-controller-manager: container "aws-cloud-controller-manager" comes with ` +
		`--use-service-account-credentials=false (the chart's values), which the renderer replaces with --use-service-account-credentials=true; ` +
		`to keep false, pass --set-arg=use-service-account-credentials=false: every CCM controller then runs with the CCM's own service account ` +
		`and its permissions, not a service account of its own`
	out, errOut, code := runRenderer(t, args...)
	if code != 0 || string(errOut) != warning+"\n" || !bytes.Contains(out, []byte("- --use-service-account-credentials=true\n")) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	termtest.CheckTerminalWarning(t, testtools.HelmEnv(t), testtools.Renderer(t), args, warning, true)

	out, errOut, code = runRenderer(t, append(args, "--strict")...)
	// The renderer's error as it is, without Helm's "error while running
	// post render on files" around it.
	if code != 1 || len(out) != 0 || string(errOut) != strings.Replace(warning, "warning: ", "", 1)+" (--strict: warnings are errors)\n" {
		t.Errorf("--strict: exit %d, %d bytes on stdout, stderr %q", code, len(out), errOut)
	}
}
