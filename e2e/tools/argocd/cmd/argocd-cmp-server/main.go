// Command argocd-cmp-server is Argo CD's config management plugin server,
// the sidecar program of the repo server, built from the Argo CD module this
// tool module pins. Argo CD's own main (cmd/main.go) picks one of its
// programs by the name it runs under; this one runs that program only, so
// the build links the CMP server's packages and not those of Argo CD's API
// server, controllers and CLI.
package main

import (
	"os"

	cmpserver "github.com/argoproj/argo-cd/v2/cmd/argocd-cmp-server/commands"
	"github.com/argoproj/argo-cd/v2/cmd/util"
)

func main() {
	// As Argo CD's main does for argocd-cmp-server: GOMAXPROCS from the
	// process's CPU quota, which Argo CD counts as a CLI.
	util.SetAutoMaxProcs(true)
	if err := cmpserver.NewCommand().Execute(); err != nil {
		os.Exit(1)
	}
}
