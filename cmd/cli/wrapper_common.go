package cli

import (
	"errors"
	"strings"
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

// ExitChanges is diff --detailed-exitcode's status when there are changes,
// as for helm-diff, helmfile and terraform.
const ExitChanges = 2

// errChanges is diff --detailed-exitcode's "changes found": its own status,
// no message.
var errChanges = errors.New("changes found")

// detailedExitCode tells whether a command line is diff with
// --detailed-exitcode (or --exit-code): its usage errors then exit 1, so
// that 2 means changes and nothing else, as CI scripts written for
// helm-diff or terraform read it.
func detailedExitCode(args []string) bool {
	isDiff, detailed, command := false, false, ""
	for _, a := range args {
		if a == "--" {
			break
		}
		switch {
		case command == "" && !strings.HasPrefix(a, "-"):
			command = a
			isDiff = a == "diff"
		case a == "--detailed-exitcode" || a == "--exit-code":
			detailed = true
		case strings.HasPrefix(a, "--detailed-exitcode=") || strings.HasPrefix(a, "--exit-code="):
			_, v, _ := strings.Cut(a, "=")
			detailed = v != "false" && v != "0" && v != "f" && v != "F" && v != "FALSE" && v != "False"
		}
	}
	return isDiff && detailed
}
