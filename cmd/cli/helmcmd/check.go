package helmcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/chartops"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check/awscheck"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check/output"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/reach"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

var checkLong = `check reads a cluster and tells whether the AWS cloud controller manager will
work there, and if not, why. It never writes to the cluster. It reports:

  distribution  ` + distros.Alternatives(distros.DisplayNames(distros.Named(distros.Records())), "or") + `, from the nodes, and whether the CCM was
                rendered for it
  workload      the CCM's DaemonSet or Deployment, its mode, its leader migration config,
                its cloud config's [ServiceOverride] names against its release
  placement     per control-plane node: would a CCM pod run there, and if not which rule
                (node selector, affinity term, untolerated taint) keeps it off, by the
                Kubernetes libraries' rules and the DaemonSet controller's tolerations
  node          providerID, the uninitialized taint, the node name against the EC2
                private DNS name, signs of a kubelet with --cloud-provider=external
                (nodes alike grouped into one line)
  hostname      nodes whose kubernetes.io/hostname label is not their name, and the
                PersistentVolumes and workloads pinned to it
  in-tree       the controller manager's and API server's flags where the API shows
                them (` + withFacts(func(f distros.NodeFacts) bool { return f.ControlPlanePods }, "'s", " and ") + ` mirror pods), ` + withFacts(func(f distros.NodeFacts) bool { return f.NodeArgs != "" }, "", "/") + ` kubelet arguments
  options       options a component no longer takes at its version, or at the one
                --upgrade-to names (kube-apiserver, kube-controller-manager, kubelet,
                kubeadm's configuration, RKE2's own cloud controller)
  controllers   ` + distros.Alternatives(first(distros.OwnControllerNames(distros.Records())), "or") + ` own cloud controller beside the AWS CCM, a second
                AWS CCM
  iam           what AWS refused the cloud controllers, from their events; with --aws,
                the CCM's role simulated against its release's policy
  service       ` + withFacts(func(f distros.NodeFacts) bool { return f.ServiceLB != nil }, "", "/") + `: LoadBalancer Services, ServiceLB against the CCM's ELBs; elsewhere
                the LoadBalancer Services the CCM's service controller will take over
  rbac          the CCM's service account (and how far it may create tokens), and in
                migrate mode the in-tree controller manager on the migration lease,
                asked by SubjectAccessReview
  lease         who holds the CCM's lease and the migration lease, against the mode
                (and against --migration-lease-holder, as the plan's gates ask)
  version       the CCM image against the API server (skew), the chart
  plan          which aws-ccm-renderer plan --from=... fits the cluster

With --aws it reads the AWS account too, read-only, with the AWS SDK's configuration
(credentials, region and endpoints as the AWS CLI finds them; the CCM's cloud config's
[ServiceOverride] endpoints where it has them), and judges it as the CCM's release would:

  aws             the region and identity read, the endpoints, what could not be read
  instance        per node: the instance the CCM looks up (providerID or name) exists and
                  runs; a name that is not the instance's (custom DHCP domain names)
  cluster-id      every node's instance tagged kubernetes.io/cluster/<ID>, the cloud config
  security-group  per instance: the one group tagged for the cluster the CCM opens
  subnet          per zone: the subnet an internet-facing and an internal ELB would use
  metadata        the control-plane instances' IMDS options against the CCM's network
  load-balancer   per Service: who owns it, whether the CCM's ELB exists; ELBs whose
                  Service is gone

What is checked: the rendered manifests (-f FILE, - for stdin), a Helm release's deployed
manifest (--release NAME), or, with neither, the CCM workload running in the cluster.
Several --kube-context flags, or --all-contexts, check clusters concurrently and end with
one summary row per cluster. The kubeconfig is found as Helm finds it: --kubeconfig,
$KUBECONFIG, ~/.kube/config; the context from --kube-context, $HELM_KUBECONTEXT, or the
current context.

Exit status: 0 no errors (warnings allowed), 1 errors found (or manifests without a CCM),
2 bad flags, 3 a cluster unreachable, refusing the credentials, or forbidding a read
check needs (the message names the permission); with --aws also no region, no or expired
AWS credentials, or nothing of the account readable. An AWS read refused (AccessDenied)
is a "·" line naming the action check needs; the other areas still run.`

