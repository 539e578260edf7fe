// Command aws-ccm-renderer-helm is aws-ccm-renderer with the Helm SDK and
// the Kubernetes client: the same commands, and template, install, upgrade,
// diff, check and argocd generate, which aws-ccm-renderer hands over to it.
package main

import (
	"os"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli/helmcmd"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], cli.StdStreams(), helmcmd.Commands))
}
