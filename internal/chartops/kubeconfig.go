package chartops

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Kubeconfig is the kubeconfig as Helm reads it (--kubeconfig, else the
// files of $KUBECONFIG merged, else ~/.kube/config), read once: the
// configuration of each of its contexts is built from what was read, so
// that checking every context of a kubeconfig of N contexts reads and
// merges it once, not N times.
//
// Every file it reads is a regular file of at most safefile.MaxRead
// bytes: the kubeconfig files before they are read, the files a context
// names (certificate-authority, client-certificate, client-key, tokenFile)
// and --kube-ca-file before its configuration is built, so that
// /dev/zero, a named pipe or a huge file is one error, not a read without
// end or a wait for a writer.
type Kubeconfig struct {
	env   *Env
	rules *clientcmd.ClientConfigLoadingRules
	raw   *clientcmdapi.Config
}

// LoadKubeconfig reads the kubeconfig; its errors are usage errors that
// name the file.
func (e *Env) LoadKubeconfig() (*Kubeconfig, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.DefaultClientConfig = &clientcmd.DefaultClientConfig // as Helm's ConfigFlags
	rules.ExplicitPath = e.Settings.KubeConfig
	for _, p := range rules.GetLoadingPrecedence() {
		if p == "" || p == os.DevNull { // KUBECONFIG=/dev/null: no kubeconfig, read empty
			continue
		}
		if err := safefile.CheckFile(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, &renderer.UsageError{Err: fmt.Errorf("kubeconfig: %w", err)}
		}
	}
	raw, err := rules.Load()
	if err != nil {
		return nil, &renderer.UsageError{Err: fmt.Errorf("reading the kubeconfig (%s): %w", e.kubeconfigName(), err)}
	}
	return &Kubeconfig{env: e, rules: rules, raw: raw}, nil
}

// Contexts lists the contexts, sorted, and the current context.
func (k *Kubeconfig) Contexts() (names []string, current string) {
	for n := range k.raw.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, k.raw.CurrentContext
}

// Clusters is how many clusters the kubeconfig names.
func (k *Kubeconfig) Clusters() int { return len(k.raw.Clusters) }

// RESTConfig is the configuration of the clients of a context's cluster
// ("": --kube-context, $HELM_KUBECONTEXT, else the current context), as
// Helm's makes it.
func (k *Kubeconfig) RESTConfig(context string) (*rest.Config, error) {
	return k.Getter(context).ToRESTConfig()
}

// Getter is what Helm's actions take to reach a context's cluster.
func (k *Kubeconfig) Getter(context string) genericclioptions.RESTClientGetter {
	if context == "" {
		context = k.env.Settings.KubeContext
	}
	return &kubeGetter{k: k, context: context}
}

// checkFiles refuses a file the context would have read that is not a
// regular file of at most safefile.MaxRead bytes. A file that does not
// exist is left to client-go, which says so in its words.
func (k *Kubeconfig) checkFiles(context string, o *clientcmd.ConfigOverrides) error {
	type named struct{ what, path string }
	var files []named
	if o.ClusterInfo.CertificateAuthority != "" {
		files = append(files, named{"--kube-ca-file", o.ClusterInfo.CertificateAuthority})
	}
	if context == "" {
		context = k.raw.CurrentContext
	}
	if c, ok := k.raw.Contexts[context]; ok && c != nil {
		if cl, ok := k.raw.Clusters[c.Cluster]; ok && cl != nil && o.ClusterInfo.CertificateAuthority == "" {
			files = append(files, named{"cluster " + quote(c.Cluster) + " certificate-authority", cl.CertificateAuthority})
		}
		if u, ok := k.raw.AuthInfos[c.AuthInfo]; ok && u != nil {
			who := "user " + quote(c.AuthInfo)
			files = append(files, named{who + " client-certificate", u.ClientCertificate}, named{who + " client-key", u.ClientKey})
			if o.AuthInfo.Token == "" {
				files = append(files, named{who + " tokenFile", u.TokenFile})
			}
		}
	}
	for _, f := range files {
		if f.path == "" || f.path == os.DevNull {
			continue
		}
		if err := safefile.CheckFile(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &renderer.UsageError{Err: fmt.Errorf("%s: %w", f.what, err)}
		}
	}
	return nil
}

// quote is a name from a kubeconfig in an error: quoted, its control
// characters escaped.
func quote(s string) string { return strconv.Quote(s) }

// overrides are Helm's settings as Helm's ConfigFlags give them to
// client-go (genericclioptions' toRawKubeConfigLoader).
func (k *Kubeconfig) overrides(context string) *clientcmd.ConfigOverrides {
	s := k.env.Settings
	o := &clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults}
	o.AuthInfo.Token = s.KubeToken
	o.AuthInfo.Impersonate = s.KubeAsUser
	o.AuthInfo.ImpersonateGroups = s.KubeAsGroups
	o.ClusterInfo.Server = s.KubeAPIServer
	o.ClusterInfo.TLSServerName = s.KubeTLSServerName
	o.ClusterInfo.CertificateAuthority = s.KubeCaFile
	o.ClusterInfo.InsecureSkipTLSVerify = s.KubeInsecureSkipTLSVerify
	o.CurrentContext = context
	o.Context.Namespace = k.env.namespace // not Settings.Namespace(), which reads the kubeconfig again
	return o
}

// loaded is the loading rules with the kubeconfig already read: client-go's
// deferred loading (and its fall back to a pod's in-cluster configuration)
// without reading the files again.
type loaded struct {
	*clientcmd.ClientConfigLoadingRules
	raw *clientcmdapi.Config
}

func (l loaded) Load() (*clientcmdapi.Config, error) { return l.raw, nil }

// helmUserAgent is the user agent of Helm's clients (its internal
// version.GetUserAgent).
var helmUserAgent = "Helm/" + strings.TrimPrefix(chartutil.DefaultCapabilities.HelmVersion.Version, "v")

// kubeGetter is a context's genericclioptions.RESTClientGetter over the
// kubeconfig read once.
type kubeGetter struct {
	k       *Kubeconfig
	context string
}

func (g *kubeGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loaded{g.k.rules, g.k.raw}, g.k.overrides(g.context))
}

func (g *kubeGetter) ToRESTConfig() (*rest.Config, error) {
	if err := g.k.checkFiles(g.context, g.k.overrides(g.context)); err != nil {
		return nil, err
	}
	c, err := g.ToRawKubeConfigLoader().ClientConfig()
	if err != nil {
		return nil, err
	}
	// As Helm's EnvSettings wrap it.
	s := g.k.env.Settings
	c.Burst, c.QPS = s.BurstLimit, s.QPS
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &kube.RetryingRoundTripper{Wrapped: rt} })
	c.UserAgent = helmUserAgent
	return c, nil
}

func (g *kubeGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	c, err := g.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return nil, err
	}
	return memory.NewMemCacheClient(dc), nil
}

func (g *kubeGetter) ToRESTMapper() (meta.RESTMapper, error) {
	dc, err := g.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	return restmapper.NewDeferredDiscoveryRESTMapper(dc), nil
}
