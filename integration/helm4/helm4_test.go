// Package helm4 tests the Helm 4 post-renderer plugin with the real Helm 4
// CLI: install from a directory and a packaged archive, arguments, errors
// shown on the terminal although Helm 4 hides the plugin's stderr.
package helm4

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
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/termtest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

var (
	pluginOnce sync.Once
	pluginErr  error
	pluginOut  []byte
)

// helmPlugin builds dist/helm-plugin/aws-ccm with make and returns its path.
func helmPlugin(t *testing.T) string {
	t.Helper()
	pluginOnce.Do(func() {
		pluginOut, pluginErr = exec.Command("make", "-s", "-C", testtools.Root(), "helm-plugin").CombinedOutput()
	})
	if pluginErr != nil {
		t.Fatalf("make helm-plugin: %v\n%s", pluginErr, pluginOut)
	}
	return filepath.Join(testtools.Root(), "dist", "helm-plugin", "aws-ccm")
}

// helm4WithPlugin returns an isolated Helm 4 environment with the plugin
// installed the way the docs say: from the directory, no flags.
func helm4WithPlugin(t *testing.T) (helm string, env []string) {
	t.Helper()
	helm, env = testtools.Helm4(t), testtools.HelmEnv(t)
	dir := helmPlugin(t)
	out := testtools.MustRun(t, env, helm, "plugin", "install", dir)
	if !strings.Contains(string(out), "Installed plugin: aws-ccm") {
		t.Fatalf("helm plugin install: %s", out)
	}
	checkPluginList(t, helm, env)
	// Helm links the directory in (the docs say so: a rebuild updates
	// the installed plugin, and removing dist/ breaks it).
	installed := filepath.Join(envValue(env, "HELM_DATA_HOME"), "plugins", "aws-ccm")
	if target, err := os.Readlink(installed); err != nil || target != dir {
		t.Errorf("the installed plugin %s links to %q (%v), want %s", installed, target, err, dir)
	}
	return helm, env
}

