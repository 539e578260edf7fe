//go:build helmsdk

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmcli "helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// The upstream chart, the default CHART of the wrapper commands.
const (
	DefaultChart   = "aws-cloud-controller-manager"
	DefaultRepo    = "https://kubernetes.github.io/cloud-provider-aws"
	DefaultRelease = "aws-cloud-controller-manager"
)

// The renderer is Helm's post-renderer in-process.
var _ postrender.PostRenderer = (*renderer.PostRenderer)(nil)

// chartFlags are the flags of template, install, upgrade and diff.
type chartFlags struct {
	render      rootFlags
	repo        string
	version     string
	plainHTTP   bool
	values      values.Options
	namespace   string
	kubeconfig  string
	kubeContext string
	wait        bool
	timeout     time.Duration
	atomic      bool
	dryRun      bool
	install     bool // upgrade --install
	createNS    bool // install, upgrade --install
	deployed    bool // diff against the release in the cluster
	exitCode    bool // diff --exit-code
	noColor     bool
	resetOpts   bool // upgrade, diff: not the release's recorded options
}

func (f *chartFlags) register(fs *pflag.FlagSet, kind string) {
	f.render.register(fs)
	fs.StringVar(&f.repo, "repo", DefaultRepo, "chart repository URL, used when CHART is a chart name")
	fs.StringVar(&f.version, "version", "", "chart version (default: the latest)")
	fs.BoolVar(&f.plainHTTP, "plain-http", false, "use HTTP, not HTTPS, for an oci:// registry")
	fs.StringArrayVarP(&f.values.ValueFiles, "values", "f", nil, "values file for the chart (repeatable)")
	fs.StringArrayVar(&f.values.Values, "set", nil, "set a chart value, key=value (repeatable)")
	fs.StringArrayVar(&f.values.StringValues, "set-string", nil, "set a chart value as a string (repeatable)")
	fs.StringVarP(&f.namespace, "namespace", "n", "kube-system", "namespace of the release")
	// --kube-version, one of the renderer's flags, is also what charts see
	// without a cluster (.Capabilities.KubeVersion; default: the version
	// of the Kubernetes client this program is built with).
	if kind == "template" {
		return
	}
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.kubeContext, "kube-context", "", "kubeconfig context")
	if kind == "upgrade" || kind == "diff" {
		fs.BoolVar(&f.resetOpts, "reset-options", false, "do not default the renderer's options to those the deployed release records")
	}
	if kind == "diff" {
		fs.BoolVar(&f.deployed, "deployed", false, "compare the release deployed in the cluster with what would be deployed now, instead of the chart's own output with the patched output (the default when --kubeconfig or --kube-context is given)")
		fs.BoolVar(&f.exitCode, "exit-code", false, fmt.Sprintf("exit with %d when there are changes, 0 when there are none", ExitChanges))
		fs.BoolVar(&f.noColor, "no-color", false, "never colour the diff")
		return
	}
	fs.BoolVar(&f.wait, "wait", false, "wait until the DaemonSet has rolled out")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "how long to wait for Kubernetes operations")
	fs.BoolVar(&f.atomic, "atomic", false, "roll back (upgrade) or uninstall (install) when it fails; implies --wait")
	fs.BoolVar(&f.dryRun, "dry-run", false, "simulate: render and validate against the cluster, change nothing")
	fs.BoolVar(&f.createNS, "create-namespace", false, "create the release's namespace if it does not exist (install, upgrade --install)")
	if kind == "upgrade" {
		fs.BoolVarP(&f.install, "install", "i", false, "install the release when it does not exist yet")
	}
}

