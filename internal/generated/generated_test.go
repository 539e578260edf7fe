package generated

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

var update = flag.Bool("update", false, "rewrite the generated files (make generate)")

// TestUpToDate fails when a generated file of the repository differs from
// what the renderer gives now, is missing, or is no longer generated.
func TestUpToDate(t *testing.T) {
	trees, err := Trees()
	if err != nil {
		t.Fatal(err)
	}
	root := testtools.Root()
	for _, tree := range trees {
		if *update {
			if err := tree.Write(root); err != nil {
				t.Fatal(err)
			}
		}
		problems, err := tree.Stale(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("%s (run make generate)", p)
		}
	}
	if len(trees) != 4 {
		t.Errorf("%d trees: %s", len(trees), Summary(trees))
	}
}

// TestStale: a changed, a missing and a leftover file are each reported,
// and Write mends all three.
func TestStale(t *testing.T) {
	root := t.TempDir()
	tree := Tree{Dir: "out", Files: map[string][]byte{"a/x.yaml": []byte("x\n"), "a/y.yaml": []byte("y\n"), "README.md": []byte("r\n")}, Owned: []string{"a"}}
	if err := tree.Write(root); err != nil {
		t.Fatal(err)
	}
	if p, err := tree.Stale(root); err != nil || len(p) != 0 {
		t.Fatalf("fresh tree: %q, %v", p, err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, "out", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/x.yaml", "edited\n")
	write("a/old.yaml", "gone\n")
	write("notes.txt", "a file outside the owned directories is the user's\n")
	if err := os.Remove(filepath.Join(root, "out", "a", "y.yaml")); err != nil {
		t.Fatal(err)
	}
	p, err := tree.Stale(root)
	want := []string{"out/a/x.yaml: stale", "out/a/y.yaml: missing", "out/a/old.yaml: not generated any more"}
	if err != nil || !slices.Equal(p, want) {
		t.Fatalf("Stale = %q, %v; want %q", p, err, want)
	}
	if err := tree.Write(root); err != nil {
		t.Fatal(err)
	}
	if p, err := tree.Stale(root); err != nil || len(p) != 0 {
		t.Fatalf("after Write: %q, %v", p, err)
	}
	if _, err := os.Stat(filepath.Join(root, "out", "notes.txt")); err != nil {
		t.Errorf("Write removed a file it does not own: %v", err)
	}
}