const checkExamples = `  # What runs in the cluster of the current context
  aws-ccm-renderer check

  # Before installing: the rendered manifests against the cluster
  aws-ccm-renderer template --distro=rke2 | aws-ccm-renderer check -f -

  # A Helm release's deployed manifest, as JSON
  aws-ccm-renderer check --release aws-ccm --namespace kube-system -o json

  # A fleet: every context of the kubeconfig, one summary row per cluster
  aws-ccm-renderer check --all-contexts
  aws-ccm-renderer check --kube-context prod-a --kube-context prod-b

  # The AWS side too: tags, names, security groups, subnets, IAM, metadata, load balancers
  aws-ccm-renderer check --aws
  aws-ccm-renderer check --aws --aws-profile prod --aws-region eu-west-1 -o json

  # Before an upgrade: what the components' options do at 1.37
  aws-ccm-renderer check --upgrade-to 1.37

  # Two CCM workloads in the cluster: pick one
  aws-ccm-renderer check --target DaemonSet/kube-system/aws-cloud-controller-manager`

type checkFlags struct {
	file        string
	release     string
	namespace   string
	target      string
	kubeconfig  string
	contexts    []string
	allContexts bool
	output      string
	kcmUser     string
	holder      string
	timeout     time.Duration
	noColor     bool
	aws         bool
	awsProfile  string
	awsRegion   string
	awsCCM      string
	upgradeTo   string
}

// NewCheckCommand builds check.
func NewCheckCommand(s cli.IOStreams) *cobra.Command {
	cmd, _ := newCheckCommand(s)
	return cmd
}

// newCheckCommand builds check and the flags it parses into.
func newCheckCommand(s cli.IOStreams) (*cobra.Command, *checkFlags) {
	f := &checkFlags{}
	cmd := &cobra.Command{
		Use:     "check [flags]",
		Short:   "Check a live cluster for what keeps the AWS CCM from working (read-only)",
		Long:    checkLong,
		Example: checkExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCheck(cmd, f)
		},
	}
	cli.SetCommon(cmd, s)
	fs := cmd.Flags()
	fs.StringVarP(&f.file, "filename", "f", "", "rendered manifests to check (- reads stdin), e.g. aws-ccm-renderer template ... | aws-ccm-renderer check -f -")
	fs.StringVar(&f.release, "release", "", "check the deployed manifest of this Helm release")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "with --release, its namespace (default kube-system); with -f, the namespace of objects that name none (default: default); with neither, where to look for the CCM (default: every namespace)")
	fs.StringVar(&f.target, "target", "", "the CCM workload to check when there are several, KIND/NAMESPACE/NAME")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringArrayVar(&f.contexts, "kube-context", nil, "kubeconfig context (repeatable: several clusters are checked concurrently; default: $HELM_KUBECONTEXT or the current context)")
	fs.BoolVar(&f.allContexts, "all-contexts", false, "check the cluster of every context in the kubeconfig")
	fs.StringVarP(&f.output, "output", "o", "table", "table or json")
	fs.StringVar(&f.kcmUser, "kcm-user", renderer.DefaultKCMUser, "the in-tree kube-controller-manager's user, whose access to the migration lease is checked in migrate mode")
	fs.StringVar(&f.holder, "migration-lease-holder", "", "in migrate mode, the side that should hold the migration lease at this step of the migration, "+
		check.LeaseKCM+" or "+check.LeaseCCM+": the lease missing, lapsed or held by anyone else is then an error (plan's gates set it)")
	fs.StringVar(&f.upgradeTo, "upgrade-to", "", "the Kubernetes version the cluster is about to move to (1.37): also report the options its components are given that this version no longer takes")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "how long to wait for each cluster")
	fs.BoolVar(&f.noColor, "no-color", false, "never colour the table")
	fs.BoolVar(&f.aws, "aws", false, "read the AWS account too (read-only: Describe, Get and List calls and iam:SimulatePrincipalPolicy): instances, cluster tags, security groups, subnets, IAM, instance metadata, load balancers")
	fs.StringVar(&f.awsProfile, "aws-profile", "", "with --aws, the shared config profile (default: $AWS_PROFILE, else the SDK's default chain)")
	fs.StringVar(&f.awsRegion, "aws-region", "", "with --aws, the region (default: the nodes' providerIDs and zone labels, else $AWS_REGION or the profile's)")
	fs.StringVar(&f.awsCCM, "aws-ccm-principal", "", "with --aws, the IAM role or user ARN the CCM calls AWS as, whose policy is simulated (default: the control-plane instances' instance-profile roles)")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml")
	_ = cmd.MarkFlagFilename("kubeconfig")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("kube-context", completeKubeContexts)
	_ = cmd.RegisterFlagCompletionFunc("aws-profile", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return awscheck.Profiles(), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("aws-region", cobra.NoFileCompletions)
	_ = cmd.RegisterFlagCompletionFunc("upgrade-to", cobra.NoFileCompletions)
	_ = cmd.RegisterFlagCompletionFunc("aws-ccm-principal", cobra.NoFileCompletions)
	_ = cmd.RegisterFlagCompletionFunc("migration-lease-holder", cobra.FixedCompletions([]string{check.LeaseKCM, check.LeaseCCM}, cobra.ShellCompDirectiveNoFileComp))
	return cmd, f
}

