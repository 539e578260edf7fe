package helmcmd

import (
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
)

// TestChartCredentials: the password of --password-stdin, or of a URL,
// shows nowhere when the repository cannot be reached; --password and
// --password-stdin together are a usage error; --password's help says
// where else it shows.
func TestChartCredentials(t *testing.T) {
	for _, c := range []struct {
		name, stdin string
		args        []string
		code        int
		want        string
	}{
		{"--password-stdin", "pw-from-stdin\n", []string{"--username", "ccm", "--password-stdin"}, cli.ExitOther, "http://127.0.0.1:1 cannot be reached"},
		{"a URL's", "", []string{"--repo", "http://ccm:pw-in-the-url@127.0.0.1:1"}, cli.ExitOther, "http://ccm:xxxxx@127.0.0.1:1 cannot be reached"},
		{"both", "pw-from-stdin\n", []string{"--password", "pw-on-the-line", "--password-stdin"}, cli.ExitUsage, "--password and --password-stdin: give one of them"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, c.stdin, append([]string{"template", "--repo", "http://127.0.0.1:1"}, c.args...)...)
			if code != c.code || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d (want %d), %q, stderr %q (want one line with %q)", code, c.code, out, errOut, c.want)
			}
			if strings.Contains(errOut, "pw-") {
				t.Errorf("the password shows: %q", errOut)
			}
		})
	}
	_, out, _ := run(t, "", "template", "--help")
	if !strings.Contains(out, "shows in ps and the shell's history: prefer --password-stdin") {
		t.Errorf("template --help does not warn of --password:\n%s", out)
	}
}
