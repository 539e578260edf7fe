package overlays

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteNotThroughLinks: `overlays --out DIR` (Write, WriteFlux) neither
// deletes nor writes through a symbolic link under DIR: a checkout whose
// overlays/rke2 links to another directory, or whose README.md links to a
// file of the user's, keeps that directory and file as they are, and the
// command fails naming the link.
func TestWriteNotThroughLinks(t *testing.T) {
	for _, w := range []struct {
		name  string
		write func(string) error
		dir   string // a directory Write replaces
		file  string // a file it writes at the top
	}{{"kustomize", Write, "rke2", "README.md"}, {"flux", WriteFlux, FluxSourceDir, "README.md"}} {
		for _, link := range []string{w.dir, w.file} {
			t.Run(w.name+"/"+link, func(t *testing.T) {
				base := t.TempDir()
				out, elsewhere := filepath.Join(base, "overlays"), filepath.Join(base, "elsewhere")
				for p, content := range map[string]string{"install/keep.yaml": "keep", "victim.txt": "victim"} {
					path := filepath.Join(elsewhere, filepath.FromSlash(p))
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.MkdirAll(out, 0o755); err != nil {
					t.Fatal(err)
				}
				target := elsewhere
				if link == w.file {
					target = filepath.Join(elsewhere, "victim.txt")
				}
				if err := os.Symlink(target, filepath.Join(out, link)); err != nil {
					t.Fatal(err)
				}
				err := w.write(out)
				if err == nil || !strings.Contains(err.Error(), filepath.Join(out, link)+" is a symbolic link") {
					t.Errorf("error %v, want one naming the link", err)
				}
				for p, want := range map[string]string{"install/keep.yaml": "keep", "victim.txt": "victim"} {
					if b, err := os.ReadFile(filepath.Join(elsewhere, filepath.FromSlash(p))); err != nil || string(b) != want {
						t.Errorf("%s, which the link leads to: %q, %v; want it untouched", p, b, err)
					}
				}
			})
		}
	}
}
