package plan

import (
	"strings"
	"testing"
)

// TestYAMLOf: snippets are marshalled with their comments where the paths
// say, aligned by their gap, quoted strings double-quoted, sequences
// indented under their keys; yamlCompact writes them level with their
// keys, with the same encoder.
func TestYAMLOf(t *testing.T) {
	type doc struct {
		Name  string            `yaml:"name"`
		Star  quoted            `yaml:"component"`
		Items []string          `yaml:"items"`
		Args  map[string]string `yaml:"args"`
	}
	v := doc{Name: "aws", Star: "*", Items: []string{"a", "b"}, Args: map[string]string{"enable": "true"}}
	got := yamlOf(v, lineComment("name", 4, "kept"), lineComment("items.1", 1, "added"), headComment("items.0", "yours first"))
	want := `name: aws    # kept
component: "*"
items:
  # yours first
  - a
  - b # added
args:
  enable: "true"
`
	if got != want {
		t.Errorf("yamlOf =\n%s\nwant\n%s", got, want)
	}
	if got, want := yamlCompact(v), "name: aws\ncomponent: \"*\"\nitems:\n- a\n- b\nargs:\n  enable: \"true\"\n"; got != want {
		t.Errorf("yamlCompact =\n%s\nwant\n%s", got, want)
	}
	if got := yamlComments(2, "then yours", "  - more"); got != "  # then yours\n  #   - more\n" {
		t.Errorf("yamlComments = %q", got)
	}
	for _, path := range []string{"nope", "items.7", "name.x"} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, path) {
					t.Errorf("yamlOf with a comment at %q: panic %q; want one naming the path", path, r)
				}
			}()
			yamlOf(doc{Items: []string{"a"}}, headComment(path, "x"))
		}()
	}
}
