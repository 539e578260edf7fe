package cli

import (
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	a := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	b := "a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\n"
	got := unifiedDiff("old", "new", a, b, 1)
	want := "--- old\n+++ new\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -10 +10,2 @@\n j\n+k\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if unifiedDiff("a", "b", a, a, 3) != "" {
		t.Error("equal texts give a diff")
	}
	got = unifiedDiff("old", "new", "", "x\n", 3)
	if got != "--- old\n+++ new\n@@ -0,0 +1 @@\n+x\n" {
		t.Errorf("from empty: %q", got)
	}
	// Deletions come before insertions in a changed run.
	got = unifiedDiff("old", "new", "k: 1\n", "k: 2\n", 3)
	if !strings.Contains(got, "-k: 1\n+k: 2\n") {
		t.Errorf("order: %q", got)
	}
}

func TestColorize(t *testing.T) {
	got := colorize("--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n z\n")
	for _, want := range []string{"\x1b[31m-x\x1b[0m\n", "\x1b[32m+y\x1b[0m\n", " z\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

func TestRedactSecrets(t *testing.T) {
	in := "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  password: c2VjcmV0\nstringData:\n  token: hunter2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  password: visible\n"
	out := redactSecrets(in)
	if strings.Contains(out, "c2VjcmV0") || strings.Contains(out, "hunter2") {
		t.Fatalf("secret data printed:\n%s", out)
	}
	if !strings.Contains(out, "password: (redacted ") || !strings.Contains(out, "visible") {
		t.Errorf("unexpected redaction:\n%s", out)
	}
	// The same value gets the same tag within a run; another value another.
	again := redactSecrets(in)
	if again != out {
		t.Error("redaction is not stable within a run")
	}
	other := redactSecrets(strings.Replace(in, "hunter2", "hunter3", 1))
	if other == out {
		t.Error("a changed secret value does not show as changed")
	}
	if got := redactSecrets("kind: Secret\ndata: [\n"); strings.Contains(got, "[") {
		t.Errorf("an unparseable stream is shown: %q", got)
	}
}
