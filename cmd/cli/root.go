package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

const rootExamples = `  # Helm 3: install the upstream chart on an RKE2 cluster
  helm install aws-ccm aws-cloud-controller-manager \
    --repo https://kubernetes.github.io/cloud-provider-aws --namespace kube-system \
    --post-renderer aws-ccm-renderer --post-renderer-args=--distro=rke2

  # Zero-downtime migration of a 1.26 RKE1 cluster off the in-tree provider (the
  # whole runbook: aws-ccm-renderer plan --distro=rke): leader migration on, with
  # the CCM of the cluster's minor ...
  helm upgrade --install aws-ccm aws-cloud-controller-manager \
    --repo https://kubernetes.github.io/cloud-provider-aws --namespace kube-system \
    --set image.tag=v1.26.14@sha256:bfdfbfe6ddee363786d27a3f47cdaaf7de06edb38352e825038847c5d0935064 --post-renderer aws-ccm-renderer \
    --post-renderer-args=--distro=rke --post-renderer-args=--mode=migrate \
    --post-renderer-args=--kube-version=v1.26.15
  # ... and off again once the cluster runs with the external cloud provider
  helm upgrade aws-ccm aws-cloud-controller-manager \
    --repo https://kubernetes.github.io/cloud-provider-aws --namespace kube-system \
    --set image.tag=v1.26.14@sha256:bfdfbfe6ddee363786d27a3f47cdaaf7de06edb38352e825038847c5d0935064 --post-renderer aws-ccm-renderer --post-renderer-args=--distro=rke

  # In a pipeline, with one more flag for the CCM and one flag removed
  helm template aws-ccm ./aws-cloud-controller-manager --namespace kube-system \
    | aws-ccm-renderer --distro=k3s --set-arg=v=4 --remove-arg=allocate-node-cidrs > ccm.yaml

  # One output for every distribution (node affinity instead of a nodeSelector)
  helm template aws-ccm ./aws-cloud-controller-manager | aws-ccm-renderer --distro=auto

  # Options from a file kept next to the values in Git
  aws-ccm-renderer --config renderer.yaml < manifests.yaml`

var rootLong = `aws-ccm-renderer reads the manifests of the aws-cloud-controller-manager Helm
chart on stdin and writes them to stdout, patched so that the cloud controller
manager runs on the control-plane nodes of ` + distros.Alternatives(distros.DisplayNames(distros.Named(distros.Records())), "or") + ` clusters:

  placement     the distribution's control-plane nodeSelector (--distro=auto: a
                node affinity matching any distribution's control-plane label)
  tolerations   the uninitialized taint, the role taints, CriticalAddonsOnly,
                all with operator Exists
  RBAC          get and create on serviceaccounts, create on serviceaccounts/token
  args          --cloud-provider=aws --use-service-account-credentials=true
                --configure-cloud-routes=false, merged by flag name; leader
                migration per --mode
  hostNetwork   true (--host-network=false to leave the pod network)

In --mode=migrate it also adds a ConfigMap holding a LeaderMigrationConfiguration
that names the CCM's controllers, mounts it and passes --leader-migration-config.

Every other document is written back byte for byte. On bad input it prints one
line on stderr, nothing on stdout, and exits 1; bad options exit 2.`

// NewRootCommand builds the aws-ccm-renderer command: the post-renderer
// itself, with its subcommands and the program's more.
func NewRootCommand(s IOStreams, more Commands) *cobra.Command {
	f := &OptionFlags{}
	cmd := &cobra.Command{
		Use:     "aws-ccm-renderer [flags] < manifests.yaml",
		Short:   "Patch the aws-cloud-controller-manager chart for " + distros.RancherNames(distros.Records()) + " clusters",
		Long:    rootLong,
		Example: rootExamples,
		Args:    f.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.Options(cmd.Flags())
			if err != nil {
				return err
			}
			r, err := renderer.New(opts)
			if err != nil {
				return err
			}
			in, err := readInput(cmd.InOrStdin())
			if err != nil {
				return err
			}
			out, err := r.RenderChunks(in)
			if err != nil {
				return err
			}
			s.Tell(Warnings(out.Warnings)...)
			_, err = out.WriteTo(cmd.OutOrStdout())
			return WriteError(err)
		},
	}
	SetCommon(cmd, s)
	f.Register(cmd.Flags())
	CompleteOptions(cmd, nil)
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	cmd.AddCommand(NewVersionCommand(s), NewFnCommand(s), NewOverlaysCommand(s), NewPlanCommand(s))
	cmd.AddCommand(more(s)...)
	return cmd
}

// Warnings are the renderer's warnings as the lines that show them.
func Warnings(ws []string) []string {
	lines := make([]string, len(ws))
	for i, w := range ws {
		lines[i] = Warning(w)
	}
	return lines
}

// Warning is the line that shows a warning. A warning quotes its input
// (names, the chart's flag values): escaped, a control character there
// cannot reach the terminal nor split the line.
func Warning(w string) string { return "aws-ccm-renderer: warning: " + safetext.Escape(w) }

// Complete completes a flag with values.
func Complete[T ~string](cmd *cobra.Command, flag string, values []T) {
	vs := make([]string, len(values))
	for i, v := range values {
		vs[i] = string(v)
	}
	_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(vs, cobra.ShellCompDirectiveNoFileComp))
}

// readInput reads all of stdin, in chunks that end at document boundaries
// so the renderer can hand slices of them to the output; more than
// safefile.MaxRead bytes is an error, not a read without end.
func readInput(r io.Reader) ([][]byte, error) {
	var hint int64
	if terminal.IsTerminal(r) {
		return nil, &renderer.UsageError{Err: errStdinTerminal}
	}
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			hint = st.Size()
		}
	}
	if hint > safefile.MaxRead {
		return nil, readError(safefile.ErrTooLarge)
	}
	chunks, err := stream.Read(safefile.LimitReader(r), hint)
	return chunks, readError(err)
}

// readError is a failed read of stdin: more than safefile.MaxRead bytes is
// bad input (exit 1), anything else a failed read (exit 3).
func readError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, safefile.ErrTooLarge):
		return &renderer.InputError{Err: fmt.Errorf("reading stdin: %w", err)}
	}
	return &IOError{fmt.Errorf("reading stdin: %w", err)}
}
