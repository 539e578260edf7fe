package chartops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// The renderer is Helm's post-renderer in-process.
var _ postrender.PostRenderer = (*renderer.PostRenderer)(nil)

// Values are the chart's values as the flags give them, as Helm's CLI
// takes them.
type Values struct{ values.Options }

// AddFlags adds the values flags.
func (v *Values) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&v.ValueFiles, "values", "f", nil, "values file for the chart (repeatable)")
	fs.StringArrayVar(&v.Options.Values, "set", nil, "set a chart value, key=value (repeatable)")
	fs.StringArrayVar(&v.StringValues, "set-string", nil, "set a chart value as a string (repeatable)")
	fs.StringArrayVar(&v.FileValues, "set-file", nil, "set a chart value to a file's content, key=path (repeatable)")
	fs.StringArrayVar(&v.JSONValues, "set-json", nil, "set a chart value to JSON, key=json (repeatable)")
	fs.StringArrayVar(&v.LiteralValues, "set-literal", nil, "set a chart value to a literal string, key=value (repeatable)")
}

// NewValues are values files and --set values.
func NewValues(files, sets []string) Values {
	return Values{values.Options{ValueFiles: files, Values: sets}}
}

// Values merges the values: a mistake there is a usage error, before any
// chart is downloaded.
func (c *Client) Values(v Values) (map[string]any, error) {
	vals, err := mergeValues(v.Options, getter.All(c.Env.Settings), stdinOr(c.Stdin))
	if err != nil {
		return nil, &renderer.UsageError{Err: fmt.Errorf("values: %w", err)}
	}
	return vals, nil
}

// Chart is a loaded chart.
type Chart = chart.Chart

// KubeVersion is the Kubernetes version charts see (.Capabilities.KubeVersion).
type KubeVersion = chartutil.KubeVersion

// ParseKubeVersion is the Kubernetes version charts see without a
// cluster: --kube-version's, else DefaultKubeVersion.
func ParseKubeVersion(v string) (*chartutil.KubeVersion, error) {
	if v != "" {
		if _, err := kubeversion.Parse(v); err != nil {
			return nil, &renderer.UsageError{Err: fmt.Errorf("%s: %w", renderer.FlagSpelling(renderer.OptKubeVersion), err)}
		}
	}
	return KubeVersionOf(v)
}

// KubeVersionOf is a Kubernetes version as charts see it, "" none, read as
// the whole program reads one (internal/kubeversion); the error says why
// it is none, for the caller to say what it is and where it came from.
func KubeVersionOf(v string) (*chartutil.KubeVersion, error) {
	if v == "" {
		return DefaultKubeVersion(), nil
	}
	if _, err := kubeversion.Parse(v); err != nil {
		if e, ok := errors.AsType[*kubeversion.Error](err); ok {
			return nil, errors.New(e.Reason)
		}
		return nil, err
	}
	return chartutil.ParseKubeVersion(v)
}

// Template is `helm template` in-process: a client-only dry-run install.
type Template struct {
	Release, Namespace string
	KubeVersion        *chartutil.KubeVersion
	// APIVersions are more API versions charts see in
	// .Capabilities.APIVersions, as --api-versions.
	APIVersions []string
	ShowOnly    []string // template paths or globs, as --show-only
}

// Template renders the chart, post-rendered by pr (nil: the chart's own
// output), as `helm template` prints it.
func (c *Client) Template(ctx context.Context, ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer, t Template) (string, error) {
	rel, err := c.render(ctx, ch, vals, pr, t)
	if err != nil {
		return "", err
	}
	return showOnly(manifestOf(rel), t.ShowOnly)
}

