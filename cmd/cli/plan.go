package cli

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

var planLong = `plan prints the ordered steps that put a cluster on the AWS cloud controller
manager (CCM): for each step why it is needed, the configuration to write
(` + configurations() + `,
Rancher's spec.rkeConfig), the commands to run (the renderer's through Helm
among them), what to check before the next step, and how to roll it back.

--from says what runs the cluster's cloud controllers now:
  new       a cluster not yet created (Kubernetes 1.27 and later): its
            configuration for the external provider, the IAM policy and tags,
            the CCM pinned to the cluster's minor
  in-tree   the in-tree AWS provider (` + strings.Join(distros.DisplayNames(distros.WithMigrate(distros.Named(distros.Records()), true)), ", ") + ` at 1.22 to 1.26):
            leader migration, the in-tree controller manager and the CCM
            sharing a lease (the default up to 1.26)
  builtin   ` + ownControllers() + `: a switch, every node registered again (the default
            on ` + distros.Alternatives(distros.DisplayNames(distros.WithMigrate(distros.Records(), false)), "and") + `)
  none      no cloud provider (nodes without provider IDs, kubeadm): a switch,
            every node initialised by the CCM in place
aws-ccm-renderer check prints the plan command that fits a running cluster.

Phases: before (nothing changes yet: what the CCM needs), during (the switch to
the external provider, or a new cluster and its CCM), after (clean-up, the
upgrades). Without --phase all three.
--brief prints a checklist (each step's ID, title and main command); --step ID
prints one step in full. At every point where the operator must verify, the
plan runs aws-ccm-renderer check and says what a pass looks like. Its head
names its inputs: the variables and files the commands read, and which step
(or you) makes each.

The CCM commands use the chart wrapper (aws-ccm-renderer upgrade), which keeps
the options a release was rendered with (a forgotten --mode=migrate stays
migrate); --helm prints plain helm commands with the renderer as post-renderer.
--chart and --repo say where the chart comes from, as the chart wrapper takes it
(a name in --repo, REPO/NAME, oci://..., a local .tgz).

-o json prints the plan for automation, as described by docs/plan.schema.json
(apiVersion ` + plan.APIVersion + `, kind ` + plan.Kind + `); -o markdown as
docs/migration.md shows it. Nothing is read from or written to a cluster.`

const planExamples = `  # The whole runbook for an RKE2 cluster at Kubernetes 1.26.15
  aws-ccm-renderer plan --distro rke2

  # A checklist to work through, then one step in full
  aws-ccm-renderer plan --distro rke2 --brief
  aws-ccm-renderer plan --distro rke2 --step during.switch

  # Only what happens before the switch, for an RKE1 cluster at 1.25
  aws-ccm-renderer plan --distro rke --phase before --kube-version 1.25

  # The chart from a mirror added with helm repo add, a cloud config to carry over
  aws-ccm-renderer plan --distro kubeadm --chart mirror/aws-cloud-controller-manager --cloud-config

  # For automation: the steps as JSON, with another release name
  aws-ccm-renderer plan --distro kubeadm -o json --release ccm | jq '.phases[].steps[].id'

  # K3s: a switch from K3s's own cloud controller, for a 1.30 cluster
  aws-ccm-renderer plan --distro k3s --kube-version v1.30.14

  # A new RKE2 cluster at 1.35: its config.yaml or spec.rkeConfig, IAM, tags, the CCM
  aws-ccm-renderer plan --distro rke2 --kube-version 1.35 --from new

  # A running kubeadm cluster at 1.34 without a cloud provider
  aws-ccm-renderer plan --distro kubeadm --kube-version v1.34.2 --from none`

