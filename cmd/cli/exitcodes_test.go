package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// documentedExits reads the exit codes docs/renderer.md gives: its table
// under "Errors and exit codes", each code's meaning.
func documentedExits(t *testing.T) map[int]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testtools.Root(), "docs", "renderer.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Errors and exit codes\n")
	if !ok {
		t.Fatal(`docs/renderer.md has no section "Errors and exit codes"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	exits := map[int]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| (\d) \| (.+) \|$`).FindAllStringSubmatch(section, -1) {
		code, _ := strconv.Atoi(m[1])
		exits[code] = m[2]
	}
	if len(exits) < 4 {
		t.Fatalf("docs/renderer.md's exit table has %d rows: %v", len(exits), exits)
	}
	return exits
}

// TestDocumentedExitCodes runs one case of each failure docs/renderer.md
// names and holds the exit code to the row that names it.
func TestDocumentedExitCodes(t *testing.T) {
	exits := documentedExits(t)
	cases := []struct {
		says  string // in the row's meaning
		stdin string
		args  []string
	}{
		{"rendered", ccm, []string{"--distro=rke2"}},
		{"not YAML", "a: b: c\n", nil},
		{"no CCM workload", "kind: ConfigMap\nmetadata: {name: x}\n", nil},
		{"in migrate mode a CCM of another minor", ccm, []string{"--mode=migrate", "--kube-version=v1.26.15"}},
		{"with `--strict`, a warning about the input", ccm, []string{"--distro=rke2", "--strict"}},
		{"an unknown flag", ccm, []string{"--distor=rke2"}},
		{"distribution", ccm, []string{"--distro=rke3"}},
		{"contradictory options", ccm, []string{"--set-arg=v=1", "--remove-arg=v"}},
		{"`--distro=k3s --mode=migrate`", ccm, []string{"--distro=k3s", "--mode=migrate"}},
		{"a bad config file", ccm, []string{"--config=/nonexistent.yaml"}},
		{"with `--strict`, a warning about the options", ccm, []string{"--distro=rke2", "--strict", "--set-arg=configure-cloud-routes=true"}},
	}
	for _, c := range cases {
		t.Run(c.says, func(t *testing.T) {
			want := -1
			for code, meaning := range exits {
				if strings.Contains(meaning, c.says) {
					if want >= 0 {
						t.Fatalf("rows %d and %d of docs/renderer.md's exit table both say %q", want, code, c.says)
					}
					want = code
				}
			}
			if want < 0 {
				t.Fatalf("no row of docs/renderer.md's exit table says %q: %v", c.says, exits)
			}
			code, out, errOut := run(t, c.stdin, c.args...)
			if code != want {
				t.Errorf("exit %d, docs/renderer.md says %d (%s); stderr %q", code, want, exits[want], errOut)
			}
			if code != ExitOK && out != "" {
				t.Errorf("exit %d with output on stdout: %q", code, out)
			}
		})
	}
	// The last row: writing the output failed.
	if !strings.Contains(exits[ExitOther], "writing stdout failed") || ExitOther != 3 {
		t.Errorf("docs/renderer.md's row 3 is %q; TestWriteError holds exit %d to a failed write", exits[3], ExitOther)
	}
}
