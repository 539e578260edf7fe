//go:build helmsdk

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	helmcli "helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// The upstream chart, the default CHART of the wrapper commands.
const (
	DefaultChart     = upstream.ChartName
	DefaultRepo      = upstream.ChartRepo
	DefaultRelease   = upstream.Release
	DefaultNamespace = upstream.Namespace
)

// The renderer is Helm's post-renderer in-process.
var _ postrender.PostRenderer = (*renderer.PostRenderer)(nil)

// chartFlags are the flags of template, install, upgrade and diff.
type chartFlags struct {
	render optionFlags
	source sourceFlags
	values values.Options

	namespace   string
	kubeconfig  string
	kubeContext string
	debug       bool

	showOnly []string // template

	wait           bool
	timeout        time.Duration
	atomic         bool
	dryRun         string // none, client, server
	install        bool   // upgrade --install
	createNS       bool   // install, upgrade --install
	reuseValues    bool   // upgrade, diff
	resetValues    bool   // upgrade, diff
	resetThenReuse bool   // upgrade, diff
	historyMax     int    // upgrade
	resetOpts      bool   // upgrade, diff: not the release's recorded options

	deployed     bool // diff against the release in the cluster
	live         bool // diff against the cluster's objects
	detailedExit bool // diff --detailed-exitcode (--exit-code)
	output       string
	context      int
	color        string
	noColor      bool
}

