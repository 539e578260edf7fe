package chartops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	helmcli "helm.sh/helm/v3/pkg/cli"
	"k8s.io/client-go/rest"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
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
	// kubeconfigGiven: a command of its own flags (check) gave the
	// kubeconfig file.
	kubeconfigGiven bool
	// namespace is Namespace's, once asked.
	namespace string
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
	e.namespace = ns
	return ns
}

// Given tells whether a flag of the environment was given on the command
// line.
func (e *Env) Given(name string) bool {
	return e.fs != nil && e.fs.Changed(name) || name == "kubeconfig" && e.kubeconfigGiven
}

// Contexts lists the contexts of the kubeconfig, sorted, and its current
// context.
func (e *Env) Contexts() (names []string, current string, err error) {
	k, err := e.LoadKubeconfig()
	if err != nil {
		return nil, "", err
	}
	names, current = k.Contexts()
	return names, current, nil
}

// CheckCluster refuses, before anything is asked of a cluster, a command
// that needs one (need says which: "install", "--distro=detect") when
// there is none to ask: a --kubeconfig that does not exist, no kubeconfig
// with a cluster (the Kubernetes client would then try localhost:8080),
// or a context the kubeconfig does not have. A --kube-apiserver, or a pod's
// in-cluster configuration, is a cluster.
func (e *Env) CheckCluster(need string) error {
	if e.Given("kubeconfig") {
		if _, err := os.Stat(e.Settings.KubeConfig); errors.Is(err, fs.ErrNotExist) {
			return &renderer.UsageError{Err: fmt.Errorf("--kubeconfig %s: no such file", e.Settings.KubeConfig)}
		}
	}
	k, err := e.LoadKubeconfig()
	if err != nil {
		return err
	}
	if k.Clusters() == 0 && e.Settings.KubeAPIServer == "" && !inCluster() {
		return &renderer.UsageError{Err: fmt.Errorf("%s needs a cluster, and no kubeconfig names one (%s); "+
			"give --kubeconfig FILE, or set $KUBECONFIG", need, e.noKubeconfig())}
	}
	return e.checkContext(k)
}

// inCluster tells whether this runs in a pod with a service account, whose
// configuration the Kubernetes client uses when no kubeconfig names a
// cluster.
func inCluster() bool {
	_, err := rest.InClusterConfig()
	return err == nil
}

// noKubeconfig says why no kubeconfig names a cluster.
func (e *Env) noKubeconfig() string {
	switch {
	case e.Given("kubeconfig"):
		return "--kubeconfig " + e.Settings.KubeConfig + " has no clusters"
	case os.Getenv("KUBECONFIG") != "":
		return "$KUBECONFIG is " + os.Getenv("KUBECONFIG") + ": no file of it exists or has clusters"
	}
	home := filepath.Join("~", ".kube", "config")
	if dir, err := os.UserHomeDir(); err == nil {
		if _, err := os.Stat(filepath.Join(dir, ".kube", "config")); err == nil {
			return home + " has no clusters and $KUBECONFIG is not set"
		}
	}
	return "$KUBECONFIG is not set and " + home + " does not exist"
}

// CheckContext refuses a context the kubeconfig does not have, naming
// those it has.
func (e *Env) CheckContext() error {
	name := e.Settings.KubeContext
	if name == "" {
		return nil
	}
	k, err := e.LoadKubeconfig()
	if err != nil {
		return err
	}
	return e.checkContext(k)
}

func (e *Env) checkContext(k *Kubeconfig) error {
	name := e.Settings.KubeContext
	if name == "" {
		return nil
	}
	names, _ := k.Contexts()
	if slices.Contains(names, name) {
		return nil
	}
	from := "--kube-context"
	if !e.Given("kube-context") {
		from = "$HELM_KUBECONTEXT"
	}
	return e.UnknownContext(from, name, names)
}

// UnknownContext is the error of a context the kubeconfig does not have,
// given by from (--kube-context, $HELM_KUBECONTEXT), worded the same in
// every command: the kubeconfig, the contexts it has and the one most
// likely meant.
func (e *Env) UnknownContext(from, name string, names []string) error {
	has := "it has no contexts"
	if len(names) > 0 {
		escaped := make([]string, len(names))
		for i, n := range names {
			escaped[i] = safetext.Escape(n) // a kubeconfig's names: no line feed or escape sequence printed
		}
		has = "its contexts: " + strings.Join(escaped, ", ")
	}
	return &renderer.UsageError{Err: fmt.Errorf("%s %q is not a context of the kubeconfig %s%s; %s", from, name, e.kubeconfigName(),
		renderer.DidYouMean(name, names, strconv.Quote), has)}
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
	e.Settings.KubeConfig, e.kubeconfigGiven = kubeconfig, kubeconfig != ""
	return e
}

// MaxHistory is $HELM_MAX_HISTORY, else Helm's 10.
func (e *Env) MaxHistory() int { return e.Settings.MaxHistory }

// RESTConfig is the configuration of the cluster's clients.
func (e *Env) RESTConfig() (*rest.Config, error) {
	k, err := e.LoadKubeconfig()
	if err != nil {
		return nil, err
	}
	return k.RESTConfig("")
}
