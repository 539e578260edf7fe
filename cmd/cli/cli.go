// Package cli is the plumbing both programs share, aws-ccm-renderer (the
// post-renderer, lean) and aws-ccm-renderer-helm (with the Helm SDK), and
// the commands of the lean one: the root command (the post-renderer), fn,
// overlays, plan and version, and the stand-ins that hand the chart
// commands over to aws-ccm-renderer-helm. Every command is built by a
// constructor that takes its I/O streams; flags are local to each command.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitInput = 1 // the manifests, chart or values could not be accepted
	ExitUsage = 2 // flags, options or the config file are wrong
	ExitOther = 3 // reading, writing or reaching something failed, or anything else
)

// ExitChanges is diff --detailed-exitcode's status when there are changes,
// as for helm-diff, helmfile and terraform.
const ExitChanges = 2

// ErrChanges is diff --detailed-exitcode's "changes found": its own status,
// no message.
var ErrChanges = errors.New("changes found")

// IOStreams are a command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Terminal opens the controlling terminal (terminal.Controlling), for
	// what must reach the person even where stderr does not; nil: none
	// (tests, and programs embedding the commands).
	Terminal func() (io.WriteCloser, error)
}

// StdStreams are the process's standard streams and its controlling
// terminal.
func StdStreams() IOStreams {
	return IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, Terminal: terminal.Controlling}
}

// Tell writes lines on ErrOut, and on the controlling terminal as well
// when ErrOut is not a terminal (it is a buffer of Helm's, a file, a pipe):
// Helm 3 shows a post-renderer's stderr only when it fails, Helm 4 never,
// and helmfile runs Helm. Without a controlling terminal (CI jobs, GitOps
// controllers, tests) only ErrOut gets them.
func (s IOStreams) Tell(lines ...string) {
	for _, l := range lines {
		fmt.Fprintln(s.ErrOut, l)
	}
	if !terminal.IsTerminal(s.ErrOut) {
		s.toTerminal(lines)
	}
}

// toTerminal writes lines on the controlling terminal, if there is one.
func (s IOStreams) toTerminal(lines []string) {
	if s.Terminal == nil || len(lines) == 0 {
		return
	}
	tty, err := s.Terminal()
	if err != nil {
		return
	}
	defer tty.Close()
	for _, l := range lines {
		fmt.Fprintln(tty, l)
	}
}

// Commands builds the commands a program adds to the root command: the
// chart commands and check, or their stand-ins.
type Commands func(IOStreams) []*cobra.Command

// Main runs aws-ccm-renderer's command line, the lean program's (its chart
// commands and check hand over to aws-ccm-renderer-helm), and returns the
// process exit code.
func Main(args []string, s IOStreams) int { return Run(args, s, HandOver) }

// Run runs the command line of a program with its more commands and
// returns the process exit code. Errors are printed as one line on ErrOut;
// nothing is written to Out on error. What goes to ErrOut (progress,
// warnings, errors, Helm's own messages) has the credentials of URLs in
// it hidden: Helm's errors repeat a --repo URL with its password.
func Run(args []string, s IOStreams, more Commands) int {
	s.ErrOut = terminal.Redacting(s.ErrOut)
	root := NewRootCommand(s, more)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, ErrChanges) {
		return ExitChanges
	}
	var quiet *ExitError
	if errors.As(err, &quiet) {
		return quiet.Code
	}
	msg := "aws-ccm-renderer: " + safetext.Escape(terminal.RedactURLs(OneLine(err.Error())))
	fmt.Fprintln(s.ErrOut, msg)
	if os.Getenv("HELM_PLUGIN_NAME") != "" && !terminal.IsTerminal(s.ErrOut) {
		// Helm 4 keeps a post-renderer plugin's stderr to itself and
		// reports only that the plugin failed (Helm 3 shows it in its
		// error).
		s.toTerminal([]string{msg})
	}
	code := ExitCode(err)
	if code == ExitUsage && detailedExitCode(args) {
		code = ExitInput
	}
	return code
}

