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
	"github.com/google/go-containerregistry/pkg/v1/remote"

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

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://") + "/team"
	if err := run([]string{"push", "-out", out, "-registry", reg}); err != nil {
		t.Fatal(err)
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

	for _, c := range []struct {
		args []string
		want string
	}{
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
