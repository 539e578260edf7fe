package plan

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTexts: every text a Go file of the plans names is in texts/*.tmpl,
// every text there is named by one, and a text is one paragraph.
func TestTexts(t *testing.T) {
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`(?:\.text|\.texts|\.textWith|prose)\("([^"]+)"`)
	used := map[string]bool{}
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".go") || strings.HasSuffix(f.Name(), "_test.go") {
			continue
		}
		src, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			used[m[1]] = true
			for i := 2; texts().Lookup(m[1]+"."+strconv.Itoa(i)) != nil && strings.Contains(m[0], "texts("); i++ {
				used[m[1]+"."+strconv.Itoa(i)] = true
			}
			if texts().Lookup(m[1]) == nil {
				t.Errorf("%s names the text %q, which no file of texts/ defines", f.Name(), m[1])
			}
		}
	}
	// Texts the templates include.
	for _, tm := range texts().Templates() {
		for _, m := range regexp.MustCompile(`\{\{template "([^"]+)"`).FindAllStringSubmatch(tm.Root.String(), -1) {
			used[m[1]] = true
		}
	}
	var defined []string
	for _, tm := range texts().Templates() {
		if !strings.HasSuffix(tm.Name(), ".tmpl") && tm.Name() != "plan" {
			defined = append(defined, tm.Name())
		}
	}
	slices.Sort(defined)
	for _, name := range defined {
		if !used[name] {
			t.Errorf("texts/ defines %q, which no Go file names", name)
		}
	}
	if len(defined) < 300 {
		t.Errorf("%d texts; want the plans' prose (more than 300)", len(defined))
	}
	b := &builder{r: resolved{Options: DefaultOptions(), minor: 26, tag: "v1.26.14"}}
	if got := b.text("tagsInTree"); got != "The in-tree provider used the same tags: keep them." {
		t.Errorf("tagsInTree = %q", got)
	}
	// A text's line breaks in its file are spaces.
	if got := b.text("upgradeInTree"); strings.Contains(got, "\n") || !strings.Contains(got, "its ECR credential provider are gone") {
		t.Errorf("upgradeInTree = %q: want one line", got)
	}
	// texts collects name, name.2, ... while texts/ defines them.
	if got := b.texts("k3s.node-identity.notes"); len(got) != 3 || got[2] != b.text("k3s.node-identity.notes.3") {
		t.Errorf("texts(k3s.node-identity.notes) = %q: want its three notes", got)
	}
	if got := b.textWith("steps.etcd-snapshot.title", map[string]any{"before": "the switch"}); got != "Take an etcd snapshot before the switch" {
		t.Errorf("etcdSnapshot.Title = %q", got)
	}
}

// TestTextErrors: a text no file defines, or one that reads what its data
// lacks, is a bug of the plans: prose panics naming it.
func TestTextErrors(t *testing.T) {
	for name, f := range map[string]func(){
		"no such text":  func() { prose("no.such.text", textData{}) },
		"missing .Args": func() { prose("steps.etcd-snapshot.title", textData{}) },
	} {
		func() {
			defer func() {
				r, _ := recover().(string)
				if !strings.HasPrefix(r, "internal/plan/texts: ") {
					t.Errorf("%s: panic %q; want one naming internal/plan/texts", name, r)
				}
			}()
			f()
		}()
	}
}

// TestYAMLOf: snippets are marshalled with their comments where the paths
// say, aligned by their gap, quoted strings double-quoted.
func TestYAMLOf(t *testing.T) {
	type doc struct {
		Name  string            `yaml:"name"`
		Star  quoted            `yaml:"component"`
		Items []string          `yaml:"items"`
		Args  map[string]string `yaml:"args"`
	}
	got := yamlOf(doc{Name: "aws", Star: "*", Items: []string{"a", "b"}, Args: map[string]string{"enable": "true"}},
		lineComment("name", 4, "kept"), lineComment("items.1", 1, "added"), headComment("items.0", "yours first"))
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