func (c *Client) render(ctx context.Context, ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer, t Template) (*release.Release, error) {
	inst := action.NewInstall(c.Config)
	inst.DryRun, inst.DryRunOption, inst.ClientOnly, inst.Replace, inst.IncludeCRDs = true, "client", true, true, true
	inst.ReleaseName, inst.Namespace = t.Release, t.Namespace
	inst.KubeVersion = t.KubeVersion
	inst.APIVersions = chartutil.VersionSet(t.APIVersions)
	inst.PostRenderer = pr
	rel, err := inst.RunWithContext(ctx, ch, vals)
	return rel, Classify(err)
}

// DryRun is --dry-run: none, client (no cluster) or server.
type DryRun string

// The dry runs.
const (
	DryRunNone   DryRun = "none"
	DryRunClient DryRun = "client"
	DryRunServer DryRun = "server"
)

// ParseDryRun reads --dry-run as the Helm CLI does (a bare --dry-run, and
// true, are client; false is none).
func ParseDryRun(s string) (DryRun, error) {
	switch s {
	case "", "none", "false":
		return DryRunNone, nil
	case "client", "true":
		return DryRunClient, nil
	case "server":
		return DryRunServer, nil
	}
	return "", &renderer.UsageError{Err: fmt.Errorf("--dry-run %q: use client, server or none", s)}
}

// Install is an install as its flags say.
type Install struct {
	Release, Namespace string
	Wait, Atomic       bool // --atomic waits too
	Timeout            time.Duration
	DryRun             DryRun
	CreateNamespace    bool
	// KubeVersion is what charts see in a client-side dry run.
	KubeVersion *chartutil.KubeVersion
}

func (c *Client) newInstall(pr postrender.PostRenderer, o Install) *action.Install {
	inst := action.NewInstall(c.Config)
	inst.ReleaseName, inst.Namespace, inst.CreateNamespace = o.Release, o.Namespace, o.CreateNamespace
	inst.Wait, inst.Timeout, inst.Atomic = o.Wait || o.Atomic, o.Timeout, o.Atomic
	inst.PostRenderer = pr
	switch o.DryRun {
	case DryRunClient:
		// No cluster: charts see --kube-version, as with template.
		inst.DryRun, inst.DryRunOption, inst.ClientOnly, inst.Replace = true, "client", true, true
		inst.KubeVersion = o.KubeVersion
	case DryRunServer:
		inst.DryRun, inst.DryRunOption = true, "server"
	}
	return inst
}

// Install installs the release.
func (c *Client) Install(ctx context.Context, ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer, o Install) (*Outcome, error) {
	if o.DryRun != DryRunClient {
		if err := c.OwnedElsewhere(o.Release, o.Namespace); err != nil {
			return nil, err
		}
	}
	return c.install(ctx, c.newInstall(pr, o), ch, vals, o)
}

func (c *Client) install(ctx context.Context, inst *action.Install, ch *chart.Chart, vals map[string]any, o Install) (*Outcome, error) {
	if inst.Wait {
		c.Progress.Begin(fmt.Sprintf("installing %s and waiting for it to be ready (timeout %s)", o.Release, o.Timeout))
	}
	rel, err := inst.RunWithContext(ctx, ch, vals)
	if inst.Wait {
		c.Progress.End(err)
	}
	if err != nil {
		return nil, Classify(c.waitError(err, o, false))
	}
	return outcome(rel, o.DryRun), nil
}

// Upgrade is an upgrade as its flags say.
type Upgrade struct {
	Install
	// InstallMissing is upgrade --install.
	InstallMissing                                 bool
	ReuseValues, ResetValues, ResetThenReuseValues bool
	MaxHistory                                     int
}

func (c *Client) newUpgrade(pr postrender.PostRenderer, o Upgrade) *action.Upgrade {
	up := action.NewUpgrade(c.Config)
	up.Namespace = o.Namespace
	up.Wait, up.Timeout, up.Atomic = o.Wait || o.Atomic, o.Timeout, o.Atomic
	up.ReuseValues, up.ResetValues, up.ResetThenReuseValues = o.ReuseValues, o.ResetValues, o.ResetThenReuseValues
	up.MaxHistory = o.MaxHistory
	up.PostRenderer = pr
	if o.DryRun != DryRunNone && o.DryRun != "" {
		up.DryRun, up.DryRunOption = true, string(o.DryRun)
	}
	return up
}