// NewChartCommand builds template, install, upgrade or diff.
func NewChartCommand(kind string, s IOStreams) *cobra.Command {
	f := &chartFlags{}
	short := map[string]string{
		"template": "Render the upstream chart with the renderer's patches, in-process",
		"install":  "Install the upstream chart with the renderer's patches",
		"upgrade":  "Upgrade a release of the upstream chart with the renderer's patches",
		"diff":     "Show what the renderer changes, or what an upgrade would change in the cluster",
	}[kind]
	cmd := &cobra.Command{
		Use:     kind + " [RELEASE] [CHART]",
		Short:   short,
		Long:    short + ".\n\n" + chartLong + map[string]string{"diff": diffLong}[kind],
		Example: chartExamples[kind],
		Args:    cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			release, chartRef := DefaultRelease, DefaultChart
			if len(args) > 0 {
				release = args[0]
			}
			if len(args) > 1 {
				chartRef = args[1]
			}
			if kind == "diff" && !cmd.Flags().Changed("deployed") {
				// A cluster named on the command line is there to compare with.
				f.deployed = cmd.Flags().Changed("kubeconfig") || cmd.Flags().Changed("kube-context")
			}
			w := &wrapper{flags: f, kind: kind, release: release, chartRef: chartRef,
				out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), progress: isTerminal(cmd.ErrOrStderr())}
			return w.run(cmd.Flags())
		},
	}
	setCommon(cmd, s)
	f.register(cmd.Flags(), kind)
	distroDetectFlag(cmd)
	if kind != "template" {
		cmd.Flags().Lookup("kube-version").Usage = "the cluster's Kubernetes version, which the CCM's version is checked against (default: the cluster's; diff without a cluster: none); " +
			"template and diff without a cluster also show it to the chart"
	}
	complete(cmd, "mode", renderer.Modes)
	complete(cmd, "leader-migration-config", []string{renderer.LeaderMigrationRendered, renderer.LeaderMigrationDefault})
	_ = cmd.MarkFlagFilename("values", "yaml", "yml")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	if kind != "template" {
		_ = cmd.MarkFlagFilename("kubeconfig")
	}
	return cmd
}

const chartLong = `CHART is the upstream aws-cloud-controller-manager chart from --repo by default; a chart
name in another --repo, a local directory, a .tgz package and an oci:// reference also work.
RELEASE defaults to aws-cloud-controller-manager, the namespace to kube-system. The Helm SDK
runs in this process with the renderer as its post-renderer: no helm binary is needed.
The renderer's flags (--distro, --mode, --set-arg, ...) work as for the post-renderer. Against
a cluster, --kube-version defaults to the cluster's version, and upgrade and diff --deployed
default every renderer option not given to what the deployed release records (they say which;
--reset-options ignores them): leaving migrate mode takes an explicit --mode=install.

Exit status: 0 done, 1 the chart, values or manifests cannot be used, 2 bad flags or
options, 3 the cluster, a repository or the output cannot be reached or written.`

// diffLong is what diff adds to chartLong.
const diffLong = `

diff prints a unified diff, coloured on a terminal: of the chart's own output against the
patched output, or with --deployed (implied by --kubeconfig or --kube-context) of the
release's deployed manifest against what an upgrade with these flags would deploy (a
server-side dry run; everything is new when the release does not exist). The values under
data and stringData of every Secret are never printed: each shows as a tag, the same for the
same value within one run. With --exit-code, diff exits 4 when there are changes and 0 when
there are none.`

var chartExamples = map[string]string{
	"template": `  # The latest upstream chart, patched for RKE2
  aws-ccm-renderer template --distro=rke2

  # A pinned version, from a chart package, from an OCI registry
  aws-ccm-renderer template --distro=rke --version 0.0.11
  aws-ccm-renderer template ccm ./aws-cloud-controller-manager-0.0.11.tgz --distro=k3s
  aws-ccm-renderer template ccm oci://registry.example.com/charts/aws-cloud-controller-manager --version 0.0.11`,
	"install": `  # Install on an RKE2 cluster and wait for the DaemonSet
  aws-ccm-renderer install --distro=rke2 --wait

  # Leader migration during a move off the in-tree provider
  aws-ccm-renderer install --distro=rke --mode=migrate -f values.yaml`,
	"upgrade": `  # Leader migration off again after the move
  aws-ccm-renderer upgrade --distro=rke --mode=install --wait

  # Install or upgrade, rolling back on failure
  aws-ccm-renderer upgrade --install --distro=k3s --atomic`,
	"diff": `  # What the renderer changes in the chart's output
  aws-ccm-renderer diff --distro=rke2

  # What an upgrade would change in the cluster; exit 4 when something would (for CI).
  # A --kubeconfig or --kube-context implies --deployed; a release that does not
  # exist yet shows everything an install would create.
  aws-ccm-renderer diff --deployed --distro=rke2 --mode=install --exit-code
  aws-ccm-renderer diff ccm ./aws-cloud-controller-manager-0.0.11.tgz --kubeconfig ~/.kube/rke2.yaml --distro=rke2`,
}

