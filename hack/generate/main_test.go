package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/generated"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestGenerated: every generated file and section of the repository is
// what the generator writes now (make test runs -check too).
func TestGenerated(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(root, true, false, &out, &errOut); code != 0 || out.Len() > 0 {
		t.Errorf("exit %d, stdout %q:\n%s", code, out.String(), errOut.String())
	}
}

// TestCheckAndWrite: on a copy of the repository with a stale overlay, a
// stale plan section and a stale transcript, -check names the three,
// exits 1 and changes nothing; the write puts back what the repository
// has, and a second write does nothing.
func TestCheckAndWrite(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir := t.TempDir()
	for _, f := range strings.Split(strings.TrimSuffix(string(files), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		testtools.WriteFile(t, filepath.Join(dir, f), b)
	}
	stale := map[string]func(string) string{
		"overlays/rke2/install/kustomization.yaml": func(s string) string { return s + "# edited\n" },
		"docs/new-cluster.md": func(s string) string {
			return strings.Replace(s, "<!-- END GENERATED -->", "edited by hand\n<!-- END GENERATED -->", 1)
		},
		"docs/check.md": func(s string) string {
			_, after, _ := strings.Cut(s, "<!-- example: ")
			_, block, _ := strings.Cut(after, "```")
			nl := strings.Index(block, "\n")
			return strings.Replace(s, block[nl+1:nl+20], "an edited line\n", 1)
		},
	}
	before := map[string][]byte{}
	for f, edit := range stale {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
		testtools.WriteFile(t, filepath.Join(dir, f), []byte(edit(string(b))))
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	edited := map[string]string{}
	for f := range stale {
		edited[f] = read(f)
	}

	var out, errOut bytes.Buffer
	if code := run(dir, true, false, &out, &errOut); code != 1 || out.Len() > 0 {
		t.Fatalf("-check: exit %d, stdout %q; want 1 and nothing", code, out.String())
	}
	for f := range stale {
		if !strings.Contains(errOut.String(), f) {
			t.Errorf("-check does not name %s:\n%s", f, errOut.String())
		}
		if read(f) != edited[f] {
			t.Errorf("-check changed %s", f)
		}
	}
	if !strings.Contains(errOut.String(), "generate: 3 stale; run make generate") {
		t.Errorf("-check's last line:\n%s", errOut.String())
	}

	out.Reset()
	errOut.Reset()
	if code := run(dir, false, false, &out, &errOut); code != 0 || errOut.Len() > 0 {
		t.Fatalf("write: exit %d: %s", code, errOut.String())
	}
	for f := range stale {
		if read(f) != string(before[f]) {
			t.Errorf("the write did not put %s back", f)
		}
	}
	if n := strings.Count(out.String(), "rewrote "); n != 3 {
		t.Errorf("the write names %d rewrites, want 3:\n%s", n, out.String())
	}
	out.Reset()
	if code := run(dir, false, false, &out, &errOut); code != 0 || out.Len() > 0 {
		t.Errorf("a second write: exit %d, %q", code, out.String())
	}
}

// TestSections: a document without a generated section is a problem, a
// section no generator knows an error, and a plan section's command that
// fails says why.
func TestSections(t *testing.T) {
	dir := t.TempDir()
	testtools.WriteFile(t, filepath.Join(dir, "none.md"), []byte("# nothing generated\n"))
	if p, _, err := generated.Sections(dir, "none.md", planSection, false); err != nil || len(p) != 1 || !strings.Contains(p[0], "no generated section") {
		t.Errorf("no section: %q, %v", p, err)
	}
	testtools.WriteFile(t, filepath.Join(dir, "odd.md"), []byte("<!-- BEGIN GENERATED: something else -->\nx\n<!-- END GENERATED -->\n"))
	if _, _, err := generated.Sections(dir, "odd.md", compatibility, false); err == nil || !strings.Contains(err.Error(), `the section "something else"`) {
		t.Errorf("an unknown section: %v", err)
	}
	testtools.WriteFile(t, filepath.Join(dir, "bad.md"), []byte("<!-- BEGIN GENERATED: aws-ccm-renderer plan --distro nosuch -->\nx\n<!-- END GENERATED -->\n"))
	if _, _, err := generated.Sections(dir, "bad.md", planSection, false); err == nil || !strings.Contains(err.Error(), "exit 2") {
		t.Errorf("a failing command: %v", err)
	}
}
