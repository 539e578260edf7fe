// Command aws-ccm-renderer-helm is aws-ccm-renderer with the Helm SDK and
// the Kubernetes client: the same commands, and template, install, upgrade,
// diff, check and argocd generate, which aws-ccm-renderer hands over to it.
package main

import (
	"os"

	// Mozilla's root certificates, for where the system has none (the
	// Argo CD sidecar image, docs/images.md): used only then.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli/helmcmd"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], cli.StdStreams(), helmcmd.Commands))
}