func (f *checkFlags) validate(fs interface{ Changed(string) bool }) error {
	switch {
	case f.output != "table" && f.output != "json":
		return &renderer.UsageError{Err: fmt.Errorf("--output %q: use table or json", f.output)}
	case f.file != "" && f.release != "":
		return &renderer.UsageError{Err: errors.New("-f and --release both name what to check: give one")}
	case f.allContexts && len(f.contexts) > 0:
		return &renderer.UsageError{Err: errors.New("--all-contexts and --kube-context: give one")}
	case !f.aws && (f.awsProfile != "" || f.awsRegion != "" || f.awsCCM != ""):
		return &renderer.UsageError{Err: errors.New("--aws-profile, --aws-region and --aws-ccm-principal say how to read AWS: add --aws")}
	case f.awsCCM != "" && !strings.HasPrefix(f.awsCCM, "arn:"):
		return &renderer.UsageError{Err: fmt.Errorf("--aws-ccm-principal %q: give an IAM role or user ARN (arn:aws:iam::ACCOUNT:role/NAME)", f.awsCCM)}
	case f.holder != "" && f.holder != check.LeaseKCM && f.holder != check.LeaseCCM:
		return &renderer.UsageError{Err: fmt.Errorf("--migration-lease-holder %q: use %s or %s", f.holder, check.LeaseKCM, check.LeaseCCM)}
	case f.timeout <= 0:
		return &renderer.UsageError{Err: errors.New("--timeout must be positive")}
	}
	if f.upgradeTo != "" {
		if _, err := check.ParseUpgradeTo(f.upgradeTo); err != nil {
			return &renderer.UsageError{Err: err}
		}
	}
	return nil
}

// checkTarget is one cluster to check.
type checkTarget struct {
	context string // "" for the kubeconfig's current context
	label   string // as the report names it
}

