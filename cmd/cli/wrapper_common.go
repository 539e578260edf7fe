package cli

import (
	"errors"
	"io"
	"os"
)

// The chart wrapper commands run the Helm SDK. Linking it costs every
// process about 16 ms of package initialisation (257 more packages: a JSON
// schema compiler's meta-schemas, the client-go and kubectl API schemes;
// docs/chart-wrapper.md has the figures), more than the whole post-render
// path may take, and Go initialises every linked package before main, so
// it lives in a second build of this program, aws-ccm-renderer-helm (build
// tag helmsdk, `make build` makes both). aws-ccm-renderer execs it — the
// process is replaced, no subprocess — for these commands.

// ChartCommandKinds are the chart wrapper commands.
var ChartCommandKinds = []string{"template", "install", "upgrade", "diff"}

// HelmBinary is the name of the build with the Helm SDK.
const HelmBinary = "aws-ccm-renderer-helm"

// ExitChanges is diff --exit-code's status when there are changes.
const ExitChanges = 4

// errChanges is diff --exit-code's "changes found": its own status, no message.
var errChanges = errors.New("changes found")

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
