package conformance

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

var update = flag.Bool("update", false, "rewrite the front ends' table of docs/compatibility.md")

// TestFrontEndsDoc: docs/compatibility.md's table of the front ends is
// FrontEndsMarkdown; -update (make generate) rewrites it.
func TestFrontEndsDoc(t *testing.T) {
	testtools.CheckGeneratedSection(t, filepath.Join(testtools.Root(), "docs", "compatibility.md"), "front ends", FrontEndsMarkdown(), *update)
}
