package cli

import (
	"fmt"
	"math/rand/v2"
	"slices"
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

// TestDiffLinesShortest checks the edit script on random line sequences: it
// turns a into b, keeps only common lines, and has as few edits as the
// longest common subsequence allows.
func TestDiffLinesShortest(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	seq := func() []string {
		s := make([]string, rnd.IntN(30))
		for i := range s {
			s[i] = string(rune('a' + rnd.IntN(4)))
		}
		return s
	}
	for range 3000 {
		a, b := seq(), seq()
		ops := diffLines(a, b)
		var gotA, gotB []string
		edits := 0
		for i, op := range ops {
			if op.kind != '+' {
				if op.a != len(gotA) {
					t.Fatalf("%q → %q: op %d at a=%d, want %d", a, b, i, op.a, len(gotA))
				}
				gotA = append(gotA, op.line)
			}
			if op.kind != '-' {
				if op.b != len(gotB) {
					t.Fatalf("%q → %q: op %d at b=%d, want %d", a, b, i, op.b, len(gotB))
				}
				gotB = append(gotB, op.line)
			}
			if op.kind != ' ' {
				edits++
			}
			if op.kind == '-' && i > 0 && ops[i-1].kind == '+' {
				t.Fatalf("%q → %q: an insertion before a deletion", a, b)
			}
		}
		if !slices.Equal(gotA, a) || !slices.Equal(gotB, b) {
			t.Fatalf("%q → %q: the script gives %q → %q", a, b, gotA, gotB)
		}
		if want := len(a) + len(b) - 2*lcsLen(a, b); edits != want {
			t.Fatalf("%q → %q: %d edits, want %d", a, b, edits, want)
		}
	}
}

func lcsLen(a, b []string) int {
	l := make([][]int, len(a)+1)
	for i := range l {
		l[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	return l[0][0]
}

// TestDiffLinesLarge: a long stream with a few changes is quick and small.
func TestDiffLinesLarge(t *testing.T) {
	a := make([]string, 200000)
	for i := range a {
		a[i] = fmt.Sprintf("line %d", i)
	}
	b := slices.Clone(a)
	b[1000], b[150000] = "changed", "changed too"
	b = slices.Insert(b, 90000, "new")
	got := unifiedDiff("a", "b", strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n", 3)
	if strings.Count(got, "@@ -") != 3 || !strings.Contains(got, "-line 1000\n+changed\n") || !strings.Contains(got, "\n+new\n") {
		t.Errorf("diff:\n%s", got)
	}
}
