package conformance

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

var update = flag.Bool("update", false, "rewrite the front ends' table of docs/compatibility.md")

var generatedFrontEnds = regexp.MustCompile("(?s)(<!-- BEGIN GENERATED: front ends -->\n).*?(<!-- END GENERATED -->)")

// TestFrontEndsDoc: docs/compatibility.md's table of the front ends is
// FrontEndsMarkdown; -update (make generate) rewrites it.
func TestFrontEndsDoc(t *testing.T) {
	path := filepath.Join(testtools.Root(), "docs", "compatibility.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !generatedFrontEnds.Match(doc) {
		t.Fatalf("%s has no generated table of the front ends (<!-- BEGIN GENERATED: front ends -->)", path)
	}
	want := generatedFrontEnds.ReplaceAll(doc, []byte("${1}"+strings.ReplaceAll(FrontEndsMarkdown(), "$", "$$")+"${2}"))
	if string(want) == string(doc) {
		return
	}
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is stale: make generate rewrites it", path)
}
