package wrapper

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/provenance"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

// testKey is an OpenPGP key made for the test.
type testKey struct {
	testtools.PGPKey
	keyring string
}

func newKey(t *testing.T, name string) testKey {
	t.Helper()
	k := testtools.NewPGPKey(t, name)
	return testKey{PGPKey: k, keyring: k.PublicRing}
}

// sign writes the provenance file of a chart package, signed by the key.
func (k testKey) sign(t *testing.T, pkg string) {
	t.Helper()
	prov, err := (&provenance.Signatory{Entity: k.Entity}).ClearSign(pkg)
	if err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, pkg+".prov", []byte(prov))
}

// setDigest rewrites the digest the repository's index gives a chart
// version.
func setDigest(t *testing.T, dir, version, digest string) {
	t.Helper()
	path := filepath.Join(dir, "index.yaml")
	idx, err := repo.LoadIndexFile(path)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cv := range idx.Entries[upstream.ChartName] {
		if cv.Version == version {
			cv.Digest, found = digest, true
		}
	}
	if !found {
		t.Fatalf("no version %s in the index", version)
	}
	if err := idx.WriteFile(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWrapperIntegrity: the package a repository serves must have the
// digest its index gives; --verify checks its provenance file with
// --keyring, as Helm's does. From a repository (--repo and REPO/NAME, the
// index helm repo add cached) and from a package here.
func TestWrapperIntegrity(t *testing.T) {
	trusted, other := newKey(t, "trusted"), newKey(t, "other")
	latest := testtools.LatestChartVersion
	pkgName := upstream.ChartName + "-" + latest + ".tgz"
	wrong, err := provenance.DigestFile(testtools.UpstreamChart(t, "0.0.10"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		digest func(right string) string // the index's digest of the latest version
		signer *testKey                  // signs the package; nil: no .prov
		args   []string
		code   int      // 0: the chart renders
		want   []string // in the error line; in the warning line when code is 0
	}{
		{name: "right digest", digest: func(r string) string { return r }},
		{name: "right digest, prefixed", digest: func(r string) string { return "sha256:" + r }},
		{name: "no digest", digest: func(string) string { return "" }, want: []string{"warning: the index of", "gives no digest for aws-cloud-controller-manager " + latest, "not checked"}},
		{name: "all-zero digest", digest: func(string) string { return strings.Repeat("0", 64) }, code: 1,
			want: []string{"has digest sha256:", "but the index of", "gives sha256:" + strings.Repeat("0", 64), "refusing it"}},
		{name: "another package's digest", digest: func(string) string { return wrong }, code: 1, want: []string{"gives sha256:" + wrong, "refusing it"}},
		{name: "--verify, signed by a trusted key", digest: func(r string) string { return r }, signer: &trusted, args: []string{"--verify", "--keyring", trusted.keyring}},
		{name: "--verify, no .prov", digest: func(r string) string { return r }, args: []string{"--verify", "--keyring", trusted.keyring}, code: 1,
			want: []string{"failed to fetch provenance", pkgName + ".prov"}},
		{name: "--verify, signed by a key not in the keyring", digest: func(r string) string { return r }, signer: &other, args: []string{"--verify", "--keyring", trusted.keyring}, code: 1,
			want: []string{"unknown entity"}},
		{name: "--verify, a keyring that is not there", digest: func(r string) string { return r }, signer: &trusted, args: []string{"--verify", "--keyring", filepath.Join(t.TempDir(), "none.gpg")}, code: 1,
			want: []string{"failed to load keyring"}},
		{name: "--verify, signed, all-zero digest", digest: func(string) string { return strings.Repeat("0", 64) }, signer: &trusted, args: []string{"--verify", "--keyring", trusted.keyring}, code: 1,
			want: []string{"refusing it"}},
		{name: "without --verify, a bad .prov is not read", digest: func(r string) string { return r }, signer: &other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := ""
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			dir = repoDir(t, srv.URL)
			right, err := provenance.DigestFile(filepath.Join(dir, pkgName))
			if err != nil {
				t.Fatal(err)
			}
			setDigest(t, dir, latest, tc.digest(right))
			if tc.signer != nil {
				tc.signer.sign(t, filepath.Join(dir, pkgName))
			}
			env := testtools.HelmEnv(t)
			testtools.MustRun(t, env, testtools.Helm3(t), "repo", "add", "aws-ccm", srv.URL)
			for _, args := range [][]string{
				{"template", "ccm", "--repo", srv.URL, "--distro=rke2"},
				{"template", "ccm", "aws-ccm/" + upstream.ChartName, "--distro=rke2"},
			} {
				out, errOut, code := runWith(t, env, "", append(args, tc.args...)...)
				what := tc.name + ": " + strings.Join(args[2:3], "")
				if tc.code != 0 {
					wantError(t, what, out, errOut, code, tc.code, tc.want...)
					continue
				}
				wantChart(t, what, out, errOut, code, latest)
				if len(tc.want) == 0 && len(errOut) != 0 || len(tc.want) > 0 && strings.Count(string(errOut), "\n") != 1 {
					t.Errorf("%s: stderr %q", what, errOut)
				}
				for _, w := range tc.want {
					if !strings.Contains(string(errOut), w) {
						t.Errorf("%s: stderr %q lacks %q", what, errOut, w)
					}
				}
			}
		})
	}
}

// TestWrapperVerifyPackage: --verify on a chart package here reads the
// provenance file beside it, as helm install --verify does.
func TestWrapperVerifyPackage(t *testing.T) {
	trusted, other := newKey(t, "trusted"), newKey(t, "other")
	b, err := os.ReadFile(testtools.UpstreamChart(t, "0.0.10"))
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(t.TempDir(), upstream.ChartName+"-0.0.10.tgz")
	testtools.WriteFile(t, pkg, b)
	args := []string{"template", "ccm", pkg, "--distro=k3s", "--verify", "--keyring", trusted.keyring}

	out, errOut, code := runRenderer(t, args...)
	wantError(t, "no .prov", out, errOut, code, 1, "--verify", "could not load provenance file")
	other.sign(t, pkg)
	out, errOut, code = runRenderer(t, args...)
	wantError(t, "signed by another key", out, errOut, code, 1, "--verify", "unknown entity")
	trusted.sign(t, pkg)
	out, errOut, code = runRenderer(t, args...)
	wantChart(t, "signed by the trusted key", out, errOut, code, "0.0.10")
	testtools.WriteFile(t, pkg, append(b, 0))
	out, errOut, code = runRenderer(t, args...)
	wantError(t, "package changed after signing", out, errOut, code, 1, "--verify", "sha256 sum does not match")
}
