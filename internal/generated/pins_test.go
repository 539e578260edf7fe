package generated

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// tagAlone is a CCM image tag set without a digest: image.tag=TAG, an
// image.tag line (tag: TAG), or overlays' --image-tag=TAG.
var tagAlone = regexp.MustCompile(`(?m)(?:image\.tag=|image-tag=|^\s*tag: )(v1\.\d+\.\d+)(?:[^@.\d]|$)`)

// TestDocsPinByDigest: no page a user copies from (README.md, docs/, the
// examples, the charts' READMEs) and no --help example pins a CCM release
// by tag alone: the promotion list gives a promoted tag's digest, and an
// unpromoted tag's is read (crane digest) into the pin; a tag can move.
func TestDocsPinByDigest(t *testing.T) {
	root := testtools.Root()
	files := userDocs(t)
	for _, dir := range []string{"examples", "charts"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if dir == "examples" || filepath.Base(p) == "README.md" {
				rel, _ := filepath.Rel(root, p)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	files = append(files, "cmd/cli/root.go", "cmd/cli/helmcmd/argocd.go")
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		seen += strings.Count(string(b), "@sha256:")
		for _, m := range tagAlone.FindAllStringSubmatch(string(b), -1) {
			if _, promoted := releases.Digest(m[1]); promoted {
				t.Errorf("%s: %q pins %s by tag alone: give %s", f, strings.TrimSpace(m[0]), m[1], releases.Pin(m[1]))
			} else {
				t.Errorf("%s: %q pins %s, not promoted yet, by tag alone: give %s@<its digest: %s>", f, strings.TrimSpace(m[0]), m[1], m[1], releases.DigestCommand(m[1]))
			}
		}
	}
	if seen == 0 {
		t.Error("no page pins anything by digest: the scan reads the wrong files")
	}
}