// checkPluginList: helm plugin list shows the post-renderer with the
// version make helm-plugin stamped.
func checkPluginList(t *testing.T, helm string, env []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(helmPlugin(t), "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, version, _ := strings.Cut(string(b), "\nversion: ")
	version, _, _ = strings.Cut(version, "\n")
	list := string(testtools.MustRun(t, env, helm, "plugin", "list"))
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "aws-ccm" && f[2] == "postrenderer/v1" {
			if f[1] != version || version == "" {
				t.Errorf("plugin version %q, want %q", f[1], version)
			}
			return
		}
	}
	t.Fatalf("helm plugin list does not show the aws-ccm post-renderer:\n%s", list)
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// TestHelm4Plugin renders the latest upstream chart with the real Helm 4 CLI
// through the installed plugin, for every distro and mode.
func TestHelm4Plugin(t *testing.T) {
	helm, env := helm4WithPlugin(t)
	nodes := testtools.Fixtures(t)
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	plainObjs, err := manifest.Split(testtools.MustRun(t, env, helm, "template", "ccm", chart, "--namespace", "kube-system"))
	if err != nil {
		t.Fatal(err)
	}
	// A migration pins the CCM of the cluster's minor and gives the
	// renderer the cluster's version.
	migrate := []string{"--set", "image.tag=" + releases.Tag(releases.LastInTreeMinor), "--post-renderer-args=--kube-version=v1.26.15"}
	for _, d := range distros.All {
		p, _ := distros.RecordOf(d)
		for _, mode := range renderer.ModesOf(p) {
			t.Run(string(d)+"-"+string(mode), func(t *testing.T) {
				t.Parallel()
				helm, env := helm4WithPlugin(t) // each case its own Helm homes
				args := []string{"template", "ccm", chart, "--namespace", "kube-system",
					"--post-renderer", "aws-ccm", "--post-renderer-args=--distro=" + string(d), "--post-renderer-args=--mode=" + string(mode)}
				if mode == renderer.ModeMigrate {
					args = append(args, migrate...)
				}
				out := testtools.MustRun(t, env, helm, args...)
				objs, err := manifest.Split(out)
				if err != nil {
					t.Fatal(err)
				}
				testtools.CheckMeaning(t, objs, nodes, d, mode)
				// Helm 4 re-serialises whatever a post-renderer returns, so
				// compare the objects the renderer leaves alone as data.
				testtools.CheckUntouchedData(t, plainObjs, objs)
			})
		}
	}
	// Helm 3's spelling, a path, is not a plugin name.
	t.Run("path", func(t *testing.T) {
		t.Parallel()
		helm, env := helm4WithPlugin(t) // each case its own Helm homes
		_, errOut, err := testtools.Run(t, env, helm, "template", "ccm", chart, "--post-renderer", testtools.Renderer(t))
		want := `for "--post-renderer" flag: plugin: {Name:` + testtools.Renderer(t) + ` Type:postrenderer/v1} not found`
		if testtools.ExitCode(err) != 1 || !strings.Contains(string(errOut), want) {
			t.Errorf("--post-renderer <path>: %v\n%s", err, errOut)
		}
	})
	// Every --post-renderer-args value is one argument, commas and all, in
	// order, whether given before or after --post-renderer.
	t.Run("args", func(t *testing.T) {
		t.Parallel()
		helm, env := helm4WithPlugin(t) // each case its own Helm homes
		out := testtools.MustRun(t, env, helm, "template", "ccm", chart, "--namespace", "kube-system",
			"--post-renderer-args=--set-arg=cluster-name=prod,eu", "--post-renderer", "aws-ccm",
			"--post-renderer-args=--distro=rke", "--post-renderer-args", "--remove-arg=v", "--post-renderer-args=--host-network=false")
		ccm, args := testtools.CCMOf(t, out)
		if v, _ := manifest.Flag(args, "cluster-name"); v != "prod,eu" {
			t.Errorf("--cluster-name=%q; args %q", v, args)
		}
		if _, ok := manifest.Flag(args, "v"); ok {
			t.Errorf("--v is still there: %q", args)
		}
		if hn, _ := manifest.Get(ccm.Doc, "spec", "template", "spec", "hostNetwork").(bool); hn {
			t.Error("hostNetwork is true")
		}
		sel, _ := manifest.Get(ccm.Doc, "spec", "template", "spec", "nodeSelector").(map[string]any)
		if sel["node-role.kubernetes.io/controlplane"] != "true" {
			t.Errorf("nodeSelector %v", sel)
		}
	})
}

// TestHelm4PluginPackage: a plugin archive made with `helm plugin package`
// (for machines without a clone) installs only with --verify=false unless
// it is signed, as the docs say, and then works.
func TestHelm4PluginPackage(t *testing.T) {
	helm, env := testtools.Helm4(t), testtools.HelmEnv(t)
	dest := t.TempDir()
	testtools.MustRun(t, env, helm, "plugin", "package", helmPlugin(t), "--sign=false", "--destination", dest)
	archives, _ := filepath.Glob(filepath.Join(dest, "aws-ccm-*.tgz"))
	if len(archives) != 1 {
		t.Fatalf("helm plugin package wrote %v", archives)
	}
	_, errOut, err := testtools.Run(t, env, helm, "plugin", "install", archives[0])
	if err == nil || !strings.Contains(string(errOut), "no provenance file (.prov) found") {
		t.Errorf("an unsigned archive installed without --verify=false: %v\n%s", err, errOut)
	}
	testtools.MustRun(t, env, helm, "plugin", "install", archives[0], "--verify=false")
	checkPluginList(t, helm, env)
	out := testtools.MustRun(t, env, helm, "template", "ccm", testtools.UpstreamChart(t, testtools.LatestChartVersion),
		"--namespace", "kube-system", "--post-renderer", "aws-ccm", "--post-renderer-args=--distro=rke2")
	objs, err := manifest.Split(out)
	if err != nil {
		t.Fatal(err)
	}
	testtools.CheckMeaning(t, objs, testtools.Fixtures(t), distros.RKE2, renderer.ModeInstall)
}

// TestHelm4PluginErrorOnTerminal: Helm 4 throws a plugin's stderr away, so a
// failing render must still tell the person at the terminal why. Helm runs
// under a pseudo-terminal here, as in an interactive shell.
func TestHelm4PluginErrorOnTerminal(t *testing.T) {
	helm, env := helm4WithPlugin(t)
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	renderErr := `aws-ccm-renderer: --distro "bogus" is unknown: use one of auto, rke, rke2, k3s, kubeadm`
	helmErr := `Error: error while running post render on files: failed to invoke post-renderer plugin "aws-ccm": plugin "aws-ccm" exited with error`
	args := []string{"template", "ccm", chart, "--post-renderer", "aws-ccm", "--post-renderer-args=--distro=bogus"}

	code, text := termtest.RunOnTerminal(t, env, helm, args...)
	if code != 1 {
		t.Errorf("helm exit %d, want 1", code)
	}
	if strings.Count(text, renderErr) != 1 {
		t.Errorf("the terminal does not show the renderer's error once:\n%s", text)
	}
	if !strings.Contains(text, helmErr) {
		t.Errorf("the terminal does not show Helm's own error:\n%s", text)
	}

	// Migrate mode with the chart's CCM (1.35) on a 1.26 cluster: refused,
	// and the terminal says which tag to pin.
	code, text = termtest.RunOnTerminal(t, env, helm, "template", "ccm", chart, "--post-renderer", "aws-ccm",
		"--post-renderer-args=--mode=migrate", "--post-renderer-args=--kube-version=v1.26.15")
	if want := "is 1.35 and the cluster (--kube-version v1.26.15) 1.26: a migration runs the CCM of the cluster's minor; " +
		"pin the CCM release of the cluster's minor, v1.26.14 (with the upstream chart: --set image.tag=" + releases.Pin("v1.26.14") + ")"; code != 1 || strings.Count(text, want) != 1 || strings.Contains(text, "kind: DaemonSet") {
		t.Errorf("migrate mode with a 1.35 CCM on a 1.26 cluster: exit %d, the terminal shows:\n%s", code, text)
	}
	if strings.Index(text, renderErr) > strings.Index(text, helmErr) {
		t.Errorf("the renderer's error does not come first:\n%s", text)
	}
	if strings.Contains(text, "apiVersion:") {
		t.Errorf("manifests were printed:\n%s", text)
	}

	// Without a terminal (CI, GitOps controllers) nothing is written
	// anywhere but Helm's error, and still no manifests.
	out, errOut, err := testtools.Run(t, env, helm, args...)
	if testtools.ExitCode(err) < 1 || len(out) != 0 || !strings.HasPrefix(string(errOut), helmErr) || strings.Contains(string(errOut), renderErr) {
		t.Errorf("without a terminal: err %v, stdout %q, stderr %q", err, out, errOut)
	}
	// Helm's --debug, which its message suggests, shows neither the
	// reason (it logs the plugin's stderr as empty) nor manifests.
	out, errOut, err = testtools.Run(t, env, helm, append(args, "--debug")...)
	if testtools.ExitCode(err) < 1 || len(bytes.TrimSpace(out)) != 0 || !strings.Contains(string(errOut), `stderr=""`) {
		t.Errorf("--debug: err %v, stdout %q, stderr %q", err, out, errOut)
	}
}

// TestHelm4PluginWarningOnTerminal: Helm 4 never shows a plugin's stderr,
// so a render that warns tells the person at the terminal on the
// terminal; without one (CI, GitOps controllers) the warning is lost, as
// the docs say (--strict makes it an error).
func TestHelm4PluginWarningOnTerminal(t *testing.T) {
	helm, env := helm4WithPlugin(t)
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	args := []string{"template", "ccm", chart, "--namespace", "kube-system", "--post-renderer", "aws-ccm",
		"--post-renderer-args=--distro=rke2", "--post-renderer-args=--set-arg=configure-cloud-routes=true"}
	termtest.CheckTerminalWarning(t, env, helm, args, testtools.RiskWarning, false)

	_, errOut, err := testtools.Run(t, env, helm, append(args, "--post-renderer-args=--strict")...)
	if testtools.ExitCode(err) != 1 || !strings.Contains(string(errOut), `plugin "aws-ccm" exited with error`) {
		t.Errorf("--strict without a terminal: %v\n%s", err, errOut)
	}
}
