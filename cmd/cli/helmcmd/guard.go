package helmcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/chartops"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

var guardLong = `guard holds the AWS CCM back while starting it would do harm, and returns once it is safe:
it is meant as an init container of the CCM's pod. It reads the cluster (the API server's
version, the nodes, the control plane's pods and the leases of kube-system; nothing else, and
it writes only Events) every --interval, and holds while

  - a kube-controller-manager runs the in-tree AWS provider (--cloud-provider=aws) without leader
    migration, or with it while the CCM is in install mode: the CCM would be a second set of
    cloud controllers acting on the same nodes and load balancers;
  - the CCM's minor is one the version skew policy forbids beside the API server (newer, or more
    than one older);
  - the distribution's own cloud controller (` + distros.Alternatives(first(distros.OwnControllerNames(distros.Records())), "or") + `) runs.

While it holds, it writes one line saying why (again only when the reasons change) and, when
POD_NAME and POD_NAMESPACE name its pod (the downward API), a Warning Event CCMHeldBack on the
pod. A read that fails holds too, naming the permission it lacks. With --once it judges once:
exit 0 when the CCM may start, 1 when it would be held.

With --ccm-version auto it reads the CCM's release tag from the image of its own pod's CCM
container (POD_NAME and POD_NAMESPACE), for manifests whose image is set per cluster.

In the pod it uses the pod's service account; elsewhere the kubeconfig, as check finds it.`

const guardExample = `  # As the init container of the CCM's pod runs it (the renderer's options give the values)
  aws-ccm-renderer guard --mode=install --ccm-version=v1.34.3

  # Where the image is set per cluster (Fleet's templated values): read it from the pod
  aws-ccm-renderer guard --mode=install --ccm-version=auto

  # From a workstation, once: would the CCM be held back now?
  aws-ccm-renderer guard --mode=migrate --ccm-version=v1.26.14 --once --kubeconfig ~/.kube/config`

// guardFlags are guard's flags.
type guardFlags struct {
	mode       string
	ccmVersion string
	interval   time.Duration
	once       bool
	kubeconfig string
}

