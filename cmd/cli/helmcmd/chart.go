package helmcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/chartops"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// chart is what every chart command (template, install, upgrade, diff)
// takes: the renderer's options, Helm's environment, the chart's source and
// values, and RELEASE and CHART.
type chart struct {
	render cli.OptionFlags
	env    *chartops.Env
	source chartops.Source
	values chartops.Values
	fs     *pflag.FlagSet
	in     io.Reader
	errOut io.Writer
	verb   string

	release, ref string
	progress     *terminal.Progress
}

// needs is what a chart command needs of the cluster.
type needs struct {
	cluster  bool // it talks to one: Helm's clients, the server's version
	recorded bool // the deployed release's recorded options default the renderer's (but with --reset-options)
	// why, when not "", says why the command asks a cluster no flag
	// named: the errors of asking it end with it.
	why string
}

// unusedCluster says that a cluster named on the command line is not
// asked, for a command that asks none: most likely its nodes were meant
// to choose the distribution.
func (c *chart) unusedCluster() {
	for _, name := range []string{"kube-context", "kubeconfig"} {
		if c.env.Given(name) {
			fmt.Fprintf(c.errOut, "aws-ccm-renderer: --%s %s is not used: %s asks no cluster here (%s reads the distribution from its nodes)\n",
				name, c.fs.Lookup(name).Value, c.verb, renderer.FlagArg(renderer.OptDistro, DistroDetect))
			return
		}
	}
}

// explain ends an error of asking the cluster with why it was asked.
func (n needs) explain(err error) error {
	if n.why == "" {
		return err
	}
	return fmt.Errorf("%w (%s)", err, n.why)
}

// prepared is a chart command ready to run its action.
type prepared struct {
	client      *chartops.Client
	chart       *chartops.Chart
	vals        map[string]any
	pr          *renderer.PostRenderer
	namespace   string
	kubeVersion *chartops.KubeVersion
}

// newChartCommand builds a chart command with the flags every one takes;
// the command adds its own.
func newChartCommand(s cli.IOStreams, verb, short, long, example string) (*cobra.Command, *chart) {
	c := &chart{env: chartops.NewEnv(), verb: verb}
	cmd := &cobra.Command{
		Use:     verb + " [RELEASE] [CHART]",
		Short:   short,
		Long:    short + ".\n\n" + chartLong + long,
		Example: example,
	}
	fs := cmd.Flags()
	c.fs = fs
	c.render.Register(fs)
	cmd.Args = c.render.Args(cobra.MaximumNArgs(2))
	c.source.AddFlags(fs)
	c.values.AddFlags(fs)
	c.env.AddFlags(fs)
	if verb != "template" {
		fs.Lookup(flagName(renderer.OptKubeVersion)).Usage = "the cluster's Kubernetes version, which the CCM's version is checked against (default: the cluster's; diff without a cluster: none); " +
			"template and diff without a cluster also show it to the chart"
	}
	if f := fs.Lookup(flagName(renderer.OptDistro)); f != nil {
		f.Usage = "distribution: " + strings.Join(distros.Values(distros.Records()), ", ") + ", or detect (read from the nodes of the cluster of --kubeconfig and --kube-context, as check does; template too)"
	}
	cli.CompleteOptions(cmd, map[renderer.Opt][]string{renderer.OptDistro: wrapperDistros()})
	_ = cmd.MarkFlagFilename("values", "yaml", "yml")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	for _, name := range []string{"ca-file", "cert-file", "key-file", "registry-config", "repository-config", "kubeconfig", "kube-ca-file"} {
		_ = cmd.MarkFlagFilename(name)
	}
	_ = cmd.MarkFlagDirname("repository-cache")
	_ = cmd.RegisterFlagCompletionFunc("kube-context", completeKubeContexts)
	return cmd, c
}

// flagName is an option's flag, from renderer.OptionTable.
func flagName(o renderer.Opt) string {
	op, _ := renderer.OptionOf(o)
	return op.Flag
}

