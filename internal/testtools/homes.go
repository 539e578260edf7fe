package testtools

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The tool homes a test made (HelmEnv, OwnHome), by directory: the test's
// name. A tool writes its home (helm repo add rewrites repositories.yaml,
// helmfile and Helm fill their caches, kubectl config rewrites a
// kubeconfig), so two cases that run side by side on one home see each
// other's writes. CheckHomes holds every command a test runs to the homes
// that test made.
var homes sync.Map

// homeVars are the variables that name a tool's home.
var homeVars = map[string]bool{
	"HELM_CACHE_HOME":        true,
	"HELM_CONFIG_HOME":       true,
	"HELM_DATA_HOME":         true,
	"HELM_PLUGINS":           true,
	"HELM_REPOSITORY_CONFIG": true,
	"HELM_REPOSITORY_CACHE":  true,
	"HELM_REGISTRY_CONFIG":   true,
	"KUBECONFIG":             true,
	"XDG_CACHE_HOME":         true,
	"XDG_CONFIG_HOME":        true,
	"XDG_DATA_HOME":          true,
	"HELMFILE_CACHE_HOME":    true,
	"KUSTOMIZE_PLUGIN_HOME":  true,
	"HOME":                   true,
}

// OwnHome records that dir, a tool's home (or a kubeconfig file), belongs
// to t: a command run by another test with it in its environment fails
// that test (CheckHomes).
func OwnHome(t testing.TB, dir string) {
	homes.Store(filepath.Clean(dir), t.Name())
}

// CheckHomes fails t when env names a tool home that another test made: a
// case of a table must make its own (HelmEnv in the case, not in the
// table's test), as the cases may run side by side. Each path of a list
// (KUBECONFIG's) and each home under a recorded directory counts. The
// e2e module's tests are held to it too: a cluster's kubeconfig is shared
// by design (it is not a home a test makes), Helm's homes are not.
func CheckHomes(t testing.TB, env []string) {
	t.Helper()
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if !homeVars[name] || value == "" {
			continue
		}
		for _, p := range filepath.SplitList(value) {
			if owner, ok := homeOwner(p); ok && owner != t.Name() {
				t.Fatalf("%s=%s was made by test %s and is used by test %s: each test (each case of a table) makes its own tool homes (testtools.HelmEnv in the case), as cases run side by side and the tools write their homes", name, p, owner, t.Name())
			}
		}
	}
}

// homeOwner is the test that made p or the directory p is in.
func homeOwner(p string) (string, bool) {
	for p = filepath.Clean(p); ; {
		if owner, ok := homes.Load(p); ok {
			return owner.(string), true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", false
		}
		p = parent
	}
}

// Command is exec.Command for a test: with env, in a session of its own
// (OwnSession), after CheckHomes.
func Command(t testing.TB, env []string, name string, args ...string) *exec.Cmd {
	t.Helper()
	CheckHomes(t, env)
	cmd := exec.Command(name, args...)
	cmd.Env = env
	OwnSession(cmd)
	return cmd
}
