package releases

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// releaseTag is a string that is exactly a release tag: a fact of some
// release, which this package is the only place to write.
var releaseTag = regexp.MustCompile(`^v1\.\d+\.\d+(-[a-z0-9.]+)?$`)

// tagLiterals returns the string literals of the non-test Go files under
// dir (this package left out) that are exactly a release tag, as
// FILE:LINE: "TAG".
func tagLiterals(t *testing.T, root string, dirs ...string) []string {
	t.Helper()
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if abs, _ := filepath.Abs(path); d.IsDir() && (abs == self || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && releaseTag.MatchString(s) {
					rel, _ := filepath.Rel(root, path)
					found = append(found, fset.Position(lit.Pos()).String()[len(path)-len(rel):]+": "+lit.Value)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// TestNoReleaseTagLiterals: no non-test Go file of the programs, the
// renderer or the internal packages writes a release tag as a string of its
// own ("v1.30.0"): the release data here is the one place a release fact
// is written, so that a new release is one edit. A tag cited inside a
// longer string is not a fact the code acts on.
func TestNoReleaseTagLiterals(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	for _, l := range tagLiterals(t, root, "cmd", "renderer", "internal") {
		t.Errorf("%s: a release tag written outside internal/releases; add the fact to internal/releases and read it there", l)
	}
}

// TestTagLiteralsFound: the scan finds a tag literal, in any string form,
// and leaves a cited one alone (the test above could fail).
func TestTagLiteralsFound(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "cmd", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package x\n\nvar a = \"v1.30.0\"\nvar b = `v1.36.0-alpha.1`\nvar c = \"fixed in v1.34.4\"\nvar d = \"v1.30\"\n"
	if err := os.WriteFile(filepath.Join(dir, "cmd", "x", "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cmd", "x", "x_test.go"), []byte("package x\n\nvar e = \"v1.30.0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := tagLiterals(t, dir, "cmd")
	want := []string{`cmd/x/x.go:3:9: "v1.30.0"`, "cmd/x/x.go:4:9: `v1.36.0-alpha.1`"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
