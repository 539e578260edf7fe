package helmcmd

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/chartops"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// NewTemplateCommand builds template: the chart rendered and patched
// in-process, as helm template with the renderer as its post-renderer.
func NewTemplateCommand(s cli.IOStreams) *cobra.Command {
	var showOnly []string
	cmd, c := newChartCommand(s, "template", "Render the upstream chart with the renderer's patches, in-process", "", templateExamples)
	cmd.Flags().StringArrayVarP(&showOnly, "show-only", "s", nil, "only show the manifests of these templates (a path in the chart such as templates/daemonset.yaml, or a glob; the renderer's own objects are leader-migration-config.yaml and leader-migration-rbac.yaml)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c.args(cmd, args)
		ctx, stop := interruptible(cmd.Context())
		defer stop()
		p, err := c.prepare(ctx, needs{})
		if err != nil {
			return err
		}
		text, err := p.client.Template(ctx, p.chart, p.vals, p.pr, chartops.Template{
			Release: c.release, Namespace: p.namespace, KubeVersion: p.kubeVersion, ShowOnly: showOnly})
		if err != nil {
			return err
		}
		_, err = io.WriteString(cmd.OutOrStdout(), text)
		return cli.WriteError(err)
	}
	cli.SetCommon(cmd, s)
	return cmd
}

// releaseFlags are what install and upgrade take alike.
type releaseFlags struct {
	wait, atomic, createNS bool
	timeout                time.Duration
	dryRun                 string
}

func (f *releaseFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.BoolVar(&f.wait, "wait", false, "wait until the objects are ready (the DaemonSet rolled out)")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "how long to wait for Kubernetes operations")
	fs.BoolVar(&f.atomic, "atomic", false, "roll back (upgrade) or uninstall (install) when it fails; implies --wait")
	fs.StringVar(&f.dryRun, "dry-run", "none", "simulate and print the manifests: client (also a bare --dry-run; install needs no cluster) or server (rendered and checked against the cluster); change nothing")
	fs.Lookup("dry-run").NoOptDefVal = "client"
	fs.BoolVar(&f.createNS, "create-namespace", false, "create the release's namespace if it does not exist (install, upgrade --install)")
	cli.Complete(cmd, "dry-run", []string{"none", "client", "server"})
}

func (f *releaseFlags) install(release, namespace string, dry chartops.DryRun, kv *chartops.KubeVersion) chartops.Install {
	return chartops.Install{Release: release, Namespace: namespace, Wait: f.wait, Atomic: f.atomic, Timeout: f.timeout,
		DryRun: dry, CreateNamespace: f.createNS, KubeVersion: kv}
}

// valuesFlags are how upgrade and diff start from the release's values,
// and --reset-options.
type valuesFlags struct {
	reuse, reset, resetThenReuse bool
}

func (f *valuesFlags) register(fs *pflag.FlagSet) {
	fs.Bool("reset-options", false, "do not default the renderer's options to those the deployed release records")
	fs.BoolVar(&f.reuse, "reuse-values", false, "upgrade: start from the release's last values and merge the ones given here (ignored with --reset-values)")
	fs.BoolVar(&f.reset, "reset-values", false, "upgrade: start from the chart's values, not the release's")
	fs.BoolVar(&f.resetThenReuse, "reset-then-reuse-values", false, "upgrade: the new chart's values, then the release's last values, then the ones given here")
}

func (f *valuesFlags) upgrade(in chartops.Install) chartops.Upgrade {
	return chartops.Upgrade{Install: in, ReuseValues: f.reuse, ResetValues: f.reset, ResetThenReuseValues: f.resetThenReuse}
}

// NewInstallCommand builds install.
func NewInstallCommand(s cli.IOStreams) *cobra.Command {
	var rf releaseFlags
	cmd, c := newChartCommand(s, "install", "Install the upstream chart with the renderer's patches", releaseLong, installExamples)
	rf.register(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c.args(cmd, args)
		dry, err := chartops.ParseDryRun(rf.dryRun)
		if err != nil {
			return err
		}
		ctx, stop := interruptible(cmd.Context())
		defer stop()
		p, err := c.prepare(ctx, needs{cluster: dry != chartops.DryRunClient})
		if err != nil {
			return err
		}
		out, err := p.client.Install(ctx, p.chart, p.vals, p.pr, rf.install(c.release, p.namespace, dry, p.kubeVersion))
		if err != nil {
			return err
		}
		return report(cmd.OutOrStdout(), out)
	}
	cli.SetCommon(cmd, s)
	return cmd
}

