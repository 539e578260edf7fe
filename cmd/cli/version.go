package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X .../cmd/cli.version=v1.2.3".
var version = ""

// Version returns the program's version: the one set at build time, else the
// module version Go recorded, else "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// NewVersionCommand builds "aws-ccm-renderer version".
func NewVersionCommand(s IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the version",
		Example: "  aws-ccm-renderer version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "aws-ccm-renderer %s (%s, %s/%s)\n", Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
	SetCommon(cmd, s)
	return cmd
}
