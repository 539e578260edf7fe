package overlays

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	goyaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// hostilePieces are what a value can carry to break out of a comment, a
// header or a Markdown comment, or to be read as YAML: line breaks of every
// kind, a terminal escape, comment and document markers, flow and block
// syntax, quotes, an HTML comment's end, a remote resource.
var hostilePieces = []string{"\n", "\r\n", "\r", "\u0085", "\u2028", "\u2029", "\v", "\f", "\t", "\x1b[31m", "\x00", "\x7f", "\u202e",
	"#", " #", "-->", "--->", "<!--", "---", "...", ": ", "- ", "{", "}", "[", "]", "'", `"`, `\`, "$(id)", "`", "&a", "*a", "!!str", "%",
	"resources:\n- https://evil.example/x", "\nresources:\n- https://evil.example/x\n", "é", "\u00a0", "日本"}

// hostile returns a random value of the pieces and plain text.
func hostile(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(5) {
		if r.IntN(3) == 0 {
			b.WriteString("x")
		}
		b.WriteString(hostilePieces[r.IntN(len(hostilePieces))])
	}
	return b.String()
}

// shape is what a generated file holds, to compare with the same file
// generated from plain values: a YAML file's documents and each one's keys
// (top level and under metadata and spec), a Markdown file's lines that
// are not table rows.
func shape(t *testing.T, name string, b []byte) []string {
	t.Helper()
	if !strings.HasSuffix(name, ".yaml") {
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(l, "|") && !strings.HasPrefix(l, "<!--") {
				lines = append(lines, l)
			}
		}
		return lines
	}
	var out []string
	dec := goyaml.NewDecoder(bytes.NewReader(b))
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s does not parse as YAML: %v\n%s", name, err, b)
		}
		doc, ok := v.(map[string]any)
		if !ok {
			out = append(out, fmt.Sprintf("document: %T", v))
			continue
		}
		keys := slices.Sorted(maps.Keys(doc))
		for _, sub := range []string{"metadata", "spec"} {
			if m, ok := doc[sub].(map[string]any); ok {
				for k := range m {
					keys = append(keys, sub+"."+k)
				}
			}
		}
		slices.Sort(keys)
		out = append(out, "document: "+strings.Join(keys, ","))
	}
	return out
}

// checkComments: every comment line of a YAML file and the HTML comment
// of a README is one line with no control character, and holds none of the
// values raw when they carry one; the HTML comment holds no "-->" but its
// end.
func checkComments(t *testing.T, name string, b []byte, values []string) {
	t.Helper()
	for _, l := range strings.Split(string(b), "\n") {
		isComment := strings.HasPrefix(strings.TrimSpace(l), "#") && strings.HasSuffix(name, ".yaml") || strings.HasPrefix(l, "<!--")
		if !isComment {
			continue
		}
		if safetext.HasControl(l) {
			t.Errorf("%s: a comment line holds a control character: %q", name, l)
		}
		if strings.HasPrefix(l, "<!--") && (!strings.HasSuffix(l, " -->") || strings.Count(l, "-->") != 1) {
			t.Errorf("%s: the HTML comment does not end once, at the end of its line: %q", name, l)
		}
	}
	for _, v := range values {
		if safetext.HasControl(v) && bytes.Contains(b, []byte(v)) {
			t.Errorf("%s holds the value %q raw", name, v)
		}
	}
}

// TestHostileValues: values that no check refuses (the options' printable
// text: quotes, comment and document markers, "-->") and an output
// directory that nothing checks here (the command refuses control
// characters in it, the writers must not rely on that) go into the
// generated files' comments and headers escaped: every file of both
// formats has the documents and keys it has with plain values, and no
// comment line holds a control character.
func TestHostileValues(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 3))
	plain := Spec{Options: renderer.DefaultOptions(), Out: "overlays", Distros: []distros.Distro{distros.RKE2}}
	want := map[string]map[string][]string{}
	for format, files := range map[string]func(Spec) (map[string][]byte, error){FormatKustomize: Files, FormatFlux: FluxFiles} {
		got, err := files(plain)
		if err != nil {
			t.Fatal(err)
		}
		want[format] = map[string][]string{}
		for name, b := range got {
			want[format][name] = shape(t, name, b)
		}
	}
	for i := range 12 {
		s := plain
		s.Out = "out" + hostile(r)
		s.Options.SetArgs = nil
		var values []string
		for _, flag := range []string{"cluster-name", "cluster-cidr"}[:r.IntN(3)] {
			v := strings.Map(func(c rune) rune { // printable: what the options' check lets through
				if safetext.IsControl(c) {
					return -1
				}
				return c
			}, hostile(r))
			s.Options.SetArgs = append(s.Options.SetArgs, flag+"="+v)
			values = append(values, v)
		}
		values = append(values, s.Out)
		for format, files := range map[string]func(Spec) (map[string][]byte, error){FormatKustomize: Files, FormatFlux: FluxFiles} {
			got, err := files(s)
			if err != nil {
				t.Fatalf("case %d (%s, --out=%q, --set-arg=%q): %v", i, format, s.Out, s.Options.SetArgs, err)
			}
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want[format]))) {
				t.Fatalf("case %d (%s): files %v, want %v", i, format, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want[format])))
			}
			for name, b := range got {
				if g := shape(t, name, b); !slices.Equal(g, want[format][name]) {
					t.Errorf("case %d (%s, --out=%q, --set-arg=%q): %s holds %q, want %q\n%s", i, format, s.Out, s.Options.SetArgs, name, g, want[format][name], b)
				}
				checkComments(t, name, b, values)
			}
		}
	}
}
