package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// TestEveryFrontEnd: each front end's test package runs it through the
// table (conformancetest.Run with its FrontEnd), and each limit names a case of
// the table and says why.
func TestEveryFrontEnd(t *testing.T) {
	names := map[string]bool{}
	for _, c := range Cases() {
		if names[c.Name] {
			t.Errorf("case %q twice", c.Name)
		}
		names[c.Name] = true
	}
	for _, fe := range FrontEnds {
		call := "conformancetest.Run(t, conformance." + fe.ID + ","
		files, err := filepath.Glob(filepath.Join(testtools.Root(), filepath.FromSlash(fe.Where), "*_test.go"))
		if err != nil || len(files) == 0 {
			t.Errorf("%s: no test files in %s (%v)", fe.Name, fe.Where, err)
		}
		found := false
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			found = found || strings.Contains(string(b), call)
		}
		if !found {
			t.Errorf("%s: no test in %s calls %s", fe.Name, fe.Where, call)
		}
		for _, c := range Cases() {
			if fe.Limit == nil {
				break
			}
			if l, ok := fe.Limit(c); ok && (l.Why == "" || ((l.Want == Refused || l.Want == Warned) && l.Words == "")) {
				t.Errorf("%s: the limit on %q says no why or words: %+v", fe.Name, c.Name, l)
			}
		}
	}
}

// TestCases: the table's verdicts are the renderer's own, each verdict
// has a case, and each case of the latest chart's default CCM means what
// its name says.
func TestCases(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Cases() {
		if (c.Want == Rendered) != (c.Verdict == renderer.Verdict{}) {
			t.Errorf("%s: %s with verdict %q", c.Name, c.Want, c.Verdict.ID)
		}
		seen[c.Verdict.ID] = true
		if c.Tag() == "" {
			t.Errorf("%s: no CCM tag for chart %s", c.Name, c.ChartVersion)
		}
	}
	for _, v := range renderer.Verdicts {
		if !seen[v.ID] {
			t.Errorf("no case gives the verdict %s", v.ID)
		}
	}
}
