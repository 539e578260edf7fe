//go:build !helmsdk

package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// checkCommand is a stand-in for check, which links the Kubernetes client
// and so lives in aws-ccm-renderer-helm with the chart wrapper commands:
// it hands the command line over, as they do, for running, help and
// completion.
func checkCommand(s IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:                "check [flags]",
		Short:              "Check a live cluster for what keeps the AWS CCM from working (read-only)",
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			path, err := helmBinary()
			if err != nil {
				return &ioError{fmt.Errorf("check needs %s next to this executable or on PATH (make build builds both)", HelmBinary)}
			}
			return &ioError{handOver(path, append([]string{"check"}, args...))}
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return forwardCompletion("check", args, toComplete)
		},
	}
	setCommon(cmd, s)
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		path, err := helmBinary()
		if err == nil {
			err = handOver(path, []string{"check", "--help"})
		}
		fmt.Fprintf(c.OutOrStdout(), "%s\n\nUsage:\n  %s\n\n(no further help: %v)\n", c.Short, c.UseLine(), err)
	})
	return cmd
}
