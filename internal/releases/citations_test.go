package releases

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// privateCitation is a pointer into a specification the repository does not
// hold. Users cannot follow it: docs, comments and output cite a public
// source (a repository, path and tag; an issue; the test that measured it).
// Built from parts so that this file does not match itself.
var privateCitation = regexp.MustCompile(`\bSPEC (` + "\u00a7" + `|section )`)

// trackedFiles lists the repository's tracked files, relative to root; where
// git cannot, every file under root but .git.
func trackedFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range bytes.Split(out, []byte{0}) {
			if len(f) > 0 {
				files = append(files, string(f))
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestNoPrivateCitations: no tracked file outside testdata cites the
// specification by section.
func TestNoPrivateCitations(t *testing.T) {
	r := root(t)
	for _, f := range trackedFiles(t, r) {
		if strings.Contains("/"+filepath.ToSlash(f), "/testdata/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(r, f))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree
			}
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if privateCitation.MatchString(line) {
				t.Errorf("%s:%d cites a specification users cannot read; cite the public source instead: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
