// Command aws-ccm-renderer patches the aws-cloud-controller-manager Helm
// chart's manifests for the clusters of every distribution of
// distros.Records (Rancher's and kubeadm): the
// post-renderer, the KRM function, overlays, plan. It links neither Helm
// nor the Kubernetes client (TestLeanDependencies), and hands the chart
// commands and check over to aws-ccm-renderer-helm.
package main

import (
	"os"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.StdStreams()))
}
