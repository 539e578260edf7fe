package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

var pluginOnce sync.Once

// helmPlugin builds dist/helm-plugin/aws-ccm with make and returns its path.
func helmPlugin(t *testing.T) string {
	t.Helper()
	var err error
	var out []byte
	pluginOnce.Do(func() {
		out, err = exec.Command("make", "-s", "-C", testtools.Root(), "helm-plugin").CombinedOutput()
	})
	if err != nil {
		t.Fatalf("make helm-plugin: %v\n%s", err, out)
	}
	return filepath.Join(testtools.Root(), "dist", "helm-plugin", "aws-ccm")
}

// helm4WithPlugin returns an isolated Helm 4 environment with the plugin
// installed the way the docs say.
func helm4WithPlugin(t *testing.T) (helm string, env []string) {
	t.Helper()
	helm, env = testtools.Helm4(t), testtools.HelmEnv(t)
	out := testtools.MustRun(t, env, helm, "plugin", "install", helmPlugin(t))
	if !strings.Contains(string(out), "Installed plugin: aws-ccm") {
		t.Fatalf("helm plugin install: %s", out)
	}
	list := testtools.MustRun(t, env, helm, "plugin", "list")
	if !strings.Contains(string(list), "postrenderer/v1") {
		t.Fatalf("helm plugin list does not show the post-renderer:\n%s", list)
	}
	return helm, env
}

// TestHelm4Plugin renders the latest upstream chart with the real Helm 4 CLI
// through the installed plugin, for every distro and mode.
func TestHelm4Plugin(t *testing.T) {
	helm, env := helm4WithPlugin(t)
	nodes := fixtures(t)
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	plainObjs, err := manifest.Split(testtools.MustRun(t, env, helm, "template", "ccm", chart, "--namespace", "kube-system"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range renderer.Distros {
		for _, mode := range renderer.Modes {
			t.Run(string(d)+"-"+string(mode), func(t *testing.T) {
				out := testtools.MustRun(t, env, helm, "template", "ccm", chart, "--namespace", "kube-system",
					"--post-renderer", "aws-ccm", "--post-renderer-args=--distro="+string(d), "--post-renderer-args=--mode="+string(mode))
				objs, err := manifest.Split(out)
				if err != nil {
					t.Fatal(err)
				}
				checkMeaning(t, objs, nodes, d, mode)
				// Helm 4 re-serialises whatever a post-renderer returns, so
				// compare the objects the renderer leaves alone as data.
				checkUntouchedData(t, plainObjs, objs)
			})
		}
	}
}

// TestHelm4PluginErrorOnTerminal: Helm 4 throws a plugin's stderr away, so a
// failing render must still tell the person at the terminal why. Helm runs
// under a pseudo-terminal here, as in an interactive shell.
func TestHelm4PluginErrorOnTerminal(t *testing.T) {
	helm, env := helm4WithPlugin(t)
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	cmd := exec.Command(helm, "template", "ccm", chart, "--post-renderer", "aws-ccm", "--post-renderer-args=--distro=bogus")
	cmd.Env = env
	term, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	var screen bytes.Buffer
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(&screen, term) // ends with EIO when helm exits
		close(copied)
	}()
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err = <-waitErr:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("helm did not finish")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("helm exit: %v, want a failure", err)
	}
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
	}
	text := screen.String()
	if !strings.Contains(text, `aws-ccm-renderer: unknown distro "bogus": use one of auto, rke, rke2, k3s, kubeadm`) {
		t.Errorf("the terminal does not show the renderer's error:\n%s", text)
	}
	if !strings.Contains(text, `plugin "aws-ccm" exited with error`) {
		t.Errorf("the terminal does not show Helm's own error:\n%s", text)
	}
	if strings.Contains(text, "apiVersion:") {
		t.Errorf("manifests were printed:\n%s", text)
	}

	// Without a terminal (CI, GitOps controllers) nothing is written
	// anywhere but Helm's error, and still no manifests.
	out, errOut, err := testtools.Run(t, env, helm, "template", "ccm", chart, "--post-renderer", "aws-ccm", "--post-renderer-args=--distro=bogus")
	if err == nil || len(out) != 0 || !strings.Contains(string(errOut), `plugin "aws-ccm" exited with error`) {
		t.Errorf("without a terminal: err %v, stdout %q, stderr %q", err, out, errOut)
	}
}

// checkUntouchedData: every object the renderer does not patch comes out
// with the same content, in the same order.
func checkUntouchedData(t *testing.T, plain, out []manifest.Object) {
	t.Helper()
	keep := func(objs []manifest.Object) []manifest.Object {
		var kept []manifest.Object
		for _, o := range objs {
			if o.Kind != "DaemonSet" && o.Kind != "ClusterRole" && o.Kind != "ConfigMap" {
				kept = append(kept, o)
			}
		}
		return kept
	}
	a, b := keep(plain), keep(out)
	if len(a) != len(b) {
		t.Fatalf("%d untouched objects, want %d", len(b), len(a))
	}
	for i := range a {
		if !reflect.DeepEqual(a[i].Doc, b[i].Doc) {
			t.Errorf("%s changed", a[i].ID())
		}
	}
}