// NewPlanCommand builds "aws-ccm-renderer plan".
func NewPlanCommand(s IOStreams) *cobra.Command {
	o := plan.DefaultOptions()
	var distro, phase, output string
	var brief bool
	cmd := &cobra.Command{
		Use:     "plan --distro DISTRO [--kube-version V] [--from new|in-tree|builtin|none] [--phase before|during|after | --step ID] [--brief] [-o text|json|markdown]",
		Short:   "Print the runbook that puts a cluster on the AWS CCM: steps, snippets, commands, checks, rollbacks",
		Long:    planLong,
		Example: planExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Distro, o.Phase = distros.Distro(distro), plan.Phase(phase)
			if !slices.Contains(plan.Formats, output) {
				return &renderer.UsageError{Err: fmt.Errorf("unknown output format %q: use text, json or markdown", output)}
			}
			p, err := plan.Build(o)
			if err != nil {
				return err
			}
			var b bytes.Buffer
			write := plan.Write
			if brief {
				write = plan.WriteBrief
			}
			if err := write(&b, p, output); err != nil {
				return err
			}
			if _, err := b.WriteTo(cmd.OutOrStdout()); err != nil {
				return &IOError{fmt.Errorf("writing the plan: %w", err)}
			}
			return nil
		},
	}
	SetCommon(cmd, s)
	f := cmd.Flags()
	f.StringVar(&distro, "distro", "", "the cluster's distribution: "+distros.Alternatives(distros.ValuesWithNames(distros.Named(distros.Records())), "or")+" (required)")
	f.StringVar(&o.From, "from", "", "what runs the cluster's cloud controllers now: new, in-tree, builtin or none (default: in-tree up to 1.26, builtin on "+distros.Alternatives(distros.DisplayNames(distros.WithMigrate(distros.Records(), false)), "and")+"; required otherwise)")
	f.StringVar(&phase, "phase", "", "print one phase only: before, during or after (default: all)")
	f.StringVar(&o.Step, "step", "", "print one step only, by its ID (e.g. during.switch; --brief lists them)")
	f.BoolVar(&brief, "brief", false, "print a checklist: each step's ID, title and main command (text or markdown)")
	f.StringVarP(&output, "output", "o", plan.FormatText, "output format: text, json or markdown")
	f.StringVar(&o.Release, "release", o.Release, "the CCM's Helm release name")
	f.StringVarP(&o.Namespace, "namespace", "n", o.Namespace, "the CCM's namespace")
	f.StringVar(&o.KubeVersion, "kube-version", o.KubeVersion, "the cluster's Kubernetes version, e.g. 1.26 or v1.26.15 (kubectl version): picks the CCM release of its minor")
	f.StringVar(&o.CCMVersion, "ccm-version", "", "the CCM image tag, of the cluster's minor (default: the latest release of that minor known to this program)")
	f.StringVar(&o.Chart, "chart", o.Chart, "the chart: a name looked up in --repo, REPO/NAME (helm repo add), oci://HOST/PATH/NAME or a local .tgz")
	f.StringVar(&o.Repo, "repo", o.Repo, "the chart repository URL a chart name is looked up in")
	f.StringVar(&o.ChartVersion, "chart-version", o.ChartVersion, "the aws-cloud-controller-manager chart version")
	f.BoolVar(&o.CloudConfig, "cloud-config", false, "the in-tree provider has a cloud config: every CCM command mounts it (before.cloud-config)")
	f.StringVar(&o.ClusterCIDR, "cluster-cidr", "", "the pod CIDR, when the in-tree route controller manages VPC routes (before.routes): every CCM command runs the CCM's route controller")
	f.BoolVar(&o.Helm, "helm", false, "print plain helm commands with aws-ccm-renderer as post-renderer instead of the chart wrapper's")
	f.StringVar(&o.KCMUser, "kcm-user", o.KCMUser, "the user the in-tree kube-controller-manager authenticates as")
	f.StringVar(&o.LeaderName, "leader-name", o.LeaderName, "the lease the in-tree controller manager and the CCM share")
	Complete(cmd, "distro", plan.Distros)
	Complete(cmd, "phase", plan.Phases)
	Complete(cmd, "from", plan.Froms)
	Complete(cmd, "output", plan.Formats)
	Complete(cmd, "kube-version", []string{releases.LastInTreeKubernetes})
	_ = cmd.RegisterFlagCompletionFunc("step", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		o := o
		o.Distro = distros.Distro(distro)
		p, err := plan.Build(o)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var ids []cobra.Completion
		for _, ph := range p.Phases {
			for _, s := range ph.Steps {
				ids = append(ids, s.ID)
			}
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// ownControllers names the distributions' own cloud controllers, for the
// help: "RKE2's or K3s's own cloud controller (nodes on rke2:// or k3s://\n
// provider IDs)".
func ownControllers() string {
	names, schemes := distros.OwnControllerNames(distros.Records())
	return distros.Alternatives(names, "or") + " own cloud controller (nodes on " + distros.Alternatives(schemes, "or") + "\n            provider IDs)"
}

// configurations names where each distribution's configuration is written.
func configurations() string {
	var configs []string
	for _, p := range distros.Named(distros.Records()) {
		configs = append(configs, p.Node.Configuration)
	}
	return strings.Join(configs, ", ")
}
