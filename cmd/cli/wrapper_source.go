//go:build helmsdk

package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	helmcli "helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/downloader"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// sourceFlags say where the chart comes from and how to reach it: Helm's
// repository and registry options, spelled as the Helm CLI spells them.
type sourceFlags struct {
	repo             string
	version          string
	plainHTTP        bool
	username         string
	password         string
	passwordStdin    bool
	caFile           string
	certFile         string
	keyFile          string
	insecure         bool
	passCredentials  bool
	registryConfig   string
	repositoryConfig string
	repositoryCache  string

	repoGiven bool // --repo on the command line
}

func (f *sourceFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.repo, "repo", DefaultRepo, "chart repository URL, where a CHART that is a name is looked up (not REPO/NAME)")
	fs.StringVar(&f.version, "version", "", "chart version or constraint (default: the latest)")
	fs.BoolVar(&f.plainHTTP, "plain-http", false, "use HTTP, not HTTPS, for an oci:// registry")
	fs.StringVar(&f.username, "username", "", "user name for the chart repository or registry")
	fs.StringVar(&f.password, "password", "", "password for the chart repository or registry")
	fs.BoolVar(&f.passwordStdin, "password-stdin", false, "read the password from stdin")
	fs.StringVar(&f.caFile, "ca-file", "", "verify the repository's or registry's certificate with this CA bundle")
	fs.StringVar(&f.certFile, "cert-file", "", "client certificate for the repository or registry")
	fs.StringVar(&f.keyFile, "key-file", "", "key of the client certificate")
	fs.BoolVar(&f.insecure, "insecure-skip-tls-verify", false, "do not verify the repository's or registry's certificate")
	fs.BoolVar(&f.passCredentials, "pass-credentials", false, "send the credentials to every host the chart is downloaded from, not only the repository's")
	fs.StringVar(&f.registryConfig, "registry-config", "", "the registry logins of helm registry login (default: $HELM_REGISTRY_CONFIG, else Helm's config directory's registry/config.json)")
	fs.StringVar(&f.repositoryConfig, "repository-config", "", "the repositories of helm repo add (default: $HELM_REPOSITORY_CONFIG, else Helm's config directory's repositories.yaml)")
	fs.StringVar(&f.repositoryCache, "repository-cache", "", "the repository indexes of helm repo update (default: $HELM_REPOSITORY_CACHE, else Helm's cache directory's repository)")
}

func (f *sourceFlags) check() error {
	switch {
	case f.passwordStdin && f.password != "":
		return &renderer.UsageError{Err: errors.New("--password and --password-stdin: give one of them")}
	case (f.certFile == "") != (f.keyFile == ""):
		return &renderer.UsageError{Err: errors.New("--cert-file and --key-file go together")}
	}
	return nil
}

// apply puts the file locations given on the command line into Helm's
// settings, which read them from the environment first.
func (f *sourceFlags) apply(s *helmcli.EnvSettings, fs *pflag.FlagSet) {
	f.repoGiven = fs.Changed("repo")
	if f.registryConfig != "" {
		s.RegistryConfig = f.registryConfig
	}
	if f.repositoryConfig != "" {
		s.RepositoryConfig = f.repositoryConfig
	}
	if f.repositoryCache != "" {
		s.RepositoryCache = f.repositoryCache
	}
}

func (f *sourceFlags) readPassword(in io.Reader) error {
	if !f.passwordStdin {
		return nil
	}
	b, err := io.ReadAll(in)
	if err != nil {
		return &ioError{fmt.Errorf("--password-stdin: %w", err)}
	}
	f.password = strings.TrimRight(string(b), "\r\n")
	return nil
}

