package generated

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestTrees: the generated trees are the overlays, the Fleet example's
// copy, the Flux examples and the wrapper chart (hack/generate writes and
// checks them).
func TestTrees(t *testing.T) {
	trees, err := Trees()
	if err != nil {
		t.Fatal(err)
	}
	if len(trees) != 4 {
		t.Errorf("%d trees: %s", len(trees), Summary(trees))
	}
}

// TestStale: a changed, a missing and a leftover file are each reported,
// and Write mends all three.
func TestStale(t *testing.T) {
	root := t.TempDir()
	tree := Tree{Dir: "out", Files: map[string][]byte{"a/x.yaml": []byte("x\n"), "a/y.yaml": []byte("y\n"), "README.md": []byte("r\n")}, Owned: []string{"a"}}
	if err := tree.Write(root); err != nil {
		t.Fatal(err)
	}
	if p, err := tree.Stale(root); err != nil || len(p) != 0 {
		t.Fatalf("fresh tree: %q, %v", p, err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, "out", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/x.yaml", "edited\n")
	write("a/old.yaml", "gone\n")
	write("notes.txt", "a file outside the owned directories is the user's\n")
	if err := os.Remove(filepath.Join(root, "out", "a", "y.yaml")); err != nil {
		t.Fatal(err)
	}
	p, err := tree.Stale(root)
	want := []string{"out/a/x.yaml: stale", "out/a/y.yaml: missing", "out/a/old.yaml: not generated any more"}
	if err != nil || !slices.Equal(p, want) {
		t.Fatalf("Stale = %q, %v; want %q", p, err, want)
	}
	if err := tree.Write(root); err != nil {
		t.Fatal(err)
	}
	if p, err := tree.Stale(root); err != nil || len(p) != 0 {
		t.Fatalf("after Write: %q, %v", p, err)
	}
	if _, err := os.Stat(filepath.Join(root, "out", "notes.txt")); err != nil {
		t.Errorf("Write removed a file it does not own: %v", err)
	}
}

// TestFleetPins: the Fleet bundle's image.tag line is the release data's.
func TestFleetPins(t *testing.T) {
	tmpl := FleetTagTemplate()
	if !strings.Contains(tmpl, `"1.34" "`+releases.Pin("v1.34.3")+`"`) || !strings.Contains(releases.Pin("v1.34.3"), "@sha256:") ||
		!strings.HasSuffix(tmpl, `(get .ClusterLabels "`+FleetMinorLabel+`") }`) || strings.Contains(tmpl, "default") {
		t.Errorf("FleetTagTemplate() = %s, want a release per minor and no default", tmpl)
	}
	if got := FleetInTreeMinors(); got != `["1.22", "1.23", "1.24", "1.25", "1.26"]` {
		t.Errorf("FleetInTreeMinors() = %s", got)
	}
	if got := FleetServedMinors(); !strings.HasPrefix(got, `["1.27", "1.28", `) || !strings.HasSuffix(got, fmt.Sprintf(`"1.%d"]`, releases.LastMinor())) {
		t.Errorf("FleetServedMinors() = %s", got)
	}

	// A copy whose in-tree minors drifted: one problem; -update's write
	// puts the release data's back, and the image.tag line stays.
	good, err := os.ReadFile(filepath.Join(testtools.Root(), FleetBundle))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	drifted := strings.Replace(string(good), FleetInTreeMinors(), `["1.25", "1.26"]`, 1)
	if drifted == string(good) {
		t.Fatalf("%s has no line %s", FleetBundle, FleetInTreeMinors())
	}
	testtools.WriteFile(t, filepath.Join(root, FleetBundle), []byte(drifted))
	if p, err := FleetPins(root, false); err != nil || len(p) != 1 || !strings.Contains(p[0], "in-tree-provider") {
		t.Errorf("drifted minors: %q, %v; want one problem about them", p, err)
	}
	if _, err := FleetPins(root, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, FleetBundle)); string(b) != string(good) {
		t.Errorf("rewritten:\n%s", b)
	}
}

// TestGuardPins: the examples that run the guard pin images.PinnedGuard.
// A copy with another digest is one problem, which
// the write puts right.
func TestGuardPins(t *testing.T) {
	root := t.TempDir()
	for _, f := range GuardPinned {
		good, err := os.ReadFile(filepath.Join(testtools.Root(), f))
		if err != nil {
			t.Fatal(err)
		}
		_, digest, _ := strings.Cut(images.PinnedGuard, "@sha256:")
		testtools.WriteFile(t, filepath.Join(root, f), []byte(strings.ReplaceAll(string(good), digest, strings.Repeat("0", 64))))
	}
	if p, err := GuardPins(root, false); err != nil || len(p) != len(GuardPinned) {
		t.Errorf("other digests: %q, %v; want a problem for each of %q", p, err, GuardPinned)
	}
	if _, err := GuardPins(root, true); err != nil {
		t.Fatal(err)
	}
	if p, err := GuardPins(root, false); err != nil || len(p) != 0 {
		t.Errorf("after the write: %q, %v", p, err)
	}
	testtools.WriteFile(t, filepath.Join(root, GuardPinned[0]), []byte("kind: ApplicationSet\n"))
	if _, err := GuardPins(root, false); err == nil || !strings.Contains(err.Error(), "names no aws-ccm-renderer-guard") {
		t.Errorf("an example without the guard: %v", err)
	}
}

// TestAreaPins: the area enum of check's JSON schema is check.Areas, the
// areas of check's rules. A copy whose enum drifted
// is one problem, which the write puts right.
func TestAreaPins(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(testtools.Root(), CheckSchema))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	enum := jsonList(check.Areas())
	drifted := strings.Replace(string(good), enum, jsonList(check.Areas()[1:]), 1)
	if drifted == string(good) {
		t.Fatalf("%s has no area enum %s", CheckSchema, enum)
	}
	testtools.WriteFile(t, filepath.Join(root, CheckSchema), []byte(drifted))
	if p, err := AreaPins(root, check.Areas(), false); err != nil || len(p) != 1 || !strings.Contains(p[0], "the area enum") {
		t.Errorf("drifted area enum: %q, %v; want one problem about it", p, err)
	}
	if _, err := AreaPins(root, check.Areas(), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, CheckSchema)); string(b) != string(good) {
		t.Errorf("rewritten:\n%s", b)
	}
	testtools.WriteFile(t, filepath.Join(root, CheckSchema), []byte("{}\n"))
	if _, err := AreaPins(root, check.Areas(), false); err == nil || !strings.Contains(err.Error(), "no area enum") {
		t.Errorf("a schema without the enum: %v", err)
	}
}

