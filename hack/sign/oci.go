package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// BundleMediaType is a sigstore bundle's media type: the artifactType of
// the referrers cosign --new-bundle-format writes and reads, and of their
// one layer.
const BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// emptyConfig is OCI's empty descriptor's content, the config of an
// artifact manifest.
var emptyConfig = []byte("{}")

// referrer is an OCI 1.1 artifact manifest whose subject is an image: an
// empty config, one layer, the bundle. go-containerregistry's mutate
// cannot set a manifest's artifactType, so the manifest is written here.
type referrer struct {
	manifest []byte
	layer    v1.Layer
}

// Referrer is the manifest that attaches a bundle to subject, annotated as
// cosign annotates it (the content and the statement's predicate type),
// created at the build's time.
func Referrer(subject v1.Descriptor, bundleJSON []byte, predicateType string, created time.Time) (v1.Image, error) {
	l := static.NewLayer(bundleJSON, BundleMediaType)
	ld, err := partial.Descriptor(l)
	if err != nil {
		return nil, err
	}
	cd := sha256.Sum256(emptyConfig)
	sub := subject
	sub.Platform, sub.Annotations, sub.URLs = nil, nil, nil
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  BundleMediaType,
		Config: v1.Descriptor{MediaType: "application/vnd.oci.empty.v1+json", Size: int64(len(emptyConfig)),
			Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(cd[:])}},
		Layers:  []v1.Descriptor{{MediaType: BundleMediaType, Size: ld.Size, Digest: ld.Digest}},
		Subject: &sub,
		Annotations: map[string]string{
			"org.opencontainers.image.created":  created.UTC().Format(time.RFC3339),
			"dev.sigstore.bundle.content":       "dsse-envelope",
			"dev.sigstore.bundle.predicateType": predicateType,
		},
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(&referrer{manifest: raw, layer: l})
}

func (r *referrer) RawConfigFile() ([]byte, error)      { return emptyConfig, nil }
func (r *referrer) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (r *referrer) RawManifest() ([]byte, error)        { return r.manifest, nil }
func (r *referrer) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if d, _ := r.layer.Digest(); d == h {
		return r.layer, nil
	}
	return nil, fmt.Errorf("no blob %s in the referrer", h)
}

// Layout is an image's OCI layout as make images writes it: index.json
// names the image index (annotated with its version) and, once signed,
// the referrers that carry its bundles.
type Layout struct {
	Path  layout.Path
	Index v1.Descriptor // the image index's descriptor
}

// OpenLayout finds the image index of a layout: the one entry of
// index.json that is an image index.
func OpenLayout(dir string) (*Layout, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	var found []v1.Descriptor
	for _, d := range m.Manifests {
		if d.MediaType == types.OCIImageIndex || d.MediaType == types.DockerManifestList {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%s: %d image indexes in index.json, want one", dir, len(found))
	}
	return &Layout{Path: p, Index: found[0]}, nil
}

// Platforms are the descriptors of the index's images.
func (l *Layout) Platforms() ([]v1.Descriptor, error) {
	idx, err := l.Path.ImageIndex()
	if err != nil {
		return nil, err
	}
	ii, err := idx.ImageIndex(l.Index.Digest)
	if err != nil {
		return nil, err
	}
	m, err := ii.IndexManifest()
	if err != nil {
		return nil, err
	}
	return m.Manifests, nil
}

// Attach writes a referrer into the layout, beside the image index.
func (l *Layout) Attach(img v1.Image) error {
	return l.Path.AppendImage(img)
}

// Detach removes the referrers of the layout's image index (a new signing
// replaces them).
func (l *Layout) Detach() error {
	return l.Path.RemoveDescriptors(func(d v1.Descriptor) bool { return d.MediaType == types.OCIManifestSchema1 })
}

// Bundles are the bundles of the referrers whose subject is the image
// index, with their predicate type annotation.
func (l *Layout) Bundles() ([][]byte, error) {
	top, err := l.Path.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, d := range m.Manifests {
		if d.MediaType != types.OCIManifestSchema1 {
			continue
		}
		img, err := l.Path.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		mf, err := img.Manifest()
		if err != nil {
			return nil, err
		}
		if mf.Subject == nil || mf.Subject.Digest != l.Index.Digest || mf.ArtifactType != BundleMediaType || len(mf.Layers) != 1 {
			continue
		}
		b, err := l.blob(mf.Layers[0].Digest)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// blob reads a blob of the layout, checking its digest.
func (l *Layout) blob(h v1.Hash) ([]byte, error) {
	rc, err := l.Path.Blob(h)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(b); h.Algorithm != "sha256" || hex.EncodeToString(sum[:]) != h.Hex {
		return nil, fmt.Errorf("blob %s: its content has another digest (altered)", h)
	}
	return b, nil
}

// CheckBlobs reads every blob of the image index, its images, their
// configs and layers, checking each against its digest: with the index's
// digest signed, an intact tree is the image signed.
func (l *Layout) CheckBlobs() error {
	raw, err := l.blob(l.Index.Digest)
	if err != nil {
		return err
	}
	var idx v1.IndexManifest
	if err := json.Unmarshal(raw, &idx); err != nil {
		return err
	}
	if len(idx.Manifests) == 0 {
		return errors.New("the image index names no image")
	}
	for _, d := range idx.Manifests {
		raw, err := l.blob(d.Digest)
		if err != nil {
			return err
		}
		var m v1.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		for _, b := range append([]v1.Descriptor{m.Config}, m.Layers...) {
			if _, err := l.blob(b.Digest); err != nil {
				return err
			}
		}
	}
	return nil
}

// ImageLayouts are the directories of dir holding an OCI layout, by name.
func ImageLayouts(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "oci-layout")); e.IsDir() && err == nil {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no OCI layout in %s (make images writes them)", dir)
	}
	return out, nil
}
