package generated

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestArchitectureHomes: every file or folder the "One home per fact"
// table of docs/dev/architecture.md names as a home exists, so that the
// table cannot name a home a change moved or removed.
func TestArchitectureHomes(t *testing.T) {
	root := testtools.Root()
	b, err := os.ReadFile(filepath.Join(root, "docs", "dev", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "## One home per fact\n")
	table, _, _ = strings.Cut(table, "\n## ")
	if !ok {
		t.Fatal("docs/dev/architecture.md has no section One home per fact")
	}
	path := regexp.MustCompile("`([a-z0-9_./-]+/[a-z0-9_.-]+)`")
	bare := regexp.MustCompile("`([a-z0-9_.-]+\\.go)`")
	n := 0
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, " | ")
		if len(cells) < 3 || strings.HasPrefix(row, "|---") {
			continue
		}
		var dirs []string
		for _, m := range path.FindAllStringSubmatch(cells[1], -1) {
			n++
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m[1]))); err != nil {
				t.Errorf("the home %s (row %q) does not exist", m[1], cells[0])
			}
			if !strings.HasSuffix(m[1], ".go") {
				dirs = append(dirs, m[1])
			}
		}
		// Files named bare beside one folder are in it.
		for _, m := range bare.FindAllStringSubmatch(cells[1], -1) {
			if len(dirs) != 1 {
				t.Errorf("row %q names %s without the one folder it is in", cells[0], m[1])
				continue
			}
			n++
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dirs[0]), m[1])); err != nil {
				t.Errorf("the home %s/%s (row %q) does not exist", dirs[0], m[1], cells[0])
			}
		}
	}
	if n < 5 {
		t.Errorf("read %d homes from the table: the test reads it wrong", n)
	}
}