// TestTroubleshooting: docs/troubleshooting.md is the table of check's
// rules, every rule in it once, under 2,000 words. A rule's changed fix
// makes it stale.
func TestTroubleshooting(t *testing.T) {
	rows := TroubleRows()
	tree := Troubleshooting(rows)
	doc := string(tree.Files["troubleshooting.md"])
	for _, r := range rows {
		rule := r.Rule
		if r.AWS {
			rule += " (`--aws`)"
		}
		if n := strings.Count(doc, "| `"+r.Area+"` | "+rule+" | "); n != 1 {
			t.Errorf("rule %s: %d rows", r.Rule, n)
		}
	}
	if n := len(strings.Fields(doc)); n >= 2000 {
		t.Errorf("%s has %d words; keep it under 2,000", TroubleshootingDoc, n)
	}
	if !strings.Contains(doc, "## LoadBalancer Services stay &lt;pending&gt;") || !strings.Contains(doc, "controllers=\\*,-service") {
		t.Errorf("markup in the texts is not escaped:\n%s", doc)
	}
	root := t.TempDir()
	if err := tree.Write(root); err != nil {
		t.Fatal(err)
	}
	rows[0].Fix += " again"
	if p, err := Troubleshooting(rows).Stale(root); err != nil || len(p) != 1 || !strings.HasSuffix(p[0], "troubleshooting.md: stale") {
		t.Errorf("a changed fix: %q, %v; want the file stale", p, err)
	}
}

// TestExamplesMend: a stale block and a stale tail are each reported and
// rewritten; a missing file and an unclosed block are errors.
func TestExamplesMend(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		testtools.WriteFile(t, filepath.Join(root, name), []byte(text))
	}
	write("g/a.txt", "one\ntwo\nthree\n")
	doc := "# t\n\n<!-- example: g/a.txt -->\n```\none\n```\n\ntext\n\n<!-- example: g/a.txt tail -->\n\n```text\nold\nolder\n```\n"
	write("doc.md", doc)
	p, err := Examples(root, "doc.md", false)
	if err != nil || len(p) != 2 {
		t.Fatalf("Examples = %q, %v; want two problems", p, err)
	}
	if _, err := Examples(root, "doc.md", true); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(root, "doc.md"))
	want := "# t\n\n<!-- example: g/a.txt -->\n```\none\ntwo\nthree\n```\n\ntext\n\n<!-- example: g/a.txt tail -->\n\n```text\ntwo\nthree\n```\n"
	if string(got) != want {
		t.Fatalf("after the rewrite:\n%s\nwant\n%s", got, want)
	}
	if p, err := Examples(root, "doc.md", false); err != nil || len(p) != 0 {
		t.Fatalf("after the rewrite: %q, %v", p, err)
	}
	write("missing.md", "<!-- example: g/none.txt -->\n```\nx\n```\n")
	if _, err := Examples(root, "missing.md", false); err == nil || !strings.Contains(err.Error(), "none.txt") {
		t.Errorf("a missing file: %v", err)
	}
	write("open.md", "<!-- example: g/a.txt -->\n```\none\n")
	if _, err := Examples(root, "open.md", false); err == nil || !strings.Contains(err.Error(), "no closing") {
		t.Errorf("an unclosed block: %v", err)
	}
}

// TestMarker: a generated fragment without the marker on its line or in
// the lines above it is an error; with it, the value is written.
func TestMarker(t *testing.T) {
	line := generatedLine{"the list", regexp.MustCompile(`(list: )(\[[^\]]*\])`), `["a"]`, "no list"}
	bare := []byte("# a file\n\n\n\n\n\n\n\nlist: []\n")
	if _, _, err := rewriteLines("f.yaml", bare, []generatedLine{line}, "the test's"); err == nil || !strings.Contains(err.Error(), "carries no marker") {
		t.Errorf("a fragment 8 lines below anything: %v, want no marker", err)
	}
	far := []byte("# " + marker + "\n\n\n\n\n\n\n\nlist: []\n")
	if _, _, err := rewriteLines("f.yaml", far, []generatedLine{line}, "the test's"); err == nil {
		t.Error("a marker 8 lines above the fragment: no error")
	}
	for _, ok := range []string{"# " + marker + "\nlist: []\n", "list: [], # " + marker + "\n", "list: [], # " + marker, "# " + marker + "\n\n\n\n\n\nlist: []\n"} {
		out, problems, err := rewriteLines("f.yaml", []byte(ok), []generatedLine{line}, "the test's")
		if err != nil || len(problems) != 1 || !strings.Contains(string(out), `list: ["a"]`) {
			t.Errorf("%q: %q, %q, %v", ok, out, problems, err)
		}
	}
}
