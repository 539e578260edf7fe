package chartops

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/downloader"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/helmpath"
	"helm.sh/helm/v3/pkg/provenance"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/reach"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Source says where the chart comes from and how to reach it: Helm's
// repository and registry options (action.ChartPathOptions), spelled as the
// Helm CLI spells them. Unlike Helm's LocateChart, a CHART that is a bare
// name is always a name, looked up in --repo (the upstream chart's
// repository by default), never a directory of that name in the working
// directory: the wrapper's CHART defaults to the upstream chart's name,
// and a checkout of the chart next to the user must not silently take its
// place. A path is a path when it says so (Locate).
type Source struct {
	action.ChartPathOptions
	PasswordStdin bool
	// HTTPSOnly refuses every plain http:// request: a chart URL, a
	// repository's, a package URL its index lists and a redirect (the Argo
	// CD plugin's).
	HTTPSOnly bool

	repoGiven bool         // --repo on the command line
	refused   atomic.Int32 // the last 401 or 403 a repository answered
}

// AddFlags adds the chart source's flags.
func (s *Source) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.RepoURL, "repo", upstream.ChartRepo, "chart repository URL, where a CHART that is a name is looked up (not REPO/NAME)")
	fs.StringVar(&s.Version, "version", "", "chart version or constraint (default: for the upstream chart "+upstream.LatestChartVersion+", the version this release is tested with, as plan, the Argo CD plugin and the Fleet bundle pin it; '>0.0.0-0' for the newest; for other charts the latest)")
	fs.BoolVar(&s.PlainHTTP, "plain-http", false, "use HTTP, not HTTPS, for an oci:// registry")
	fs.StringVar(&s.Username, "username", "", "user name for the chart repository or registry")
	fs.StringVar(&s.Password, "password", "", "password for the chart repository or registry; on the command line it shows in ps and the shell's history: prefer --password-stdin")
	fs.BoolVar(&s.PasswordStdin, "password-stdin", false, "read the password for the chart repository or registry from stdin (not with --password)")
	fs.StringVar(&s.CaFile, "ca-file", "", "verify the repository's or registry's certificate with this CA bundle")
	fs.StringVar(&s.CertFile, "cert-file", "", "client certificate for the repository or registry")
	fs.StringVar(&s.KeyFile, "key-file", "", "key of the client certificate")
	fs.BoolVar(&s.InsecureSkipTLSverify, "insecure-skip-tls-verify", false, "do not verify the repository's or registry's certificate")
	fs.BoolVar(&s.PassCredentialsAll, "pass-credentials", false, "send the credentials to every host the chart is downloaded from, not only the repository's")
	fs.BoolVar(&s.Verify, "verify", false, "verify the chart's provenance file (.prov) with --keyring before using the chart")
	fs.StringVar(&s.Keyring, "keyring", defaultKeyring(), "the public keys --verify trusts")
}

// checkKeyring refuses a --keyring that is not a regular file of bounded
// size; one that does not exist is left to Helm, which says so.
func checkKeyring(path string) error {
	if err := safefile.CheckFile(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &renderer.UsageError{Err: fmt.Errorf("--keyring: %w", err)}
	}
	return nil
}

// defaultKeyring is Helm's: pubring.gpg in $GNUPGHOME, else in ~/.gnupg.
func defaultKeyring() string {
	if v, ok := os.LookupEnv("GNUPGHOME"); ok {
		return filepath.Join(v, "pubring.gpg")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".gnupg", "pubring.gpg")
}

// Check refuses flags that contradict each other, and reads the password
// from in with --password-stdin.
func (s *Source) Check(fs *pflag.FlagSet, in io.Reader) error {
	switch {
	case s.PasswordStdin && s.Password != "":
		return &renderer.UsageError{Err: errors.New("--password and --password-stdin: give one of them")}
	case (s.CertFile == "") != (s.KeyFile == ""):
		return &renderer.UsageError{Err: errors.New("--cert-file and --key-file go together")}
	}
	s.repoGiven = fs.Changed("repo")
	if !s.PasswordStdin {
		return nil
	}
	b, err := safefile.ReadAll(in)
	if err != nil {
		return &renderer.UsageError{Err: fmt.Errorf("--password-stdin: reading stdin: %w", err)}
	}
	s.Password = strings.TrimRight(string(b), "\r\n")
	return nil
}

