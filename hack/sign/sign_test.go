package main

import (
	"bytes"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

var platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// writeImage writes an image index of two random images, one a platform,
// as an OCI layout annotated with the version, as make images does.
func writeImage(t *testing.T, dir string) v1.ImageIndex {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img, err := random.Image(512, 2)
		if err != nil {
			t.Fatal(err)
		}
		img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
		pp := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &pp}})
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "v1.2.3"})); err != nil {
		t.Fatal(err)
	}
	return idx
}

// release is a signed release in a temporary directory: two files and
// checksums.txt, the image aws-ccm-renderer-fn, its SBOMs.
type release struct {
	dir, dist, images, sboms string
	key                      *Keypair
	pub                      string // cosign.pub's path
	out                      string // what Sign printed
}

func newRelease(t *testing.T) *release {
	t.Helper()
	r := &release{dir: t.TempDir()}
	r.dist, r.images, r.sboms = filepath.Join(r.dir, "dist"), filepath.Join(r.dir, "dist", "images"), filepath.Join(r.dir, "dist", "images", "sbom")
	for _, d := range []string{r.sboms} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var sums strings.Builder
	for _, f := range []string{"aws-ccm-renderer_v1.2.3_linux_amd64.tar.gz", "aws-ccm-renderer_v1.2.3_linux_amd64.sbom.cdx.json"} {
		content := []byte("the content of " + f)
		if err := os.WriteFile(filepath.Join(r.dist, f), content, 0o644); err != nil {
			t.Fatal(err)
		}
		sum, err := fileSHA256(filepath.Join(r.dist, f))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, f)
	}
	if err := os.WriteFile(filepath.Join(r.dist, ChecksumsFile), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	writeImage(t, filepath.Join(r.images, "aws-ccm-renderer-fn"))
	for _, p := range platforms {
		sbom := fmt.Sprintf(`{"bomFormat":"CycloneDX","specVersion":"1.6","metadata":{"component":{"name":"aws-ccm-renderer","properties":[{"name":"platform","value":"%s/%s"}]}}}`, p.OS, p.Architecture)
		if err := os.WriteFile(filepath.Join(r.sboms, SBOMFile("aws-ccm-renderer-fn", &p)), []byte(sbom), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if r.key, err = GenerateKey(); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *release) build() Build {
	return Build{BuilderID: "https://example.com/builder", Source: "https://github.com/aws-ccm-renderer/aws-ccm-renderer",
		Revision: "0123456789abcdef0123456789abcdef01234567", Version: "v1.2.3", GoVersion: "go1.26", Epoch: time.Unix(1700000000, 0).UTC()}
}

func (r *release) sign(t *testing.T) {
	t.Helper()
	var out bytes.Buffer
	rel := &Release{Dist: r.dist, Images: r.images, SBOMs: r.sboms, Key: r.key, Build: r.build()}
	if err := rel.Sign(&out); err != nil {
		t.Fatal(err)
	}
	r.out = out.String()
	r.pub = filepath.Join(r.dist, PublicKeyFile)
}

func (r *release) trust(t *testing.T) Trust {
	t.Helper()
	pub, err := os.ReadFile(r.pub)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := KeyTrust(pub)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func readBundle(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRelease signs a release with a throwaway key and verifies every
// signature with sigstore-go's verifier, through the command as the docs
// run it.
func TestRelease(t *testing.T) {
	r := newRelease(t)
	r.sign(t)
	for _, want := range []string{ChecksumsBundle, ProvenanceFile("v1.2.3"), PublicKeyFile, PredicateSign, PredicateCycloneDX, PredicateSLSA} {
		if !strings.Contains(r.out, want) {
			t.Errorf("Sign printed no %s:\n%s", want, r.out)
		}
	}
	layoutDir := filepath.Join(r.images, "aws-ccm-renderer-fn")
	var out bytes.Buffer
	for _, args := range [][]string{
		{"verify-blob", "-key", r.pub, "-bundle", filepath.Join(r.dist, ChecksumsBundle), filepath.Join(r.dist, ChecksumsFile)},
		{"verify-provenance", "-key", r.pub, "-bundle", filepath.Join(r.dist, ProvenanceFile("v1.2.3")),
			filepath.Join(r.dist, "aws-ccm-renderer_v1.2.3_linux_amd64.tar.gz"), filepath.Join(r.dist, "aws-ccm-renderer_v1.2.3_linux_amd64.sbom.cdx.json")},
		{"verify-image", "-key", r.pub, layoutDir},
	} {
		out.Reset()
		if err := run(args, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !strings.HasPrefix(out.String(), "Verified OK: ") {
			t.Errorf("%v printed %q", args, out.String())
		}
	}
	rep, err := VerifyImage(layoutDir, r.trust(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep[PredicateSign]) != 1 || len(rep[PredicateSLSA]) != 1 || len(rep[PredicateCycloneDX]) != 2 {
		t.Errorf("verified statements: %v, want a signature, a provenance and two SBOMs", rep)
	}
	if got := rep[PredicateSLSA][0]; len(got) != 3 || got[0] != "aws-ccm-renderer-fn" || got[1] != "aws-ccm-renderer-fn@linux/amd64" {
		t.Errorf("the image provenance's subjects: %v", got)
	}
	// Signing again replaces the referrers: still one signature.
	r.sign(t)
	if rep, err = VerifyImage(layoutDir, r.trust(t)); err != nil || len(rep[PredicateSign]) != 1 {
		t.Errorf("signed twice: %v, %v", rep, err)
	}
	// The provenance says where the release came from.
	b, err := ParseBundle(readBundle(t, filepath.Join(r.dist, ProvenanceFile("v1.2.3"))))
	if err != nil {
		t.Fatal(err)
	}
	st, err := VerifyProvenance(b, []string{filepath.Join(r.dist, "aws-ccm-renderer_v1.2.3_linux_amd64.tar.gz")}, r.trust(t))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		BuildDefinition struct {
			ResolvedDependencies []struct {
				URI    string            `json:"uri"`
				Digest map[string]string `json:"digest"`
			} `json:"resolvedDependencies"`
		} `json:"buildDefinition"`
		RunDetails struct {
			Builder struct{ ID string } `json:"builder"`
		} `json:"runDetails"`
	}
	if err := json.Unmarshal(st.Predicate, &p); err != nil {
		t.Fatal(err)
	}
	if d := p.BuildDefinition.ResolvedDependencies; len(d) != 1 || d[0].Digest["gitCommit"] != r.build().Revision ||
		d[0].URI != "git+https://github.com/aws-ccm-renderer/aws-ccm-renderer@v1.2.3" || p.RunDetails.Builder.ID != "https://example.com/builder" {
		t.Errorf("provenance: %+v", p)
	}
	if _, ok := st.Names(r.layoutDigest(t)); !ok {
		t.Errorf("the release provenance does not name the image's index %s", r.layoutDigest(t))
	}
}

func (r *release) layoutDigest(t *testing.T) string {
	t.Helper()
	l, err := OpenLayout(filepath.Join(r.images, "aws-ccm-renderer-fn"))
	if err != nil {
		t.Fatal(err)
	}
	return l.Index.Digest.Hex
}

// TestTampered: an altered checksums.txt, archive, image or SBOM, and
// another key, fail verification.
func TestTampered(t *testing.T) {
	r := newRelease(t)
	r.sign(t)
	tr := r.trust(t)
	layoutDir := filepath.Join(r.images, "aws-ccm-renderer-fn")
	sums := readBundle(t, filepath.Join(r.dist, ChecksumsFile))
	cb, err := ParseBundle(readBundle(t, filepath.Join(r.dist, ChecksumsBundle)))
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyBlob(cb, sums, tr); err != nil {
		t.Fatal(err)
	}

	t.Run("checksums.txt", func(t *testing.T) {
		altered := bytes.Replace(sums, []byte("linux_amd64.tar.gz"), []byte("linux_arm64.tar.gz"), 1)
		if err := VerifyBlob(cb, altered, tr); err == nil {
			t.Error("an altered checksums.txt verified")
		}
	})
	t.Run("another key", func(t *testing.T) {
		other, err := GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		pem, _ := other.PublicPEM()
		ot, err := KeyTrust(pem)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyBlob(cb, sums, ot); err == nil {
			t.Error("checksums.txt verified with another key")
		}
		if _, err := VerifyImage(layoutDir, ot); err == nil || !strings.Contains(err.Error(), "failed to verify signature") {
			t.Errorf("the image with another key: %v", err)
		}
	})
	t.Run("archive", func(t *testing.T) {
		archive := filepath.Join(r.dist, "aws-ccm-renderer_v1.2.3_linux_amd64.tar.gz")
		pb, err := ParseBundle(readBundle(t, filepath.Join(r.dist, ProvenanceFile("v1.2.3"))))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(archive, []byte("another archive"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := VerifyProvenance(pb, []string{archive}, tr); err == nil {
			t.Error("the provenance verified for an altered archive")
		}
		// And make dist refuses to sign what checksums.txt does not say.
		rel := &Release{Dist: r.dist, Images: r.images, SBOMs: r.sboms, Key: r.key, Build: r.build()}
		if err := rel.Sign(new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), "checksums.txt says") {
			t.Errorf("signing an archive checksums.txt does not match: %v", err)
		}
	})
	t.Run("image layer", func(t *testing.T) {
		dir := copyDir(t, layoutDir)
		l, err := OpenLayout(dir)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := l.Platforms()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := l.blob(ps[1].Digest)
		if err != nil {
			t.Fatal(err)
		}
		var m v1.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		blob := filepath.Join(dir, "blobs", "sha256", m.Layers[0].Digest.Hex)
		b, err := os.ReadFile(blob)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 1
		if err := os.WriteFile(blob, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := VerifyImage(dir, tr); err == nil || !strings.Contains(err.Error(), "altered") {
			t.Errorf("an image with an altered layer: %v", err)
		}
	})
	t.Run("another image", func(t *testing.T) {
		// Another image given the signed one's bundles: none names it.
		dir := filepath.Join(t.TempDir(), "aws-ccm-renderer-fn")
		writeImage(t, dir)
		moveBundles(t, layoutDir, dir, nil)
		if _, err := VerifyImage(dir, tr); err == nil || !strings.Contains(err.Error(), "does not match any digest") {
			t.Errorf("another image with the bundles: %v", err)
		}
	})
	t.Run("SBOM", func(t *testing.T) {
		// The SBOM attestation's statement altered, in a layout
		// consistent again: the signature no longer verifies.
		dir := filepath.Join(t.TempDir(), "aws-ccm-renderer-fn")
		if err := os.CopyFS(dir, os.DirFS(layoutDir)); err != nil {
			t.Fatal(err)
		}
		altered := 0
		moveBundles(t, layoutDir, dir, func(b []byte) []byte {
			var bu map[string]any
			if err := json.Unmarshal(b, &bu); err != nil {
				t.Fatal(err)
			}
			env := bu["dsseEnvelope"].(map[string]any)
			payload := string(mustB64(t, env["payload"].(string)))
			if !strings.Contains(payload, PredicateCycloneDX) {
				return b
			}
			altered++
			env["payload"] = b64(strings.Replace(payload, "CycloneDX", "CycloneDx", 1))
			out, _ := json.Marshal(bu)
			return out
		})
		if altered != 2 {
			t.Fatalf("altered %d SBOM attestations, want 2", altered)
		}
		if _, err := VerifyImage(dir, tr); err == nil || !strings.Contains(err.Error(), "failed to verify signature") {
			t.Errorf("an image with an altered SBOM attestation: %v", err)
		}
	})
	t.Run("unsigned", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "aws-ccm-renderer-fn")
		writeImage(t, dir)
		if _, err := VerifyImage(dir, tr); err == nil || !strings.Contains(err.Error(), "unsigned") {
			t.Errorf("an unsigned image: %v", err)
		}
	})
	t.Run("no SBOM", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "aws-ccm-renderer-fn")
		if err := os.CopyFS(dir, os.DirFS(layoutDir)); err != nil {
			t.Fatal(err)
		}
		moveBundles(t, layoutDir, dir, func(b []byte) []byte {
			if strings.Contains(string(b), "dsseEnvelope") && strings.Contains(string(mustB64(t, payloadOf(t, b))), PredicateCycloneDX) {
				return nil
			}
			return b
		})
		if _, err := VerifyImage(dir, tr); err == nil || !strings.Contains(err.Error(), "no SBOM attestation") {
			t.Errorf("an image without SBOM attestations: %v", err)
		}
	})
}

func payloadOf(t *testing.T, b []byte) string {
	var bu struct {
		DSSE struct{ Payload string } `json:"dsseEnvelope"`
	}
	if err := json.Unmarshal(b, &bu); err != nil {
		t.Fatal(err)
	}
	return bu.DSSE.Payload
}

// moveBundles replaces the referrers of to's index by from's bundles,
// each through edit (nil: as they are; edit returning nil drops it).
func moveBundles(t *testing.T, from, to string, edit func([]byte) []byte) {
	t.Helper()
	src, err := OpenLayout(from)
	if err != nil {
		t.Fatal(err)
	}
	bundles, err := src.Bundles()
	if err != nil {
		t.Fatal(err)
	}
	dst, err := OpenLayout(to)
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Detach(); err != nil {
		t.Fatal(err)
	}
	for _, b := range bundles {
		if edit != nil {
			if b = edit(b); b == nil {
				continue
			}
		}
		img, err := Referrer(dst.Index, b, "", time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.Attach(img); err != nil {
			t.Fatal(err)
		}
	}
}

func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRegistry pushes a signed layout's index and referrers to a registry
// (go-containerregistry's, in-process) and finds the bundles as cosign
// does: the index's referrers, each one layer of the bundle media type.
func TestRegistry(t *testing.T) {
	r := newRelease(t)
	r.sign(t)
	l, err := OpenLayout(filepath.Join(r.images, "aws-ccm-renderer-fn"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	repo, err := name.NewRepository(strings.TrimPrefix(srv.URL, "http://") + "/aws-ccm-renderer-fn")
	if err != nil {
		t.Fatal(err)
	}
	top, _ := l.Path.ImageIndex()
	idx, err := top.ImageIndex(l.Index.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(repo.Tag("v1.2.3"), idx); err != nil {
		t.Fatal(err)
	}
	tm, _ := top.IndexManifest()
	for _, d := range tm.Manifests {
		if d.MediaType != types.OCIManifestSchema1 {
			continue
		}
		img, err := l.Path.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(repo.Digest(d.Digest.String()), img); err != nil {
			t.Fatal(err)
		}
	}
	refs, err := remote.Referrers(repo.Digest(l.Index.Digest.String()))
	if err != nil {
		t.Fatal(err)
	}
	rm, err := refs.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(rm.Manifests) != 4 {
		t.Fatalf("%d referrers, want 4", len(rm.Manifests))
	}
	tr := r.trust(t)
	for _, d := range rm.Manifests {
		if d.ArtifactType != BundleMediaType {
			t.Errorf("referrer %s: artifactType %q", d.Digest, d.ArtifactType)
		}
		img, err := remote.Image(repo.Digest(d.Digest.String()))
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("referrer %s: %d layers, %v", d.Digest, len(layers), err)
		}
		mt, _ := layers[0].MediaType()
		if mt != BundleMediaType {
			t.Errorf("referrer %s: layer of %s", d.Digest, mt)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(rc)
		b, err := ParseBundle(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if !b.MinVersion("v0.3") {
			t.Errorf("referrer %s: bundle older than v0.3", d.Digest)
		}
		if _, err := VerifyStatement(b, l.Index.Digest.Hex, tr); err != nil {
			t.Errorf("referrer %s: %v", d.Digest, err)
		}
	}
}

// TestKeyless signs with sigstore-go's virtual sigstore (a Fulcio CA,
// Rekor and a TSA in memory), as CI's keyless signing would, and checks
// the identity and the issuer.
func TestKeyless(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	const (
		identity = "https://github.com/aws-ccm-renderer/aws-ccm-renderer/.github/workflows/release.yaml@refs/tags/v1.2.3"
		issuer   = "https://token.actions.githubusercontent.com"
	)
	digest := strings.Repeat("ab", 32)
	st, err := Statement([]Subject{{Name: "aws-ccm-renderer-fn", SHA256: digest}}, PredicateSign, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The virtual CA puts the identity in the certificate as an e-mail SAN.
	entity, err := vs.Attest(identity, issuer, st)
	if err != nil {
		t.Fatal(err)
	}
	good := Trust{Root: vs, Identity: identity, Issuer: issuer}
	got, err := VerifyStatement(entity, digest, good)
	if err != nil {
		t.Fatal(err)
	}
	if got.PredicateType != PredicateSign {
		t.Errorf("predicate type %q", got.PredicateType)
	}
	for name, tr := range map[string]Trust{
		"another identity": {Root: vs, Identity: strings.Replace(identity, "v1.2.3", "v1.2.4", 1), Issuer: issuer},
		"another issuer":   {Root: vs, Identity: identity, Issuer: "https://accounts.google.com"},
		"no identity":      {Root: vs, Issuer: issuer},
	} {
		if _, err := VerifyStatement(entity, digest, tr); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	if _, err := VerifyStatement(entity, strings.Repeat("cd", 32), good); err == nil {
		t.Error("verified for another digest")
	}
	// Another sigstore's certificate is not trusted.
	other, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyStatement(entity, digest, Trust{Root: other, Identity: identity, Issuer: issuer}); err == nil {
		t.Error("verified against another sigstore's trust root")
	}
	// A blob (checksums.txt) signed keyless.
	sums := []byte(digest + "  aws-ccm-renderer_v1.2.3_linux_amd64.tar.gz\n")
	be, err := vs.Sign(identity, issuer, sums)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyBlob(be, sums, good); err != nil {
		t.Fatal(err)
	}
	if err := VerifyBlob(be, append(sums, '\n'), good); err == nil {
		t.Error("an altered checksums.txt verified")
	}
	if err := VerifyBlob(be, sums, Trust{Root: vs, Identity: identity, Issuer: "https://gitlab.com"}); err == nil {
		t.Error("verified with another issuer")
	}
}

// TestLoadKey reads cosign's encrypted key and plain PEM keys, and refuses
// a wrong password and keys of other kinds.
func TestLoadKey(t *testing.T) {
	pass := []byte("correct horse")
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), func(bool) ([]byte, error) { return pass, nil })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(priv), "ENCRYPTED SIGSTORE PRIVATE KEY") {
		t.Fatalf("not cosign's key format:\n%s", priv)
	}
	k, err := LoadKey(priv, pass)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := k.PublicPEM()
	if !bytes.Equal(got, pub) {
		t.Errorf("public key %s, want %s", got, pub)
	}
	if _, err := LoadKey(priv, []byte("wrong")); err == nil {
		t.Error("loaded with a wrong password")
	}
	if _, err := LoadKey([]byte("not a key"), nil); err == nil {
		t.Error("loaded garbage")
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(rk)
	if _, err := LoadKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil); err == nil || !strings.Contains(err.Error(), "P-256") {
		t.Errorf("an RSA key: %v", err)
	}
	// A plain PKCS#8 key (openssl genpkey) signs, and its signature verifies.
	der, _ = x509.MarshalPKCS8PrivateKey(k.priv)
	k2, err := LoadKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := SignBlob(k2, []byte("data"))
	if err != nil {
		t.Fatal(err)
	}
	bu, err := ParseBundle(b)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := KeyTrust(pub)
	if err := VerifyBlob(bu, []byte("data"), tr); err != nil {
		t.Error(err)
	}
}

// TestErrors: what the commands and the statements refuse.
func TestErrors(t *testing.T) {
	if _, err := Statement([]Subject{{Name: "x", SHA256: "abc"}}, PredicateSLSA, nil); err == nil {
		t.Error("a statement with a short digest")
	}
	if _, err := Provenance(Build{Source: "s", Revision: "r", Version: "v"}); err == nil {
		t.Error("a provenance without a builder")
	}
	r := newRelease(t)
	if err := os.Remove(filepath.Join(r.sboms, SBOMFile("aws-ccm-renderer-fn", &platforms[1]))); err != nil {
		t.Fatal(err)
	}
	rel := &Release{Dist: r.dist, Images: r.images, SBOMs: r.sboms, Key: r.key, Build: r.build()}
	if err := rel.Sign(new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), "SBOM") {
		t.Errorf("signing without an image's SBOM: %v", err)
	}
	for _, args := range [][]string{
		nil,
		{"verify-blob", "-bundle", "b", "f"},
		{"verify-image", "-key", filepath.Join(r.dist, "nonexistent.pub"), r.images},
		{"verify-blob", "-key", "k", "-trusted-root", "r", "-bundle", "b", "f"},
		{"release", "-key", "k"},
		{"frobnicate", "-key", "k"},
	} {
		if err := run(args, new(bytes.Buffer)); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCheckKey: make dist reads the key before it builds anything.
func TestCheckKey(t *testing.T) {
	t.Setenv("COSIGN_PASSWORD", "pw")
	priv, _, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), func(bool) ([]byte, error) { return []byte("pw"), nil })
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "cosign.key")
	if err := os.WriteFile(key, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"check-key", "-key", key}, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COSIGN_PASSWORD", "not it")
	if err := run([]string{"check-key", "-key", key}, new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), "COSIGN_KEY="+key) {
		t.Errorf("a wrong password: %v", err)
	}
}
