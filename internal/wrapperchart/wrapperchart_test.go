package wrapperchart

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

var update = flag.Bool("update", false, "rewrite the generated files of charts/aws-ccm-rancher")

// TestGeneratedFilesUpToDate fails when the chart's generated files differ
// from what the profiles give (go test ./internal/wrapperchart -update).
func TestGeneratedFilesUpToDate(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(testtools.Root(), "charts", "aws-ccm-rancher")
	for _, name := range Names(files) {
		path := filepath.Join(root, filepath.FromSlash(name))
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, files[name], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, files[name]) {
			t.Errorf("charts/aws-ccm-rancher/%s is stale (go test ./internal/wrapperchart -update)", name)
		}
	}
	if len(files) != 2+2*len(Distros)+1 {
		t.Errorf("%d files", len(files))
	}
}
