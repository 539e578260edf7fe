package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/overlays"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// checkOverlaysIn asserts that dir holds every generated file as generated.
func checkOverlaysIn(t *testing.T, dir string) {
	t.Helper()
	files, err := overlays.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not as generated (%v)", name, err)
		}
	}
}

// wantListing is what the command prints: the component directories.
func wantListing(dir string) string {
	var b strings.Builder
	for _, d := range renderer.Distros {
		for _, m := range renderer.Modes {
			b.WriteString(filepath.Join(dir, string(d), string(m)) + "\n")
		}
	}
	return b.String()
}

func TestOverlaysOut(t *testing.T) {
	for _, flag := range []string{"--out", "-o", "--out="} {
		t.Run(flag, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "new", "dir")
			args := []string{"overlays", flag, dir}
			if strings.HasSuffix(flag, "=") {
				args = []string{"overlays", flag + dir}
			}
			code, out, errOut := run(t, "", args...)
			if code != ExitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if out != wantListing(dir) {
				t.Errorf("stdout %q, want %q", out, wantListing(dir))
			}
			checkOverlaysIn(t, dir)
		})
	}
}

func TestOverlaysDefaultOut(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := run(t, "", "overlays")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if out != wantListing("overlays") {
		t.Errorf("stdout %q", out)
	}
	checkOverlaysIn(t, "overlays")
}

// TestOverlaysRewrite: a second run replaces the component directories
// whole (a file an older version wrote goes) and leaves other files alone.
func TestOverlaysRewrite(t *testing.T) {
	dir := t.TempDir()
	keep := []string{"notes.md", "rke2/custom/kustomization.yaml"}
	for _, f := range append(keep, "rke2/install/old-patch.yaml", "rke2/install/daemonset.yaml") {
		path := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("# mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if code, _, errOut := run(t, "", "overlays", "--out", dir); code != ExitOK {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	}
	checkOverlaysIn(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "rke2", "install", "old-patch.yaml")); !os.IsNotExist(err) {
		t.Errorf("a file no longer generated is still there: %v", err)
	}
	for _, f := range keep {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f))); err != nil || string(b) != "# mine\n" {
			t.Errorf("%s was not left alone: %q, %v", f, b, err)
		}
	}
}

func TestOverlaysErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A file where a distro's directory goes.
	clash := filepath.Join(dir, "clash")
	if err := os.MkdirAll(clash, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clash, "rke2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"empty --out", []string{"--out", ""}, ExitUsage, "--out must name a directory"},
		{"--out without a value", []string{"--out"}, ExitUsage, "flag needs an argument"},
		{"positional argument", []string{"overlays"}, ExitUsage, `unknown command "overlays"`},
		{"unknown flag", []string{"--distro=rke2"}, ExitUsage, "unknown flag: --distro"},
		{"--out is a file", []string{"--out", file}, ExitOther, "writing the overlays: mkdir " + file + ": not a directory"},
		{"--out below a file", []string{"--out", filepath.Join(file, "overlays")}, ExitOther, "writing the overlays:"},
		{"a file in the way", []string{"--out", clash}, ExitOther, "writing the overlays:"},
	}
	if os.Geteuid() != 0 { // root writes to read-only directories
		ro := filepath.Join(dir, "read-only")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			args []string
			code int
			want string
		}{"read-only directory", []string{"--out", ro}, ExitOther, "permission denied"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, "", append([]string{"overlays"}, c.args...)...)
			if code != c.code {
				t.Errorf("exit %d, want %d", code, c.code)
			}
			if out != "" {
				t.Errorf("stdout is not empty: %q", out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "aws-ccm-renderer: ") || !strings.Contains(errOut, c.want) {
				t.Errorf("stderr %q: want one line saying %q", errOut, c.want)
			}
		})
	}
}

func TestOverlaysHelp(t *testing.T) {
	code, out, errOut := run(t, "", "overlays", "--help")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"--out", "DIR/<distro>/<mode>/", "docs/overlays.md", "kustomize build fails"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
}

// TestOverlaysFlux: --format=flux writes the Flux format, into flux by
// default; an unknown format is a usage error; the values complete.
func TestOverlaysFlux(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, out, errOut := run(t, "", "overlays", "--format=flux")
	if code != ExitOK || errOut != "" || out != wantListing("flux") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	files, err := overlays.FluxFiles()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, "flux", filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: not as generated (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "overlays")); !os.IsNotExist(err) {
		t.Errorf("--format=flux wrote the kustomize components too: %v", err)
	}
	code, _, errOut = run(t, "", "overlays", "--format=helmfile")
	if code != ExitUsage || !strings.Contains(errOut, `--format "helmfile": use kustomize or flux`) {
		t.Errorf("unknown format: exit %d, %q", code, errOut)
	}
	if _, out, _ := run(t, "", "__completeNoDesc", "overlays", "--format", ""); out != "kustomize\nflux\n:4\n" {
		t.Errorf("completion: %q", out)
	}
}
