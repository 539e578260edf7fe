package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/overlays"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// NewOverlaysCommand builds "aws-ccm-renderer overlays".
func NewOverlaysCommand(s IOStreams) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "overlays [--out DIR]",
		Short: "Write the kustomize components for places that run no executables (Fleet, Argo CD)",
		Long: `overlays writes one kustomize Component per distribution and mode,
DIR/<distro>/<mode>/, made from the renderer's own profiles. A component
reproduces the renderer's patches on the upstream chart's output at its default
args, tolerations and nodeSelector: kustomize replaces lists whole and cannot
merge flags by name as the renderer does. See docs/overlays.md.`,
		Example: `  # Regenerate the repository's overlays
  aws-ccm-renderer overlays --out overlays

  # Use one in a kustomization over the chart's output
  #   resources: [ccm.yaml]
  #   components: [overlays/rke2/install]`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return &renderer.UsageError{Err: fmt.Errorf("--out must name a directory")}
			}
			if err := overlays.Write(out); err != nil {
				return &ioError{fmt.Errorf("writing the overlays: %w", err)}
			}
			for _, d := range renderer.Distros {
				for _, m := range renderer.Modes {
					fmt.Fprintln(cmd.OutOrStdout(), filepath.Join(out, string(d), string(m)))
				}
			}
			return nil
		},
	}
	setCommon(cmd, s)
	cmd.Flags().StringVarP(&out, "out", "o", "overlays", "directory to write <distro>/<mode>/ into")
	_ = cmd.MarkFlagDirname("out")
	return cmd
}
