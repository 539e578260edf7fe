package main

import (
	"bytes"
	"crypto"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Trust is what a signature must verify against: the release's public key,
// or (keyless) a trusted root, the identity the certificate must carry and
// the OIDC issuer that vouched for it.
type Trust struct {
	Key crypto.PublicKey
	// Keyless: Fulcio's and Rekor's keys (a trusted_root.json, or sigstore-go's
	// virtual sigstore in the tests), the certificate's SAN (a workflow's
	// URL for GitHub Actions) and issuer.
	Root     root.TrustedMaterial
	Identity string
	Issuer   string
	// SCTs is how many signed certificate timestamps a keyless certificate
	// must carry: 1 for Fulcio's certificates.
	SCTs int
}

// KeyTrust reads a PEM public key (cosign.pub).
func KeyTrust(pemBytes []byte) (Trust, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return Trust{}, fmt.Errorf("reading the public key: %w", err)
	}
	return Trust{Key: pub}, nil
}

// verifier is sigstore-go's verifier for the trust, and the policy's
// identity part. A key-signed bundle has no transparency log entry and no
// timestamp (make dist runs offline), so none is asked for; a keyless one
// must be in the log, its certificate valid when the log took it.
func (t Trust) verifier() (*verify.Verifier, verify.PolicyOption, error) {
	if t.Key != nil {
		v, err := signature.LoadVerifier(t.Key, crypto.SHA256)
		if err != nil {
			return nil, nil, err
		}
		key := root.NewExpiringKey(v, time.Time{}, time.Time{})
		tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil })
		ver, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
		return ver, verify.WithKey(), err
	}
	if t.Root == nil || t.Identity == "" || t.Issuer == "" {
		return nil, nil, errors.New("keyless verification needs a trusted root, the identity and the issuer")
	}
	opts := []verify.VerifierOption{verify.WithTransparencyLog(1), verify.WithIntegratedTimestamps(1)}
	if t.SCTs > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(t.SCTs))
	}
	ver, err := verify.NewVerifier(t.Root, opts...)
	if err != nil {
		return nil, nil, err
	}
	id, err := verify.NewShortCertificateIdentity(t.Issuer, "", t.Identity, "")
	if err != nil {
		return nil, nil, err
	}
	return ver, verify.WithCertificateIdentity(id), nil
}

// ParseBundle reads a sigstore bundle (JSON).
func ParseBundle(b []byte) (*bundle.Bundle, error) {
	var bu bundle.Bundle
	if err := bu.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("not a sigstore bundle: %w", err)
	}
	return &bu, nil
}

// VerifyBlob checks a bundle's signature of a file's bytes.
func VerifyBlob(entity verify.SignedEntity, data []byte, t Trust) error {
	v, id, err := t.verifier()
	if err != nil {
		return err
	}
	_, err = v.Verify(entity, verify.NewPolicy(verify.WithArtifact(bytes.NewReader(data)), id))
	return err
}

// VerifyStatement checks a bundle's DSSE signature and that its in-toto
// statement names digest (hex SHA-256) as a subject, and returns the
// statement.
func VerifyStatement(entity verify.SignedEntity, digest string, t Trust) (*Stmt, error) {
	v, id, err := t.verifier()
	if err != nil {
		return nil, err
	}
	d, err := hex.DecodeString(digest)
	if err != nil {
		return nil, err
	}
	res, err := v.Verify(entity, verify.NewPolicy(verify.WithArtifactDigest("sha256", d), id))
	if err != nil {
		return nil, err
	}
	if res.Statement == nil {
		return nil, errors.New("the bundle holds no in-toto statement")
	}
	b, err := marshal(res.Statement)
	if err != nil {
		return nil, err
	}
	var st Stmt
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Stmt is a verified in-toto statement as JSON has it.
type Stmt struct {
	Subject       []StmtSubject   `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

// StmtSubject is a statement's subject.
type StmtSubject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Names finds the subject with the SHA-256 (hex): its name, or false.
func (s *Stmt) Names(sha256Hex string) (string, bool) {
	i := slices.IndexFunc(s.Subject, func(x StmtSubject) bool { return x.Digest["sha256"] == sha256Hex })
	if i < 0 {
		return "", false
	}
	return s.Subject[i].Name, true
}

// ImageReport is what VerifyImage found, by predicate type: the subjects'
// names of each verified statement.
type ImageReport map[string][][]string

// VerifyImage checks an image's layout: every blob of its index against
// its digest, and the bundles attached to the index: each must verify
// against the trust and name the index's digest, and there must be a
// signature, a provenance and an SBOM attestation naming each platform's
// image.
func VerifyImage(dir string, t Trust) (ImageReport, error) {
	l, err := OpenLayout(dir)
	if err != nil {
		return nil, err
	}
	if err := l.CheckBlobs(); err != nil {
		return nil, err
	}
	bundles, err := l.Bundles()
	if err != nil {
		return nil, err
	}
	if len(bundles) == 0 {
		return nil, fmt.Errorf("%s: no bundle is attached to the image index %s (unsigned)", dir, l.Index.Digest)
	}
	rep := ImageReport{}
	var sboms []*Stmt
	for i, raw := range bundles {
		b, err := ParseBundle(raw)
		if err != nil {
			return nil, err
		}
		st, err := VerifyStatement(b, l.Index.Digest.Hex, t)
		if err != nil {
			return nil, fmt.Errorf("%s: bundle %d of %d: %w", dir, i+1, len(bundles), err)
		}
		var names []string
		for _, s := range st.Subject {
			names = append(names, s.Name)
		}
		rep[st.PredicateType] = append(rep[st.PredicateType], names)
		if st.PredicateType == PredicateCycloneDX {
			sboms = append(sboms, st)
		}
	}
	for _, want := range []string{PredicateSign, PredicateSLSA} {
		if len(rep[want]) == 0 {
			return nil, fmt.Errorf("%s: no %s statement verified", dir, want)
		}
	}
	platforms, err := l.Platforms()
	if err != nil {
		return nil, err
	}
	for _, p := range platforms {
		if !slices.ContainsFunc(sboms, func(s *Stmt) bool { _, ok := s.Names(p.Digest.Hex); return ok }) {
			return nil, fmt.Errorf("%s: no SBOM attestation names the image %s", dir, p.Digest)
		}
	}
	return rep, nil
}

// VerifyProvenance checks the provenance bundle and that it names each
// file, by its base name, with its SHA-256.
func VerifyProvenance(entity verify.SignedEntity, files []string, t Trust) (*Stmt, error) {
	if len(files) == 0 {
		return nil, errors.New("no file to check the provenance of")
	}
	var st *Stmt
	for _, f := range files {
		sum, err := fileSHA256(f)
		if err != nil {
			return nil, err
		}
		if st, err = VerifyStatement(entity, sum, t); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if st.PredicateType != PredicateSLSA {
			return nil, fmt.Errorf("%s: the statement is a %s, not SLSA provenance", f, st.PredicateType)
		}
		if name, _ := st.Names(sum); name != filepath.Base(f) {
			return nil, fmt.Errorf("%s: the provenance names its digest %q", f, name)
		}
	}
	return st, nil
}