func (f *chartFlags) register(fs *pflag.FlagSet, kind string) {
	f.render.register(fs)
	f.source.register(fs)
	fs.StringArrayVarP(&f.values.ValueFiles, "values", "f", nil, "values file for the chart (repeatable)")
	fs.StringArrayVar(&f.values.Values, "set", nil, "set a chart value, key=value (repeatable)")
	fs.StringArrayVar(&f.values.StringValues, "set-string", nil, "set a chart value as a string (repeatable)")
	fs.StringArrayVar(&f.values.FileValues, "set-file", nil, "set a chart value to a file's content, key=path (repeatable)")
	fs.StringArrayVar(&f.values.JSONValues, "set-json", nil, "set a chart value to JSON, key=json (repeatable)")
	fs.StringArrayVar(&f.values.LiteralValues, "set-literal", nil, "set a chart value to a literal string, key=value (repeatable)")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "namespace of the release (default: $HELM_NAMESPACE, else kube-system)")
	fs.BoolVar(&f.debug, "debug", false, "print the Helm SDK's log on stderr")
	// --kube-version, one of the renderer's flags, is also what charts see
	// without a cluster (.Capabilities.KubeVersion; default: the version
	// of the Kubernetes client this program is built with).
	if kind == "template" {
		fs.StringArrayVarP(&f.showOnly, "show-only", "s", nil, "only show the manifests of these templates (a path in the chart such as templates/daemonset.yaml, or a glob; the renderer's own objects are leader-migration-config.yaml and leader-migration-rbac.yaml)")
		return
	}
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.kubeContext, "kube-context", "", "kubeconfig context (default: $HELM_KUBECONTEXT, else the current context)")
	if kind != "install" {
		fs.BoolVar(&f.resetOpts, "reset-options", false, "do not default the renderer's options to those the deployed release records")
		fs.BoolVar(&f.reuseValues, "reuse-values", false, "upgrade: start from the release's last values and merge the ones given here (ignored with --reset-values)")
		fs.BoolVar(&f.resetValues, "reset-values", false, "upgrade: start from the chart's values, not the release's")
		fs.BoolVar(&f.resetThenReuse, "reset-then-reuse-values", false, "upgrade: the new chart's values, then the release's last values, then the ones given here")
	}
	if kind == "diff" {
		fs.BoolVar(&f.deployed, "deployed", false, "compare the release deployed in the cluster with what an upgrade would deploy, instead of the chart's own output with the patched output (the default when --kubeconfig or --kube-context is given); also says which objects differ in the cluster from the release (changed outside Helm, or by a failed upgrade)")
		fs.BoolVar(&f.live, "live", false, "compare the objects in the cluster with what they would be after the upgrade (a server-side dry run of each object's patch, as Helm would send it): changes made outside Helm, e.g. by kubectl edit, show too")
		fs.BoolVar(&f.detailedExit, "detailed-exitcode", false, fmt.Sprintf("exit %d when there are changes, 0 when there are none (a usage error then exits 1)", ExitChanges))
		fs.BoolVar(&f.detailedExit, "exit-code", false, "the same as --detailed-exitcode")
		fs.StringVarP(&f.output, "output", "o", "text", "text, or json: a list of the changed objects with their changes")
		fs.IntVar(&f.context, "context", 3, "lines of context around each change (-1: the whole object)")
		fs.StringVar(&f.color, "color", "auto", "colour the diff: auto (on a terminal, unless $NO_COLOR is set or $TERM is dumb), always or never")
		fs.BoolVar(&f.noColor, "no-color", false, "the same as --color=never")
		return
	}
	fs.BoolVar(&f.wait, "wait", false, "wait until the objects are ready (the DaemonSet rolled out)")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "how long to wait for Kubernetes operations")
	fs.BoolVar(&f.atomic, "atomic", false, "roll back (upgrade) or uninstall (install) when it fails; implies --wait")
	fs.StringVar(&f.dryRun, "dry-run", "none", "simulate and print the manifests: client (also a bare --dry-run; install needs no cluster) or server (rendered and checked against the cluster); change nothing")
	fs.Lookup("dry-run").NoOptDefVal = "client"
	fs.BoolVar(&f.createNS, "create-namespace", false, "create the release's namespace if it does not exist (install, upgrade --install)")
	if kind == "upgrade" {
		fs.BoolVarP(&f.install, "install", "i", false, "install the release when it does not exist yet")
		fs.IntVar(&f.historyMax, "history-max", 10, "keep at most this many revisions of the release, 0 for no limit (default: $HELM_MAX_HISTORY, else 10)")
		fs.IntVar(&f.historyMax, "max-history", 10, "the same as --history-max")
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
		Long:    short + ".\n\n" + chartLong + map[string]string{"diff": diffLong, "install": releaseLong, "upgrade": releaseLong}[kind],
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
			fs := cmd.Flags()
			if kind == "diff" && !fs.Changed("deployed") && !f.live {
				// A cluster named on the command line is there to compare with.
				f.deployed = fs.Changed("kubeconfig") || fs.Changed("kube-context")
			}
			w := &wrapper{flags: f, kind: kind, release: release, chartRef: chartRef, fs: fs,
				in: cmd.InOrStdin(), out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), progress: terminal.NewProgress(cmd.ErrOrStderr())}
			return w.run()
		},
	}
	setCommon(cmd, s)
	f.register(cmd.Flags(), kind)
	distroDetectFlag(cmd)
	if kind != "template" {
		cmd.Flags().Lookup("kube-version").Usage = "the cluster's Kubernetes version, which the CCM's version is checked against (default: the cluster's; diff without a cluster: none); " +
			"template and diff without a cluster also show it to the chart"
	}
	_ = cmd.MarkFlagFilename("values", "yaml", "yml")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	for _, name := range []string{"ca-file", "cert-file", "key-file", "registry-config", "repository-config"} {
		_ = cmd.MarkFlagFilename(name)
	}
	_ = cmd.MarkFlagDirname("repository-cache")
	switch kind {
	case "diff":
		complete(cmd, "output", []string{"text", "json"})
		complete(cmd, "color", []string{"auto", "always", "never"})
		cmd.MarkFlagsMutuallyExclusive("deployed", "live")
	case "install", "upgrade":
		complete(cmd, "dry-run", []string{"none", "client", "server"})
	}
	if kind != "template" {
		_ = cmd.MarkFlagFilename("kubeconfig")
		_ = cmd.RegisterFlagCompletionFunc("kube-context", completeKubeContexts)
	}
	return cmd
}

const chartLong = `CHART is the upstream aws-cloud-controller-manager chart from --repo by default. A chart
name is always a name: looked up in --repo, or REPO/NAME in the repositories that helm repo add
added (--repository-config); a directory or file of that name here is not used. A path is a
path when it says so: ./dir, ../dir, /abs/dir, a .tgz, or DIR/NAME when DIR is no repository's
name. oci:// references work too, with the logins of helm registry login (--registry-config).
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
(implied by --kubeconfig or --kube-context), the release's deployed manifest with what an
upgrade with these flags would deploy (a server-side dry run; everything is new when the release
does not exist), and which objects in the cluster differ from the release's manifest (changed
outside Helm, e.g. by kubectl edit). With --live, the objects in the cluster with what the
upgrade would make of them.

The values under data and stringData of every Secret are never printed: each shows as a tag, the
same for the same value within one run. With --detailed-exitcode (or --exit-code), diff exits 2
when something differs and 0 when nothing does, as helm-diff and terraform do; an error then
exits 1 or 3, never 2.`

