package upstream

// The upstream chart and where it is published: the one home of these facts
// (the chart wrapper's defaults, the Flux HelmReleases, the migration plans
// and the tests read them here). The image each chart version deploys by
// default is release data: releases.DefaultImageTag.
const (
	// ChartName is the chart's name in its repository.
	ChartName = "aws-cloud-controller-manager"
	// ChartRepo is the chart repository kubernetes/cloud-provider-aws
	// publishes it in.
	ChartRepo = "https://kubernetes.github.io/cloud-provider-aws"
	// LatestChartVersion is the newest chart release: its default output is
	// what Defaults describes, and what the Flux HelmReleases pin.
	LatestChartVersion = "0.0.11"
	// Release is the release name the chart wrapper and the plans default
	// to.
	Release = "aws-cloud-controller-manager"
)
