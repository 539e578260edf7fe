package images

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
)

// programsDir writes stand-in programs (any bytes do: this package puts
// them in layers, it never runs them) for every platform.
func programsDir(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range Platforms {
		d := filepath.Join(dir, PlatformDir(p))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"aws-ccm-renderer", "aws-ccm-renderer-helm"} {
			if err := os.WriteFile(filepath.Join(d, name), []byte(content+p.Architecture+name), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func digest(t *testing.T, img Image, bins string, m Meta) v1.Hash {
	t.Helper()
	idx, err := Build(img, bins, m)
	if err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestBuildReproducible: the same inputs give the same digest, in another
// directory and at another time of building; another program, plugin.yaml
// or commit time gives another; written as a layout and read back, the
// index is the same.
func TestBuildReproducible(t *testing.T) {
	m := Meta{Version: "v1.2.3", Revision: strings.Repeat("a", 40), Source: "https://example.com/x", Licenses: "Apache-2.0", Created: time.Unix(1700000000, 0)}
	img := ArgoCDCMP([]byte("kind: ConfigManagementPlugin\n"))
	first := digest(t, img, programsDir(t, "one"), m)
	if again := digest(t, img, programsDir(t, "one"), m); again != first {
		t.Errorf("the same inputs: %s, then %s", first, again)
	}
	later := m
	later.Created = m.Created.Add(time.Second)
	for name, d := range map[string]v1.Hash{
		"another program":  digest(t, img, programsDir(t, "two"), m),
		"another plugin":   digest(t, ArgoCDCMP([]byte("kind: Other\n")), programsDir(t, "one"), m),
		"another time":     digest(t, img, programsDir(t, "one"), later),
		"another function": digest(t, KRMFunction(), programsDir(t, "one"), m),
	} {
		if d == first {
			t.Errorf("%s: the same digest", name)
		}
	}

	idx, err := Build(img, programsDir(t, "one"), m)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "layout")
	if err := WriteLayout(dir, idx, m.Version); err != nil {
		t.Fatal(err)
	}
	back, err := ReadLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := back.Digest(); err != nil || d != first {
		t.Errorf("read back: %s, %v; want %s", d, err, first)
	}
}

// TestBuildMissingProgram: a program not built is an error that says how
// to build it.
func TestBuildMissingProgram(t *testing.T) {
	bins := programsDir(t, "one")
	if err := os.Remove(filepath.Join(bins, "linux_arm64", "aws-ccm-renderer-helm")); err != nil {
		t.Fatal(err)
	}
	_, err := Build(ArgoCDCMP(nil), bins, Meta{Version: "v1", Created: time.Unix(0, 0)})
	if err == nil || !strings.Contains(err.Error(), "aws-ccm-renderer-argocd-cmp for linux/arm64: the program aws-ccm-renderer-helm") ||
		!strings.Contains(err.Error(), "make images") {
		t.Errorf("error %v", err)
	}
	if _, err := ReadLayout(t.TempDir()); err == nil {
		t.Error("an empty directory read as a layout")
	}
}

// TestPin: the digests of the images' references are rewritten, tag and
// registry kept; other images' references and unpinned references are
// left alone.
func TestPin(t *testing.T) {
	old := "sha256:" + strings.Repeat("0", 64)
	other := "quay.io/argoproj/argocd@" + old
	text := "image: ghcr.io/aws-ccm-renderer/aws-ccm-renderer-fn@" + old + "\n" +
		"image: registry.example.com:5000/team/aws-ccm-renderer-argocd-cmp:v1@" + old + "\n" +
		"image: " + other + "\nimage: ghcr.io/aws-ccm-renderer/aws-ccm-renderer-fn:v1\n"
	fn := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("1", 64)}
	cmp := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("2", 64)}
	got := Pin(text, map[string]v1.Hash{"aws-ccm-renderer-fn": fn, "aws-ccm-renderer-argocd-cmp": cmp})
	want := "image: ghcr.io/aws-ccm-renderer/aws-ccm-renderer-fn@" + fn.String() + "\n" +
		"image: registry.example.com:5000/team/aws-ccm-renderer-argocd-cmp:v1@" + cmp.String() + "\n" +
		"image: " + other + "\nimage: ghcr.io/aws-ccm-renderer/aws-ccm-renderer-fn:v1\n"
	if got != want {
		t.Errorf("pinned:\n%s\nwant:\n%s", got, want)
	}
	pinned := Pinned(got)
	if len(pinned["aws-ccm-renderer-fn"]) != 1 || len(pinned["aws-ccm-renderer-argocd-cmp"]) != 1 || len(pinned["argocd"]) != 1 {
		t.Errorf("Pinned: %v", pinned)
	}
}

// TestReadLayoutReferrers: the image index is found beside the referrers
// attached to it (and those of nothing else are not its referrers); two
// image indexes are refused.
func TestReadLayoutReferrers(t *testing.T) {
	m := Meta{Version: "v1", Created: time.Unix(0, 0)}
	idx, err := Build(KRMFunction(), programsDir(t, "one"), m)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "layout")
	if err := WriteLayout(dir, idx, m.Version); err != nil {
		t.Fatal(err)
	}
	desc, err := partial.Descriptor(idx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range []v1.Image{mutate.Subject(empty.Image, *desc).(v1.Image), empty.Image} {
		if err := p.AppendImage(img); err != nil {
			t.Fatal(err)
		}
	}
	back, err := ReadLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := back.Digest(); d != desc.Digest {
		t.Errorf("read %s, want the index %s", d, desc.Digest)
	}
	refs, err := Referrers(dir)
	if err != nil || len(refs) != 1 {
		t.Fatalf("referrers: %d, %v; want 1", len(refs), err)
	}
	// Written again, the same index keeps its referrers (make push after
	// make dist); another index does not.
	if err := WriteLayout(dir, idx, m.Version); err != nil {
		t.Fatal(err)
	}
	if refs, err := Referrers(dir); err != nil || len(refs) != 1 {
		t.Fatalf("the same index written again: %d referrers, %v; want 1", len(refs), err)
	} else if d, _ := refs[0].Digest(); d != mustDigest(t, mutate.Subject(empty.Image, *desc).(v1.Image)) {
		t.Errorf("the referrer kept is %s", d)
	} else if _, err := refs[0].RawConfigFile(); err != nil {
		t.Errorf("the referrer kept lacks its config: %v", err)
	}
	other, err := Build(KRMFunction(), programsDir(t, "two"), m)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(dir, other, m.Version); err != nil {
		t.Fatal(err)
	}
	if refs, err := Referrers(dir); err != nil || len(refs) != 0 {
		t.Errorf("another index: %d referrers, %v; want none", len(refs), err)
	}
	if p, err = layout.FromPath(dir); err != nil {
		t.Fatal(err)
	}
	if err := p.AppendIndex(empty.Index); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLayout(dir); err == nil || !strings.Contains(err.Error(), "2 image indexes") {
		t.Errorf("two image indexes: %v", err)
	}
}

func mustDigest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
