package testtools

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a test that records its fatal message instead of stopping.
type recorder struct {
	testing.TB
	name  string
	fatal string
}

func (r *recorder) Name() string { return r.name }
func (r *recorder) Helper()      {}
func (r *recorder) Fatalf(f string, args ...any) {
	if r.fatal == "" { // the first, as a real test stops there
		r.fatal = fmt.Sprintf(f, args...)
	}
}

func TestCheckHomes(t *testing.T) {
	env := HelmEnv(t)
	var cache string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HELM_CACHE_HOME="); ok {
			cache = v
		}
	}
	// The test that made the homes runs with them.
	CheckHomes(t, env)
	// A case of a table does not: the homes were its table's.
	t.Run("case", func(t *testing.T) {
		r := &recorder{TB: t, name: t.Name()}
		CheckHomes(r, env)
		if !strings.Contains(r.fatal, "HELM_CACHE_HOME="+cache+" ") || !strings.Contains(r.fatal, "was made by test TestCheckHomes and is used by test TestCheckHomes/case") {
			t.Errorf("a case running on its table's Helm homes: %q, want the home and both tests named", r.fatal)
		}
		// Its own homes, and a file in them named by KUBECONFIG's list.
		own := HelmEnv(t)
		CheckHomes(t, append(own, "KUBECONFIG=/nonexistent/a"))
		r = &recorder{TB: t, name: t.Name()}
		CheckHomes(r, append(own, "KUBECONFIG=/nonexistent/a:"+cache+"/kubeconfig"))
		if !strings.Contains(r.fatal, "KUBECONFIG="+cache+"/kubeconfig was made by test TestCheckHomes ") {
			t.Errorf("a kubeconfig in another test's home, in a list: %q", r.fatal)
		}
	})
	// Run holds its commands to the rule.
	t.Run("run", func(t *testing.T) {
		r := &recorder{TB: t, name: t.Name()}
		Command(r, env, "true")
		if r.fatal == "" {
			t.Error("Command ran a case on its table's Helm homes without a word")
		}
	})
}