// tlsConfig is the client TLS configuration of --ca-file, --cert-file,
// --key-file and --insecure-skip-tls-verify, or nil without them.
func (f *sourceFlags) tlsConfig() (*tls.Config, error) {
	if f.caFile == "" && f.certFile == "" && !f.insecure {
		return nil, nil
	}
	c := &tls.Config{InsecureSkipVerify: f.insecure, MinVersion: tls.VersionTLS12} // #nosec G402 -- the user asked
	if f.certFile != "" {
		cert, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
		if err != nil {
			return nil, &renderer.UsageError{Err: fmt.Errorf("--cert-file/--key-file: %w", err)}
		}
		c.Certificates = []tls.Certificate{cert}
	}
	if f.caFile != "" {
		pem, err := os.ReadFile(f.caFile)
		if err != nil {
			return nil, &renderer.UsageError{Err: fmt.Errorf("--ca-file: %w", err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &renderer.UsageError{Err: fmt.Errorf("--ca-file %s: no PEM certificate in it", f.caFile)}
		}
		c.RootCAs = pool
	}
	return c, nil
}

// registryClient is Helm's OCI registry client as the Helm CLI makes it:
// the logins of helm registry login, basic auth, TLS and plain HTTP as the
// flags say.
func (f *sourceFlags) registryClient(s *helmcli.EnvSettings, errOut io.Writer) (*registry.Client, error) {
	out := io.Discard
	if s.Debug {
		out = errOut
	}
	opts := []registry.ClientOption{
		registry.ClientOptDebug(s.Debug),
		registry.ClientOptEnableCache(true),
		registry.ClientOptWriter(out),
		registry.ClientOptCredentialsFile(s.RegistryConfig),
		registry.ClientOptBasicAuth(f.username, f.password),
	}
	if f.plainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	tc, err := f.tlsConfig()
	if err != nil {
		return nil, err
	}
	if tc != nil {
		opts = append(opts, registry.ClientOptHTTPClient(&http.Client{
			Transport: &http.Transport{TLSClientConfig: tc, Proxy: http.ProxyFromEnvironment},
		}))
	}
	rc, err := registry.NewClient(opts...)
	if err != nil {
		return nil, &ioError{fmt.Errorf("registry client: %w", err)}
	}
	return rc, nil
}

// explicitPath tells whether CHART names a path: it says so (./, ../, an
// absolute path, ~/), or it is a chart package (.tgz), or it is DIR/NAME
// where DIR is no repository of the repositories file and the path exists.
// A bare name is never a path, whatever is in the working directory.
func explicitPath(ref string, repos *repo.File) bool {
	switch {
	case ref == "." || ref == "..", filepath.IsAbs(ref),
		strings.HasPrefix(ref, "./"), strings.HasPrefix(ref, "../"), strings.HasPrefix(ref, "~/"),
		strings.HasPrefix(ref, "."+string(filepath.Separator)), strings.HasPrefix(ref, ".."+string(filepath.Separator)),
		strings.HasSuffix(ref, ".tgz"), strings.HasSuffix(ref, ".tar.gz"):
		return true
	}
	first, _, ok := strings.Cut(filepath.ToSlash(ref), "/")
	if !ok {
		return false
	}
	if repos != nil && repos.Has(first) {
		return false
	}
	_, err := os.Stat(ref)
	return err == nil
}

// loadChart finds, downloads when needed, and loads the chart.
func (w *wrapper) loadChart() (*chart.Chart, error) {
	path, err := w.locate()
	if err != nil {
		return nil, err
	}
	ch, err := loader.Load(path)
	if err != nil {
		return nil, &renderer.InputError{Err: fmt.Errorf("loading chart %s: %w", path, err)}
	}
	if req := ch.Metadata.Dependencies; req != nil {
		if err := action.CheckDependencies(ch, req); err != nil {
			return nil, &renderer.InputError{Err: fmt.Errorf("chart %s: %w (run helm dependency build)", path, err)}
		}
	}
	return ch, nil
}

// locate returns the path of the chart: as given when it is a path, else
// downloaded into Helm's repository cache, the way the Helm CLI's
// LocateChart does it minus its look into the working directory first.
func (w *wrapper) locate() (string, error) {
	f, s, ref := &w.flags.source, w.settings, strings.TrimSpace(w.chartRef)
	repos, _ := repo.LoadFile(s.RepositoryConfig) // none is fine: no REPO/NAME then
	if ref == "~" || strings.HasPrefix(ref, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			ref = filepath.Join(home, strings.TrimPrefix(ref, "~"))
		}
	}
	if !registry.IsOCI(ref) && explicitPath(ref, repos) {
		abs, err := filepath.Abs(ref)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			return "", &renderer.InputError{Err: fmt.Errorf("chart %s: %w", ref, err)}
		}
		return abs, nil
	}
	if !registry.IsOCI(ref) && !strings.Contains(ref, "/") {
		if _, err := os.Stat(ref); err == nil {
			fmt.Fprintf(w.errOut, "aws-ccm-renderer: warning: %s here is not used: the chart comes from %s; pass ./%s to use the local one\n", ref, f.repo, ref)
		}
	}
	tc, err := f.tlsConfig()
	if err != nil {
		return "", err
	}
	_ = tc // checked here so that a bad file is a usage error before any download
	dl := downloader.ChartDownloader{
		Out:     io.Discard,
		Getters: getter.All(s),
		Options: []getter.Option{
			getter.WithPassCredentialsAll(f.passCredentials),
			getter.WithTLSClientConfig(f.certFile, f.keyFile, f.caFile),
			getter.WithInsecureSkipVerifyTLS(f.insecure),
			getter.WithPlainHTTP(f.plainHTTP),
		},
		RepositoryConfig: s.RepositoryConfig,
		RepositoryCache:  s.RepositoryCache,
		RegistryClient:   w.cfg.RegistryClient,
	}
	name, from := ref, ""
	switch {
	case registry.IsOCI(ref):
		dl.Options = append(dl.Options, getter.WithRegistryClient(w.cfg.RegistryClient), getter.WithBasicAuth(f.username, f.password))
		from = ref
	case strings.Contains(ref, "/") && !f.repoGiven:
		// REPO/NAME from the repositories file, with its credentials.
		repoName, _, _ := strings.Cut(ref, "/")
		if repos == nil || !repos.Has(repoName) {
			return "", &renderer.UsageError{Err: fmt.Errorf("chart %s: no repository %q in %s (helm repo add %s URL) and no such path (./%s for a directory)", ref, repoName, s.RepositoryConfig, repoName, ref)}
		}
		dl.Options = append(dl.Options, getter.WithBasicAuth(f.username, f.password))
		from = repos.Get(repoName).URL
	default:
		w.progress.Begin(fmt.Sprintf("looking up chart %s %s in %s", ref, orLatest(f.version), f.repo))
		chartURL, err := repo.FindChartInAuthAndTLSAndPassRepoURL(f.repo, f.username, f.password, ref, f.version,
			f.certFile, f.keyFile, f.caFile, f.insecure, f.passCredentials, getter.All(s))
		w.progress.End(err)
		if err != nil {
			return "", w.sourceError(ref, f.repo, err)
		}
		name, from = chartURL, f.repo
		// Credentials go to the repository's own host only, unless
		// --pass-credentials.
		u1, err1 := url.Parse(f.repo)
		u2, err2 := url.Parse(chartURL)
		if err1 == nil && err2 == nil && (f.passCredentials || (u1.Scheme == u2.Scheme && u1.Host == u2.Host)) {
			dl.Options = append(dl.Options, getter.WithBasicAuth(f.username, f.password))
		} else {
			dl.Options = append(dl.Options, getter.WithBasicAuth("", ""))
		}
	}
	if err := os.MkdirAll(s.RepositoryCache, 0o755); err != nil {
		return "", &ioError{fmt.Errorf("Helm's repository cache: %w", err)}
	}
	msg := "fetching chart " + name
	if name == ref {
		msg += " " + orLatest(f.version)
	}
	w.progress.Begin(msg)
	path, _, err := dl.DownloadTo(name, f.version, s.RepositoryCache)
	w.progress.End(err)
	if err != nil {
		return "", w.sourceError(ref, from, err)
	}
	return filepath.Abs(path)
}

