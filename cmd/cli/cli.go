// Package cli holds the aws-ccm-renderer commands. Every command is built by
// a constructor that takes its I/O streams; flags are local to each command.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitInput = 1 // the manifests could not be accepted
	ExitUsage = 2 // flags, options or the config file are wrong
	ExitOther = 3 // reading or writing failed
)

// IOStreams are a command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Main runs the command line and returns the process exit code. Errors are
// printed as one line on ErrOut; nothing is written to Out on error.
func Main(args []string, s IOStreams) int {
	root := NewRootCommand(s)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, errChanges) {
		return ExitChanges
	}
	var quiet *exitError
	if errors.As(err, &quiet) {
		return quiet.code
	}
	msg := "aws-ccm-renderer: " + oneLine(err.Error())
	fmt.Fprintln(s.ErrOut, msg)
	tellTerminal(msg)
	code := ExitCode(err)
	if code == ExitUsage && detailedExitCode(args) {
		code = ExitInput
	}
	return code
}

// tellTerminal shows an error on the controlling terminal when the renderer
// runs as a Helm 4 plugin: Helm 4 keeps a post-renderer plugin's stderr to
// itself and reports only that the plugin failed, so the person who ran
// helm would never learn why. Outside a plugin, or without a terminal
// (CI, GitOps controllers), it does nothing.
func tellTerminal(msg string) {
	if os.Getenv("HELM_PLUGIN_NAME") == "" {
		return
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer tty.Close()
	fmt.Fprintln(tty, msg)
}

// ExitCode maps an error to the exit code of the command line. Errors
// cobra returns itself (unknown commands, bad arguments) are usage errors.
func ExitCode(err error) int {
	var io *ioError
	switch {
	case err == nil:
		return ExitOK
	case renderer.IsInputError(err):
		return ExitInput
	case errors.As(err, &io):
		return ExitOther
	}
	return ExitUsage
}

// exitError ends a command with a status and no message of its own: what
// it printed says why (check's report).
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// ioError is a failure to read or write, not a problem of the input.
type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// usage wraps cobra's own flag and argument errors as usage errors.
func usage(err error) error {
	if err == nil || renderer.IsUsageError(err) {
		return err
	}
	return &renderer.UsageError{Err: err}
}

// setCommon applies what every command shares.
func setCommon(cmd *cobra.Command, s IOStreams) {
	cmd.SetIn(s.In)
	cmd.SetOut(s.Out)
	cmd.SetErr(s.ErrOut)
	cmd.SilenceErrors = true
	cmd.SilenceUsage = true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usage(fmt.Errorf("%w (see --help)", err))
	})
}

var errStdinTerminal = errors.New("stdin is a terminal: pipe manifests in (helm template ... | aws-ccm-renderer) or run it as helm's --post-renderer; see --help")
