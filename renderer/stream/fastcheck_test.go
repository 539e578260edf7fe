package stream

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/benchdata"
)

// parserAccepts reports whether the YAML parser accepts text as documents
// and returns the first document's kind.
func parserAccepts(text []byte) (string, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	kind, count := "", 0
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return kind, count <= 1
		}
		if err != nil {
			return "", false
		}
		if count == 0 {
			kind = topKind(&n)
		}
		count++
	}
}

func TestFastCheck(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool // the fast path proves it
		kind string
	}{
		{"helm daemonset", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      tolerations: \n        - effect: NoSchedule\n          key: a\n      nodeSelector: \n        a: \"\"\n      containers:\n        - name: c\n          args:\n            - --v=2\n          env:\n            []\n", true, "DaemonSet"},
		{"compact sequence under key", "kind: ClusterRole\nrules:\n- apiGroups:\n  - \"\"\n  verbs: [] # none\n- x: 'it''s'\n", true, "ClusterRole"},
		{"block scalar", "kind: ConfigMap\ndata:\n  a: |\n    line one\n\n      indented # not a comment\n    tab\there\n  b: >-\n    folded\nother: 1\n", true, "ConfigMap"},
		{"nested sequences", "- - a\n  - b\n- c: 1\n  d:\n    - e\n", true, ""},
		{"comments and blanks", "# only a comment\n\n   \n", true, ""},
		{"quoted kind", "kind: \"Deployment\" # the kind\n", true, "Deployment"},
		{"root scalar", "just text\n", true, ""},
		{"urls and colons", "a: http://x:80/y\nb: a:b\n", true, ""},
		{"anchor", "a: &x 1\nb: *x\n", false, ""},
		{"flow map", "a: {b: 1}\n", false, ""},
		{"tab indent", "a:\n\tb: 1\n", false, ""},
		{"multi-line plain", "a: one\n  two\n", false, ""},
		{"value then mapping value", "a: b: c\n", false, ""},
		{"bad indent", "a:\n    b: 1\n  c: 2\n", false, ""},
		{"unclosed quote", "a: \"abc\n", false, ""},
		{"document end", "a: 1\n...\nb: 2\n", false, ""},
		{"control character", "a: \x01\n", false, ""},
		{"invalid utf-8", "a: \xff\n", false, ""},
		{"block scalar less indented", "a: |\n    x\n  y\n", false, ""},
		{"indentation indicator", "a: |2\n   x\n", false, ""},
		{"directive", "%YAML 1.2\n", false, ""},
		{"sequence where mapping", "a: 1\n- b\n", false, ""},
		{"scalar on the line after its key", "a:\n  text\nb:\n    []\n  # c\nc: 1\n", true, ""},
		{"multi-line scalar after its key", "a:\n  text\n   more\n", false, ""},
		{"block scalar after its key", "a:\n  |\n   x\n", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, ok := fastCheck([]byte(tt.in))
			if ok != tt.ok || kind != tt.kind {
				t.Fatalf("fastCheck = (%q, %v), want (%q, %v)", kind, ok, tt.kind, tt.ok)
			}
			if ok {
				pk, pok := parserAccepts([]byte(tt.in))
				if !pok || pk != kind {
					t.Fatalf("the parser disagrees: (%q, %v)", pk, pok)
				}
			}
		})
	}
}

// FuzzFastCheck: whatever the fast path proves, the parser must accept, with
// the same kind.
func FuzzFastCheck(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: |\n    b\n",
		"- a\n- b: c\n  d: [] # x\n",
		"a:\n- b\nc: 'd'\n",
		"kind: \"x\"\nspec:\n  template:\n    spec:\n      containers:\n        - name: c\n          args:\n            - --v=2\n",
		"a: >-\n  b\n\n  c\nd: \"e\\\"f\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		kind, ok := fastCheck(in)
		if !ok {
			return
		}
		pk, pok := parserAccepts(in)
		if !pok {
			t.Fatalf("fast path accepted what the parser rejects:\n%s", in)
		}
		if pk != kind {
			t.Fatalf("kind %q, parser says %q:\n%s", kind, pk, in)
		}
	})
}

// TestFastCheckEscapes: every escape the fast path accepts in a double-quoted
// scalar, the parser accepts too.
func TestFastCheckEscapes(t *testing.T) {
	for c := 0x20; c < 0x7f; c++ {
		in := []byte("a: \"x\\" + string(rune(c)) + "y\"\n")
		if _, ok := fastCheck(in); ok {
			if _, pok := parserAccepts(in); !pok {
				t.Errorf("escape \\%c: the fast path accepts it, the parser does not", c)
			}
		}
	}
}

// TestFastPathCoverage: the documents templating tools print take the fast
// path, which is what keeps the renderer fast; a change that sends them to
// the parser fails here rather than only in a benchmark.
func TestFastPathCoverage(t *testing.T) {
	inputs := map[string][]byte{"umbrella": benchdata.Umbrella(2000)}
	golden, _ := filepath.Glob("../../testdata/golden/helm3/*/*.yaml")
	for _, g := range golden {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		inputs[g] = b
	}
	if len(inputs) < 10 {
		t.Fatalf("only %d inputs", len(inputs))
	}
	for name, in := range inputs {
		for _, d := range Split([][]byte{in}) {
			if err := d.scan(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !d.Simple {
				t.Errorf("%s: %s took the slow path:\n%s", name, d, d.Raw)
			}
		}
	}
}

func topKind(doc *yaml.Node) string {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "kind" && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1].Value
		}
	}
	return ""
}
