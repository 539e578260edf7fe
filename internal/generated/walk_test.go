package generated

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// walkRepo calls fn with the slash path (from the repository's top) and
// the full path of every regular file of the repository, but those under
// a hidden folder, bin and dist (what builds and tools leave) and the
// folders skip names.
func walkRepo(t *testing.T, skip func(rel string) bool, fn func(rel, path string) error) {
	t.Helper()
	root := testtools.Root()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || rel == "bin" || rel == "dist" || skip(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return fn(rel, path)
	})
	if err != nil {
		t.Fatal(err)
	}
}
