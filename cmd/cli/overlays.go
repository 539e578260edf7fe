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
	var out, format string
	cmd := &cobra.Command{
		Use:   "overlays [--out DIR] [--format kustomize|flux]",
		Short: "Write the kustomize components for places that run no executables (Fleet, Argo CD)",
		Long: `overlays writes one kustomize Component per distribution and mode into
DIR/<distro>/<mode>/ (auto, rke, rke2, k3s, kubeadm; install, migrate), made from
the renderer's own profiles, plus DIR/README.md. Each <distro>/<mode> directory
is replaced whole; other files under DIR are left alone. It prints the
directories it wrote.

A component patches the upstream chart's output: the DaemonSet by a strategic
merge (placement, tolerations, host network, args; in migrate mode the leader
migration volume, mount and ConfigMap) and the ClusterRole by a JSON patch that
appends the service account rules. kustomize replaces the args and tolerations
lists whole and cannot merge flags by name as the renderer does, so a component
fits the chart at its default names, args and tolerations; with other names
(nameOverride, namespace, clusterRoleName) kustomize build fails instead of
passing the chart through unpatched. See docs/overlays.md.

--format=flux writes the same patches as Flux HelmReleases instead, into
DIR/<distro>/<mode>/ (default DIR: flux): helmrelease.yaml, a HelmRelease of
the upstream chart whose spec.postRenderers carry the patches, which Flux's
helm-controller applies to the chart's output; kustomization.yaml, for a Flux
Kustomization, with the HelmRepository in DIR/source/ and, in migrate mode,
leader-migration.yaml (objects a post-renderer patch cannot add). See
docs/flux.md.`,
		Example: `  # Write the overlays into a directory of your own (make generate refreshes the repository's)
  aws-ccm-renderer overlays --out overlays

  # Use one in a kustomization over the chart's output:
  #   resources: [ccm.yaml]           # helm template ... > ccm.yaml
  #   components: [overlays/rke2/install]
  kustomize build .

  # Flux: HelmReleases with the patches as post-renderers; a Flux Kustomization
  # then points at flux/rke2/install
  aws-ccm-renderer overlays --format=flux --out flux`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			write := overlays.Write
			switch format {
			case "kustomize":
			case "flux":
				write = overlays.WriteFlux
				if !cmd.Flags().Changed("out") {
					out = "flux"
				}
			default:
				return &renderer.UsageError{Err: fmt.Errorf("--format %q: use kustomize or flux", format)}
			}
			if out == "" {
				return &renderer.UsageError{Err: fmt.Errorf("--out must name a directory")}
			}
			if err := write(out); err != nil {
				return &IOError{fmt.Errorf("writing the overlays: %w", err)}
			}
			for _, d := range renderer.Distros {
				for _, m := range renderer.Modes {
					fmt.Fprintln(cmd.OutOrStdout(), filepath.Join(out, string(d), string(m)))
				}
			}
			return nil
		},
	}
	SetCommon(cmd, s)
	cmd.Flags().StringVarP(&out, "out", "o", "overlays", "directory to write README.md and <distro>/<mode>/ into (flux: default flux)")
	cmd.Flags().StringVar(&format, "format", "kustomize", "kustomize (Components) or flux (HelmReleases with the patches as post-renderers)")
	_ = cmd.MarkFlagDirname("out")
	Complete(cmd, "format", []string{"kustomize", "flux"})
	return cmd
}