var chartExamples = map[string]string{
	"template": `  # The latest upstream chart, patched for RKE2
  aws-ccm-renderer template --distro=rke2

  # A pinned version, from a chart package, from a repository helm repo add added, from OCI
  aws-ccm-renderer template --distro=rke --version 0.0.11
  aws-ccm-renderer template ccm ./aws-cloud-controller-manager-0.0.11.tgz --distro=k3s
  aws-ccm-renderer template ccm aws-ccm/aws-cloud-controller-manager --version 0.0.11 --distro=k3s
  aws-ccm-renderer template ccm oci://registry.example.com/charts/aws-cloud-controller-manager --version 0.0.11

  # Only the DaemonSet
  aws-ccm-renderer template --distro=rke2 --show-only templates/daemonset.yaml`,
	"install": `  # Install on an RKE2 cluster and wait for the DaemonSet
  aws-ccm-renderer install --distro=rke2 --wait

  # What it would install, without a cluster
  aws-ccm-renderer install --distro=rke2 --dry-run

  # Leader migration during a move off the in-tree provider
  aws-ccm-renderer install --distro=rke --mode=migrate -f values.yaml`,
	"upgrade": `  # Leader migration off again after the move, keeping the values of the last upgrade
  aws-ccm-renderer upgrade --distro=rke --mode=install --reuse-values --wait

  # Install or upgrade, rolling back on failure, in the context of another cluster
  aws-ccm-renderer upgrade --install --distro=k3s --atomic --kube-context edge-1`,
	"diff": `  # What the renderer changes in the chart's output
  aws-ccm-renderer diff --distro=rke2

  # What an upgrade would change in the cluster; exit 2 when something would (for CI).
  # A --kubeconfig or --kube-context implies --deployed; a release that does not
  # exist yet shows everything an install would create.
  aws-ccm-renderer diff --deployed --distro=rke2 --mode=install --detailed-exitcode
  aws-ccm-renderer diff ccm ./aws-cloud-controller-manager-0.0.11.tgz --kubeconfig ~/.kube/rke2.yaml --distro=rke2

  # What the upgrade would do to the objects in the cluster, kubectl edits included
  aws-ccm-renderer diff --live --distro=rke2

  # For a pipeline: the changed objects as JSON
  aws-ccm-renderer diff --deployed --distro=rke2 -o json | jq -r '.[] | .kind + "/" + .name + " " + .change'`,
}