type wrapper struct {
	flags             *chartFlags
	kind              string
	release, chartRef string
	out, errOut       io.Writer
	progress          bool

	settings    *helmcli.EnvSettings
	cfg         *action.Configuration
	kubeVersion *chartutil.KubeVersion
}

// defaultKubeVersion is the Kubernetes version a chart sees without a
// cluster: 1.<minor> of the client-go linked in, as Helm's own build stamps
// it (the SDK's unstamped default is 1.20).
func defaultKubeVersion() *chartutil.KubeVersion {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path != "k8s.io/client-go" {
				continue
			}
			if d.Replace != nil {
				d = d.Replace
			}
			if minor, _, ok := strings.Cut(strings.TrimPrefix(d.Version, "v0."), "."); ok {
				if kv, err := chartutil.ParseKubeVersion("v1." + minor + ".0"); err == nil {
					return kv
				}
			}
		}
	}
	return &chartutil.DefaultCapabilities.KubeVersion
}

func (w *wrapper) step(format string, args ...any) {
	if w.progress {
		fmt.Fprintf(w.errOut, "aws-ccm-renderer: "+format+"\n", args...)
	}
}

func (w *wrapper) run(fs *pflag.FlagSet) error {
	opts, err := w.flags.render.options(fs)
	if err != nil {
		return err
	}
	given, err := explicitOptions(fs, w.flags.render.config)
	if err != nil {
		return err
	}
	// Bad options show before the cluster is asked anything.
	early := opts
	if early.Distro == DistroDetect {
		early.Distro = renderer.DistroAuto
	}
	if _, err := renderer.New(early); err != nil {
		return err
	}
	w.kubeVersion = defaultKubeVersion()
	if opts.KubeVersion != "" {
		if w.kubeVersion, err = chartutil.ParseKubeVersion(opts.KubeVersion); err != nil {
			return &renderer.UsageError{Err: fmt.Errorf("--kube-version: %w", err)}
		}
	}
	if err := w.setup(); err != nil {
		return err
	}
	if w.cluster() {
		// What upgrade would do by default is what the deployed release
		// was rendered with.
		if (w.kind == "upgrade" || w.kind == "diff") && !w.flags.resetOpts {
			if opts, err = w.withRecordedOptions(opts, given); err != nil {
				return err
			}
		}
		if !given["kube-version"] {
			if opts.KubeVersion, err = w.serverVersion(); err != nil {
				return err
			}
		}
	}
	if opts.Distro == DistroDetect {
		if opts.Distro, err = detectDistro(w.flags.kubeconfig, w.flags.kubeContext, w.errOut); err != nil {
			return err
		}
	}
	pr, err := renderer.NewPostRenderer(opts)
	if err != nil {
		return err
	}
	pr.Warn = func(msg string) { fmt.Fprintln(w.errOut, "aws-ccm-renderer: warning: "+msg) }
	// The values first: a mistake there shows before a chart download.
	vals, err := w.flags.values.MergeValues(getter.All(w.settings))
	if err != nil {
		return &renderer.UsageError{Err: fmt.Errorf("values: %w", err)}
	}
	ch, err := w.loadChart()
	if err != nil {
		return err
	}
	switch w.kind {
	case "template":
		rel, err := w.render(ch, vals, pr)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w.out, manifestOf(rel))
		return writeErr(err)
	case "install":
		return w.installRelease(ch, vals, pr)
	case "upgrade":
		return w.upgradeRelease(ch, vals, pr)
	case "diff":
		return w.diff(ch, vals, pr)
	}
	return fmt.Errorf("unknown command %s", w.kind)
}

// setup makes Helm's settings and action configuration; template needs no
// cluster.
func (w *wrapper) setup() error {
	w.settings = helmcli.New()
	w.settings.KubeConfig = w.flags.kubeconfig
	w.settings.KubeContext = w.flags.kubeContext
	w.settings.SetNamespace(w.flags.namespace)
	w.cfg = new(action.Configuration)
	ropts := []registry.ClientOption{registry.ClientOptWriter(io.Discard), registry.ClientOptCredentialsFile(w.settings.RegistryConfig)}
	if w.flags.plainHTTP {
		ropts = append(ropts, registry.ClientOptPlainHTTP())
	}
	rc, err := registry.NewClient(ropts...)
	if err != nil {
		return &ioError{fmt.Errorf("registry client: %w", err)}
	}
	w.cfg.RegistryClient = rc
	if !w.cluster() {
		return nil
	}
	if err := w.cfg.Init(w.settings.RESTClientGetter(), w.flags.namespace, os.Getenv("HELM_DRIVER"), func(string, ...any) {}); err != nil {
		return &ioError{fmt.Errorf("connecting to the cluster: %w", err)}
	}
	return nil
}