// targets are the clusters to check, and the kubeconfig, read once, whose
// contexts they are.
func (f *checkFlags) targets() ([]checkTarget, *chartops.Kubeconfig, error) {
	env := chartops.KubeconfigEnv(f.kubeconfig)
	if err := env.CheckCluster("check"); err != nil {
		return nil, nil, err
	}
	kc, err := env.LoadKubeconfig()
	if err != nil {
		return nil, nil, err
	}
	names, current := kc.Contexts()
	if f.allContexts {
		if len(names) == 0 {
			return nil, nil, &renderer.UsageError{Err: errors.New("--all-contexts: the kubeconfig has no contexts")}
		}
		var ts []checkTarget
		for _, n := range names {
			ts = append(ts, checkTarget{context: n, label: n})
		}
		return ts, kc, nil
	}
	want, from := f.contexts, "--kube-context"
	if len(want) == 0 {
		if ctx := os.Getenv("HELM_KUBECONTEXT"); ctx != "" {
			want, from = []string{ctx}, "$HELM_KUBECONTEXT"
		} else {
			label := current
			if label == "" {
				label = "(no context)"
			}
			return []checkTarget{{label: label}}, kc, nil
		}
	}
	var ts []checkTarget
	for _, c := range want {
		if !slices.Contains(names, c) {
			return nil, nil, env.UnknownContext(from, c, names)
		}
		if !slices.ContainsFunc(ts, func(t checkTarget) bool { return t.context == c }) {
			ts = append(ts, checkTarget{context: c, label: c})
		}
	}
	return ts, kc, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func runCheck(cmd *cobra.Command, f *checkFlags) error {
	if err := f.validate(cmd.Flags()); err != nil {
		return err
	}
	targets, kc, err := f.targets()
	if err != nil {
		return err
	}
	// -n says where to look in the cluster, the namespace of manifests'
	// objects that name none (-f), or the release's namespace (--release),
	// which is its manifests' too.
	in := check.Input{Source: check.SourceCluster, SearchNamespace: f.namespace, Target: f.target, KCMUser: f.kcmUser, MigrationHolder: f.holder, UpgradeTo: f.upgradeTo}
	if f.aws {
		in.AWSOptions = &check.AWSOptions{Profile: f.awsProfile, Region: f.awsRegion, Principal: f.awsCCM}
		in.AWSSide = awscheck.Side()
	}
	releaseNS := f.namespace
	switch {
	case f.file != "":
		data, err := readManifestFile(cmd.InOrStdin(), f.file)
		if err != nil {
			return err
		}
		if in.Objects, err = check.DecodeManifests(data); err != nil {
			return err
		}
		if in.Objects == nil {
			in.Objects = []runtime.Object{}
		}
		in.Source, in.SearchNamespace, in.ManifestNamespace = check.SourceManifests, "", f.namespace
	case f.release != "":
		if releaseNS == "" {
			releaseNS = "kube-system"
		}
		in.Source, in.SearchNamespace, in.ManifestNamespace = check.SourceRelease, "", releaseNS
	}

	reports := make([]*check.Report, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			reports[i], errs[i] = f.checkOne(cmd.Context(), kc, t, in)
		}()
	}
	wg.Wait()

	// One cluster: an error is the command's error, and nothing is printed.
	if len(targets) == 1 && errs[0] != nil {
		return contextError(targets[0].label, errs[0])
	}
	code := cli.ExitOK
	for i, err := range errs {
		if err == nil {
			if reports[i].Problems() {
				code = max(code, cli.ExitInput)
			}
			continue
		}
		reports[i] = check.Failed(targets[i].label, "", err)
		code = max(code, cli.ExitCode(contextError(targets[i].label, err)))
	}
	out := cmd.OutOrStdout()
	colour := !f.noColor && terminal.Colour(out)
	if f.output == "json" {
		if err := output.WriteJSON(out, reports); err != nil {
			return cli.WriteError(err)
		}
	} else {
		for i, r := range reports {
			if i > 0 {
				fmt.Fprintln(out)
			}
			if err := output.WriteTable(out, r, colour); err != nil {
				return cli.WriteError(err)
			}
		}
		if len(reports) > 1 {
			fmt.Fprintln(out)
			if err := output.WriteSummary(out, reports, colour); err != nil {
				return cli.WriteError(err)
			}
		}
	}
	for i, err := range errs {
		if err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "aws-ccm-renderer: "+safetext.Escape(cli.OneLine(contextError(targets[i].label, err).Error())))
		}
	}
	if code != cli.ExitOK {
		return &cli.ExitError{Code: code}
	}
	return nil
}