// args reads RELEASE and CHART, and the streams, from the command line.
func (c *chart) args(cmd *cobra.Command, args []string) {
	c.release, c.ref = upstream.Release, upstream.ChartName
	if len(args) > 0 {
		c.release = args[0]
	}
	if len(args) > 1 {
		c.ref = args[1]
	}
	c.in, c.errOut = cmd.InOrStdin(), cmd.ErrOrStderr()
	c.progress = terminal.NewProgress(cmd.ErrOrStderr())
}

// interruptible is a chart command's context: cancelled on SIGINT or
// SIGTERM, so that a Helm action waiting for a rollout ends as Helm ends
// it (the release marked failed, or rolled back with --atomic) instead of
// the process being killed mid-way with the release left pending. A second
// signal ends the process at once.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// prepare does what every chart command does before its action: the
// options checked before the cluster is asked anything, Helm's
// environment, the cluster's clients and version when needed, the deployed
// release's recorded options, --distro=detect, the post-renderer, the
// values, then the chart.
func (c *chart) prepare(ctx context.Context, n needs) (*prepared, error) {
	if err := c.source.Check(c.fs, c.in); err != nil {
		return nil, err
	}
	opts, err := c.render.Options(c.fs)
	if err != nil {
		return nil, err
	}
	given, err := c.render.Given(c.fs)
	if err != nil {
		return nil, err
	}
	// Bad options show before the cluster is asked anything.
	early := opts
	if early.Distro == DistroDetect {
		early.Distro = distros.Auto
	} else if !slices.Contains(distros.All, early.Distro) {
		return nil, renderer.UnknownValue(renderer.OptDistro, string(early.Distro), wrapperDistros(), distros.Aliases)
	}
	if _, err := renderer.New(early); err != nil {
		return nil, err
	}
	kv, err := chartops.ParseKubeVersion(opts.KubeVersion)
	if err != nil {
		return nil, err
	}
	p := &prepared{namespace: c.env.Namespace()}
	if n.cluster || opts.Distro == DistroDetect {
		need := c.verb
		if !n.cluster {
			need = renderer.FlagArg(renderer.OptDistro, DistroDetect)
		}
		if err := c.env.CheckCluster(need); err != nil {
			return nil, n.explain(err)
		}
	}
	if !n.cluster && opts.Distro != DistroDetect {
		c.unusedCluster()
	}
	p.client = &chartops.Client{Env: c.env, Source: &c.source, Progress: c.progress, ErrOut: c.errOut, Stdin: c.in, Verb: c.verb, Release: c.release}
	if err := p.client.Connect(n.cluster); err != nil {
		return nil, n.explain(err)
	}
	if n.cluster {
		// What upgrade would do by default is what the deployed release
		// was rendered with.
		if n.recorded && !c.fs.Changed("reset-options") {
			if opts, err = c.withRecordedOptions(p.client, opts, given, p.namespace); err != nil {
				return nil, n.explain(err)
			}
		}
		if !given[flagName(renderer.OptKubeVersion)] {
			if opts.KubeVersion, err = p.client.ServerVersion(); err != nil {
				return nil, n.explain(err)
			}
			// What a client-side render (upgrade --install --dry-run
			// of a release not there yet) shows charts, too.
			if v, err := chartops.ParseKubeVersion(opts.KubeVersion); err == nil {
				kv = v
			}
		}
	}
	p.kubeVersion = kv
	if opts.Distro == DistroDetect {
		if opts.Distro, err = detectDistro(ctx, c.env, c.errOut); err != nil {
			return nil, err
		}
	}
	if p.pr, err = renderer.NewPostRenderer(opts); err != nil {
		return nil, err
	}
	p.pr.Warn = func(msg string) { fmt.Fprintln(c.progress, cli.Warning(msg)) }
	if p.vals, err = p.client.Values(c.values); err != nil {
		return nil, err
	}
	if p.chart, err = p.client.Chart(ctx, c.ref); err != nil {
		return nil, err
	}
	return p, nil
}

