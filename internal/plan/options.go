package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Defaults of the options.
const (
	DefaultRelease      = upstream.Release
	DefaultNamespace    = upstream.Namespace
	DefaultKCMUser      = renderer.DefaultKCMUser
	DefaultChartVersion = upstream.LatestChartVersion
	// DefaultKubeVersion is the last release of the last minor with the
	// in-tree AWS provider.
	DefaultKubeVersion = "v1.26.15"
)

// The upstream chart.
const (
	ChartName  = upstream.ChartName
	ChartRepo  = upstream.ChartRepo
	ImageRepo  = upstream.ImageRepository
	daemonSet  = upstream.Workload // the chart's nameOverride default, whatever the release
	leaseNS    = "kube-system"
	kcmLease   = "kube-controller-manager"
	ccmLease   = "cloud-controller-manager"
	firstMinor = 22 // leader migration on by default (beta) from 1.22
	lastInTree = 26 // the in-tree AWS provider is gone in 1.27
)

// Options select the plan.
type Options struct {
	Distro renderer.Distro
	// Phase limits the plan to one phase; empty: all.
	Phase        Phase
	Release      string
	Namespace    string
	KubeVersion  string
	KCMUser      string
	LeaderName   string
	ChartVersion string
	// CCMVersion is the CCM image tag; empty: the latest release of the
	// cluster's minor (CCMReleases).
	CCMVersion string
}

// DefaultOptions returns the options of `aws-ccm-renderer plan` without flags.
func DefaultOptions() Options {
	return Options{
		Release:      DefaultRelease,
		Namespace:    DefaultNamespace,
		KubeVersion:  DefaultKubeVersion,
		KCMUser:      DefaultKCMUser,
		LeaderName:   renderer.DefaultLeaderName,
		ChartVersion: DefaultChartVersion,
	}
}

// CCMReleases is the latest cloud-controller-manager image of each
// Kubernetes minor that has been promoted to registry.k8s.io, from
// kubernetes/k8s.io registry.k8s.io/images/k8s-staging-provider-aws/images.yaml
// (entries of "cloud-controller-manager"). Some later patch releases are
// tagged in kubernetes/cloud-provider-aws without a promoted image
// (v1.24.20, v1.25.16, v1.26.13): those cannot be pulled.
var CCMReleases = map[int]string{
	22: "v1.22.8",
	23: "v1.23.20",
	24: "v1.24.19",
	25: "v1.25.15",
	26: "v1.26.14",
	27: "v1.27.10",
	28: "v1.28.11",
	29: "v1.29.10",
	30: "v1.30.10",
	31: "v1.31.9",
	32: "v1.32.8",
	33: "v1.33.4",
	34: "v1.34.3",
	35: "v1.35.2",
}

// CCMReleasesSource says where CCMReleases comes from.
const CCMReleasesSource = "the latest cloud-controller-manager image of the minor promoted to registry.k8s.io (kubernetes/k8s.io, registry.k8s.io/images/k8s-staging-provider-aws/images.yaml)"

var (
	semverTag  = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
	chartVerRE = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$`)
)

// resolved are the options once checked, with what follows from them.
type resolved struct {
	Options
	kube      *version.Version
	minor     int
	tag       string
	tagSource string
}

func usagef(format string, args ...any) error {
	return &renderer.UsageError{Err: fmt.Errorf(format, args...)}
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
	if o.Phase != "" && !slices.Contains(Phases, o.Phase) {
		return r, usagef("unknown phase %q: use before, during or after, or no --phase for all three", o.Phase)
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
		return r, usagef("--kcm-user %q is not a user name: give the user the in-tree kube-controller-manager authenticates as (its certificate's CN), e.g. %s", o.KCMUser, DefaultKCMUser)
	}
	if !chartVerRE.MatchString(o.ChartVersion) {
		return r, usagef("--chart-version %q is not a chart version such as %s", o.ChartVersion, DefaultChartVersion)
	}
	v, err := version.ParseSemantic(o.KubeVersion)
	if err != nil || !strings.HasPrefix(o.KubeVersion, "v") {
		return r, usagef("--kube-version %q is not a Kubernetes version such as %s: give the cluster's (kubectl version)", o.KubeVersion, DefaultKubeVersion)
	}
	r.kube, r.minor = v, int(v.Minor())
	if v.Major() != 1 || r.minor < firstMinor {
		return r, usagef("--kube-version %s: leader migration needs Kubernetes 1.%d or later (1.21 has it only behind a feature gate); upgrade the cluster first", o.KubeVersion, firstMinor)
	}
	if o.Distro != renderer.DistroK3s && r.minor > lastInTree {
		return r, usagef("--kube-version %s: Kubernetes 1.27 and later have no in-tree AWS provider to migrate from; such a cluster (--distro=%s) needs the CCM installed with --mode=install, not a migration plan", o.KubeVersion, o.Distro)
	}
	switch {
	case o.CCMVersion != "":
		if !semverTag.MatchString(o.CCMVersion) {
			return r, usagef("--ccm-version %q is not a CCM image tag such as %s", o.CCMVersion, CCMReleases[lastInTree])
		}
		cv := version.MustParseSemantic(o.CCMVersion)
		if cv.Major() != 1 || int(cv.Minor()) != r.minor {
			return r, usagef("--ccm-version %s is a release for Kubernetes 1.%d; the CCM must match the cluster's minor (1.%d): use a v1.%d.x tag", o.CCMVersion, cv.Minor(), r.minor, r.minor)
		}
		r.tag, r.tagSource = o.CCMVersion, "--ccm-version"
	default:
		tag, ok := CCMReleases[r.minor]
		if !ok {
			return r, usagef("no CCM release of Kubernetes 1.%d is known to this version of aws-ccm-renderer: pass --ccm-version with a v1.%d.x tag from registry.k8s.io/provider-aws/cloud-controller-manager", r.minor, r.minor)
		}
		r.tag, r.tagSource = tag, CCMReleasesSource
	}
	return r, nil
}

func joinDistros() string {
	s := make([]string, len(Distros))
	for i, d := range Distros {
		s[i] = string(d)
	}
	return strings.Join(s, ", ")
}
