// Package chartops is the action layer of the chart commands (template,
// install, upgrade, diff) and of check's release source: the one package of
// the program that imports Helm. It runs Helm's actions (helm.sh/helm/v3's
// pkg/action) in-process with the renderer as their post-renderer, each
// with a context that the commands cancel on SIGINT or SIGTERM, over an
// action.Configuration that tests fill with Helm's memory driver and fake
// kube client. Its errors are typed once, here: *renderer.UsageError for
// what the user asked wrongly, *renderer.InputError for a chart, values or
// manifests that cannot be used or that the cluster refuses, and any other
// error for what could not be reached, read or written.
package chartops

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/reach"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Progress shows the steps that take seconds; what is written to it during
// a step (a warning) does not run into the step's line.
type Progress interface {
	io.Writer
	Begin(msg string)
	End(err error)
}

// Client runs Helm's actions for one command.
type Client struct {
	Env    *Env
	Source *Source
	// Config is Helm's action configuration: Connect makes it for a
	// cluster; tests give their own.
	Config   *action.Configuration
	Progress Progress
	ErrOut   io.Writer
	// Stdin is what a values file "-" reads; nil: the process's stdin.
	Stdin io.Reader
	// ready notes what a failed wait found not ready (Connect sets it).
	ready *readiness
	// Verb and Release are the command and the release, for what a
	// message tells the user to run.
	Verb, Release string
}

// Connect makes the action configuration: the registry client always, the
// cluster's clients when the command needs a cluster. It routes Helm's log
// (--debug) and the API server's warnings to ErrOut and Progress.
func (c *Client) Connect(cluster bool) error {
	s := c.Env.Settings
	if s.Debug {
		slog.SetDefault(slog.New(slog.NewTextHandler(c.ErrOut, &slog.HandlerOptions{Level: slog.LevelDebug})))
	} else {
		// The SDK's warnings (a local chart found by name) are this
		// program's to give.
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	if c.Config == nil {
		c.Config = new(action.Configuration)
	}
	rc, err := c.Source.registryClient(c.Env, c.ErrOut)
	if err != nil {
		return err
	}
	c.Config.RegistryClient = rc
	if !cluster {
		return nil
	}
	// The API server's warnings as this program's lines, not client-go's
	// log; Helm's clients take the default handler.
	rest.SetDefaultWarningHandler(&apiWarnings{out: c.Progress, seen: map[string]bool{}})
	if _, err := c.Env.RESTConfig(); err != nil {
		return fmt.Errorf("the cluster's kubeconfig (--kubeconfig, $KUBECONFIG): %w", err)
	}
	logf := func(string, ...any) {}
	if s.Debug {
		logf = func(format string, args ...any) {
			fmt.Fprintf(c.ErrOut, "aws-ccm-renderer: helm: "+format+"\n", args...)
		}
	}
	if err := c.Config.Init(s.RESTClientGetter(), c.Env.Namespace(), os.Getenv("HELM_DRIVER"), logf); err != nil {
		return fmt.Errorf("connecting to the cluster: %w", err)
	}
	if kc, ok := c.Config.KubeClient.(*kube.Client); ok {
		c.ready = &readiness{Client: kc}
		c.Config.KubeClient = c.ready
	}
	return nil
}

// ServerVersion asks the cluster for its Kubernetes version.
func (c *Client) ServerVersion() (string, error) {
	dc, err := c.Env.Settings.RESTClientGetter().ToDiscoveryClient()
	if err != nil {
		return "", fmt.Errorf("connecting to the cluster: %w", err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("the cluster's version (--kube-version to give it): %w", err)
	}
	return v.GitVersion, nil
}

// Classify types an error of a Helm action or the cluster: the renderer's
// own errors are returned without Helm's words around them; a cluster, registry or repository that
// cannot be reached, a timeout, an interruption, or a user it does not let
// in or allow the request is returned as it is (exit 3); anything else the
// cluster or Helm refuses is an input error.
func Classify(err error) error {
	var in *renderer.InputError
	var use *renderer.UsageError
	switch {
	case err == nil:
		return err
	case errors.As(err, &in):
		// The renderer's own error says where and why; Helm's "error
		// while running post render on files" around it says nothing more.
		return in
	case errors.As(err, &use):
		return use
	case reach.Unreachable(err), apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return err
	}
	return &renderer.InputError{Err: err}
}

// notFound tells whether Helm's storage has no such release, or none
// deployed.
func notFound(err error) bool {
	return errors.Is(err, driver.ErrReleaseNotFound) || errors.Is(err, driver.ErrNoDeployedReleases)
}

// apiWarnings prints the API server's warnings (deprecated fields and the
// like, in Warning headers) once each, as the program's warning lines.
type apiWarnings struct {
	out  io.Writer
	mu   sync.Mutex
	seen map[string]bool
}

func (a *apiWarnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen[text] {
		return
	}
	a.seen[text] = true
	fmt.Fprintln(a.out, "aws-ccm-renderer: warning: the API server: "+oneLine(text))
}

// oneLine makes a library's message one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
