package testtools

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// HelmEnv returns an environment that keeps Helm's cache, config and data
// in a test's own directory, and that does not depend on where the tests
// run: without $CI (set by CI services), which turns the chart commands'
// progress lines on, $NO_COLOR and $TERM, which decide colour, $KUBECONFIG
// and every $HELM_* variable (a cluster, namespace, storage driver or file
// of the caller's); tests that need one add it.
func HelmEnv(t testing.TB) []string {
	t.Helper()
	dir := t.TempDir()
	OwnHome(t, dir)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return HostileToTests(name)
	})
	return append(env,
		"HELM_CACHE_HOME="+filepath.Join(dir, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(dir, "config"),
		"HELM_DATA_HOME="+filepath.Join(dir, "data"),
		"HELM_PLUGINS="+filepath.Join(dir, "data", "plugins"), // where helm plugin install puts them
	)
}

// Run runs a command and returns its stdout and stderr separately. It
// runs in a session of its own, without a controlling terminal.
func Run(t testing.TB, env []string, name string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	cmd := Command(t, env, name, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

// MustRun runs a command and fails the test when it fails.
func MustRun(t testing.TB, env []string, name string, args ...string) []byte {
	t.Helper()
	out, errOut, err := Run(t, env, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, errOut)
	}
	return out
}

// ExitCode returns a command's exit status from the error Run returned: 0
// for nil, -1 when the command did not run.
func ExitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// HostileToTests tells whether an environment variable of the caller's
// would change what the programs under test do: the ones HelmEnv drops.
func HostileToTests(name string) bool {
	switch name {
	case "CI", "NO_COLOR", "TERM", "KUBECONFIG":
		return true
	}
	return strings.HasPrefix(name, "HELM_")
}

// UnsetHostile unsets the caller's variables that HostileToTests names, for
// tests that run the programs in-process (their TestMain): a test that
// needs one sets it with t.Setenv.
func UnsetHostile() {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); HostileToTests(name) {
			os.Unsetenv(name)
		}
	}
}

// LoopbackChartRepo serves the latest upstream chart package from a Helm
// chart repository on a loopback port, in place of the upstream
// repository, for the test's lifetime, and returns its URL. The index is
// written by the real `helm repo index`.
func LoopbackChartRepo(t testing.TB) string {
	t.Helper()
	return LoopbackChartRepoOf(t, LatestChartVersion)
}

// LoopbackChartRepoOf is LoopbackChartRepo serving the upstream chart's
// versions given.
func LoopbackChartRepoOf(t testing.TB, versions ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, v := range versions {
		chart := UpstreamChart(t, v)
		b, err := os.ReadFile(chart)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(chart)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	MustRun(t, HelmEnv(t), Helm3(t), "repo", "index", dir, "--url", srv.URL)
	return srv.URL
}