// contextError names the cluster in an error and types it for the exit
// code: a cluster that cannot be read is exit 3. The context's name is
// escaped (safetext.Escape): a line feed in it would split the line.
func contextError(label string, err error) error {
	label = safetext.Escape(label)
	var ce *check.ClusterError
	var ae *check.AWSError
	switch {
	case errors.As(err, &ce), errors.As(err, &ae):
		return &cli.IOError{Err: fmt.Errorf("context %s: %w", label, err)}
	case renderer.IsUsageError(err):
		return &renderer.UsageError{Err: fmt.Errorf("context %s: %w", label, err)}
	case renderer.IsInputError(err):
		return &renderer.InputError{Err: fmt.Errorf("context %s: %w", label, err)}
	}
	return &cli.IOError{Err: fmt.Errorf("context %s: %w", label, err)}
}

// checkRun reads and judges a cluster: check.Run; FuzzCheckKubeconfig
// replaces it, to reach no cluster (and run no exec plugin a kubeconfig
// names).
var checkRun = check.Run

// checkOne checks one cluster, of a context of the kubeconfig read once.
func (f *checkFlags) checkOne(ctx context.Context, kc *chartops.Kubeconfig, t checkTarget, in check.Input) (*check.Report, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	getter := kc.Getter(t.context)
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w (set --kubeconfig or $KUBECONFIG)", err)
	}
	cfg = restCopy(cfg, f.timeout)
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, &check.ClusterError{Err: err}
	}
	in.Context, in.Server = t.label, cfg.Host
	if in.Source == check.SourceRelease {
		rel, err := chartops.ReadRelease(getter, in.ManifestNamespace, f.release)
		switch {
		case renderer.IsInputError(err):
			return nil, err
		case apierrors.IsForbidden(err):
			return nil, &check.ClusterError{Forbidden: true, Verb: "list", Resource: "secrets", Namespace: in.ManifestNamespace, Err: err}
		case err != nil:
			return nil, &check.ClusterError{Err: err}
		}
		if in.Objects, err = check.DecodeManifests([]byte(rel.Manifest)); err != nil {
			return nil, &renderer.InputError{Err: fmt.Errorf("release %s: %w", f.release, err)}
		}
		in.Release, in.ReleaseChart, in.ReleaseStatus, in.ReleaseDescription = rel.ID, rel.Chart, rel.Status, rel.Description
	}
	rep, err := checkRun(ctx, client, in)
	if err != nil && reach.Unreachable(err) {
		var ce *check.ClusterError
		if !errors.As(err, &ce) {
			err = &check.ClusterError{Err: err}
		}
	}
	return rep, err
}

func readManifestFile(stdin io.Reader, file string) ([]byte, error) {
	if file == "-" {
		if terminal.IsTerminal(stdin) {
			return nil, &renderer.UsageError{Err: errors.New("-f -: stdin is a terminal: pipe the manifests in (aws-ccm-renderer template ... | aws-ccm-renderer check -f -)")}
		}
		data, err := safefile.ReadAll(stdin)
		switch {
		case errors.Is(err, safefile.ErrTooLarge):
			return nil, &renderer.InputError{Err: fmt.Errorf("-f -: reading stdin: %w", err)}
		case err != nil:
			return nil, &cli.IOError{Err: fmt.Errorf("-f -: reading stdin: %w", err)}
		}
		return data, nil
	}
	data, err := safefile.ReadFile(file)
	if err != nil {
		return nil, &renderer.UsageError{Err: fmt.Errorf("-f: %w", err)}
	}
	return data, nil
}

// withFacts names the distributions whose node facts keep, each with
// suffix, joined by sep (" and " for the last of more with ", "), for the
// help.
func withFacts(keep func(distros.NodeFacts) bool, suffix, sep string) string {
	var names []string
	for _, p := range distros.Records() {
		if keep(p.Node) {
			names = append(names, p.Name+suffix)
		}
	}
	if sep == " and " {
		return distros.Alternatives(names, "and")
	}
	return strings.Join(names, sep)
}

// first is the first of two results.
func first[T, U any](t T, _ U) T { return t }