// cluster reports whether the command works on a cluster.
func (w *wrapper) cluster() bool {
	return w.kind != "template" && (w.kind != "diff" || w.flags.deployed)
}

// loadChart finds, downloads when needed, and loads the chart.
func (w *wrapper) loadChart() (*chart.Chart, error) {
	cpo := action.NewInstall(w.cfg).ChartPathOptions
	cpo.Version = w.flags.version
	cpo.PlainHTTP = w.flags.plainHTTP
	if !registry.IsOCI(w.chartRef) && !isLocal(w.chartRef) {
		cpo.RepoURL = w.flags.repo
		w.step("fetching chart %s %s from %s", w.chartRef, orLatest(w.flags.version), w.flags.repo)
	} else if registry.IsOCI(w.chartRef) {
		w.step("fetching chart %s %s", w.chartRef, orLatest(w.flags.version))
	}
	path, err := cpo.LocateChart(w.chartRef, w.settings)
	if err != nil {
		err = fmt.Errorf("chart %s: %w", w.chartRef, err)
		if unreachable(err) {
			return nil, &ioError{err}
		}
		return nil, &renderer.InputError{Err: err}
	}
	ch, err := loader.Load(path)
	if err != nil {
		return nil, &renderer.InputError{Err: fmt.Errorf("loading chart %s: %w", path, err)}
	}
	if req := ch.Metadata.Dependencies; req != nil {
		if err := action.CheckDependencies(ch, req); err != nil {
			return nil, &renderer.InputError{Err: fmt.Errorf("chart %s: %w (run helm dependency build)", path, err)}
		}
	}
	return ch, nil
}

func isLocal(ref string) bool {
	_, err := os.Stat(ref)
	return err == nil
}

func orLatest(v string) string {
	if v == "" {
		return "(latest)"
	}
	return v
}

// render is `helm template` in-process: a client-only dry-run install.
func (w *wrapper) render(ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer) (*release.Release, error) {
	inst := action.NewInstall(w.cfg)
	inst.DryRun, inst.ClientOnly, inst.Replace, inst.IncludeCRDs = true, true, true, true
	inst.ReleaseName, inst.Namespace = w.release, w.flags.namespace
	inst.KubeVersion = w.kubeVersion
	inst.PostRenderer = pr
	rel, err := inst.Run(ch, vals)
	if err != nil {
		return nil, renderError(err)
	}
	return rel, nil
}

// renderError keeps the renderer's own errors typed through Helm's wrapping;
// what the cluster refuses is an input error, failing to reach it or a
// timeout an I/O error.
func renderError(err error) error {
	switch {
	case renderer.IsInputError(err) || renderer.IsUsageError(err):
		return err
	case unreachable(err):
		return &ioError{err}
	}
	return &renderer.InputError{Err: err}
}

// unreachable tells a network failure or a timeout (a cluster, registry or
// repository that cannot be reached, a rollout that did not finish) from an
// answer.
func unreachable(err error) bool {
	var urlErr *url.Error
	var netErr *net.OpError
	return errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), "cluster unreachable") || strings.Contains(err.Error(), "timed out waiting")
}

// manifestOf returns a release's manifests as `helm template` prints them.
func manifestOf(rel *release.Release) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(rel.Manifest))
	b.WriteString("\n")
	for _, h := range rel.Hooks {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return b.String()
}

func (w *wrapper) installRelease(ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer) error {
	inst := action.NewInstall(w.cfg)
	inst.ReleaseName, inst.Namespace, inst.CreateNamespace = w.release, w.flags.namespace, w.flags.createNS
	inst.Wait, inst.Timeout, inst.Atomic = w.flags.wait || w.flags.atomic, w.flags.timeout, w.flags.atomic
	if w.flags.dryRun {
		inst.DryRun, inst.DryRunOption = true, "server"
	}
	inst.PostRenderer = pr
	if inst.Wait {
		w.step("installing %s and waiting for the rollout (timeout %s)", w.release, w.flags.timeout)
	}
	rel, err := inst.Run(ch, vals)
	if err != nil {
		return renderError(err)
	}
	return w.report(rel)
}

