package main

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
)

// TestBuildPushPin: build writes a layout per image, push sends each to a
// registry tagged with the version (semver build metadata made a valid
// tag), pin writes the built digests into a file; bad command lines fail
// saying what is missing.
func TestBuildPushPin(t *testing.T) {
	bins := t.TempDir()
	for _, p := range images.Platforms {
		for _, prog := range []string{"aws-ccm-renderer", "aws-ccm-renderer-helm"} {
			f := filepath.Join(bins, images.PlatformDir(p), prog)
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			// Any bytes: build packs the programs, it does not run them.
			if err := os.WriteFile(f, []byte(prog+" for "+p.Architecture), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	plugin := filepath.Join(t.TempDir(), "plugin.yaml")
	if err := os.WriteFile(plugin, []byte("kind: ConfigManagementPlugin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := run([]string{"build", "-bin", bins, "-out", out, "-plugin", plugin, "-version", "v1.2.3+dev", "-created", "1700000000"}); err != nil {
		t.Fatal(err)
	}

	// A signed layout (hack/sign) lists referrers of the image index
	// beside it in index.json: push sends them, with their subject.
	fnDir := filepath.Join(out, "aws-ccm-renderer-fn")
	fn, err := images.ReadLayout(fnDir)
	if err != nil {
		t.Fatal(err)
	}
	fnDesc, err := partial.Descriptor(fn)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1),
		mutate.Addendum{Layer: static.NewLayer([]byte(`{"mediaType":"bundle"}`), "application/vnd.dev.sigstore.bundle.v0.3+json")})
	if err != nil {
		t.Fatal(err)
	}
	sig = mutate.Subject(sig, *fnDesc).(v1.Image)
	lp, err := layout.FromPath(fnDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendImage(sig); err != nil {
		t.Fatal(err)
	}
	// Another manifest without a subject is no referrer.
	if err := lp.AppendImage(empty.Image); err != nil {
		t.Fatal(err)
	}
	refs, err := images.Referrers(fnDir)
	if err != nil || len(refs) != 1 {
		t.Fatalf("the layout's referrers: %d, %v; want the one attached", len(refs), err)
	}

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://") + "/team"
	if err := run([]string{"push", "-out", out, "-registry", reg}); err != nil {
		t.Fatal(err)
	}
	repo, err := name.NewRepository(reg+"/aws-ccm-renderer-fn", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	pushed, err := remote.Referrers(repo.Digest(fnDesc.Digest.String()))
	if err != nil {
		t.Fatal(err)
	}
	sigDigest, _ := sig.Digest()
	if m, err := pushed.IndexManifest(); err != nil || len(m.Manifests) != 1 || m.Manifests[0].Digest != sigDigest {
		t.Errorf("the registry's referrers of the function's index: %+v, %v; want %s", m, err, sigDigest)
	}
	example := filepath.Join(t.TempDir(), "example.yaml")
	if err := os.WriteFile(example, []byte("image: ghcr.io/x/aws-ccm-renderer-fn@sha256:"+strings.Repeat("0", 64)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"pin", "-out", out, example}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range []string{"aws-ccm-renderer-argocd-cmp", "aws-ccm-renderer-fn"} {
		built, err := images.ReadLayout(filepath.Join(out, img))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := built.Digest()
		ref, err := name.NewTag(reg+"/"+img+":v1.2.3-dev", name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		pushed, err := remote.Index(ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if got, _ := pushed.Digest(); got != want {
			t.Errorf("%s: digest %s, built %s", ref, got, want)
		}
		if img == "aws-ccm-renderer-fn" && string(b) != "image: ghcr.io/x/aws-ccm-renderer-fn@"+want.String()+"\n" {
			t.Errorf("pinned: %s", b)
		}
	}

	// sboms runs cyclonedx-gomod (here a stand-in that writes its
	// arguments) on each image's largest program, a platform at a time.
	fake := filepath.Join(t.TempDir(), "cyclonedx-gomod")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nfor a; do [ \"$prev\" = -output ] && out=$a; prev=$a; done\necho \"$@\" > \"$out\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"sboms", "-bin", bins, "-out", out, "-cyclonedx", fake, "-version", "v1.2.3"}); err != nil {
		t.Fatal(err)
	}
	for f, prog := range map[string]string{
		"aws-ccm-renderer-fn_linux_arm64.cdx.json":         "linux_arm64/aws-ccm-renderer",
		"aws-ccm-renderer-guard_linux_amd64.cdx.json":      "linux_amd64/aws-ccm-renderer-helm",
		"aws-ccm-renderer-argocd-cmp_linux_amd64.cdx.json": "linux_amd64/aws-ccm-renderer-helm",
	} {
		b, err := os.ReadFile(filepath.Join(out, "sbom", f))
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(bins, prog); !strings.HasSuffix(strings.TrimSpace(string(b)), " "+want) || !strings.Contains(string(b), "-version v1.2.3") {
			t.Errorf("%s: cyclonedx-gomod ran with %q, want the program %s", f, b, want)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sboms", "-out", out}, "sboms needs -bin, -cyclonedx and -version"},
		{[]string{"sboms", "-bin", t.TempDir(), "-out", out, "-cyclonedx", filepath.Join(t.TempDir(), "none"), "-version", "v1"}, "aws-ccm-renderer-argocd-cmp"},
		{nil, "no command"},
		{[]string{"bake"}, `unknown command "bake"`},
		{[]string{"build", "-out", out}, "build needs -bin, -plugin, -version and -created"},
		{[]string{"build", "-bin", bins, "-out", out, "-plugin", plugin, "-version", "v1", "-created", "yesterday"}, `-created "yesterday"`},
		{[]string{"build", "-bin", t.TempDir(), "-out", out, "-plugin", plugin, "-version", "v1", "-created", "0"}, "make images builds it"},
		{[]string{"push", "-out", out}, "push needs -registry"},
		{[]string{"push", "-out", t.TempDir(), "-registry", reg}, "make images builds it"},
	} {
		if err := run(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}
