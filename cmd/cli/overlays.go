package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/overlays"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// NewOverlaysCommand builds "aws-ccm-renderer overlays".
func NewOverlaysCommand(s IOStreams) *cobra.Command {
	var out, format, imageTag string
	f := &OptionFlags{Only: overlays.Taken()}
	cmd := &cobra.Command{
		Use:   "overlays [--out DIR] [--format kustomize|flux] [renderer options]",
		Short: "Write the kustomize components for places that run no executables (Fleet, Argo CD), or Flux HelmReleases",
		Long: `overlays writes one kustomize Component per distribution and mode into
DIR/<distro>/<mode>/ (` + strings.Join(distros.Values(distros.Records()), ", ") + `; install, migrate: ` + noMigrate() + `
no migrate mode), made from the renderer's own output for the upstream chart,
plus DIR/README.md. Each <distro>/<mode> directory it writes is replaced whole;
other files under DIR are left alone. It prints the directories it wrote.

It takes the renderer's options, and renders every component with them:
--distro and --mode write only that distribution or mode; --set-arg,
--remove-arg, --host-network, --leader-name, --kcm-user and the others change
what the components carry. Regenerate with the options you need rather than
edit the files: every generated file starts with the command that wrote it.

Migrate mode pins the CCM's image to the release of the cluster's minor (a
controller manager never runs newer than the API server, and a leader
migration hands over to the CCM of the cluster's minor): --kube-version's
minor, else 1.26, the last minor with the in-tree provider. --kube-version
pins install mode's image too; --image-tag pins a release of your choice.
The leader migration configuration is in the API version that CCM reads.

A component patches the upstream chart's output: the DaemonSet by a strategic
merge (placement, tolerations, host network, args, the pinned image; in migrate
mode the leader migration volume, mount and ConfigMap) and the ClusterRole by
a JSON patch that appends the service account rules. kustomize replaces the
args and tolerations lists whole and cannot merge flags by name as the
renderer does, so a component fits the chart at its default names, args and
tolerations; with other names (nameOverride, namespace, clusterRoleName)
kustomize build fails instead of passing the chart through unpatched. See
docs/overlays.md.

--format=flux writes the same patches as Flux HelmReleases instead, into
DIR/<distro>/<mode>/ (default DIR: flux): helmrelease.yaml, a HelmRelease of
the upstream chart whose spec.postRenderers carry the patches, which Flux's
helm-controller applies to the chart's output (the pinned image as
spec.values.image.tag); kustomization.yaml, for a Flux Kustomization, with the
HelmRepository in DIR/source/ and, in migrate mode, leader-migration.yaml
(objects a post-renderer patch cannot add). See docs/flux.md.`,
		Example: `  # Write the overlays into a directory of your own (make generate refreshes the repository's)
  aws-ccm-renderer overlays --out overlays

  # Use one in a kustomization over the chart's output:
  #   resources: [ccm.yaml]           # helm template ... > ccm.yaml
  #   components: [overlays/rke2/install]
  kustomize build .

  # The migrate component of an RKE2 cluster at 1.25, with a CCM flag of yours
  aws-ccm-renderer overlays --out overlays --distro=rke2 --mode=migrate \
    --kube-version=v1.25.16 --set-arg=cluster-name=prod

  # Flux: HelmReleases with the patches as post-renderers; a Flux Kustomization
  # then points at flux/rke2/install
  aws-ccm-renderer overlays --format=flux --out flux`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			write := overlays.Write
			switch format {
			case overlays.FormatKustomize:
			case overlays.FormatFlux:
				write = overlays.WriteFlux
				if !cmd.Flags().Changed("out") {
					out = "flux"
				}
			default:
				return &renderer.UsageError{Err: fmt.Errorf("--format %q: use %s or %s", format, overlays.FormatKustomize, overlays.FormatFlux)}
			}
			if out == "" {
				return &renderer.UsageError{Err: fmt.Errorf("--out must name a directory")}
			}
			spec, err := overlaysSpec(cmd, f, out, imageTag)
			if err != nil {
				return err
			}
			dirs, err := write(spec) // bad options show before anything is written
			if renderer.IsUsageError(err) {
				return err
			}
			if err != nil {
				return &IOError{fmt.Errorf("writing the overlays: %w", err)}
			}
			for _, d := range dirs {
				fmt.Fprintln(cmd.OutOrStdout(), d)
			}
			return nil
		},
	}
	SetCommon(cmd, s)
	cmd.Flags().StringVarP(&out, "out", "o", "overlays", "directory to write README.md and <distro>/<mode>/ into (flux: default flux)")
	cmd.Flags().StringVar(&format, "format", overlays.FormatKustomize, "kustomize (Components) or flux (HelmReleases with the patches as post-renderers)")
	cmd.Flags().StringVar(&imageTag, overlays.FlagImageTag, "", "the CCM image tag to pin (default: in migrate mode the release of --kube-version's minor, else of 1.26; in install mode --kube-version's, else the chart's)")
	f.Register(cmd.Flags())
	_ = cmd.MarkFlagDirname("out")
	Complete(cmd, "format", []string{overlays.FormatKustomize, overlays.FormatFlux})
	CompleteOptions(cmd, nil)
	return cmd
}

// overlaysSpec reads what to generate off the flags: the renderer's
// options, --distro and --mode (only when given) as the selection.
func overlaysSpec(cmd *cobra.Command, f *OptionFlags, out, imageTag string) (overlays.Spec, error) {
	opts, err := f.Options(cmd.Flags())
	if err != nil {
		return overlays.Spec{}, err
	}
	given, err := f.Given(cmd.Flags())
	if err != nil {
		return overlays.Spec{}, err
	}
	spec := overlays.Spec{Options: opts, ImageTag: imageTag, Out: filepath.ToSlash(filepath.Clean(out))}
	if given[flagOf(renderer.OptDistro)] {
		spec.Distros = []distros.Distro{opts.Distro}
	}
	if given[flagOf(renderer.OptMode)] {
		spec.Modes = []renderer.Mode{opts.Mode}
	}
	return spec, nil
}

// flagOf is an option's flag name.
func flagOf(o renderer.Opt) string {
	op, _ := renderer.OptionOf(o)
	return op.Flag
}

// noMigrate names the distributions without migrate mode, for the help:
// "K3s has", "A and B have".
func noMigrate() string {
	names := distros.DisplayNames(distros.WithMigrate(distros.Records(), false))
	if len(names) == 1 {
		return names[0] + " has"
	}
	return distros.Alternatives(names, "and") + " have"
}