func (w *wrapper) upgradeRelease(ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer) error {
	if w.flags.install {
		if _, err := action.NewHistory(w.cfg).Run(w.release); errors.Is(err, driver.ErrReleaseNotFound) {
			return w.installRelease(ch, vals, pr)
		}
	}
	up := action.NewUpgrade(w.cfg)
	up.Namespace = w.flags.namespace
	up.Wait, up.Timeout, up.Atomic = w.flags.wait || w.flags.atomic, w.flags.timeout, w.flags.atomic
	if w.flags.dryRun {
		up.DryRun, up.DryRunOption = true, "server"
	}
	up.PostRenderer = pr
	if up.Wait {
		w.step("upgrading %s and waiting for the rollout (timeout %s)", w.release, w.flags.timeout)
	}
	rel, err := up.Run(w.release, ch, vals)
	if err != nil {
		return renderError(err)
	}
	return w.report(rel)
}

func (w *wrapper) report(rel *release.Release) error {
	if w.flags.dryRun {
		_, err := io.WriteString(w.out, manifestOf(rel))
		return writeErr(err)
	}
	_, err := fmt.Fprintf(w.out, "release %s in namespace %s: revision %d, %s (chart %s-%s)\n",
		rel.Name, rel.Namespace, rel.Version, rel.Info.Status, rel.Chart.Metadata.Name, rel.Chart.Metadata.Version)
	return writeErr(err)
}

func writeErr(err error) error {
	if err != nil {
		return &ioError{fmt.Errorf("writing the output: %w", err)}
	}
	return nil
}

// diff prints upstream → patched, or deployed → would-deploy.
func (w *wrapper) diff(ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer) error {
	var fromName, toName, from, to string
	if w.flags.deployed {
		w.step("comparing with release %s in namespace %s (server-side dry run)", w.release, w.flags.namespace)
		rel, err := action.NewGet(w.cfg).Run(w.release)
		switch {
		case errors.Is(err, driver.ErrReleaseNotFound):
			// Nothing deployed yet: everything an install would create.
			inst := action.NewInstall(w.cfg)
			inst.ReleaseName, inst.Namespace = w.release, w.flags.namespace
			inst.DryRun, inst.DryRunOption, inst.PostRenderer = true, "server", pr
			next, err := inst.Run(ch, vals)
			if err != nil {
				return renderError(err)
			}
			fromName, toName = fmt.Sprintf("%s (no such release in namespace %s)", w.release, w.flags.namespace), fmt.Sprintf("%s (would install)", w.release)
			to = manifestOf(next)
		case err != nil:
			return &ioError{fmt.Errorf("release %s in namespace %s: %w", w.release, w.flags.namespace, err)}
		default:
			up := action.NewUpgrade(w.cfg)
			up.Namespace, up.DryRun, up.DryRunOption, up.PostRenderer = w.flags.namespace, true, "server", pr
			next, err := up.Run(w.release, ch, vals)
			if err != nil {
				return renderError(err)
			}
			fromName, toName = fmt.Sprintf("%s revision %d (deployed)", rel.Name, rel.Version), fmt.Sprintf("%s (would deploy)", rel.Name)
			from, to = manifestOf(rel), manifestOf(next)
		}
	} else {
		plain, err := w.render(ch, vals, nil)
		if err != nil {
			return err
		}
		patched, err := w.render(ch, vals, pr)
		if err != nil {
			return err
		}
		fromName, toName = ch.Metadata.Name+"-"+ch.Metadata.Version+" (chart output)", "patched by aws-ccm-renderer"
		from, to = manifestOf(plain), manifestOf(patched)
	}
	text := unifiedDiff(fromName, toName, redactSecrets(from), redactSecrets(to), 3)
	if text == "" {
		return nil
	}
	if !w.flags.noColor && isTerminal(w.out) {
		text = colorize(text)
	}
	if _, err := io.WriteString(w.out, text); err != nil {
		return writeErr(err)
	}
	if w.flags.exitCode {
		return errChanges
	}
	return nil
}

// chartCommands are the chart wrapper commands, with the Helm SDK.
func chartCommands(s IOStreams) []*cobra.Command {
	var cmds []*cobra.Command
	for _, kind := range ChartCommandKinds {
		cmds = append(cmds, NewChartCommand(kind, s))
	}
	return cmds
}
