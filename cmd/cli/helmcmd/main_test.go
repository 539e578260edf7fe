package helmcmd

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/ccmtest"
)

// TestMain runs the tests without the environment variables that pick a
// cluster, a namespace, a storage driver, colour or progress lines,
// whatever the caller's shell or CI service set: tests that need one set it
// with t.Setenv.
func TestMain(m *testing.M) {
	testtools.UnsetHostile()
	os.Exit(m.Run())
}

// run runs aws-ccm-renderer-helm's command line in-process.
func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Run(args, cli.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, Commands)
	return code, out.String(), errOut.String()
}

// ccm is the smallest manifest the renderer takes, the shared fixture.
var ccm = ccmtest.Manifest(ccmtest.Options{})

// TestCommands: the Helm program has the chart commands and check as
// commands of their own, and the lean program's commands beside them.
func TestCommands(t *testing.T) {
	root := cli.NewRootCommand(cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Commands)
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
		if slices.Contains([]string{"template", "install", "upgrade", "diff", "check"}, c.Name()) && c.DisableFlagParsing {
			t.Errorf("%s is a stand-in", c.Name())
		}
	}
	for _, want := range append(slices.Clone(cli.ChartCommandKinds), "check", "fn", "plan", "overlays", "version") {
		if !slices.Contains(names, want) {
			t.Errorf("no %s among %q", want, names)
		}
	}
}
