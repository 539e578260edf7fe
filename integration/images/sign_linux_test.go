package images

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// bundleMediaType is a sigstore bundle's, the referrers' artifactType.
const bundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// TestSignedImages signs the layouts make images wrote as make dist does
// (hack/images sboms with the real cyclonedx-gomod, then hack/sign's
// release with a throwaway key), verifies each image with sigstore-go
// through aws-ccm-sign verify-image, refuses them with another key,
// builds them again as make push does (the referrers stay), and pushes
// them with hack/images push: the registry lists each index's signature,
// two SBOM attestations and provenance as its referrers.
func TestSignedImages(t *testing.T) {
	src := testtools.Images(t)
	work := t.TempDir()
	out := filepath.Join(work, "images")
	for _, spec := range images.All(nil) {
		if err := os.CopyFS(filepath.Join(out, spec.Name), os.DirFS(filepath.Join(src, spec.Name))); err != nil {
			t.Fatal(err)
		}
	}
	dist := filepath.Join(work, "dist")
	if err := os.MkdirAll(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := []byte("an archive")
	sum := sha256.Sum256(archive)
	writeFile(t, filepath.Join(dist, "aws-ccm-renderer_v1.2.3_linux_amd64.tar.gz"), archive)
	writeFile(t, filepath.Join(dist, "checksums.txt"), []byte(hex.EncodeToString(sum[:])+"  aws-ccm-renderer_v1.2.3_linux_amd64.tar.gz\n"))
	key := writeKey(t, filepath.Join(work, "release.key"))
	other := writeKey(t, filepath.Join(work, "other.key"))

	imagesTool, sign := testtools.ImagesTool(t), testtools.SignTool(t)
	run(t, imagesTool, "sboms", "-bin", filepath.Join(src, "bin"), "-out", out, "-cyclonedx", testtools.CycloneDX(t), "-version", "v1.2.3")
	run(t, sign, "release", "-key", key, "-dist", dist, "-images", out, "-sboms", filepath.Join(out, "sbom"), "-version", "v1.2.3",
		"-source", "https://github.com/aws-ccm-renderer/aws-ccm-renderer", "-revision", strings.Repeat("a", 40),
		"-builder", "https://example.com/ci", "-created", "1700000000")
	pub := filepath.Join(dist, "cosign.pub")
	for _, spec := range images.All(nil) {
		got := run(t, sign, "verify-image", "-key", pub, filepath.Join(out, spec.Name))
		if !strings.Contains(got, "Verified OK") || !strings.Contains(got, "https://cyclonedx.org/bom ×2") {
			t.Errorf("%s: %s", spec.Name, got)
		}
		otherPub := filepath.Join(work, "other.pub")
		writeFile(t, otherPub, publicPEM(t, other))
		if b, err := exec.Command(sign, "verify-image", "-key", otherPub, filepath.Join(out, spec.Name)).CombinedOutput(); err == nil {
			t.Errorf("%s verified with another key: %s", spec.Name, b)
		}
	}
	// The SBOM is the image's largest program's: the function's holds
	// aws-ccm-renderer's modules, not the Helm SDK's.
	fnSBOM, err := os.ReadFile(filepath.Join(out, "sbom", "aws-ccm-renderer-fn_linux_amd64.cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmpSBOM, err := os.ReadFile(filepath.Join(out, "sbom", "aws-ccm-renderer-argocd-cmp_linux_amd64.cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(fnSBOM), "helm.sh/helm/v3") || !strings.Contains(string(cmpSBOM), "helm.sh/helm/v3") {
		t.Errorf("the SBOMs' programs: the function's names Helm: %v, the sidecar's: %v",
			strings.Contains(string(fnSBOM), "helm.sh/helm/v3"), strings.Contains(string(cmpSBOM), "helm.sh/helm/v3"))
	}

	// make push builds the images again before it pushes them: the same
	// build, from the labels the layouts carry, keeps their referrers.
	fnIdx, err := images.ReadLayout(filepath.Join(out, "aws-ccm-renderer-fn"))
	if err != nil {
		t.Fatal(err)
	}
	im, err := fnIdx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	a := im.Annotations
	created, err := time.Parse(time.RFC3339, a["org.opencontainers.image.created"])
	if err != nil {
		t.Fatal(err)
	}
	run(t, imagesTool, "build", "-bin", filepath.Join(src, "bin"), "-out", out, "-plugin", filepath.Join(testtools.Root(), "examples", "argocd", "plugin.yaml"),
		"-version", a["org.opencontainers.image.version"], "-revision", a["org.opencontainers.image.revision"],
		"-created", strconv.FormatInt(created.Unix(), 10), "-source", a["org.opencontainers.image.source"], "-licenses", a["org.opencontainers.image.licenses"])
	for _, spec := range images.All(nil) {
		if got := run(t, sign, "verify-image", "-key", pub, filepath.Join(out, spec.Name)); !strings.Contains(got, "Verified OK") {
			t.Errorf("%s built again: %s", spec.Name, got)
		}
	}

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	run(t, imagesTool, "push", "-out", out, "-registry", host+"/signed")
	for _, spec := range images.All(nil) {
		idx, err := images.ReadLayout(filepath.Join(out, spec.Name))
		if err != nil {
			t.Fatal(err)
		}
		d, _ := idx.Digest()
		repo, err := name.NewRepository(host+"/signed/"+spec.Name, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		refs, err := remote.Referrers(repo.Digest(d.String()))
		if err != nil {
			t.Fatal(err)
		}
		m, err := refs.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Manifests) != 4 {
			t.Errorf("%s: %d referrers in the registry, want 4", spec.Name, len(m.Manifests))
		}
		for _, r := range m.Manifests {
			if r.ArtifactType != bundleMediaType {
				t.Errorf("%s: referrer %s of artifactType %q", spec.Name, r.Digest, r.ArtifactType)
			}
		}
	}
}

func run(t *testing.T, prog string, args ...string) string {
	t.Helper()
	b, err := exec.Command(prog, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(prog), strings.Join(args, " "), err, b)
	}
	return string(b)
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeKey writes a throwaway ECDSA P-256 key, PKCS#8 PEM, and returns its
// path.
func writeKey(t *testing.T, path string) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	return path
}

func publicPEM(t *testing.T, keyPath string) []byte {
	t.Helper()
	b, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(k.(*ecdsa.PrivateKey).Public())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}