type wrapper struct {
	flags             *chartFlags
	kind              string
	release, chartRef string
	fs                *pflag.FlagSet
	in                io.Reader
	out, errOut       io.Writer
	progress          *terminal.Progress

	namespace   string
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

// needsCluster tells whether the command talks to a cluster.
func (w *wrapper) needsCluster() bool {
	switch w.kind {
	case "install":
		return w.flags.dryRun != "client"
	case "upgrade":
		return true
	case "diff":
		return w.flags.deployed || w.flags.live
	}
	return false
}

// checkFlags refuses flag values and combinations before anything runs.
func (w *wrapper) checkFlags() error {
	f := w.flags
	bad := func(format string, args ...any) error {
		return &renderer.UsageError{Err: fmt.Errorf(format, args...)}
	}
	switch f.dryRun {
	case "", "none", "false": // "": template and diff have no --dry-run
		f.dryRun = "none"
	case "client", "true":
		f.dryRun = "client"
	case "server":
	default:
		return bad("--dry-run %q: use client, server or none", f.dryRun)
	}
	if w.kind == "diff" {
		if f.output != "text" && f.output != "json" {
			return bad("--output %q: use text or json", f.output)
		}
		if f.noColor {
			if w.fs.Changed("color") && f.color != "never" {
				return bad("--no-color and --color=%s contradict each other", f.color)
			}
			f.color = "never"
		}
		if f.color != "auto" && f.color != "always" && f.color != "never" {
			return bad("--color %q: use auto, always or never", f.color)
		}
		if f.context < -1 {
			return bad("--context %d: use a number of lines, or -1 for whole objects", f.context)
		}
		if !f.deployed && !f.live {
			// The chart's own diff has no release and no upgrade.
			for _, name := range []string{"reuse-values", "reset-values", "reset-then-reuse-values", "reset-options"} {
				if w.fs.Changed(name) {
					return bad("--%s is about the upgrade of the release in the cluster: give --deployed or --live (or --kubeconfig, --kube-context) to compare with it", name)
				}
			}
		}
	}
	if f.historyMax < 0 {
		return bad("--history-max %d: use a number of revisions, or 0 for no limit", f.historyMax)
	}
	return w.flags.source.check()
}

func (w *wrapper) run() error {
	if err := w.checkFlags(); err != nil {
		return err
	}
	opts, err := w.flags.render.options(w.fs)
	if err != nil {
		return err
	}
	given, err := explicitOptions(w.fs, w.flags.render.config)
	if err != nil {
		return err
	}
	// Bad options show before the cluster is asked anything.
	early := opts
	if early.Distro == DistroDetect {
		early.Distro = renderer.DistroAuto
	} else if !slices.Contains(renderer.Distros, early.Distro) {
		return &renderer.UsageError{Option: renderer.OptDistro,
			Err: fmt.Errorf("%q is unknown: use one of %s", early.Distro, strings.Join(wrapperDistros(), ", "))}
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
	if err := w.flags.source.readPassword(w.in); err != nil {
		return err
	}
	if err := w.connect(); err != nil {
		return err
	}
	if w.needsCluster() {
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
			// What a client-side render (upgrade --install --dry-run
			// of a release not there yet) shows charts, too.
			if kv, err := chartutil.ParseKubeVersion(opts.KubeVersion); err == nil {
				w.kubeVersion = kv
			}
		}
	}
	if opts.Distro == DistroDetect {
		if opts.Distro, err = detectDistro(w.settings.KubeConfig, w.settings.KubeContext, w.errOut); err != nil {
			return err
		}
	}
	pr, err := renderer.NewPostRenderer(opts)
	if err != nil {
		return err
	}
	pr.Warn = func(msg string) { fmt.Fprintln(w.progress, "aws-ccm-renderer: warning: "+msg) }
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
		text, err := showOnly(manifestOf(rel), w.flags.showOnly)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w.out, text)
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

// setup makes Helm's settings: from the environment as the Helm CLI reads
// it ($HELM_NAMESPACE, $HELM_KUBECONTEXT, $KUBECONFIG, $HELM_*_CONFIG, ...),
// then the flags given. A context that the kubeconfig does not have is a
// usage error naming those it has.
func (w *wrapper) setup() error {
	w.settings = helmcli.New()
	s, f := w.settings, w.flags
	if w.fs.Changed("kubeconfig") {
		s.KubeConfig = f.kubeconfig
	}
	if w.fs.Changed("kube-context") {
		s.KubeContext = f.kubeContext
	}
	w.namespace = DefaultNamespace
	if env := os.Getenv("HELM_NAMESPACE"); env != "" {
		w.namespace = env
	}
	if w.fs.Changed("namespace") {
		w.namespace = f.namespace
	}
	s.SetNamespace(w.namespace)
	s.Debug = s.Debug || f.debug
	f.source.apply(s, w.fs)
	if w.kind == "upgrade" && !w.fs.Changed("history-max") && !w.fs.Changed("max-history") {
		f.historyMax = s.MaxHistory
	}
	if s.Debug {
		slog.SetDefault(slog.New(slog.NewTextHandler(w.errOut, &slog.HandlerOptions{Level: slog.LevelDebug})))
	} else {
		// The SDK's warnings (a local chart found by name) are this
		// program's to give.
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	if w.needsCluster() || w.fs.Lookup("distro").Value.String() == DistroDetect {
		return w.checkKubeContext()
	}
	return nil
}

// checkKubeContext refuses a context the kubeconfig does not have.
func (w *wrapper) checkKubeContext() error {
	name := w.settings.KubeContext
	if name == "" {
		return nil
	}
	raw, err := w.settings.RESTClientGetter().ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return &ioError{fmt.Errorf("reading the kubeconfig: %w", err)}
	}
	if _, ok := raw.Contexts[name]; ok {
		return nil
	}
	from := "--kube-context"
	if !w.fs.Changed("kube-context") {
		from = "$HELM_KUBECONTEXT"
	}
	var names []string
	for n := range raw.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	has := "it has no contexts"
	if len(names) > 0 {
		has = "its contexts: " + strings.Join(names, ", ")
	}
	return &renderer.UsageError{Err: fmt.Errorf("%s %q is not a context of the kubeconfig (%s); %s", from, name, kubeconfigName(w.settings), has)}
}

func kubeconfigName(s *helmcli.EnvSettings) string {
	if s.KubeConfig != "" {
		return s.KubeConfig
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return "$KUBECONFIG"
	}
	return filepath.Join("~", ".kube", "config")
}

// completeKubeContexts completes --kube-context from the kubeconfig.
func completeKubeContexts(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	s := helmcli.New()
	if f := cmd.Flags().Lookup("kubeconfig"); f != nil && f.Changed {
		s.KubeConfig = f.Value.String()
	}
	raw, err := s.RESTClientGetter().ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	for n := range raw.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, cobra.ShellCompDirectiveNoFileComp
}

// connect makes the action configuration: the registry client always, the
// cluster's clients when the command needs them.
func (w *wrapper) connect() error {
	w.cfg = new(action.Configuration)
	rc, err := w.flags.source.registryClient(w.settings, w.errOut)
	if err != nil {
		return err
	}
	w.cfg.RegistryClient = rc
	if !w.needsCluster() {
		return nil
	}
	// The API server's warnings as this program's lines, not client-go's
	// log; Helm's clients take the default handler.
	rest.SetDefaultWarningHandler(&apiWarnings{out: w.progress, seen: map[string]bool{}})
	if _, err := w.settings.RESTClientGetter().ToRESTConfig(); err != nil {
		return &ioError{fmt.Errorf("the cluster's kubeconfig (--kubeconfig, $KUBECONFIG): %w", err)}
	}
	logf := func(string, ...any) {}
	if w.settings.Debug {
		logf = func(format string, args ...any) {
			fmt.Fprintf(w.errOut, "aws-ccm-renderer: helm: "+format+"\n", args...)
		}
	}
	if err := w.cfg.Init(w.settings.RESTClientGetter(), w.namespace, os.Getenv("HELM_DRIVER"), logf); err != nil {
		return &ioError{fmt.Errorf("connecting to the cluster: %w", err)}
	}
	return nil
}

// render is `helm template` in-process: a client-only dry-run install.
func (w *wrapper) render(ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer) (*release.Release, error) {
	inst := action.NewInstall(w.cfg)
	inst.DryRun, inst.DryRunOption, inst.ClientOnly, inst.Replace, inst.IncludeCRDs = true, "client", true, true, true
	inst.ReleaseName, inst.Namespace = w.release, w.namespace
	inst.KubeVersion = w.kubeVersion
	inst.PostRenderer = pr
	rel, err := inst.Run(ch, vals)
	if err != nil {
		return nil, renderError(err)
	}
	return rel, nil
}

// showOnly keeps the manifests of the templates named, as helm template
// --show-only does: patterns match the path after the chart's name in each
// manifest's "# Source:" line.
func showOnly(manifests string, patterns []string) (string, error) {
	if len(patterns) == 0 {
		return manifests, nil
	}
	split := releaseutil.SplitManifests(manifests)
	keys := make([]string, 0, len(split))
	for k := range split {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	var b strings.Builder
	for _, p := range patterns {
		p = filepath.ToSlash(p)
		if _, err := filepath.Match(p, ""); err != nil {
			return "", &renderer.UsageError{Err: fmt.Errorf("--show-only %q: %w", p, err)}
		}
		found := false
		for _, k := range keys {
			m := split[k]
			path := sourcePath(m)
			if ok, _ := filepath.Match(p, path); !ok || path == "" {
				continue
			}
			fmt.Fprintf(&b, "---\n%s\n", m)
			found = true
		}
		if !found {
			return "", &renderer.InputError{Err: fmt.Errorf("--show-only %s: no such template in the chart's output (its templates: %s)", p, strings.Join(sources(split, keys), ", "))}
		}
	}
	return b.String(), nil
}

// sourcePath is the template path of a manifest, from its "# Source:
// CHART/PATH" line.
func sourcePath(m string) string {
	for _, l := range strings.Split(m, "\n") {
		if rest, ok := strings.CutPrefix(l, "# Source: "); ok {
			if _, p, ok := strings.Cut(rest, "/"); ok {
				return strings.TrimSpace(p)
			}
		}
	}
	return ""
}

func sources(split map[string]string, keys []string) []string {
	var out []string
	for _, k := range keys {
		if p := sourcePath(split[k]); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// renderError keeps the renderer's own errors typed through Helm's wrapping;
// what the cluster refuses is an input error, failing to reach it, a
// timeout, or a user it does not let in or allow the request an I/O error
// (as diff's clusterError).
func renderError(err error) error {
	switch {
	case renderer.IsInputError(err) || renderer.IsUsageError(err):
		return err
	case unreachable(err) || apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
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
		strings.Contains(err.Error(), "cluster unreachable") || strings.Contains(err.Error(), "timed out waiting") ||
		strings.Contains(err.Error(), "context deadline exceeded")
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

func writeErr(err error) error {
	if err != nil {
		return &ioError{fmt.Errorf("writing the output: %w", err)}
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

// apiWarnings prints the API server's warnings (deprecated fields and the
// like, in Warning headers) once each, as the program's warning lines.
type apiWarnings struct {
	out  io.Writer
	mu   sync.Mutex
	seen map[string]bool
}

func (a *apiWarnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen[text] {
		return
	}
	a.seen[text] = true
	fmt.Fprintln(a.out, "aws-ccm-renderer: warning: the API server: "+oneLine(text))
}