// NewUpgradeCommand builds upgrade.
func NewUpgradeCommand(s cli.IOStreams) *cobra.Command {
	var (
		rf         releaseFlags
		vf         valuesFlags
		install    bool
		historyMax int
	)
	cmd, c := newChartCommand(s, "upgrade", "Upgrade a release of the upstream chart with the renderer's patches", releaseLong, upgradeExamples)
	rf.register(cmd)
	vf.register(cmd.Flags())
	fs := cmd.Flags()
	fs.BoolVarP(&install, "install", "i", false, "install the release when it does not exist yet")
	fs.IntVar(&historyMax, "history-max", 10, "keep at most this many revisions of the release, 0 for no limit (default: $HELM_MAX_HISTORY, else 10)")
	fs.IntVar(&historyMax, "max-history", 10, "the same as --history-max")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c.args(cmd, args)
		dry, err := chartops.ParseDryRun(rf.dryRun)
		if err != nil {
			return err
		}
		if historyMax < 0 {
			return &renderer.UsageError{Err: fmt.Errorf("--history-max %d: use a number of revisions, or 0 for no limit", historyMax)}
		}
		if !fs.Changed("history-max") && !fs.Changed("max-history") {
			historyMax = c.env.MaxHistory()
		}
		ctx, stop := interruptible(cmd.Context())
		defer stop()
		p, err := c.prepare(ctx, needs{cluster: true, recorded: true})
		if err != nil {
			return err
		}
		o := vf.upgrade(rf.install(c.release, p.namespace, dry, p.kubeVersion))
		o.InstallMissing, o.MaxHistory = install, historyMax
		out, err := p.client.Upgrade(ctx, p.chart, p.vals, p.pr, o)
		if err != nil {
			return err
		}
		return report(cmd.OutOrStdout(), out)
	}
	cli.SetCommon(cmd, s)
	return cmd
}

// report prints what install or upgrade did; a dry run prints the
// manifests.
func report(w io.Writer, o *chartops.Outcome) error {
	if o.Manifest != "" {
		_, err := io.WriteString(w, o.Manifest)
		return cli.WriteError(err)
	}
	_, err := fmt.Fprintf(w, "release %s in namespace %s: revision %d, %s (chart %s)\n", o.Name, o.Namespace, o.Revision, o.Status, o.Chart)
	return cli.WriteError(err)
}

const templateExamples = `  # The latest upstream chart, patched for RKE2
  aws-ccm-renderer template --distro=rke2

  # A pinned version, from a chart package, from a repository helm repo add added, from OCI
  aws-ccm-renderer template --distro=rke --version 0.0.11
  aws-ccm-renderer template ccm ./aws-cloud-controller-manager-0.0.11.tgz --distro=k3s
  aws-ccm-renderer template ccm aws-ccm/aws-cloud-controller-manager --version 0.0.11 --distro=k3s
  aws-ccm-renderer template ccm oci://registry.example.com/charts/aws-cloud-controller-manager --version 0.0.11

  # Only the DaemonSet
  aws-ccm-renderer template --distro=rke2 --show-only templates/daemonset.yaml`

const installExamples = `  # Install on an RKE2 cluster and wait for the DaemonSet
  aws-ccm-renderer install --distro=rke2 --wait

  # What it would install, without a cluster
  aws-ccm-renderer install --distro=rke2 --dry-run

  # Leader migration during a move off the in-tree provider
  aws-ccm-renderer install --distro=rke --mode=migrate -f values.yaml`

const upgradeExamples = `  # Leader migration off again after the move, keeping the values of the last upgrade
  aws-ccm-renderer upgrade --distro=rke --mode=install --reuse-values --wait

  # Install or upgrade, rolling back on failure, in the context of another cluster
  aws-ccm-renderer upgrade --install --distro=k3s --atomic --kube-context edge-1`
