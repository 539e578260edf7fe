// Package helmcmd holds the commands of aws-ccm-renderer-helm, the program
// with the Helm SDK and the Kubernetes client: template, install, upgrade
// and diff (the chart commands), check, and argocd generate (the Argo CD
// plugin's command). Each binds its flags into the
// structs of the action layer (internal/chartops) or of check
// (internal/check), runs them, and prints what they return; none imports
// Helm itself.
package helmcmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/chartops"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Commands are the commands aws-ccm-renderer-helm adds to the root command.
func Commands(s cli.IOStreams) []*cobra.Command {
	return []*cobra.Command{NewTemplateCommand(s), NewInstallCommand(s), NewUpgradeCommand(s), NewDiffCommand(s), NewCheckCommand(s), NewGuardCommand(s), NewArgoCDCommand(s)}
}

// DistroDetect is the --distro value that asks the cluster.
const DistroDetect = "detect"

// wrapperDistros are the --distro values of template, install, upgrade and
// diff: the renderer's, and detect.
func wrapperDistros() []string {
	vs := []string{}
	for _, d := range distros.All {
		vs = append(vs, string(d))
	}
	return append(vs, DistroDetect)
}

// detectDistro resolves --distro=detect for the chart wrapper commands: it
// reads the nodes of the cluster Helm would use (--kubeconfig,
// --kube-context, $KUBECONFIG, $HELM_KUBECONTEXT) and says on errOut what it
// found.
func detectDistro(ctx context.Context, env *chartops.Env, errOut io.Writer) (distros.Distro, error) {
	cfg, err := env.RESTConfig()
	if err != nil {
		return "", &cli.IOError{Err: fmt.Errorf("--distro=detect needs a cluster: %w", err)}
	}
	client, err := kubernetes.NewForConfig(restCopy(cfg, 30*time.Second))
	if err != nil {
		return "", &cli.IOError{Err: fmt.Errorf("--distro=detect: %w", err)}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, found, err := check.DetectDistro(ctx, client)
	if err != nil {
		if renderer.IsUsageError(err) {
			return "", err
		}
		return "", &cli.IOError{Err: fmt.Errorf("--distro=detect: %w", err)}
	}
	fmt.Fprintf(errOut, "aws-ccm-renderer: --distro=detect: %s (%s)\n", d, strings.Join(found.Evidence, "; "))
	return d, nil
}

// restCopy returns a copy of a client config with room for check's
// concurrent SubjectAccessReviews, a per-request timeout, and Kubernetes'
// protobuf encoding for the built-in types (JSON for the rest), as the
// controllers read them: decoding a list of 20,000 pods from protobuf
// costs a fraction of decoding it from JSON.
func restCopy(cfg *rest.Config, timeout time.Duration) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst, c.Timeout = 50, 100, timeout
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	c.ContentType = runtime.ContentTypeProtobuf
	return c
}

// completeKubeContexts completes --kube-context from the kubeconfig that
// --kubeconfig names, else the one Helm reads.
func completeKubeContexts(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	kc := ""
	if f := cmd.Flags().Lookup("kubeconfig"); f != nil && f.Changed {
		kc = f.Value.String()
	}
	names, _, err := chartops.KubeconfigEnv(kc).Contexts()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