// Upgrade upgrades the release; with InstallMissing it installs a release
// that is not there (never installed, or uninstalled with its history
// kept), as the Helm CLI's upgrade --install does.
func (c *Client) Upgrade(ctx context.Context, ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer, o Upgrade) (*Outcome, error) {
	if o.InstallMissing {
		gone, uninstalled, err := c.releaseGone(o.Release)
		if err != nil {
			return nil, err
		}
		if gone {
			if err := c.OwnedElsewhere(o.Release, o.Namespace); err != nil {
				return nil, err
			}
			inst := c.newInstall(pr, o.Install)
			// As the Helm CLI: an uninstalled release's name is free
			// again, its history kept.
			inst.Replace = inst.Replace || uninstalled
			return c.install(ctx, inst, ch, vals, o.Install)
		}
	}
	up := c.newUpgrade(pr, o)
	if up.Wait {
		c.Progress.Begin(fmt.Sprintf("upgrading %s and waiting for it to be ready (timeout %s)", o.Release, o.Timeout))
	}
	rel, err := up.RunWithContext(ctx, o.Release, ch, vals)
	if up.Wait {
		c.Progress.End(err)
	}
	if err != nil {
		if notFound(err) {
			if oerr := c.OwnedElsewhere(o.Release, o.Namespace); oerr != nil {
				return nil, oerr
			}
			return nil, &renderer.InputError{Err: fmt.Errorf("release %s in namespace %s: %w (upgrade --install installs it)", o.Release, o.Namespace, err)}
		}
		return nil, Classify(c.waitError(err, o.Install, true))
	}
	return outcome(rel, o.DryRun), nil
}

// Outcome is what install or upgrade did.
type Outcome struct {
	Name, Namespace, Status string
	Revision                int
	Chart                   string // NAME-VERSION
	// Manifest is what a dry run prints: the manifests as helm
	// template prints them; "" for a real install or upgrade.
	Manifest string
}

func outcome(rel *release.Release, dry DryRun) *Outcome {
	o := &Outcome{Name: rel.Name, Namespace: rel.Namespace, Revision: rel.Version}
	if rel.Info != nil {
		o.Status = rel.Info.Status.String()
	}
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		o.Chart = rel.Chart.Metadata.Name + "-" + rel.Chart.Metadata.Version
	}
	if dry != DryRunNone && dry != "" {
		o.Manifest = manifestOf(rel)
	}
	return o
}

// Recorded are the options a deployed release was rendered with.
type Recorded struct {
	Release  string // NAME revision N
	Options  renderer.Options
	Recorded bool // false: rendered without aws-ccm-renderer, or by an older one
}

// RecordedOptions reads the options recorded on the CCM workload of the
// release's deployed revision (renderer.OptionsAnnotation); nil when the
// release has no deployed revision.
func (c *Client) RecordedOptions(name, namespace string) (*Recorded, error) {
	rel, err := c.Config.Releases.Deployed(name)
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("release %s in namespace %s: %w", name, namespace, err)
	}
	r := &Recorded{Release: fmt.Sprintf("%s revision %d", rel.Name, rel.Version)}
	r.Options, r.Recorded, err = recordedOptionsOf(rel.Manifest)
	if err != nil {
		return nil, &renderer.InputError{Err: fmt.Errorf("release %s: %w (--reset-options ignores it)", r.Release, err)}
	}
	return r, nil
}

