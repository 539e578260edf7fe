package releases

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// repoPath is a path into this repository as the docs name one: a top
// directory of the repository, then the rest. It starts a word, in prose,
// in code or in a link.
var repoPath = regexp.MustCompile("(?:^|[\\s(`\"'\\[])((?:docs|testdata|internal|cmd|renderer|examples|e2e|integration|charts|overlays|plugin|hack)/[A-Za-z0-9_./-]*[A-Za-z0-9_/])")

// upstreamRepo is an owner/name of another repository: a path after it
// (in the same sentence) is that repository's, not this one's.
var upstreamRepo = regexp.MustCompile(`\b([a-z0-9][a-z0-9-]*)/[a-z0-9][a-z0-9._-]*\b`)

// topDirs are this repository's top directories, which are no owners.
var topDirs = map[string]bool{"docs": true, "testdata": true, "internal": true, "cmd": true, "renderer": true, "examples": true,
	"e2e": true, "integration": true, "charts": true, "overlays": true, "plugin": true, "hack": true, "bin": true, "dist": true}

// unopenable returns the citations of a document that name a path of
// this repository that is not there: a reader cannot open them. A path
// that follows another repository's owner/name within its sentence is
// that repository's; a path with a placeholder (<...>, *, ...) is a
// pattern, not a citation.
func unopenable(text string, exists func(string) bool) []string {
	var out []string
	for _, m := range repoPath.FindAllStringSubmatchIndex(text, -1) {
		p := strings.TrimRight(text[m[2]:m[3]], "/.")
		if strings.ContainsAny(text[m[3]:min(m[3]+1, len(text))], "<*") || strings.Contains(p, "...") {
			continue
		}
		sentence := text[max(0, m[2]-200):m[2]]
		for _, end := range []string{". ", ".\n", "\n\n", "| "} {
			if i := strings.LastIndex(sentence, end); i >= 0 {
				sentence = sentence[i+len(end):]
			}
		}
		upstream := false
		for _, o := range upstreamRepo.FindAllStringSubmatch(sentence, -1) {
			if !topDirs[o[1]] {
				upstream = true
			}
		}
		if !upstream && !exists(p) {
			out = append(out, p)
		}
	}
	return out
}

// TestUnopenable: unopenable finds a missing path of this repository and
// leaves alone existing ones, other repositories' and patterns.
func TestUnopenable(t *testing.T) {
	exists := func(p string) bool { return p == "docs/check.md" || p == "internal/check" }
	text := "See docs/check.md and `internal/check/`. kubernetes/cloud-provider-aws, `docs/README.md`, says so. " +
		"Private: docs/spec.md. A pattern: `overlays/<distro>/install`, `charts/*.tgz`."
	if got := unopenable(text, exists); !slices.Equal(got, []string{"docs/spec.md"}) {
		t.Errorf("unopenable = %q, want [docs/spec.md]", got)
	}
}

// TestDocCitations: every path of this repository that the user docs
// (README.md, docs/*.md, the examples' READMEs) cite is one a reader can
// open in the repository. (docs/dev holds the runbooks plan generates,
// whose steps cite upstream files in their own words.)
func TestDocCitations(t *testing.T) {
	r := root(t)
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(r, filepath.FromSlash(p)))
		return err == nil
	}
	n := 0
	for _, f := range trackedFiles(t, r) {
		f = filepath.ToSlash(f)
		user := f == "README.md" || strings.HasPrefix(f, "docs/") && !strings.HasPrefix(f, "docs/dev/") || strings.HasPrefix(f, "examples/")
		if !strings.HasSuffix(f, ".md") || !user {
			continue
		}
		b, err := os.ReadFile(filepath.Join(r, f))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			t.Fatal(err)
		}
		n++
		for _, p := range unopenable(string(b), exists) {
			t.Errorf("%s cites %s, which is not in the repository: name the file that is, or the public repository, path and tag it is in", f, p)
		}
	}
	if n < 20 {
		t.Errorf("%d documents read: the selection finds too few", n)
	}
}
