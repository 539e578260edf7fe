package plan

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Chart sources, as the chart wrapper tells them apart (docs/chart-wrapper.md).
const (
	// SourceRepoURL: a chart name looked up in the repository at Repo.
	SourceRepoURL = "repository"
	// SourceRepoName: REPO/NAME, a repository helm repo add knows.
	SourceRepoName = "repo-name"
	// SourceOCI: oci://host/path/name.
	SourceOCI = "oci"
	// SourceLocal: a chart package (.tgz) or directory on disk.
	SourceLocal = "local"
)

// Where a cluster comes from: what runs its cloud controllers before the
// AWS CCM (plan --from).
const (
	// FromNew: a cluster not yet created.
	FromNew = "new"
	// FromInTree: the in-tree AWS provider (Kubernetes 1.26 or older);
	// leader migration.
	FromInTree = "in-tree"
	// FromBuiltin: the distribution's own cloud controller (RKE2's
	// rke2-cloud-provider, K3s's embedded one), whose nodes carry rke2:// or
	// k3s:// provider IDs; a switch.
	FromBuiltin = "builtin"
	// FromNone: no cloud provider at all (kubeadm without one): nodes with
	// no provider ID; a switch.
	FromNone = "none"
)

// Froms lists the --from values.
var Froms = []string{FromNew, FromInTree, FromBuiltin, FromNone}

// Options select the plan.
type Options struct {
	Distro distros.Distro
	// From is what runs the cluster's cloud controllers now (FromNew,
	// ...); empty: the in-tree provider up to 1.26, K3s's own cloud
	// controller on K3s.
	From string
	// Phase limits the plan to one phase; empty: all.
	Phase Phase
	// Step limits the plan to one step, by its ID; empty: all.
	Step      string
	Release   string
	Namespace string
	// KubeVersion is the cluster's version: v1.26.15, 1.26.15, v1.26 or
	// 1.26 (kubectl version's v1.26.15+rke2r1 too).
	KubeVersion string
	KCMUser     string
	LeaderName  string
	// Chart is the chart as the chart wrapper and Helm take it: a name
	// (looked up in Repo), REPO/NAME, oci://..., or a local .tgz or
	// directory.
	Chart        string
	Repo         string
	ChartVersion string
	// CCMVersion is the CCM image tag; empty: the latest release of the
	// cluster's minor (releases.Tags).
	CCMVersion string
	// CloudConfig: the in-tree provider has a cloud config that the CCM
	// takes over (before.cloud-config); every CCM command mounts it.
	CloudConfig bool
	// ClusterCIDR is the pod CIDR when the in-tree route controller
	// manages VPC route tables (before.routes); every CCM command then
	// runs the CCM's route controller.
	ClusterCIDR string
	// Helm prints plain helm commands with the renderer as post-renderer
	// instead of the chart wrapper's.
	Helm bool
}

// DefaultOptions returns the options of `aws-ccm-renderer plan` without flags.
func DefaultOptions() Options {
	return Options{
		Release:      upstream.Release,
		Namespace:    upstream.Namespace,
		KubeVersion:  releases.LastInTreeKubernetes,
		KCMUser:      renderer.DefaultKCMUser,
		LeaderName:   renderer.DefaultLeaderName,
		Chart:        upstream.ChartName,
		Repo:         upstream.ChartRepo,
		ChartVersion: upstream.LatestChartVersion,
	}
}