// recordedOptionsOf reads the options recorded on the CCM workload of a
// release's manifest: the workload the renderer's identification rule
// finds (renderer.IsCCMContainer), or else the one workload that records
// options (a workload named with --target).
func recordedOptionsOf(manifest string) (renderer.Options, bool, error) {
	ccm, recording, err := workloadsOf(manifest)
	if err != nil {
		return renderer.Options{}, false, err
	}
	switch {
	case len(ccm) == 1:
		return renderer.RecordedOptions(ccm[0])
	case len(recording) == 1:
		return renderer.RecordedOptions(recording[0])
	case len(recording) > 1:
		return renderer.Options{}, false, fmt.Errorf("%d workloads record renderer options", len(recording))
	}
	return renderer.Options{}, false, nil
}

// workloadsOf returns the DaemonSets and Deployments of a release's
// manifest that run the CCM (by the renderer's identification rule,
// renderer.IsCCMContainer), and those that record renderer options.
func workloadsOf(manifest string) (ccm, recording []*yaml.RNode, err error) {
	objs, err := renderer.Applied([]byte(manifest))
	if err != nil {
		return nil, nil, fmt.Errorf("reading its manifest: %w", err)
	}
	for _, o := range objs {
		if o.Ref.Kind != "DaemonSet" && o.Ref.Kind != "Deployment" {
			continue
		}
		if _, ok := o.Node.GetAnnotations()[renderer.OptionsAnnotation]; ok {
			recording = append(recording, o.Node)
		}
		if runsCCM(o.Node) {
			ccm = append(ccm, o.Node)
		}
	}
	return ccm, recording, nil
}

// runsCCM reports whether a workload's pod template has a container the
// renderer takes for the CCM.
func runsCCM(n *yaml.RNode) bool {
	cs, err := n.Pipe(yaml.Lookup("spec", "template", "spec", "containers"))
	if err != nil || cs == nil {
		return false
	}
	items, err := cs.Elements()
	if err != nil {
		return false
	}
	for _, c := range items {
		var command []string
		if cmd := c.Field("command"); cmd != nil {
			for _, e := range cmd.Value.YNode().Content {
				command = append(command, e.Value)
			}
		}
		image := ""
		if img := c.Field("image"); img != nil {
			image = img.Value.YNode().Value
		}
		if renderer.IsCCMContainer(command, image) {
			return true
		}
	}
	return false
}

// LastRevision is a release's last revision as check reads it.
type LastRevision struct {
	ID       string // NAME revision N
	Chart    string // NAME-VERSION, "" when unknown
	Manifest string
	// Status is Helm's: deployed, failed, pending-upgrade, ...; Description
	// says what happened to the revision (a failure's error).
	Status, Description string
}

// ReadRelease reads a release's last revision from the cluster getter
// reaches (Kubeconfig.Getter), in namespace: a release that is not there is an input error; Kubernetes'
// errors (forbidden, unreachable) come as they are.
func ReadRelease(getter genericclioptions.RESTClientGetter, namespace, name string) (*LastRevision, error) {
	cfg := new(action.Configuration)
	if err := cfg.Init(getter, namespace, os.Getenv("HELM_DRIVER"), func(string, ...any) {}); err != nil {
		return nil, err
	}
	return lastRevision(cfg, namespace, name)
}

// lastRevision reads a release's last revision, whatever its status.
func lastRevision(cfg *action.Configuration, namespace, name string) (*LastRevision, error) {
	rel, err := action.NewGet(cfg).Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		if oerr := ownedElsewhere(cfg, name, namespace, func(owner string) string { return "--release " + owner }); oerr != nil {
			return nil, oerr
		}
		return nil, &renderer.InputError{Err: fmt.Errorf("no release %s in namespace %s", name, namespace)}
	}
	if err != nil {
		return nil, err
	}
	d := &LastRevision{ID: fmt.Sprintf("%s revision %d", rel.Name, rel.Version), Manifest: rel.Manifest}
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		d.Chart = rel.Chart.Metadata.Name + "-" + rel.Chart.Metadata.Version
	}
	if rel.Info != nil {
		d.Status, d.Description = rel.Info.Status.String(), rel.Info.Description
	}
	return d, nil
}