func orLatest(v string) string {
	if v == "" {
		return "(latest)"
	}
	return v
}

// sourceError types a failure to get the chart and says what to do: a
// repository that cannot be reached is an I/O error that points at a
// chart package; an unknown chart or version, or refused credentials, is
// an input error.
func (w *wrapper) sourceError(ref, from string, err error) error {
	f := &w.flags.source
	var unknownCA x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknownCA) || errors.As(err, &verify):
		return &ioError{fmt.Errorf("chart %s: %w (--ca-file to trust the CA that signed %s's certificate)", ref, err, from)}
	case unreachable(err):
		pkg := DefaultChart
		if i := strings.LastIndex(ref, "/"); i >= 0 {
			pkg = ref[i+1:]
		} else if ref != "" {
			pkg = ref
		}
		v := f.version
		if v == "" {
			v = "VERSION"
		}
		hint := fmt.Sprintf("where %s can be reached, helm pull %s --repo %s --version %s, then pass the package here: %s %s ./%s-%s.tgz",
			from, pkg, from, v, w.kind, w.release, pkg, v)
		if registry.IsOCI(ref) {
			hint = fmt.Sprintf("where the registry can be reached, helm pull %s --version %s, then pass the package here: %s %s ./%s-%s.tgz",
				ref, v, w.kind, w.release, pkg, v)
		}
		return &ioError{fmt.Errorf("chart %s: %s cannot be reached (%v); to use a chart package instead: %s", ref, from, err, hint)}
	case refusedCredentials(err):
		return &renderer.InputError{Err: fmt.Errorf("chart %s: %s refused the credentials (%w); check --username/--password, helm repo add's or helm registry login's", ref, from, err)}
	}
	return &renderer.InputError{Err: fmt.Errorf("chart %s: %w", ref, err)}
}

// refusedCredentials tells an answer of 401 or 403 (or no credentials for a
// registry that wants them) from other failures.
func refusedCredentials(err error) bool {
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"401", "403", "unauthorized", "forbidden", "credential not found"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
