package upstream

import "strings"

// The upstream chart and where it is published: the one home of these facts
// (the chart wrapper's defaults, the Flux HelmReleases, the migration plans
// and the tests read them here).
const (
	// ChartName is the chart's name in its repository.
	ChartName = "aws-cloud-controller-manager"
	// ChartRepo is the chart repository kubernetes/cloud-provider-aws
	// publishes it in.
	ChartRepo = "https://kubernetes.github.io/cloud-provider-aws"
	// LatestChartVersion is the newest chart release: its default output is
	// what Defaults describes, and what the Flux HelmReleases pin.
	LatestChartVersion = "0.0.11"
	// ImageRepository is where the CCM's images are promoted.
	ImageRepository = "registry.k8s.io/provider-aws/cloud-controller-manager"
	// Release is the release name the chart wrapper and the plans default
	// to.
	Release = "aws-cloud-controller-manager"
)

// chartImages is the CCM image tag each chart version deploys by default
// (its values.yaml's image.tag; SPEC §6).
var chartImages = map[string]string{
	"0.0.2": "v1.20.0-alpha.0", "0.0.3": "v1.21.0-alpha.0",
	"0.0.4": "v1.22.0-alpha.0", "0.0.5": "v1.22.0-alpha.0",
	"0.0.6": "v1.23.0-alpha.0", "0.0.7": "v1.23.0-alpha.0",
	"0.0.8": "v1.27.1", "0.0.9": "v1.33.0", "0.0.10": "v1.34.0", "0.0.11": "v1.35.0",
}

// DefaultImageTag returns the CCM image tag a chart version ("0.0.11" or
// "v0.0.11") deploys by default, and whether the version is known.
func DefaultImageTag(chartVersion string) (string, bool) {
	tag, ok := chartImages[strings.TrimPrefix(chartVersion, "v")]
	return tag, ok
}
