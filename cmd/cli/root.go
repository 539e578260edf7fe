package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
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
    --set image.tag=v1.26.14 --post-renderer aws-ccm-renderer \
    --post-renderer-args=--distro=rke --post-renderer-args=--mode=migrate \
    --post-renderer-args=--kube-version=v1.26.15
  # ... and off again once the cluster runs with the external cloud provider
  helm upgrade aws-ccm aws-cloud-controller-manager \
    --repo https://kubernetes.github.io/cloud-provider-aws --namespace kube-system \
    --set image.tag=v1.26.14 --post-renderer aws-ccm-renderer --post-renderer-args=--distro=rke

  # In a pipeline, with one more flag for the CCM and one flag removed
  helm template aws-ccm ./aws-cloud-controller-manager --namespace kube-system \
    | aws-ccm-renderer --distro=k3s --set-arg=v=4 --remove-arg=allocate-node-cidrs > ccm.yaml

  # One output for every distribution (node affinity instead of a nodeSelector)
  helm template aws-ccm ./aws-cloud-controller-manager | aws-ccm-renderer --distro=auto

  # Options from a file kept next to the values in Git
  aws-ccm-renderer --config renderer.yaml < manifests.yaml`

const rootLong = `aws-ccm-renderer reads the manifests of the aws-cloud-controller-manager Helm
chart on stdin and writes them to stdout, patched so that the cloud controller
manager runs on the control-plane nodes of RKE1, RKE2, K3s or kubeadm clusters:

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

// rootFlags are the renderer options as the command line spells them.
type rootFlags struct {
	config      string
	distro      string
	mode        string
	hostNetwork bool
	setArgs     []string
	removeArgs  []string
	allowEmpty  bool
	lmConfig    string
	leaderName  string
	target      string
	kcmUser     string
	kubeVersion string
	ccmVersion  string
	allowSkew   bool
}

func (f *rootFlags) register(fs *pflag.FlagSet) {
	d := renderer.DefaultOptions()
	fs.StringVarP(&f.config, "config", "c", "", "read options from a RendererConfig YAML file; flags given on the command line win")
	fs.StringVar(&f.distro, "distro", string(d.Distro), "distribution: auto, rke, rke2, k3s or kubeadm")
	fs.StringVar(&f.mode, "mode", string(d.Mode), "install (the CCM alone) or migrate (leader migration with the in-tree controller manager)")
	fs.BoolVar(&f.hostNetwork, "host-network", *d.HostNetwork, "run the CCM in the host network")
	fs.StringArrayVar(&f.setArgs, "set-arg", nil, "set a CCM flag, FLAG=VALUE (repeatable), e.g. --set-arg=v=4")
	fs.StringArrayVar(&f.removeArgs, "remove-arg", nil, "remove a CCM flag by name (repeatable), e.g. --remove-arg=v")
	fs.BoolVar(&f.allowEmpty, "allow-missing-workload", false, "pass input without a CCM DaemonSet or Deployment through unchanged instead of failing")
	fs.StringVar(&f.lmConfig, "leader-migration-config", d.LeaderMigrationConfig,
		"in migrate mode: rendered (a ConfigMap naming the CCM's controllers) or default (the CCM's built-in config; unsafe, its service controller starts outside the migration lock)")
	fs.StringVar(&f.leaderName, "leader-name", d.LeaderName, "in migrate mode: the lease the in-tree controller manager and the CCM share")
	fs.StringVar(&f.target, "target", "", "the CCM's workload, KIND/NAMESPACE/NAME, for a build the renderer does not recognise by its executable or image")
	fs.StringVar(&f.kcmUser, "kcm-user", d.KCMUser, "in migrate mode: the in-tree kube-controller-manager's identity, which may then hold the migration lease")
	fs.StringVar(&f.kubeVersion, "kube-version", "", "the cluster's Kubernetes version (e.g. v1.26.15): the CCM's version is checked against it")
	fs.StringVar(&f.ccmVersion, "ccm-version", "", "the CCM's version when its image tag does not tell (an untagged or digest-pinned image)")
	fs.BoolVar(&f.allowSkew, "allow-version-skew", false, "in migrate mode, render a CCM newer than the cluster (--kube-version) anyway")
}