// tlsConfig is the client TLS configuration of --ca-file, --cert-file,
// --key-file and --insecure-skip-tls-verify, or nil without them.
func (s *Source) tlsConfig() (*tls.Config, error) {
	return tlsConfig(s.CaFile, s.CertFile, s.KeyFile, s.InsecureSkipTLSverify, "--")
}

// tlsConfig is a client TLS configuration of a CA bundle, a client
// certificate and its key, or nil without them; errors name the files as
// their flags (prefix "--") or fields say.
func tlsConfig(caFile, certFile, keyFile string, insecure bool, prefix string) (*tls.Config, error) {
	if caFile == "" && certFile == "" && !insecure {
		return nil, nil
	}
	c := &tls.Config{InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12} // #nosec G402 -- the user asked
	if certFile != "" {
		for _, f := range []struct{ flag, path string }{{"cert-file", certFile}, {"key-file", keyFile}} {
			if err := safefile.CheckFile(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, &renderer.UsageError{Err: fmt.Errorf("%s%s: %w", prefix, f.flag, err)}
			}
		}
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, &renderer.UsageError{Err: fmt.Errorf("%scert-file/%skey-file: %w", prefix, prefix, err)}
		}
		c.Certificates = []tls.Certificate{cert}
	}
	if caFile != "" {
		pem, err := safefile.ReadFile(caFile)
		if err != nil {
			return nil, &renderer.UsageError{Err: fmt.Errorf("%sca-file: %w", prefix, err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &renderer.UsageError{Err: fmt.Errorf("%sca-file %s: no PEM certificate in it", prefix, caFile)}
		}
		c.RootCAs = pool
	}
	return c, nil
}

// registryClient is Helm's OCI registry client as the Helm CLI makes it:
// the logins of helm registry login, basic auth, TLS and plain HTTP as the
// flags say.
func (s *Source) registryClient(env *Env, errOut io.Writer) (*registry.Client, error) {
	out := io.Discard
	if env.Settings.Debug {
		out = errOut
	}
	opts := []registry.ClientOption{
		registry.ClientOptDebug(env.Settings.Debug),
		registry.ClientOptEnableCache(true),
		registry.ClientOptWriter(out),
		registry.ClientOptCredentialsFile(env.Settings.RegistryConfig),
		registry.ClientOptBasicAuth(s.Username, s.Password),
	}
	if s.PlainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	tc, err := s.tlsConfig()
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
		return nil, fmt.Errorf("registry client: %w", err)
	}
	return rc, nil
}

// getters are Helm's getters, with the repositories' HTTP answers seen on
// the way: a 401 or 403 is what tells refused credentials from other
// failures, which Helm's HTTP getter reports as text only. Its transport
// option takes an *http.Transport, so this one hands every request to
// statusSeen as an alternative protocol (RegisterProtocol), which sends it
// with the transport Helm's getter makes, with the TLS of the flags.
func (s *Source) getters(env *Env, tc *tls.Config) getter.Providers {
	seen := &http.Transport{}
	rt := statusSeen{next: &http.Transport{DisableCompression: true, Proxy: http.ProxyFromEnvironment, TLSClientConfig: tc}, refused: &s.refused,
		httpsOnly: s.HTTPSOnly}
	seen.RegisterProtocol("http", rt)
	seen.RegisterProtocol("https", rt)
	var out getter.Providers
	for _, p := range getter.All(env.Settings) {
		if !p.Provides("https") {
			out = append(out, p)
			continue
		}
		out = append(out, getter.Provider{Schemes: p.Schemes, New: func(opts ...getter.Option) (getter.Getter, error) {
			return getter.NewHTTPGetter(append(opts, getter.WithTransport(seen))...)
		}})
	}
	return out
}

