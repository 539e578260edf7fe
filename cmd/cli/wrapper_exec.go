//go:build !helmsdk

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// chartShort are the one-line descriptions of the chart wrapper commands.
var chartShort = map[string]string{
	"template": "Render the upstream chart with the renderer's patches (Helm SDK)",
	"install":  "Install the upstream chart with the renderer's patches (Helm SDK)",
	"upgrade":  "Upgrade a release of the upstream chart with the renderer's patches (Helm SDK)",
	"diff":     "Show what the renderer changes, or what an upgrade would change (Helm SDK)",
}

// chartCommands are stand-ins that hand the command line to
// aws-ccm-renderer-helm, found next to this executable or on PATH: running
// the command, its help (help COMMAND as well as COMMAND --help) and its
// shell completion.
func chartCommands(s IOStreams) []*cobra.Command {
	var cmds []*cobra.Command
	for _, kind := range ChartCommandKinds {
		cmd := &cobra.Command{
			Use:                kind + " [RELEASE] [CHART]",
			Short:              chartShort[kind],
			DisableFlagParsing: true,
			RunE: func(_ *cobra.Command, args []string) error {
				path, err := helmBinary()
				if err != nil {
					return &ioError{err}
				}
				return &ioError{handOver(path, append([]string{kind}, args...))}
			},
			// With flag parsing off, cobra hands every word to this
			// function; the Helm build completes them.
			ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return forwardCompletion(kind, args, toComplete)
			},
		}
		setCommon(cmd, s)
		cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
			path, err := helmBinary()
			if err == nil {
				err = handOver(path, []string{kind, "--help"})
			}
			fmt.Fprintf(c.OutOrStdout(), "%s\n\nUsage:\n  %s\n\n(no further help: %v)\n", c.Short, c.UseLine(), err)
		})
		cmds = append(cmds, cmd)
	}
	return cmds
}

// handOver replaces this process with the Helm build. Where exec is not
// available (Windows), it runs it with the same standard streams and exits
// with its status.
func handOver(path string, args []string) error {
	if runtime.GOOS != "windows" {
		return syscall.Exec(path, append([]string{path}, args...), os.Environ())
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		return err
	}
	os.Exit(0)
	return nil
}

// forwardCompletion asks the Helm build to complete a chart wrapper command
// line, through cobra's hidden completion command.
func forwardCompletion(kind string, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	path, err := helmBinary()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	words := append(append([]string{cobra.ShellCompRequestCmd, kind}, args...), toComplete)
	out, err := exec.Command(path, words...).Output()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return parseCompletion(out)
}

// parseCompletion reads cobra's completion output: one completion a line,
// then ":DIRECTIVE".
func parseCompletion(out []byte) ([]cobra.Completion, cobra.ShellCompDirective) {
	lines := strings.Split(strings.TrimRight(string(bytes.TrimSpace(out)), "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		return nil, cobra.ShellCompDirectiveError
	}
	d, err := strconv.Atoi(last[1:])
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var comps []cobra.Completion
	for _, l := range lines[:len(lines)-1] {
		if l != "" {
			comps = append(comps, l)
		}
	}
	return comps, cobra.ShellCompDirective(d)
}

func helmBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), HelmBinary)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(HelmBinary); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("template, install, upgrade and diff need %s next to this executable or on PATH (make build builds both)", HelmBinary)
}
