package chartops

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	helmcli "helm.sh/helm/v3/pkg/cli"
	"k8s.io/client-go/rest"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Env is where Helm's actions run: Helm's own settings, read from the
// environment as the Helm CLI reads it ($HELM_NAMESPACE, $HELM_KUBECONTEXT,
// $KUBECONFIG, $HELM_*_CONFIG, ...) and from the flags Helm's
// EnvSettings.AddFlags adds (--kubeconfig, --kube-context, --kube-as-user,
// --kube-token, --kube-apiserver, --kube-ca-file, --qps, --burst-limit,
// --registry-config, ...). One difference from Helm's: the namespace is
// -n, else $HELM_NAMESPACE, else kube-system, never the kubeconfig
// context's.
type Env struct {
	Settings *helmcli.EnvSettings
	fs       *pflag.FlagSet
}

// NewEnv reads the environment.
func NewEnv() *Env { return &Env{Settings: helmcli.New()} }

// Our words for the flags Helm's AddFlags defines, where Helm's say less
// than the command needs; the defaults they name are in the text, not
// shown as a path of this machine.
var envUsage = map[string]string{
	"namespace":         "namespace of the release (default: $HELM_NAMESPACE, else " + upstream.Namespace + ")",
	"kubeconfig":        "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)",
	"kube-context":      "kubeconfig context (default: $HELM_KUBECONTEXT, else the current context)",
	"debug":             "print the Helm SDK's log on stderr",
	"registry-config":   "the registry logins of helm registry login (default: $HELM_REGISTRY_CONFIG, else Helm's config directory's registry/config.json)",
	"repository-config": "the repositories of helm repo add (default: $HELM_REPOSITORY_CONFIG, else Helm's config directory's repositories.yaml)",
	"repository-cache":  "the repository indexes of helm repo update (default: $HELM_REPOSITORY_CACHE, else Helm's cache directory's repository)",
}

// AddFlags adds Helm's environment flags to fs, as Helm's CLI has them.
func (e *Env) AddFlags(fs *pflag.FlagSet) {
	e.fs = fs
	e.Settings.AddFlags(fs)
	for name, usage := range envUsage {
		if f := fs.Lookup(name); f != nil {
			f.Usage, f.DefValue = usage, ""
		}
	}
}

// Namespace is the release's namespace: -n, else $HELM_NAMESPACE, else
// kube-system.
func (e *Env) Namespace() string {
	ns := os.Getenv("HELM_NAMESPACE")
	if e.fs != nil && e.fs.Changed("namespace") {
		ns = e.fs.Lookup("namespace").Value.String()
	}
	if ns == "" {
		ns = upstream.Namespace
	}
	e.Settings.SetNamespace(ns)
	return ns
}

// Given tells whether a flag of the environment was given on the command
// line.
func (e *Env) Given(name string) bool { return e.fs != nil && e.fs.Changed(name) }

// Contexts lists the contexts of the kubeconfig, sorted, and its current
// context.
func (e *Env) Contexts() (names []string, current string, err error) {
	raw, err := e.Settings.RESTClientGetter().ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, "", err
	}
	for n := range raw.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, raw.CurrentContext, nil
}

// CheckContext refuses a context the kubeconfig does not have, naming
// those it has.
func (e *Env) CheckContext() error {
	name := e.Settings.KubeContext
	if name == "" {
		return nil
	}
	names, _, err := e.Contexts()
	if err != nil {
		return fmt.Errorf("reading the kubeconfig: %w", err)
	}
	for _, n := range names {
		if n == name {
			return nil
		}
	}
	from := "--kube-context"
	if !e.Given("kube-context") {
		from = "$HELM_KUBECONTEXT"
	}
	has := "it has no contexts"
	if len(names) > 0 {
		has = "its contexts: " + strings.Join(names, ", ")
	}
	return &renderer.UsageError{Err: fmt.Errorf("%s %q is not a context of the kubeconfig (%s); %s", from, name, e.kubeconfigName(), has)}
}

func (e *Env) kubeconfigName() string {
	if e.Settings.KubeConfig != "" {
		return e.Settings.KubeConfig
	}
	if os.Getenv("KUBECONFIG") != "" {
		return "$KUBECONFIG"
	}
	return filepath.Join("~", ".kube", "config")
}

// KubeconfigEnv is the environment of a kubeconfig file ("": $KUBECONFIG,
// else ~/.kube/config) and its current context, as Helm reads it.
func KubeconfigEnv(kubeconfig string) *Env {
	e := NewEnv()
	e.Settings.KubeConfig = kubeconfig
	return e
}

// ForContext is the environment with another kubeconfig context (check
// reads several clusters; "" is the kubeconfig's current context).
func (e *Env) ForContext(name string) *Env {
	s := helmcli.New()
	s.KubeConfig, s.KubeContext = e.Settings.KubeConfig, name
	return &Env{Settings: s}
}

// MaxHistory is $HELM_MAX_HISTORY, else Helm's 10.
func (e *Env) MaxHistory() int { return e.Settings.MaxHistory }

// RESTConfig is the configuration of the cluster's clients.
func (e *Env) RESTConfig() (*rest.Config, error) {
	return e.Settings.RESTClientGetter().ToRESTConfig()
}
