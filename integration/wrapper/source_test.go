package wrapper

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmregistry "helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

// testCA is a certificate authority for loopback servers and clients.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // the CA certificate, PEM
	pool *x509.CertPool
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, file: filepath.Join(t.TempDir(), "ca.pem"), pool: x509.NewCertPool()}
	ca.pool.AddCert(cert)
	testtools.WriteFile(t, ca.file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return ca
}

// issue makes a certificate for 127.0.0.1 (server) or a client, and
// writes it and its key as PEM files.
func (ca *testCA) issue(t *testing.T, client bool) (tls.Certificate, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "loopback"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	if client {
		tmpl.ExtKeyUsage, tmpl.IPAddresses = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	dir := t.TempDir()
	testtools.WriteFile(t, filepath.Join(dir, "cert.pem"), certPEM)
	testtools.WriteFile(t, filepath.Join(dir, "key.pem"), keyPEM)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return pair, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
}

// basicAuth lets only user:pass through, and counts who asked with what.
func basicAuth(user, pass string, next http.Handler, asked *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked != nil {
			asked.Add(1)
		}
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tlsServer serves h over TLS with a certificate of ca; clientCA, when not
// nil, requires client certificates it signed.
func tlsServer(t *testing.T, ca *testCA, clientCA *testCA, h http.Handler) *httptest.Server {
	t.Helper()
	pair, _, _ := ca.issue(t, false)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = nilLogger() // refused handshakes are what some tests are about
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if clientCA != nil {
		srv.TLS.ClientAuth, srv.TLS.ClientCAs = tls.RequireAndVerifyClientCert, clientCA.pool
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// repoDir writes the upstream packages and an index whose URLs point at
// chartsURL.
func repoDir(t *testing.T, chartsURL string) string {
	t.Helper()
	dir := t.TempDir()
	for _, v := range []string{"0.0.10", testtools.LatestChartVersion} {
		b, err := os.ReadFile(testtools.UpstreamChart(t, v))
		if err != nil {
			t.Fatal(err)
		}
		testtools.WriteFile(t, filepath.Join(dir, filepath.Base(testtools.UpstreamChart(t, v))), b)
	}
	index, err := repo.IndexDirectory(dir, chartsURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := index.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func wantChart(t *testing.T, what string, out, errOut []byte, code int, version string) {
	t.Helper()
	if code != 0 || !bytes.Contains(out, []byte(`helm.sh/chart: "aws-cloud-controller-manager-`+version+`"`)) || !bytes.Contains(out, []byte("hostNetwork: true")) {
		t.Errorf("%s: exit %d, %d bytes, stderr %s", what, code, len(out), errOut)
	}
}

func wantError(t *testing.T, what string, out, errOut []byte, code, wantCode int, wants ...string) {
	t.Helper()
	if code != wantCode || len(out) != 0 || strings.Count(string(errOut), "\n") != 1 {
		t.Errorf("%s: exit %d (want %d), %d bytes out, stderr %q", what, code, wantCode, len(out), errOut)
	}
	for _, w := range wants {
		if !strings.Contains(string(errOut), w) {
			t.Errorf("%s: stderr %q lacks %q", what, errOut, w)
		}
	}
}

// TestWrapperRepositoryTLSAndAuth: a chart repository on loopback behind
// TLS (its own CA) and basic auth: --ca-file, --insecure-skip-tls-verify,
// --username with --password or --password-stdin; what fails says why.
func TestWrapperRepositoryTLSAndAuth(t *testing.T) {
	ca := newCA(t)
	var srv *httptest.Server
	dir := ""
	srv = tlsServer(t, ca, nil, basicAuth("ccm", "s3cret", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
	}), nil))
	dir = repoDir(t, srv.URL)
	base := []string{"template", "ccm", "--repo", srv.URL, "--distro=rke2"}
	arg := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }

	out, errOut, code := runRenderer(t, arg("--ca-file", ca.file, "--username", "ccm", "--password", "s3cret")...)
	wantChart(t, "--ca-file --username --password", out, errOut, code, testtools.LatestChartVersion)
	out, errOut, code = runRenderer(t, arg("--insecure-skip-tls-verify", "--username", "ccm", "--password", "s3cret", "--version", "0.0.10")...)
	wantChart(t, "--insecure-skip-tls-verify", out, errOut, code, "0.0.10")
	cmd := testtools.Command(t, testtools.HelmEnv(t), testtools.Renderer(t), arg("--ca-file", ca.file, "--username", "ccm", "--password-stdin")...)
	cmd.Stdin = strings.NewReader("s3cret\n")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	code = testtools.ExitCode(cmd.Run())
	wantChart(t, "--password-stdin", o.Bytes(), e.Bytes(), code, testtools.LatestChartVersion)

	out, errOut, code = runRenderer(t, arg("--username", "ccm", "--password", "s3cret")...)
	wantError(t, "unknown CA", out, errOut, code, 3, "--ca-file to trust the CA", "certificate")
	out, errOut, code = runRenderer(t, arg("--ca-file", ca.file)...)
	wantError(t, "no credentials", out, errOut, code, 1, "refused the credentials", "--username/--password")
	out, errOut, code = runRenderer(t, arg("--ca-file", ca.file, "--username", "ccm", "--password", "wrong")...)
	wantError(t, "wrong password", out, errOut, code, 1, "refused the credentials")
	// What the repository does not have: what it has.
	out, errOut, code = runRenderer(t, arg("--ca-file", ca.file, "--username", "ccm", "--password", "s3cret", "--version", "9.9.9")...)
	wantError(t, "a version the repository lacks", out, errOut, code, 1,
		"chart aws-cloud-controller-manager: the repository "+srv.URL+" has no version 9.9.9 of it; its versions: "+testtools.LatestChartVersion+", 0.0.10 (--version)")
	out, errOut, code = runRenderer(t, "template", "ccm", "aws-cloud-controler-manager", "--repo", srv.URL, "--ca-file", ca.file, "--username", "ccm", "--password", "s3cret")
	wantError(t, "a chart the repository lacks", out, errOut, code, 1,
		"chart aws-cloud-controler-manager: the repository "+srv.URL+" has no chart of that name", "aws-cloud-controller-manager?", "its charts: aws-cloud-controller-manager")
	out, errOut, code = runRenderer(t, arg("--password", "x", "--password-stdin")...)
	wantError(t, "--password and --password-stdin", out, errOut, code, 2, "give one of them")
	out, errOut, code = runRenderer(t, arg("--ca-file", filepath.Join(t.TempDir(), "none.pem"))...)
	wantError(t, "missing CA file", out, errOut, code, 2, "--ca-file")
	out, errOut, code = runRenderer(t, arg("--cert-file", ca.file)...)
	wantError(t, "cert without key", out, errOut, code, 2, "--cert-file and --key-file go together")
}

// TestWrapperRepositoryClientCert: a repository that requires a client
// certificate gets it from --cert-file and --key-file.
func TestWrapperRepositoryClientCert(t *testing.T) {
	ca := newCA(t)
	dir := ""
	srv := tlsServer(t, ca, ca, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
	}))
	dir = repoDir(t, srv.URL)
	_, cert, key := ca.issue(t, true)
	out, errOut, code := runRenderer(t, "template", "--repo", srv.URL, "--ca-file", ca.file, "--cert-file", cert, "--key-file", key, "--distro=k3s")
	wantChart(t, "client certificate", out, errOut, code, testtools.LatestChartVersion)
	out, errOut, code = runRenderer(t, "template", "--repo", srv.URL, "--ca-file", ca.file, "--distro=k3s")
	if code == 0 || len(out) != 0 || !strings.Contains(string(errOut), srv.URL) {
		t.Errorf("without a client certificate: exit %d, %s", code, errOut)
	}
}

// TestWrapperPassCredentials: the index on one host, the packages on
// another: the credentials go to the repository's host only, unless
// --pass-credentials.
func TestWrapperPassCredentials(t *testing.T) {
	var pkgAsked atomic.Int32
	pkgDir := repoDir(t, "unused")
	pkgs := httptest.NewServer(basicAuth("ccm", "s3cret", http.FileServer(http.Dir(pkgDir)), &pkgAsked))
	t.Cleanup(pkgs.Close)
	indexDir := repoDir(t, pkgs.URL)
	index := httptest.NewServer(basicAuth("ccm", "s3cret", http.FileServer(http.Dir(indexDir)), nil))
	t.Cleanup(index.Close)
	args := []string{"template", "--repo", index.URL, "--username", "ccm", "--password", "s3cret", "--distro=rke"}
	out, errOut, code := runRenderer(t, args...)
	wantError(t, "credentials kept from the packages' host", out, errOut, code, 1, "refused the credentials")
	if pkgAsked.Load() == 0 {
		t.Error("the packages' host was not asked")
	}
	out, errOut, code = runRenderer(t, append(args, "--pass-credentials")...)
	wantChart(t, "--pass-credentials", out, errOut, code, testtools.LatestChartVersion)
}

// TestWrapperRepoAdd: REPO/NAME from the repositories that the real
// helm repo add added, with the credentials and CA it stored;
// --repository-config names another file. An unknown REPO says how to add
// it.
func TestWrapperRepoAdd(t *testing.T) {
	ca := newCA(t)
	dir := ""
	srv := tlsServer(t, ca, nil, basicAuth("ccm", "s3cret", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
	}), nil))
	dir = repoDir(t, srv.URL)
	env := testtools.HelmEnv(t)
	testtools.MustRun(t, env, testtools.Helm3(t), "repo", "add", "aws-ccm", srv.URL, "--username", "ccm", "--password", "s3cret", "--ca-file", ca.file)
	out, errOut, code := runWith(t, env, "", "template", "ccm", "aws-ccm/aws-cloud-controller-manager", "--version", "0.0.10", "--distro=rke2")
	wantChart(t, "aws-ccm/aws-cloud-controller-manager", out, errOut, code, "0.0.10")
	out, errOut, code = runWith(t, env, "", "diff", "ccm", "aws-ccm/aws-cloud-controller-manager", "--distro=rke2", "--detailed-exitcode")
	if code != 2 || !bytes.Contains(out, []byte("DaemonSet (apps) has changed:")) {
		t.Errorf("diff of REPO/NAME: exit %d, %s", code, errOut)
	}

	// The same repositories file elsewhere, named by the flag.
	moved := filepath.Join(t.TempDir(), "repos.yaml")
	b, err := os.ReadFile(filepath.Join(envValue(env, "HELM_CONFIG_HOME"), "repositories.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, moved, b)
	other := testtools.HelmEnv(t)
	cache := filepath.Join(envValue(env, "HELM_CACHE_HOME"), "repository")
	out, errOut, code = runWith(t, other, "", "template", "ccm", "aws-ccm/aws-cloud-controller-manager", "--repository-config", moved, "--repository-cache", cache, "--distro=rke2")
	wantChart(t, "--repository-config", out, errOut, code, testtools.LatestChartVersion)

	out, errOut, code = runWith(t, env, "", "template", "ccm", "aws-ccm/aws-cloud-controller-manager", "--version", "0.0.9", "--distro=rke2")
	wantError(t, "a version the added repository lacks", out, errOut, code, 1,
		"chart aws-cloud-controller-manager: repository aws-ccm ("+srv.URL+", as of helm repo update) has no version 0.0.9 of it; its versions: "+testtools.LatestChartVersion+", 0.0.10 (--version)")
	out, errOut, code = runWith(t, env, "", "template", "ccm", "nope/aws-cloud-controller-manager")
	wantError(t, "unknown repository", out, errOut, code, 2, `no repository "nope"`, "helm repo add nope URL")
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// TestWrapperLocalNames: a bare CHART is the chart from the repository even
// when a directory of that name is here; ./NAME, a .tgz, and DIR/NAME are
// paths.
func TestWrapperLocalNames(t *testing.T) {
	url := chartRepo(t)
	work := t.TempDir()
	local := filepath.Join(work, "aws-cloud-controller-manager")
	if err := os.CopyFS(local, os.DirFS(testtools.SampleChart())); err != nil {
		t.Fatal(err)
	}
	env := testtools.HelmEnv(t)
	out, errOut, code := runWith(t, env, work, "template", "--repo", url, "--distro=rke2")
	wantChart(t, "bare name with a directory of that name here", out, errOut, code, testtools.LatestChartVersion)
	if want := "aws-ccm-renderer: warning: aws-cloud-controller-manager here is not used: the chart comes from " + url + "; pass ./aws-cloud-controller-manager to use the local one\n"; string(errOut) != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	for _, ref := range []string{"./aws-cloud-controller-manager", local} {
		out, errOut, code = runWith(t, env, work, "template", "ccm", ref, "--repo", url, "--distro=rke2")
		if code != 0 || !bytes.Contains(out, []byte("aws-ccm-sample")) || len(errOut) != 0 {
			t.Errorf("%s: exit %d, %s", ref, code, errOut)
		}
	}
	if err := os.MkdirAll(filepath.Join(work, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(local, filepath.Join(work, "charts", "ccm")); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runWith(t, env, work, "template", "ccm", "charts/ccm", "--distro=rke2")
	if code != 0 || !bytes.Contains(out, []byte("aws-ccm-sample")) {
		t.Errorf("DIR/NAME: exit %d, %s", code, errOut)
	}
	b, err := os.ReadFile(testtools.UpstreamChart(t, "0.0.10"))
	if err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, filepath.Join(work, "aws-cloud-controller-manager-0.0.10.tgz"), b)
	out, errOut, code = runWith(t, env, work, "template", "ccm", "aws-cloud-controller-manager-0.0.10.tgz", "--distro=rke2")
	wantChart(t, "a .tgz here", out, errOut, code, "0.0.10")
	out, errOut, code = runWith(t, env, work, "template", "ccm", "./missing", "--distro=rke2")
	wantError(t, "./missing", out, errOut, code, 1, "chart ./missing")
}

// TestWrapperOCIAuth: an OCI registry behind TLS and basic auth: the login
// of the real helm registry login (in Helm's registry config, or a file
// named by --registry-config), or --username and --password.
func TestWrapperOCIAuth(t *testing.T) {
	ca := newCA(t)
	reg := tlsServer(t, ca, nil, basicAuth("ccm", "s3cret", registry.New(registry.Logger(nilLogger())), nil))
	host := strings.TrimPrefix(reg.URL, "https://")
	client, err := helmregistry.NewClient(helmregistry.ClientOptWriter(&bytes.Buffer{}), helmregistry.ClientOptBasicAuth("ccm", "s3cret"),
		helmregistry.ClientOptHTTPClient(&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS12}}}))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(testtools.UpstreamChart(t, "0.0.10"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Push(data, host+"/charts/aws-cloud-controller-manager:0.0.10"); err != nil {
		t.Fatal(err)
	}
	ref := "oci://" + host + "/charts/aws-cloud-controller-manager"
	env := testtools.HelmEnv(t)
	out, errOut, code := runWith(t, env, "", "template", "ccm", ref, "--version", "0.0.10", "--ca-file", ca.file, "--distro=rke2")
	wantError(t, "no login", out, errOut, code, 1, "refused the credentials", "helm registry login")
	out, errOut, code = runWith(t, env, "", "template", "ccm", ref, "--version", "0.0.10", "--ca-file", ca.file, "--username", "ccm", "--password", "s3cret", "--distro=rke2")
	wantChart(t, "--username --password", out, errOut, code, "0.0.10")

	testtools.MustRun(t, env, testtools.Helm3(t), "registry", "login", host, "--username", "ccm", "--password", "s3cret", "--ca-file", ca.file)
	out, errOut, code = runWith(t, env, "", "template", "ccm", ref, "--version", "0.0.10", "--ca-file", ca.file, "--distro=rke2")
	wantChart(t, "helm registry login", out, errOut, code, "0.0.10")

	// The login file elsewhere, named by --registry-config.
	other := testtools.HelmEnv(t)
	cfg := filepath.Join(t.TempDir(), "registry.json")
	testtools.MustRun(t, other, testtools.Helm3(t), "registry", "login", host, "--username", "ccm", "--password", "s3cret", "--ca-file", ca.file, "--registry-config", cfg)
	out, errOut, code = runWith(t, testtools.HelmEnv(t), "", "template", "ccm", ref, "--version", "0.0.10", "--ca-file", ca.file, "--registry-config", cfg, "--distro=rke2")
	wantChart(t, "--registry-config", out, errOut, code, "0.0.10")
	out, errOut, code = runWith(t, testtools.HelmEnv(t), "", "template", "ccm", ref, "--version", "0.0.10", "--insecure-skip-tls-verify", "--registry-config", cfg, "--distro=rke2")
	wantChart(t, "--insecure-skip-tls-verify", out, errOut, code, "0.0.10")
}

// TestWrapperURLCredentials: a password written into --repo's URL shows
// nowhere, whatever happens: the progress lines (CI), Helm's --debug log,
// a repository that cannot be reached (Helm's error repeats the URL), one
// without an index, one that refuses the password, one that takes it; a
// user name alone (a token) is hidden too. What is shown instead says
// which URL: its user and xxxxx for the password.
func TestWrapperURLCredentials(t *testing.T) {
	const pass, token = "pw-in-the-url", "t0ken-in-the-url"
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	empty := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(empty.Close)
	dir := ""
	repoSrv := httptest.NewServer(basicAuth("ccm", pass, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
	}), nil))
	t.Cleanup(repoSrv.Close)
	dir = repoDir(t, "") // the packages' URLs relative to the index's, credentials and all
	with := func(srv, userinfo string) string { return strings.Replace(srv, "http://", "http://"+userinfo+"@", 1) }
	for _, c := range []struct {
		name  string
		args  []string
		code  int
		shown string // on stderr
	}{
		{"unreachable", []string{"--repo", with(closed.URL, "ccm:"+pass)}, 3, with(closed.URL, "ccm:xxxxx") + " cannot be reached"},
		{"unreachable, --debug", []string{"--repo", with(closed.URL, "ccm:"+pass), "--debug"}, 3, "helm pull aws-cloud-controller-manager --repo " + with(closed.URL, "ccm:xxxxx")},
		{"a token", []string{"--repo", with(closed.URL, token)}, 3, with(closed.URL, "xxxxx")},
		{"no index", []string{"--repo", with(empty.URL, "ccm:"+pass)}, 1, `looks like "` + with(empty.URL, "ccm:xxxxx") + `" is not a valid chart repository`},
		{"refused", []string{"--repo", with(repoSrv.URL, "ccm:wrong-"+pass)}, 1, with(repoSrv.URL, "ccm:xxxxx") + " refused the credentials"},
		{"taken", []string{"--repo", with(repoSrv.URL, "ccm:"+pass)}, 0, "fetching chart " + with(repoSrv.URL, "ccm:xxxxx") + "/aws-cloud-controller-manager-" + testtools.LatestChartVersion + ".tgz: done"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := append(testtools.HelmEnv(t), "CI=true")
			out, errOut, code := runWith(t, env, "", append([]string{"template", "ccm", "--distro=rke2"}, c.args...)...)
			if code != c.code || !strings.Contains(string(errOut), c.shown) {
				t.Errorf("exit %d (want %d), stderr lacks %q:\n%s", code, c.code, c.shown, errOut)
			}
			if all := string(out) + string(errOut); strings.Contains(all, pass) || strings.Contains(all, token) {
				t.Errorf("the credentials show:\n%s", all)
			}
			if c.code == 0 {
				wantChart(t, c.name, out, errOut, code, testtools.LatestChartVersion)
			}
		})
	}
}

// TestWrapperDefaultChartVersion: without --version the upstream chart is
// the version this release is tested with, as plan, the Argo CD plugin and
// the Fleet bundle pin it, even where the repository has a newer one; a
// constraint takes the newest.
func TestWrapperDefaultChartVersion(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(testtools.UpstreamChart(t, testtools.LatestChartVersion))
	if err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, filepath.Join(dir, filepath.Base(testtools.UpstreamChart(t, testtools.LatestChartVersion))), b)
	newer, err := loader.Load(testtools.UpstreamChart(t, testtools.LatestChartVersion))
	if err != nil {
		t.Fatal(err)
	}
	newer.Metadata.Version = "0.0.99"
	if _, err := chartutil.Save(newer, dir); err != nil {
		t.Fatal(err)
	}
	url := serveRepo(t, dir)
	out, errOut, code := runRenderer(t, "template", "ccm", "--repo", url, "--distro=rke2")
	wantChart(t, "no --version", out, errOut, code, upstream.LatestChartVersion)
	out, errOut, code = runRenderer(t, "template", "ccm", "--repo", url, "--distro=rke2", "--version", ">0.0.0-0")
	wantChart(t, "--version >0.0.0-0", out, errOut, code, "0.0.99")
}
