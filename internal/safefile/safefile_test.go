package safefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplace: the files land under the directory, the replaced
// directories lose what they held, and a symbolic link anywhere on the way
// is an error that leaves its target untouched.
func TestReplace(t *testing.T) {
	files := map[string][]byte{"README.md": []byte("readme\n"), "rke2/install/kustomization.yaml": []byte("kind: Component\n")}
	replace := []string{"rke2/install"}
	write := func(t *testing.T, p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(t *testing.T, target, p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, out, elsewhere string) // elsewhere holds victim.txt and install/keep.txt
		want  string                                    // the error; "" for none
	}{
		{"a fresh directory", func(*testing.T, string, string) {}, ""},
		{"an earlier output: stale files go, others stay", func(t *testing.T, out, _ string) {
			write(t, filepath.Join(out, "rke2", "install", "stale.yaml"), "old")
			write(t, filepath.Join(out, "notes.txt"), "mine")
		}, ""},
		{"a link inside a replaced directory goes, its target stays", func(t *testing.T, out, elsewhere string) {
			link(t, filepath.Join(elsewhere, "victim.txt"), filepath.Join(out, "rke2", "install", "old.yaml"))
		}, ""},
		{"--out is a link", func(t *testing.T, out, elsewhere string) {
			if err := os.Remove(out); err != nil {
				t.Fatal(err)
			}
			link(t, elsewhere, out)
		}, "out is a symbolic link"},
		{"a distribution's directory is a link", func(t *testing.T, out, elsewhere string) {
			link(t, elsewhere, filepath.Join(out, "rke2"))
		}, filepath.Join("out", "rke2") + " is a symbolic link"},
		{"a file to write is a link", func(t *testing.T, out, elsewhere string) {
			link(t, filepath.Join(elsewhere, "victim.txt"), filepath.Join(out, "README.md"))
		}, filepath.Join("out", "README.md") + " is a symbolic link"},
		{"a link to the output itself", func(t *testing.T, out, _ string) {
			link(t, ".", filepath.Join(out, "rke2"))
		}, filepath.Join("out", "rke2") + " is a symbolic link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			out, elsewhere := filepath.Join(base, "out"), filepath.Join(base, "elsewhere")
			write(t, filepath.Join(elsewhere, "victim.txt"), "victim")
			write(t, filepath.Join(elsewhere, "install", "keep.txt"), "keep")
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			c.setup(t, out, elsewhere)
			err := Replace(out, replace, files)
			for p, want := range map[string]string{"victim.txt": "victim", "install/keep.txt": "keep"} {
				if b, rerr := os.ReadFile(filepath.Join(elsewhere, filepath.FromSlash(p))); rerr != nil || string(b) != want {
					t.Errorf("%s outside the output: %q, %v; want it untouched", p, b, rerr)
				}
			}
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want one saying %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range files {
				if b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name))); err != nil || string(b) != string(want) {
					t.Errorf("%s: %q, %v", name, b, err)
				}
			}
			if _, err := os.Lstat(filepath.Join(out, "rke2", "install", "stale.yaml")); !os.IsNotExist(err) {
				t.Errorf("a stale file stayed: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(out, "notes.txt")); err == nil && string(b) != "mine" {
				t.Errorf("a file of the user's changed: %q", b)
			}
		})
	}
}
