package cli

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	goyaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
)

// controls are the characters no value of a flag may hold: each kind of
// line break, a terminal escape, the other C0 and C1 characters, DEL, a
// bidirectional override.
var controls = []string{"\n", "\r", "\v", "\f", "\t", "\x1b[2J", "\x01", "\x7f", "\u0085", "\u009b", "\u2028", "\u2029", "\u202e"}

// stringFlags are the flags of a command that take text (not true or false).
func stringFlags(t *testing.T, command string) []string {
	t.Helper()
	root := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}, HandOver)
	cmd := root
	if command != "" {
		c, _, err := root.Find([]string{command})
		if err != nil {
			t.Fatal(err)
		}
		cmd = c
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() != "bool" && f.Name != "help" {
			names = append(names, f.Name)
		}
	})
	if len(names) < 5 {
		t.Fatalf("%s: only the flags %q take text", command, names)
	}
	return names
}

// oneLineError asserts what a refusal looks like: the exit code of a usage
// error, nothing on stdout, one line on stderr that names want and holds no
// control character.
func oneLineError(t *testing.T, code int, out, errOut, want string) {
	t.Helper()
	if code != ExitUsage || out != "" {
		t.Errorf("exit %d, stdout %q; want %d and nothing", code, out, ExitUsage)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "aws-ccm-renderer: ") || safetext.HasControl(strings.TrimSuffix(errOut, "\n")) ||
		!strings.Contains(errOut, want) {
		t.Errorf("stderr %q: want one line, without control characters, saying %q", errOut, want)
	}
}

// TestControlCharactersRefused: a value with a control character or a line
// break, in any flag of the post-renderer, overlays or plan, is one usage
// error naming the flag, before anything is read or written (before, a
// line break in --set-arg or --out went into the header comment of every
// file overlays wrote, the rest of the line live YAML).
func TestControlCharactersRefused(t *testing.T) {
	for _, command := range []string{"", "overlays", "plan"} {
		for _, name := range stringFlags(t, command) {
			for _, c := range controls {
				dir := t.TempDir()
				out := filepath.Join(dir, "out")
				value := "v" + c + "resources:"
				if name == "out" { // where the old code wrote
					value, out = filepath.Join(dir, value), filepath.Join(dir, value)
				}
				args := []string{"--" + name + "=" + value}
				if command != "" {
					args = append([]string{command}, args...)
				}
				if command == "overlays" && name != "out" {
					args = append(args, "--out="+out)
				}
				code, stdout, errOut := run(t, ccm, args...)
				oneLineError(t, code, stdout, errOut, "--"+name+": the value holds ")
				if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("overlays --%s=%q wrote %s", name, "v"+c, out)
				}
			}
		}
	}
}

// FuzzOverlaysFlags: whatever one flag of overlays holds, the command
// either refuses it (one line on stderr, nothing on stdout, nothing
// written) or writes files that parse as YAML, whose comment lines hold no
// control character, and whose README's HTML comment ends once, at the end
// of its line. The seed corpus runs in go test.
func FuzzOverlaysFlags(f *testing.F) {
	names := stringFlags(&testing.T{}, "overlays")
	for i := range names {
		for _, v := range append(slicesOf(controls, "x"), "x-->y", "a#b", "a: b", "'", "$(id)", "---", "cluster-name=x\nresources:\n- https://evil.example/x", "v=4") {
			f.Add(uint8(i), v)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		name := names[int(which)%len(names)]
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		if name == "out" {
			out = filepath.Join(dir, "o"+value)
			if !strings.HasPrefix(out, dir+string(filepath.Separator)) {
				t.Skip("an --out outside the test's directory")
			}
		}
		args := []string{"overlays", "--distro=rke2", "--mode=install", "--out=" + out}
		if name != "out" {
			args = append(args, "--"+name+"="+value)
		}
		code, stdout, errOut := run(t, "", args...)
		if code != ExitOK {
			if stdout != "" || strings.Count(errOut, "\n") != 1 || safetext.HasControl(strings.TrimSuffix(errOut, "\n")) {
				t.Fatalf("--%s=%q: exit %d, stdout %q, stderr %q; want one line on stderr and nothing on stdout", name, value, code, stdout, errOut)
			}
			if code == ExitUsage {
				if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("--%s=%q: refused, yet %s was written", name, value, out)
				}
			}
			return
		}
		err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, l := range strings.Split(string(b), "\n") {
				if (strings.HasPrefix(strings.TrimSpace(l), "#") || strings.HasPrefix(l, "<!--")) && safetext.HasControl(l) {
					t.Errorf("--%s=%q: %s has a comment line with a control character: %q", name, value, p, l)
				}
				if strings.HasPrefix(l, "<!--") && (!strings.HasSuffix(l, " -->") || strings.Count(l, "-->") != 1) {
					t.Errorf("--%s=%q: %s: the HTML comment does not end once, at its line's end: %q", name, value, p, l)
				}
			}
			if strings.HasSuffix(p, ".yaml") {
				dec := goyaml.NewDecoder(bytes.NewReader(b))
				for {
					var v any
					if err := dec.Decode(&v); errors.Is(err, io.EOF) {
						break
					} else if err != nil {
						t.Errorf("--%s=%q: %s does not parse: %v", name, value, p, err)
						break
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// slicesOf puts each string between prefix and a YAML key.
func slicesOf(ss []string, prefix string) []string {
	var out []string
	for _, s := range ss {
		out = append(out, prefix+s+"resources:")
	}
	return out
}