// statusSeen is an HTTP transport that remembers the last refusal, and
// sends nothing over plain HTTP when httpsOnly.
type statusSeen struct {
	next      http.RoundTripper
	refused   *atomic.Int32
	httpsOnly bool
}

// PlainHTTPError is a plain http:// request that Source.HTTPSOnly refused.
type PlainHTTPError struct{ URL string }

func (e *PlainHTTPError) Error() string {
	return "plain http:// (" + e.URL + ") is refused, as anyone on the way may change what it gets: use https://"
}

func (t statusSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.httpsOnly && r.URL.Scheme != "https" {
		return nil, &PlainHTTPError{URL: r.URL.Redacted()}
	}
	resp, err := t.next.RoundTrip(r)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		t.refused.Store(int32(resp.StatusCode))
	}
	return resp, err
}

// ExplicitPath tells whether CHART names a path: it says so (./, ../, an
// absolute path, ~/), or it is a chart package (.tgz), or it is DIR/NAME
// where DIR is no repository of the repositories file and the path exists.
// A bare name is never a path, whatever is in the working directory.
func ExplicitPath(ref string, repos *repo.File) bool {
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

// IsChartURL tells whether CHART is the http:// or https:// URL of a chart
// package.
func IsChartURL(ref string) bool {
	u, err := url.Parse(ref)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// Chart finds, downloads when needed, and loads the chart.
func (c *Client) Chart(ctx context.Context, ref string) (*chart.Chart, error) {
	path, err := c.locate(ctx, ref)
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
func (c *Client) locate(ctx context.Context, ref string) (string, error) {
	src, s := c.Source, c.Env.Settings
	ref = strings.TrimSpace(ref)
	repos, _ := repo.LoadFile(s.RepositoryConfig) // none is fine: no REPO/NAME then
	if ref == "~" || strings.HasPrefix(ref, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			ref = filepath.Join(home, strings.TrimPrefix(ref, "~"))
		}
	}
	if !registry.IsOCI(ref) && !IsChartURL(ref) && ExplicitPath(ref, repos) {
		abs, err := filepath.Abs(ref)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			return "", &renderer.InputError{Err: fmt.Errorf("chart %s: %w", ref, err)}
		}
		// A chart package is read by Helm's loader: a regular file of
		// bounded size (a directory's files Helm's loader checks itself).
		if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
			if err := safefile.CheckFile(abs); err != nil {
				return "", &renderer.InputError{Err: fmt.Errorf("chart %s: %w", ref, err)}
			}
		}
		if src.Verify {
			if err := checkKeyring(src.Keyring); err != nil {
				return "", err
			}
			if _, err := downloader.VerifyChart(abs, src.Keyring); err != nil {
				return "", &renderer.InputError{Err: fmt.Errorf("chart %s: --verify: %w", ref, err)}
			}
		}
		return abs, nil
	}
	if src.Version == "" && !IsChartURL(ref) && pathpkg.Base(ref) == upstream.ChartName {
		// The upstream chart by name: the version the renderer's patches
		// are tested with, every front end's default.
		src.Version = upstream.LatestChartVersion
	}
	if !registry.IsOCI(ref) && !strings.Contains(ref, "/") {
		if _, err := os.Stat(ref); err == nil {
			fmt.Fprintf(c.ErrOut, "aws-ccm-renderer: warning: %s here is not used: the chart comes from %s; pass ./%s to use the local one\n", ref, src.RepoURL, ref)
		}
	}
	// The TLS of the flags, or of the repository of REPO/NAME, as Helm's
	// downloader takes it (a repository's files win over the flags').
	tc, err := src.tlsConfig()
	if err != nil {
		return "", err
	}
	repoName, _, isRepoName := strings.Cut(ref, "/")
	isRepoName = isRepoName && !registry.IsOCI(ref) && !IsChartURL(ref) && !src.repoGiven
	if e := repoEntry(repos, repoName); isRepoName && e != nil && (e.CAFile != "" || e.CertFile != "" || e.KeyFile != "") {
		if tc, err = tlsConfig(e.CAFile, e.CertFile, e.KeyFile, src.InsecureSkipTLSverify, "repository "+repoName+"'s "); err != nil {
			return "", err
		}
	}
	getters := src.getters(c.Env, tc)
	dl := downloader.ChartDownloader{
		Out:     io.Discard,
		Getters: getters,
		Options: []getter.Option{
			getter.WithPassCredentialsAll(src.PassCredentialsAll),
			getter.WithTLSClientConfig(src.CertFile, src.KeyFile, src.CaFile),
			getter.WithInsecureSkipVerifyTLS(src.InsecureSkipTLSverify),
			getter.WithPlainHTTP(src.PlainHTTP),
		},
		RepositoryConfig: s.RepositoryConfig,
		RepositoryCache:  s.RepositoryCache,
		RegistryClient:   c.Config.RegistryClient,
		Keyring:          src.Keyring,
	}
	if src.Verify {
		if err := checkKeyring(src.Keyring); err != nil {
			return "", err
		}
		dl.Verify = downloader.VerifyAlways
	}
	if err := os.MkdirAll(s.RepositoryCache, 0o755); err != nil {
		return "", fmt.Errorf("Helm's repository cache: %w", err)
	}
	name, from := ref, ""
	var entry *repo.ChartVersion // the index's entry of the chart, when an index named it
	// The index the chart is looked up in (--repo's, or the one helm repo
	// update cached for REPO/NAME), to say what it has when a lookup fails.
	var index *repo.IndexFile
	chartName, where := ref, ""
	switch {
	case registry.IsOCI(ref):
		dl.Options = append(dl.Options, getter.WithRegistryClient(c.Config.RegistryClient), getter.WithBasicAuth(src.Username, src.Password))
		from = ref
	case IsChartURL(ref):
		// A chart package's URL, downloaded as it is (Helm's downloader
		// takes a URL with a scheme without looking it up), with the
		// credentials given.
		dl.Options = append(dl.Options, getter.WithBasicAuth(src.Username, src.Password))
		from = ref
	case isRepoName:
		// REPO/NAME from the repositories file, with its credentials.
		if repoEntry(repos, repoName) == nil {
			return "", &renderer.UsageError{Err: fmt.Errorf("chart %s: no repository %q in %s (helm repo add %s URL) and no such path (./%s for a directory)", ref, repoName, s.RepositoryConfig, repoName, ref)}
		}
		dl.Options = append(dl.Options, getter.WithBasicAuth(src.Username, src.Password))
		from = repos.Get(repoName).URL
		// The index helm repo add (or update) cached, which the downloader
		// reads too.
		_, chartName, _ = strings.Cut(ref, "/")
		where = "repository " + repoName + " (" + from + ", as of helm repo update)"
		if idx, err := repo.LoadIndexFile(filepath.Join(s.RepositoryCache, helmpath.CacheIndexFile(repoName))); err == nil {
			index = idx
			entry, _ = idx.Get(chartName, src.Version)
		}
	default:
		c.Progress.Begin(fmt.Sprintf("looking up chart %s %s in %s", ref, orLatest(src.Version), src.RepoURL))
		chartURL, cv, idx, err := src.find(ref, s.RepositoryCache, getters)
		c.Progress.End(err)
		index, where = idx, "the repository "+src.RepoURL
		if err != nil {
			return "", unlisted(index, chartName, src.Version, where, c.sourceError(ref, src.RepoURL, err))
		}
		name, from, entry = chartURL, src.RepoURL, cv
		// Credentials go to the repository's own host only, unless
		// --pass-credentials.
		u1, err1 := url.Parse(src.RepoURL)
		u2, err2 := url.Parse(chartURL)
		if err1 == nil && err2 == nil && (src.PassCredentialsAll || (u1.Scheme == u2.Scheme && u1.Host == u2.Host)) {
			dl.Options = append(dl.Options, getter.WithBasicAuth(src.Username, src.Password))
		} else {
			dl.Options = append(dl.Options, getter.WithBasicAuth("", ""))
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	msg := "fetching chart " + name
	if name == ref {
		msg += " " + orLatest(src.Version)
	}
	c.Progress.Begin(msg)
	path, _, err := dl.DownloadTo(name, src.Version, s.RepositoryCache)
	c.Progress.End(err)
	if err != nil {
		return "", unlisted(index, chartName, src.Version, where, c.sourceError(ref, from, err))
	}
	if entry != nil {
		if err := c.checkDigest(ref, from, path, entry); err != nil {
			return "", err
		}
	}
	return filepath.Abs(path)
}

// find looks a chart up in the index of --repo, as Helm's
// FindChartInAuthAndTLSAndPassRepoURL does, and returns the URL of the
// package and the index's entry, digest included; and the index, when it
// was read, for saying what it has when it has not the chart asked for.
func (s *Source) find(name, cache string, getters getter.Providers) (string, *repo.ChartVersion, *repo.IndexFile, error) {
	tmp, err := os.MkdirTemp(cache, "index-")
	if err != nil {
		return "", nil, nil, fmt.Errorf("Helm's repository cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	r, err := repo.NewChartRepository(&repo.Entry{
		Name: "repo", URL: s.RepoURL, Username: s.Username, Password: s.Password, PassCredentialsAll: s.PassCredentialsAll,
		CertFile: s.CertFile, KeyFile: s.KeyFile, CAFile: s.CaFile, InsecureSkipTLSverify: s.InsecureSkipTLSverify,
	}, getters)
	if err != nil {
		return "", nil, nil, err
	}
	r.CachePath = tmp
	path, err := r.DownloadIndexFile()
	if err != nil {
		return "", nil, nil, fmt.Errorf("looks like %q is not a valid chart repository or cannot be reached: %w", s.RepoURL, err)
	}
	idx, err := repo.LoadIndexFile(path)
	if err != nil {
		return "", nil, nil, err
	}
	what := fmt.Sprintf("chart %q", name)
	if s.Version != "" {
		what += fmt.Sprintf(" version %q", s.Version)
	}
	cv, err := idx.Get(name, s.Version)
	if err != nil {
		return "", nil, idx, fmt.Errorf("%s not found in %s repository", what, s.RepoURL)
	}
	if len(cv.URLs) == 0 {
		return "", nil, idx, fmt.Errorf("%s has no downloadable URLs", what)
	}
	u, err := repo.ResolveReferenceURL(s.RepoURL, cv.URLs[0])
	if err != nil {
		return "", nil, idx, fmt.Errorf("failed to make chart URL absolute: %w", err)
	}
	return u, cv, idx, nil
}

// checkDigest compares a downloaded package with the SHA-256 digest its
// repository's index gives it, and removes it from the cache when they
// differ. An entry without a digest (an index written by hand or by an
// old tool) is used with a warning.
func (c *Client) checkDigest(ref, from, path string, entry *repo.ChartVersion) error {
	want := strings.ToLower(strings.TrimPrefix(entry.Digest, "sha256:"))
	if want == "" {
		fmt.Fprintf(c.ErrOut, "aws-ccm-renderer: warning: the index of %s gives no digest for %s %s: its package is not checked\n", from, entry.Name, entry.Version)
		return nil
	}
	got, err := provenance.DigestFile(path)
	if err != nil {
		return fmt.Errorf("chart %s: %w", ref, err)
	}
	if got != want {
		_ = os.Remove(path)
		return &renderer.InputError{Err: fmt.Errorf("chart %s: the package %s downloaded has digest sha256:%s, but the index of %s gives sha256:%s: refusing it", ref, filepath.Base(path), got, from, want)}
	}
	return nil
}

// unlisted is the error of a failed lookup: that the index lacks the
// chart or the version, with what it has (missing), when it does; else
// the error the lookup gave.
func unlisted(index *repo.IndexFile, name, version, where string, failed error) error {
	if index != nil {
		if miss := missing(index, name, version, where); miss != nil {
			return miss
		}
	}
	return failed
}

// shownVersions is how many of a chart's versions a "no such version"
// error lists, newest first.
const shownVersions = 12

// missing says, from a repository's index, that it has no chart of the
// name (with its charts, and the one most likely meant) or no version
// that matches (with the chart's versions, newest first): an input error.
// nil when the index has what was asked for, and the failure was another.
func missing(idx *repo.IndexFile, name, version, where string) error {
	vs, ok := idx.Entries[name]
	if !ok {
		names := make([]string, 0, len(idx.Entries))
		for n := range idx.Entries {
			names = append(names, n)
		}
		slices.Sort(names)
		has := "it has no charts"
		if len(names) > 0 {
			has = "its charts: " + strings.Join(names, ", ")
		}
		return &renderer.InputError{Err: fmt.Errorf("chart %s: %s has no chart of that name%s; %s", name, where,
			renderer.DidYouMean(name, names, func(s string) string { return s }), has)}
	}
	if _, err := idx.Get(name, version); err == nil {
		return nil
	}
	idx.SortEntries() // newest first
	var versions []string
	for _, v := range vs {
		versions = append(versions, v.Version)
	}
	more := ""
	if len(versions) > shownVersions {
		more = fmt.Sprintf(" and %d older", len(versions)-shownVersions)
		versions = versions[:shownVersions]
	}
	has := "it lists no versions of it"
	if len(versions) > 0 {
		has = "its versions: " + strings.Join(versions, ", ") + more
	}
	return &renderer.InputError{Err: fmt.Errorf("chart %s: %s has no version %s of it; %s (--version)", name, where, orLatest(version), has)}
}

func orLatest(v string) string {
	if v == "" {
		return "(latest)"
	}
	return v
}

// sourceError types a failure to get the chart and says what to do: a
// repository that cannot be reached is a failure to reach it, with how to
// use a chart package instead; an unknown chart or version, or refused
// credentials (the repository's 401 or 403, a registry's), is an input
// error.
func (c *Client) sourceError(ref, from string, err error) error {
	src := c.Source
	var unknownCA x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	var registryAnswer *errcode.ErrorResponse
	refusedByRegistry := errors.Is(err, auth.ErrBasicCredentialNotFound) ||
		errors.As(err, &registryAnswer) && (registryAnswer.StatusCode == http.StatusUnauthorized || registryAnswer.StatusCode == http.StatusForbidden)
	var plain *PlainHTTPError
	switch {
	case errors.As(err, &plain):
		return &renderer.InputError{Err: fmt.Errorf("chart %s: %s", ref, plain)}
	case errors.As(err, &unknownCA) || errors.As(err, &verify):
		return fmt.Errorf("chart %s: %w (--ca-file to trust the CA that signed %s's certificate)", ref, err, from)
	case reach.Unreachable(err):
		pkg := upstream.ChartName
		if i := strings.LastIndex(ref, "/"); i >= 0 {
			pkg = ref[i+1:]
		} else if ref != "" {
			pkg = ref
		}
		v := src.Version
		if v == "" {
			v = "VERSION"
		}
		hint := fmt.Sprintf("where %s can be reached, helm pull %s --repo %s --version %s, then pass the package here: %s %s ./%s-%s.tgz",
			from, pkg, from, v, c.Verb, c.Release, pkg, v)
		if registry.IsOCI(ref) {
			hint = fmt.Sprintf("where the registry can be reached, helm pull %s --version %s, then pass the package here: %s %s ./%s-%s.tgz",
				ref, v, c.Verb, c.Release, pkg, v)
		}
		return fmt.Errorf("chart %s: %s cannot be reached (%v); to use a chart package instead: %s", ref, from, err, hint)
	case src.refused.Load() != 0 || refusedByRegistry:
		return &renderer.InputError{Err: fmt.Errorf("chart %s: %s refused the credentials (%w); check --username/--password, helm repo add's or helm registry login's", ref, from, err)}
	}
	return &renderer.InputError{Err: fmt.Errorf("chart %s: %w", ref, err)}
}

// repoEntry is a repository of the repositories file, nil when there is
// none of that name.
func repoEntry(repos *repo.File, name string) *repo.Entry {
	if repos == nil || !repos.Has(name) {
		return nil
	}
	return repos.Get(name)
}
