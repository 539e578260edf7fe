// Command aws-ccm-renderer patches the aws-cloud-controller-manager Helm
// chart's manifests for RKE1, RKE2, K3s and kubeadm clusters.
package main

import (
	"os"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}