var (
	semverTag  = lazyRegexp(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
	chartVerRE = lazyRegexp(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$`)
	cidrRE     = lazyRegexp(`^[0-9a-fA-F:.]+/[0-9]+(,[0-9a-fA-F:.]+/[0-9]+)?$`)
)

// resolved are the options once checked, with what follows from them.
type resolved struct {
	Options
	profile   distros.Record // the distribution's record
	minor     int
	tag       string
	tagSource string
	source    string // SourceRepoURL, ...
}

func usagef(format string, args ...any) error {
	return &renderer.UsageError{Err: fmt.Errorf(format, args...)}
}

// KubeMinor returns the minor of a Kubernetes version as --kube-version
// takes it (1.26, v1.26.15, v1.26.15+rke2r1: internal/kubeversion, as every
// command reads one), and the version written with a leading v, as the
// renderer and the chart wrapper take it.
func KubeMinor(s string) (minor int, normalized string, err error) {
	normalized, err = kubeversion.Normalize(s)
	if err != nil {
		return 0, "", err
	}
	minor, err = kubeversion.Minor(s)
	return minor, normalized, err
}

// ChartSource tells how the chart wrapper and Helm find a chart reference.
func ChartSource(ref string) string {
	switch {
	case strings.HasPrefix(ref, "oci://"):
		return SourceOCI
	case strings.HasSuffix(ref, ".tgz") || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") ||
		strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "~") || ref == "." || ref == "..":
		return SourceLocal
	case strings.Contains(ref, "/"):
		return SourceRepoName
	}
	return SourceRepoURL
}

// resolve checks the options; every error is a usage error saying what to
// pass instead.
func resolve(o Options) (resolved, error) {
	r := resolved{Options: o}
	if !slices.Contains(Distros, o.Distro) {
		if o.Distro == "" {
			return r, usagef("--distro is required: one of %s", joinDistros())
		}
		return r, usagef("unknown distro %q: use one of %s (a plan is for one distribution, so auto has none)", o.Distro, joinDistros())
	}
	r.profile, _ = distros.RecordOf(o.Distro)
	if o.Phase != "" && !slices.Contains(Phases, o.Phase) {
		return r, usagef("unknown phase %q: use before, during or after, or no --phase for all three", o.Phase)
	}
	if o.Phase != "" && o.Step != "" {
		return r, usagef("--phase and --step: give one (a step's ID names its phase)")
	}
	if len(o.Release) > 53 || len(validation.IsDNS1123Subdomain(o.Release)) > 0 {
		return r, usagef("--release %q is not a Helm release name: lower-case letters, digits, '-' and '.', at most 53 characters", o.Release)
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return r, usagef("--namespace %q is not a namespace name: %s", o.Namespace, errs[0])
	}
	if errs := validation.IsDNS1123Subdomain(o.LeaderName); len(errs) > 0 {
		return r, usagef("--leader-name %q is not a lease name: %s", o.LeaderName, errs[0])
	}
	if strings.TrimSpace(o.KCMUser) == "" || strings.ContainsAny(o.KCMUser, " \t\r\n") {
		return r, usagef("--kcm-user %q is not a user name: give the user the in-tree kube-controller-manager authenticates as (its certificate's CN), e.g. %s", o.KCMUser, renderer.DefaultKCMUser)
	}
	if err := r.resolveChart(); err != nil {
		return r, err
	}
	if o.ClusterCIDR != "" && !cidrRE().MatchString(o.ClusterCIDR) {
		return r, usagef("--cluster-cidr %q is not a CIDR such as 10.42.0.0/16: give the cluster's pod CIDR (the controller manager's --cluster-cidr)", o.ClusterCIDR)
	}
	minor, kv, err := KubeMinor(o.KubeVersion)
	if err != nil {
		return r, usagef("--kube-version %v", err)
	}
	r.KubeVersion, r.minor = kv, minor
	if err := r.resolveFrom(); err != nil {
		return r, err
	}
	if r.profile.NoInTreeProvider && o.ClusterCIDR != "" {
		return r, usagef("--cluster-cidr: %s's embedded cloud controller never managed VPC routes (it runs with --configure-cloud-routes=false), so there are none to take over", r.profile.Name)
	}
	if o.ClusterCIDR != "" && (r.From == FromBuiltin || r.From == FromNone) {
		return r, usagef("--cluster-cidr: the cluster's routes were never managed by a cloud provider (--from=%s), so there are none to take over", r.From)
	}
	switch {
	case o.CCMVersion != "":
		cv, err := kubeversion.Parse(o.CCMVersion)
		if err != nil || !semverTag().MatchString(o.CCMVersion) {
			return r, usagef("--ccm-version %q is not a CCM image tag such as %s", o.CCMVersion, releases.Tag(releases.LastInTreeMinor))
		}
		if cv.Major() != 1 || int(cv.Minor()) != r.minor {
			return r, usagef("--ccm-version %s is a release for Kubernetes 1.%d; the CCM must match the cluster's minor (1.%d): use a v1.%d.x tag", o.CCMVersion, cv.Minor(), r.minor, r.minor)
		}
		r.tag, r.tagSource = o.CCMVersion, "--ccm-version"
	default:
		tag, ok := releases.Latest(r.minor)
		if !ok {
			return r, usagef("no CCM release of Kubernetes 1.%d is known to this version of aws-ccm-renderer: pass --ccm-version with a v1.%d.x tag from registry.k8s.io/provider-aws/cloud-controller-manager", r.minor, r.minor)
		}
		r.tag, r.tagSource = tag, releases.SourceOf(r.minor)
	}
	return r, nil
}

// resolveChart checks the chart reference and where it comes from.
func (r *resolved) resolveChart() error {
	if strings.TrimSpace(r.Chart) == "" || strings.ContainsAny(r.Chart, " \t\r\n") {
		return usagef("--chart %q is not a chart: give a name (looked up in --repo), REPO/NAME, oci://HOST/PATH/NAME or a local .tgz", r.Chart)
	}
	r.source = ChartSource(r.Chart)
	if r.source != SourceRepoURL && r.Repo != upstream.ChartRepo {
		return usagef("--repo %s and --chart %s: --repo is where a chart name is looked up; %s names its source itself", r.Repo, r.Chart, r.Chart)
	}
	if r.source != SourceRepoURL {
		return r.checkChartVersion()
	}
	u, err := url.Parse(r.Repo)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" {
		return usagef("--repo %q is not a chart repository URL such as %s", r.Repo, upstream.ChartRepo)
	}
	if u.User != nil {
		// The plan is a document to share: its commands would carry
		// the password.
		return usagef("--repo with credentials in it: the plan's commands would show them; add the repository with helm repo add NAME URL --username USER --password-stdin and give --chart NAME/%s", upstream.ChartName)
	}
	return r.checkChartVersion()
}

// checkChartVersion checks --chart-version.
func (r *resolved) checkChartVersion() error {
	if !chartVerRE().MatchString(r.ChartVersion) {
		return usagef("--chart-version %q is not a chart version such as %s", r.ChartVersion, upstream.LatestChartVersion)
	}
	return nil
}

// resolveFrom picks and checks --from: what each distribution and
// version can come from.
func (r *resolved) resolveFrom() error {
	o := r.Options
	if r.From == "" {
		switch {
		case r.profile.NoInTreeProvider:
			r.From = FromBuiltin
		case r.minor <= releases.LastInTreeMinor:
			r.From = FromInTree
		default:
			return usagef("--kube-version %s: Kubernetes 1.27 and later have no in-tree AWS provider to migrate from: give --from: new (a cluster not yet created), builtin (%s) or none (no cloud provider, nodes without provider IDs); aws-ccm-renderer check tells which", r.KubeVersion, builtinOf(o.Distro))
		}
	}
	if !slices.Contains(Froms, r.From) {
		return usagef("unknown --from %q: use one of %s", r.From, strings.Join(Froms, ", "))
	}
	if n := r.profile.Node; n.LastMinor != 0 && r.minor > n.LastMinor {
		return usagef("--kube-version %s: %s runs Kubernetes up to 1.%d (%s); move to %s (--distro=%s)", r.KubeVersion, r.profile.Name, n.LastMinor, n.LastMinorNote, distros.DisplayName(n.Successor), n.Successor)
	}
	switch r.From {
	case FromInTree:
		if r.profile.NoInTreeProvider {
			return usagef("--from=in-tree: %[1]s is built without the in-tree cloud providers; its cluster comes from %[1]s's own cloud controller (--from=builtin) or none", r.profile.Name)
		}
		if r.minor > releases.LastInTreeMinor {
			return usagef("--kube-version %s --from=in-tree: Kubernetes 1.27 and later have no in-tree AWS provider to migrate from (--distro=%s): give --from=new, builtin or none", r.KubeVersion, o.Distro)
		}
		if r.minor < releases.FirstLeaderMigrationMinor {
			return usagef("--kube-version %s: leader migration needs Kubernetes 1.%d or later (1.21 has it only behind a feature gate); upgrade the cluster first", r.KubeVersion, releases.FirstLeaderMigrationMinor)
		}
	case FromBuiltin:
		if _, ok := distros.ControllerOf(o.Distro); !ok {
			return usagef("--from=builtin: %s has no cloud controller of its own; its cluster comes from the in-tree provider (1.26 or older), none, or is new", o.Distro)
		}
		fallthrough
	default:
		if r.minor <= releases.LastInTreeMinor && !r.profile.NoInTreeProvider {
			return usagef("--kube-version %s --from=%s: this plan is for Kubernetes 1.27 and later; upgrade the cluster first, or migrate it with --from=in-tree", r.KubeVersion, r.From)
		}
		if r.minor < releases.FirstMinor() {
			return usagef("--kube-version %s: the CCM releases this program knows start with 1.%d; upgrade the cluster first", r.KubeVersion, releases.FirstMinor())
		}
	}
	return nil
}

// builtinOf names a distribution's own cloud controller, for --from.
func builtinOf(d distros.Distro) string {
	if c, ok := distros.ControllerOf(d); ok {
		return fmt.Sprintf("%s's own cloud controller, nodes on %s:// provider IDs", distros.DisplayName(d), c.Scheme)
	}
	var with []string
	for _, c := range distros.OwnControllers(distros.Records()) {
		with = append(with, distros.DisplayName(c.Distro))
	}
	return distros.Alternatives(with, "and") + " only"
}

func joinDistros() string {
	s := make([]string, len(Distros))
	for i, d := range Distros {
		s[i] = string(d)
	}
	return strings.Join(s, ", ")
}

// Flags are the plan command's flags that print the plan of these options,
// --phase, --step and the output's aside: --distro, then each option that
// is not its default.
func (o Options) Flags() []string {
	d := DefaultOptions()
	f := []string{"--distro", string(o.Distro)}
	add := func(flag, v, def string) {
		if v != def {
			f = append(f, flag, v)
		}
	}
	add("--kube-version", o.KubeVersion, d.KubeVersion)
	add("--from", o.From, "")
	add("--release", o.Release, d.Release)
	add("--namespace", o.Namespace, d.Namespace)
	add("--chart", o.Chart, d.Chart)
	add("--repo", o.Repo, d.Repo)
	add("--chart-version", o.ChartVersion, d.ChartVersion)
	add("--ccm-version", o.CCMVersion, "")
	add("--cluster-cidr", o.ClusterCIDR, "")
	add("--kcm-user", o.KCMUser, d.KCMUser)
	add("--leader-name", o.LeaderName, d.LeaderName)
	if o.CloudConfig {
		f = append(f, "--cloud-config")
	}
	if o.Helm {
		f = append(f, "--helm")
	}
	return f
}