// options merges the config file, if any, with the flags set on the command
// line.
func (f *rootFlags) options(fs *pflag.FlagSet) (renderer.Options, error) {
	o := renderer.DefaultOptions()
	if f.config != "" {
		var err error
		if o, err = renderer.ReadConfigFile(f.config); err != nil {
			return o, err
		}
	}
	if fs.Changed("distro") {
		o.Distro = renderer.Distro(f.distro)
	}
	if fs.Changed("mode") {
		o.Mode = renderer.Mode(f.mode)
	}
	if fs.Changed("host-network") {
		o.HostNetwork = &f.hostNetwork
	}
	if fs.Changed("set-arg") {
		o.SetArgs = append(o.SetArgs, f.setArgs...)
	}
	if fs.Changed("remove-arg") {
		o.RemoveArgs = append(o.RemoveArgs, f.removeArgs...)
	}
	if fs.Changed("allow-missing-workload") {
		o.AllowMissingWorkload = f.allowEmpty
	}
	if fs.Changed("leader-migration-config") {
		o.LeaderMigrationConfig = f.lmConfig
	}
	if fs.Changed("leader-name") {
		o.LeaderName = f.leaderName
	}
	if fs.Changed("target") {
		o.Target = f.target
	}
	if fs.Changed("kcm-user") {
		o.KCMUser = f.kcmUser
	}
	if fs.Changed("kube-version") {
		o.KubeVersion = f.kubeVersion
	}
	if fs.Changed("ccm-version") {
		o.CCMVersion = f.ccmVersion
	}
	if fs.Changed("allow-version-skew") {
		o.AllowVersionSkew = f.allowSkew
	}
	return o, nil
}

// NewRootCommand builds the aws-ccm-renderer command: the post-renderer
// itself, with its subcommands.
func NewRootCommand(s IOStreams) *cobra.Command {
	f := &rootFlags{}
	cmd := &cobra.Command{
		Use:     "aws-ccm-renderer [flags] < manifests.yaml",
		Short:   "Patch the aws-cloud-controller-manager chart for Rancher (RKE1, RKE2, K3s) and kubeadm clusters",
		Long:    rootLong,
		Example: rootExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options(cmd.Flags())
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
			for _, w := range out.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "aws-ccm-renderer: warning: "+w)
			}
			if _, err := out.WriteTo(cmd.OutOrStdout()); err != nil {
				return &ioError{fmt.Errorf("writing the output: %w", err)}
			}
			return nil
		},
	}
	setCommon(cmd, s)
	f.register(cmd.Flags())
	complete(cmd, "distro", renderer.Distros)
	complete(cmd, "mode", renderer.Modes)
	complete(cmd, "leader-migration-config", []string{renderer.LeaderMigrationRendered, renderer.LeaderMigrationDefault})
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	cmd.AddCommand(NewVersionCommand(s), NewFnCommand(s), NewOverlaysCommand(s), NewPlanCommand(s))
	cmd.AddCommand(chartCommands(s)...)
	cmd.AddCommand(checkCommand(s))
	return cmd
}

func complete[T ~string](cmd *cobra.Command, flag string, values []T) {
	vs := make([]string, len(values))
	for i, v := range values {
		vs[i] = string(v)
	}
	_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(vs, cobra.ShellCompDirectiveNoFileComp))
}

// readInput reads all of stdin, in chunks that end at document boundaries
// so the renderer can hand slices of them to the output.
func readInput(r io.Reader) ([][]byte, error) {
	var hint int64
	if f, ok := r.(*os.File); ok {
		if term.IsTerminal(int(f.Fd())) {
			return nil, &renderer.UsageError{Err: errStdinTerminal}
		}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			hint = st.Size()
		}
	}
	chunks, err := stream.Read(r, hint)
	return chunks, readError(err)
}

func readError(err error) error {
	if err == nil {
		return nil
	}
	return &ioError{fmt.Errorf("reading stdin: %w", err)}
}
