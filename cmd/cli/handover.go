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

// The chart commands (template, install, upgrade, diff), argocd generate
// and check run the
// Helm SDK and the Kubernetes client. Linking them costs every process
// about 16 ms of package initialisation (docs/dev/chart-wrapper.md has the
// figures), more than the whole post-render path may take, and Go
// initialises every linked package before main, so they live in a second
// program, aws-ccm-renderer-helm (cmd/aws-ccm-renderer-helm; `make build`
// makes both). aws-ccm-renderer execs it — the process is replaced, no
// subprocess — for these commands.

// HelmBinary is the name of the program with the Helm SDK.
const HelmBinary = "aws-ccm-renderer-helm"

// ChartCommandKinds are the chart wrapper commands.
var ChartCommandKinds = []string{"template", "install", "upgrade", "diff"}

// handedOver are the commands aws-ccm-renderer-helm runs, with their
// one-line descriptions.
var handedOver = []struct{ use, short string }{
	{"template [RELEASE] [CHART]", "Render the upstream chart with the renderer's patches (Helm SDK)"},
	{"install [RELEASE] [CHART]", "Install the upstream chart with the renderer's patches (Helm SDK)"},
	{"upgrade [RELEASE] [CHART]", "Upgrade a release of the upstream chart with the renderer's patches (Helm SDK)"},
	{"diff [RELEASE] [CHART]", "Show what the renderer changes, or what an upgrade would change (Helm SDK)"},
	{"check [flags]", "Check a live cluster for what keeps the AWS CCM from working (read-only)"},
	{"guard --mode=MODE --ccm-version=TAG", "Hold the AWS CCM back while starting it would do harm (an init container of its pod)"},
	{"argocd generate", "The Argo CD config management plugin's generate command: the chart rendered from Argo CD's environment (Helm SDK)"},
}

// HandOver builds the stand-ins of the lean program for the commands of
// aws-ccm-renderer-helm, found next to this executable or on PATH: they
// hand it the command line for running the command, its help (help
// COMMAND as well as COMMAND --help) and its shell completion.
func HandOver(s IOStreams) []*cobra.Command {
	var cmds []*cobra.Command
	for _, h := range handedOver {
		kind, _, _ := strings.Cut(h.use, " ")
		cmd := &cobra.Command{
			Use:                h.use,
			Short:              h.short,
			DisableFlagParsing: true,
			RunE: func(_ *cobra.Command, args []string) error {
				path, err := helmBinary(kind)
				if err != nil {
					return &IOError{err}
				}
				return &IOError{handOver(path, append([]string{kind}, args...))}
			},
			// With flag parsing off, cobra hands every word to this
			// function; the Helm build completes them.
			ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return forwardCompletion(kind, args, toComplete)
			},
		}
		SetCommon(cmd, s)
		cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
			path, err := helmBinary(kind)
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
	path, err := helmBinary(kind)
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

// helmBinary finds aws-ccm-renderer-helm for a command.
func helmBinary(kind string) (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), HelmBinary)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(HelmBinary); err == nil {
		return p, nil
	}
	what := "template, install, upgrade and diff need"
	switch kind {
	case "check":
		what = "check needs"
	case "guard":
		what = "guard needs"
	case "argocd":
		what = "argocd generate needs"
	}
	return "", fmt.Errorf("%s %s next to this executable or on PATH (make build builds both)", what, HelmBinary)
}
