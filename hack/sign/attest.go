package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// The predicate types of the release's statements, as cosign names them
// (cosign attest --type cyclonedx, slsaprovenance1; cosign sign
// --new-bundle-format signs an image with a statement of the first).
const (
	PredicateSign      = "https://sigstore.dev/cosign/sign/v1"
	PredicateCycloneDX = "https://cyclonedx.org/bom"
	PredicateSLSA      = "https://slsa.dev/provenance/v1"
	// InTotoPayloadType is the DSSE payload type of an in-toto statement.
	InTotoPayloadType = "application/vnd.in-toto+json"
)

// Subject is an artifact a statement speaks of: a file or image by name,
// and its SHA-256.
type Subject struct {
	Name   string
	SHA256 string // hex
}

// Statement is an in-toto v1 statement of the subjects, the predicate
// given as JSON (nil: an empty one, as for cosign's signature statement).
func Statement(subjects []Subject, predicateType string, predicate []byte) ([]byte, error) {
	st := &intoto.Statement{Type: intoto.StatementTypeUri, PredicateType: predicateType}
	for _, s := range subjects {
		if _, err := hex.DecodeString(s.SHA256); err != nil || len(s.SHA256) != 64 {
			return nil, fmt.Errorf("subject %s: %q is not a SHA-256 in hex", s.Name, s.SHA256)
		}
		st.Subject = append(st.Subject, &intoto.ResourceDescriptor{Name: s.Name, Digest: map[string]string{"sha256": s.SHA256}})
	}
	st.Predicate = &structpb.Struct{}
	if predicate != nil {
		if err := protojson.Unmarshal(predicate, st.Predicate); err != nil {
			return nil, fmt.Errorf("the %s predicate: %w", predicateType, err)
		}
	}
	if err := st.Validate(); err != nil {
		return nil, err
	}
	return marshal(st)
}

// marshal is protojson's output made stable: protojson varies its
// whitespace from build to build on purpose, encoding/json does not.
func marshal(m proto.Message) ([]byte, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Build is what the provenance says of make dist.
type Build struct {
	BuilderID string // who ran make dist: a CI workflow's URL, or the repository's dist.mk
	Source    string // the repository's URL
	Revision  string // the commit
	Version   string // vX.Y.Z
	GoVersion string
	Epoch     time.Time // SOURCE_DATE_EPOCH
}

// BuildType names how make dist builds: docs/dev/release.md of the
// repository says it.
func (b Build) BuildType() string { return b.Source + "/blob/main/docs/dev/release.md" }

// Provenance is the SLSA v1 provenance predicate of make dist: the
// commit it built from, the version, the Go toolchain.
func Provenance(b Build) ([]byte, error) {
	if b.BuilderID == "" || b.Source == "" || b.Revision == "" || b.Version == "" {
		return nil, fmt.Errorf("provenance needs the builder, source, revision and version (have %q, %q, %q, %q)", b.BuilderID, b.Source, b.Revision, b.Version)
	}
	ext, err := structpb.NewStruct(map[string]any{"source": b.Source, "revision": b.Revision, "version": b.Version, "target": "make dist"})
	if err != nil {
		return nil, err
	}
	internal, err := structpb.NewStruct(map[string]any{"goVersion": b.GoVersion, "SOURCE_DATE_EPOCH": fmt.Sprint(b.Epoch.Unix()),
		"CGO_ENABLED": "0", "flags": "-trimpath -buildvcs=false"})
	if err != nil {
		return nil, err
	}
	p := &slsa.Provenance{
		BuildDefinition: &slsa.BuildDefinition{
			BuildType:          b.BuildType(),
			ExternalParameters: ext,
			InternalParameters: internal,
			ResolvedDependencies: []*intoto.ResourceDescriptor{{
				Uri:    "git+" + b.Source + "@" + b.Version,
				Digest: map[string]string{"gitCommit": b.Revision},
			}},
		},
		RunDetails: &slsa.RunDetails{
			Builder: &slsa.Builder{Id: b.BuilderID},
		},
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return marshal(p)
}

// SignStatement signs a statement as a DSSE envelope in a sigstore bundle
// (v0.3, JSON), as cosign attest --new-bundle-format does.
func SignStatement(k sign.Keypair, statement []byte) ([]byte, error) {
	b, err := sign.Bundle(&sign.DSSEData{Data: statement, PayloadType: InTotoPayloadType}, k, sign.BundleOptions{})
	if err != nil {
		return nil, err
	}
	return protojson.Marshal(b)
}

// SignBlob signs a file's bytes into a sigstore bundle (a message
// signature), as cosign sign-blob --new-bundle-format does.
func SignBlob(k sign.Keypair, data []byte) ([]byte, error) {
	b, err := sign.Bundle(&sign.PlainData{Data: data}, k, sign.BundleOptions{})
	if err != nil {
		return nil, err
	}
	return protojson.Marshal(b)
}
