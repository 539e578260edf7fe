package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The files the signing adds to the release directory.
const (
	ChecksumsFile   = "checksums.txt"
	ChecksumsBundle = "checksums.txt.sigstore.json"
	PublicKeyFile   = "cosign.pub"
)

// ProvenanceFile is the release's SLSA provenance bundle.
func ProvenanceFile(version string) string {
	return "aws-ccm-renderer_" + version + ".provenance.sigstore.json"
}

// SBOMFile is an image's SBOM for a platform in the SBOM directory, as
// hack/images sboms writes it.
func SBOMFile(image string, p *v1.Platform) string {
	return image + "_" + p.OS + "_" + p.Architecture + ".cdx.json"
}

// Release is what make dist signs: the files of checksums.txt in Dist, the
// images' layouts in Images, their SBOMs in SBOMs.
type Release struct {
	Dist, Images, SBOMs string
	Key                 *Keypair
	Build               Build
}

// ReadChecksums parses checksums.txt (sha256sum's format) and checks every
// file it names in dir against it.
func ReadChecksums(dir string) ([]Subject, error) {
	b, err := os.ReadFile(filepath.Join(dir, ChecksumsFile))
	if err != nil {
		return nil, fmt.Errorf("%w (make dist writes it)", err)
	}
	var out []Subject
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not a sha256sum line", ChecksumsFile, sc.Text())
		}
		got, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if got != sum {
			return nil, fmt.Errorf("%s: %s has SHA-256 %s, checksums.txt says %s", ChecksumsFile, name, got, sum)
		}
		out = append(out, Subject{Name: name, SHA256: sum})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s names no file", ChecksumsFile)
	}
	return out, sc.Err()
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Sign signs checksums.txt, writes the release's provenance (the files of
// checksums.txt and the images' indexes as its subjects), and attaches to
// each image's index, in its layout, its signature, an SBOM attestation a
// platform and its provenance. It prints what it wrote.
func (r *Release) Sign(stdout io.Writer) error {
	files, err := ReadChecksums(r.Dist)
	if err != nil {
		return err
	}
	prov, err := Provenance(r.Build)
	if err != nil {
		return err
	}
	names, err := ImageLayouts(r.Images)
	if err != nil {
		return err
	}
	layouts := map[string]*Layout{}
	subjects := files
	for _, n := range names {
		l, err := OpenLayout(filepath.Join(r.Images, n))
		if err != nil {
			return err
		}
		layouts[n] = l
		subjects = append(subjects, Subject{Name: n, SHA256: l.Index.Digest.Hex})
	}

	sums, err := os.ReadFile(filepath.Join(r.Dist, ChecksumsFile))
	if err != nil {
		return err
	}
	b, err := SignBlob(r.Key, sums)
	if err != nil {
		return err
	}
	if err := r.write(stdout, ChecksumsBundle, b); err != nil {
		return err
	}
	if b, err = r.attest(subjects, PredicateSLSA, prov); err != nil {
		return err
	}
	if err := r.write(stdout, ProvenanceFile(r.Build.Version), b); err != nil {
		return err
	}
	pub, err := r.Key.PublicPEM()
	if err != nil {
		return err
	}
	if err := r.write(stdout, PublicKeyFile, pub); err != nil {
		return err
	}
	for _, n := range names {
		if err := r.signImage(stdout, n, layouts[n], prov); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	return nil
}

func (r *Release) attest(subjects []Subject, predicateType string, predicate []byte) ([]byte, error) {
	st, err := Statement(subjects, predicateType, predicate)
	if err != nil {
		return nil, err
	}
	return SignStatement(r.Key, st)
}

func (r *Release) write(stdout io.Writer, name string, b []byte) error {
	if err := os.WriteFile(filepath.Join(r.Dist, name), b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%10d  %s\n", len(b), name)
	return nil
}

// signImage replaces the referrers of an image's layout by its signature
// (cosign's sign statement of the index), an SBOM attestation of each
// platform (subjects: the index and the platform's image) and the
// provenance (the index and every platform's image).
func (r *Release) signImage(stdout io.Writer, name string, l *Layout, prov []byte) error {
	if err := l.CheckBlobs(); err != nil {
		return err
	}
	if err := l.Detach(); err != nil {
		return err
	}
	platforms, err := l.Platforms()
	if err != nil {
		return err
	}
	index := Subject{Name: name, SHA256: l.Index.Digest.Hex}
	all := []Subject{index}
	type att struct {
		subjects  []Subject
		predType  string
		predicate []byte
	}
	atts := []att{{[]Subject{index}, PredicateSign, nil}}
	for _, p := range platforms {
		if p.Platform == nil {
			return fmt.Errorf("image %s has no platform", p.Digest)
		}
		s := Subject{Name: name + "@" + p.Platform.OS + "/" + p.Platform.Architecture, SHA256: p.Digest.Hex}
		all = append(all, s)
		sbom, err := os.ReadFile(filepath.Join(r.SBOMs, SBOMFile(name, p.Platform)))
		if err != nil {
			return fmt.Errorf("its SBOM: %w (hack/images sboms writes it)", err)
		}
		atts = append(atts, att{[]Subject{index, s}, PredicateCycloneDX, sbom})
	}
	atts = append(atts, att{all, PredicateSLSA, prov})
	for _, a := range atts {
		b, err := r.attest(a.subjects, a.predType, a.predicate)
		if err != nil {
			return err
		}
		img, err := Referrer(l.Index, b, a.predType, r.Build.Epoch)
		if err != nil {
			return err
		}
		if err := l.Attach(img); err != nil {
			return err
		}
		d, err := img.Digest()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s@%s  %s (%s)\n", name, l.Index.Digest, d, a.predType)
	}
	return nil
}