// withRecordedOptions returns opts with every recorded option of the
// deployed release that was not given explicitly, and says on stderr which
// it took.
func (c *chart) withRecordedOptions(client *chartops.Client, opts renderer.Options, given map[string]bool, namespace string) (renderer.Options, error) {
	rec, err := client.RecordedOptions(c.release, namespace)
	if err != nil || rec == nil {
		return opts, err
	}
	if !rec.Recorded {
		fmt.Fprintf(c.errOut, "aws-ccm-renderer: release %s records no renderer options (rendered without aws-ccm-renderer or by an older one): the flags' defaults apply\n", rec.Release)
		return opts, nil
	}
	var taken []string
	for _, op := range renderer.OptionTable {
		if !op.Recorded || given[op.Flag] {
			continue
		}
		op.Take(&opts, rec.Options)
		taken = append(taken, renderer.FlagArgs(rec.Options, op.Opt)...)
	}
	if len(taken) > 0 {
		fmt.Fprintf(c.errOut, "aws-ccm-renderer: options from release %s: %s (flags given here win; --reset-options ignores the release's)\n",
			rec.Release, strings.Join(taken, " "))
	}
	return opts, nil
}

const chartLong = `CHART is the upstream aws-cloud-controller-manager chart from --repo by default. A chart
name is always a name: looked up in --repo, or REPO/NAME in the repositories that helm repo add
added (--repository-config); a directory or file of that name here is not used. A path is a
path when it says so: ./dir, ../dir, /abs/dir, a .tgz, or DIR/NAME when DIR is no repository's
name. oci:// references work too, with the logins of helm registry login (--registry-config),
and the https:// URL of a chart package.
RELEASE defaults to aws-cloud-controller-manager; the namespace to $HELM_NAMESPACE, else
kube-system. The cluster is the one Helm would use: --kubeconfig, $KUBECONFIG, --kube-context,
$HELM_KUBECONTEXT. The Helm SDK runs in this process with the renderer as its post-renderer: no
helm binary is needed. The renderer's flags (--distro, --mode, --set-arg, ...) work as for the
post-renderer. Against a cluster, --kube-version defaults to the cluster's version, and upgrade
and diff --deployed default every renderer option not given to what the deployed release
records (they say which; --reset-options ignores them): leaving migrate mode takes an explicit
--mode=install.

Slow steps (fetching the chart, waiting for the rollout) show progress on a terminal, and as
plain lines on stderr when $CI is set; --debug prints the Helm SDK's log.

Exit status: 0 done, 1 the chart, values or manifests cannot be used, 2 bad flags or
options, 3 the cluster, a repository or the output cannot be reached or written.`

// releaseLong is what install and upgrade add to chartLong.
const releaseLong = `

--dry-run (or --dry-run=client) prints the manifests without changing anything; install then
needs no cluster (charts see --kube-version), upgrade reads the release. --dry-run=server
also renders against the cluster (lookup functions) and checks the objects with it. upgrade
keeps --history-max revisions (10 by default, as Helm's CLI), so the release's history does
not grow without bound.`

// diffLong is what diff adds to chartLong.
const diffLong = `

diff compares object by object, keyed by API group, kind, namespace and name, after decoding
and encoding both sides with the YAML library: quoting, indentation, key order and comments
do not show, only changed values. Each changed object has a header as helm-diff prints it
(NAMESPACE, NAME, KIND (GROUP) has changed:), its hunks are headed by where in the object they
are, added and removed objects are shown whole, and one summary line ends the output. Nothing
is printed when nothing changed.

What is compared: by default the chart's own output with the patched output. With --deployed
(implied by --kubeconfig, --kube-context or --allow-unreleased, and by $KUBECONFIG when the
release exists, as helm-diff compares with a configured cluster; diff then says so on stderr),
the release's deployed manifest with what an upgrade with these flags would deploy (a
server-side dry run; everything is new when the release does not exist), and which objects in
the cluster differ from the release's manifest (changed outside Helm, e.g. by kubectl edit).
With --live (or helm-diff's --three-way-merge), the objects in the cluster with what the upgrade
would make of them. --renderer-only keeps the chart's view without asking any cluster. helm-diff's
form, diff upgrade RELEASE CHART, is diff RELEASE CHART.

The values under data and stringData of every Secret are never printed: each shows as a tag, the
same for the same value within one run (--suppress-secrets has nothing more to do). With --detailed-exitcode (or --exit-code), diff exits 2
when something differs and 0 when nothing does, as helm-diff and terraform do; an error then
exits 1 or 3, never 2.`