// ExitCode maps an error to the exit code of the command line: input and
// usage errors by their types; what a command's run returned that is
// neither is exit 3 (SetCommon marks it); what cobra returns itself
// (unknown commands, bad arguments) before any run is a usage error.
func ExitCode(err error) int {
	var other *IOError
	switch {
	case err == nil:
		return ExitOK
	case renderer.IsInputError(err):
		return ExitInput
	case renderer.IsUsageError(err):
		return ExitUsage
	case errors.As(err, &other):
		return ExitOther
	}
	return ExitUsage
}

// ExitError ends a command with a status and no message of its own: what
// it printed says why (check's report).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// IOError is a failure to read, write or reach something, or any failure
// that is neither the input's nor the user's: exit 3.
type IOError struct{ Err error }

func (e *IOError) Error() string { return e.Err.Error() }
func (e *IOError) Unwrap() error { return e.Err }

// OneLine makes a message one line.
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// usage wraps cobra's own flag and argument errors as usage errors.
func usage(err error) error {
	if err == nil || renderer.IsUsageError(err) {
		return err
	}
	return &renderer.UsageError{Err: err}
}

// SetCommon applies what every command shares: its streams, errors printed
// once by Main, flag errors as usage errors, and an error its run returns
// that is of no known kind as exit 3. Call it after setting RunE.
func SetCommon(cmd *cobra.Command, s IOStreams) {
	cmd.SetIn(s.In)
	cmd.SetOut(s.Out)
	cmd.SetErr(s.ErrOut)
	cmd.SilenceErrors = true
	cmd.SilenceUsage = true
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usage(fmt.Errorf("%w%s (see --help)", err, flagSuggestion(c, err)))
	})
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			if err := controlFree(c, args); err != nil {
				return err
			}
			err := run(c, args)
			var other *IOError
			var quiet *ExitError
			if err == nil || renderer.IsInputError(err) || renderer.IsUsageError(err) || errors.As(err, &other) ||
				errors.As(err, &quiet) || errors.Is(err, ErrChanges) {
				return err
			}
			return &IOError{err}
		}
	}
}

// controlFree refuses a command line whose flags or arguments hold a
// control character or a line break (safetext.Check): no value of any
// command needs one, and one copied into a comment, a header or a table
// would end the line it is on.
func controlFree(c *cobra.Command, args []string) error {
	var err error
	c.Flags().Visit(func(f *pflag.Flag) {
		values := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		}
		for _, v := range values {
			if e := safetext.Check(v); e != nil && err == nil {
				err = &renderer.UsageError{Err: fmt.Errorf("--%s: the value %w", f.Name, e)}
			}
		}
	})
	for i, a := range args {
		if e := safetext.Check(a); e != nil && err == nil {
			err = &renderer.UsageError{Err: fmt.Errorf("argument %d: %w", i+1, e)}
		}
	}
	return err
}

// flagSuggestion is "; did you mean --FLAG?" for an unknown long flag near
// one of the command's, else "".
func flagSuggestion(c *cobra.Command, err error) string {
	var unknown *pflag.NotExistError
	if !errors.As(err, &unknown) || unknown.GetSpecifiedShortnames() != "" {
		return ""
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	meant := renderer.Suggest(unknown.GetSpecifiedName(), names)
	if len(meant) == 0 {
		return ""
	}
	return "; did you mean --" + strings.Join(meant, " or --") + "?"
}

// WriteError is a failure to write the output.
func WriteError(err error) error {
	if err != nil {
		return &IOError{fmt.Errorf("writing the output: %w", err)}
	}
	return nil
}

var errStdinTerminal = errors.New("stdin is a terminal: pipe manifests in (helm template ... | aws-ccm-renderer) or run it as helm's --post-renderer; see --help")

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