// NewGuardCommand builds guard.
func NewGuardCommand(s cli.IOStreams) *cobra.Command {
	f := &guardFlags{}
	cmd := &cobra.Command{
		Use:     "guard --mode=MODE --ccm-version=TAG",
		Short:   "Hold the AWS CCM back while starting it would do harm (an init container of its pod)",
		Long:    guardLong,
		Example: guardExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := f.input()
			if err != nil {
				return err
			}
			env := chartops.KubeconfigEnv(f.kubeconfig)
			// Outside a pod, with no kubeconfig that names a cluster, the
			// client would try localhost:8080: refused instead.
			if err := env.CheckCluster("guard"); err != nil {
				return err
			}
			cfg, err := env.RESTConfig()
			if err != nil {
				return &renderer.UsageError{Err: fmt.Errorf("kubeconfig: %w (in a pod, the service account's; else --kubeconfig or $KUBECONFIG)", err)}
			}
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return &cli.IOError{Err: err}
			}
			g := &guard{client: client, in: in, log: cmd.ErrOrStderr(), pod: os.Getenv("POD_NAME"), namespace: os.Getenv("POD_NAMESPACE")}
			return g.run(cmd.Context(), f.interval, f.once)
		},
	}
	cli.SetCommon(cmd, s)
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "mode", "", "the CCM's mode: install or migrate")
	fl.StringVar(&f.ccmVersion, "ccm-version", "", "the CCM's release tag, e.g. v1.34.3; auto: the tag of the CCM's image in the guard's pod (POD_NAME, POD_NAMESPACE)")
	fl.DurationVar(&f.interval, "interval", 10*time.Second, "how often to read the cluster again while holding")
	fl.BoolVar(&f.once, "once", false, "judge once: exit 0 when the CCM may start, 1 when it would be held")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "the kubeconfig, outside a pod (default: as check finds it)")
	_ = cmd.RegisterFlagCompletionFunc("mode", cobra.FixedCompletions([]string{string(renderer.ModeInstall), string(renderer.ModeMigrate)}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.MarkFlagFilename("kubeconfig")
	return cmd
}

// input checks the flags.
func (f *guardFlags) input() (check.GuardInput, error) {
	mode := renderer.Mode(f.mode)
	if mode != renderer.ModeInstall && mode != renderer.ModeMigrate {
		return check.GuardInput{}, &renderer.UsageError{Err: fmt.Errorf("--mode %q: give the CCM's mode, install or migrate", f.mode)}
	}
	if f.ccmVersion != renderer.GuardAutoVersion && !kubeversion.IsRelease(f.ccmVersion) {
		return check.GuardInput{}, &renderer.UsageError{Err: fmt.Errorf("--ccm-version %q: give the CCM's release tag, such as %s, or %s", f.ccmVersion, releases.Newest(), renderer.GuardAutoVersion)}
	}
	if f.ccmVersion == renderer.GuardAutoVersion && (os.Getenv("POD_NAME") == "" || os.Getenv("POD_NAMESPACE") == "") {
		return check.GuardInput{}, &renderer.UsageError{Err: fmt.Errorf("--ccm-version %s reads the CCM's image from the guard's pod, which POD_NAME and POD_NAMESPACE name (the downward API): set them, or give the CCM's release tag", renderer.GuardAutoVersion)}
	}
	if f.interval <= 0 {
		return check.GuardInput{}, &renderer.UsageError{Err: fmt.Errorf("--interval %s: give a positive duration", f.interval)}
	}
	in := check.GuardInput{Mode: mode}
	if f.ccmVersion != renderer.GuardAutoVersion {
		in.CCMVersions = []string{f.ccmVersion}
	}
	return in, nil
}

// guard is one run of the guard.
type guard struct {
	client         kubernetes.Interface
	in             check.GuardInput
	log            io.Writer
	pod, namespace string
	last           string // the reasons last said
}

// errHeld is --once's exit when the CCM would be held.
var errHeld = &cli.ExitError{Code: 1}

// run judges every interval until the CCM may start.
func (g *guard) run(ctx context.Context, interval time.Duration, once bool) error {
	for {
		reasons, err := g.judge(ctx)
		if err == nil && len(reasons) == 0 {
			fmt.Fprintf(g.log, "aws-ccm-renderer guard: the CCM (%s, %s mode) may start: no in-tree cloud controllers beside it, its minor fits the API server's, no distribution's cloud controller runs\n", safetext.Escape(strings.Join(g.in.CCMVersions, ", ")), g.in.Mode)
			return nil
		}
		line := strings.Join(reasons, "; ")
		if err != nil {
			line = "cannot read the cluster: " + err.Error()
		}
		// The reasons quote the cluster (images, commands, API errors):
		// escaped, a control character in them cannot reach a terminal
		// that shows the log, nor split the line.
		line = safetext.Escape(line)
		if line != g.last {
			g.last = line
			fmt.Fprintln(g.log, "aws-ccm-renderer guard: holding the CCM back: "+line)
			g.event(ctx, line)
		}
		if once {
			return errHeld
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// judge reads the cluster and returns why the CCM must wait. With
// --ccm-version auto (no CCMVersions yet) it first reads the releases of
// the CCM containers of its pod (once).
func (g *guard) judge(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if len(g.in.CCMVersions) == 0 {
		tags, err := check.GuardCCMVersions(ctx, g.client, g.namespace, g.pod)
		if _, unread := errors.AsType[*check.ClusterError](err); unread {
			return nil, err
		}
		if err != nil { // read, but no tag to judge: holds, saying why
			return []string{"the CCM's version: " + err.Error()}, nil
		}
		g.in.CCMVersions = tags
	}
	s, err := check.CollectGuard(ctx, g.client, g.in)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range check.Hold(s, g.in) {
		out = append(out, f.Subject+": "+f.Message+" (fix: "+f.Fix+")")
	}
	return out, nil
}

// event records why on the guard's pod, when it knows its pod.
func (g *guard) event(ctx context.Context, message string) {
	if g.pod == "" || g.namespace == "" {
		return
	}
	now := metav1.Now()
	ev := &corev1.Event{
		// Named as client-go's event recorder names them.
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", g.pod, now.UnixNano()), Namespace: g.namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Name: g.pod, Namespace: g.namespace},
		Reason:         "CCMHeldBack", Type: corev1.EventTypeWarning, Message: message,
		Source:         corev1.EventSource{Component: "aws-ccm-renderer-guard"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := g.client.CoreV1().Events(g.namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		fmt.Fprintf(g.log, "aws-ccm-renderer guard: no Event on pod %s/%s: %s\n", g.namespace, g.pod, safetext.Escape(err.Error()))
	}
}
