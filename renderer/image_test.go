package renderer

import (
	"strings"
	"testing"
)

// TestParseDigestPinned: what --guard-image takes, and what it refuses
// (each refused reference was once taken as "pinned by digest").
func TestParseDigestPinned(t *testing.T) {
	hex := strings.Repeat("ab", 32)
	for ref, want := range map[string]Image{
		"ghcr.io/aws-ccm-renderer/aws-ccm-renderer-guard@sha256:" + hex:      {"ghcr.io", "aws-ccm-renderer/aws-ccm-renderer-guard", "", "sha256:" + hex},
		"registry.example:5000/guard:v1.2.3@sha256:" + hex:                   {"registry.example:5000", "guard", "v1.2.3", "sha256:" + hex},
		"localhost:5000/guard@sha256:" + hex:                                 {"localhost:5000", "guard", "", "sha256:" + hex},
		"[::1]:5000/guard@sha256:" + hex:                                     {"[::1]:5000", "guard", "", "sha256:" + hex},
		"123456789012.dkr.ecr.eu-west-1.amazonaws.com/g/guard@sha256:" + hex: {"123456789012.dkr.ecr.eu-west-1.amazonaws.com", "g/guard", "", "sha256:" + hex},
	} {
		got, err := ParseDigestPinned(ref)
		if err != nil || got != want {
			t.Errorf("ParseDigestPinned(%q) = %+v, %v; want %+v", ref, got, err, want)
		}
	}
	for _, ref := range []string{
		"$(id)@sha256:" + hex,
		"registry.example/$(id)@sha256:" + hex,
		"$(id).example/guard@sha256:" + hex,
		"Registry.example/Guard@sha256:" + hex,
		"registry.example/guard@sha256:" + hex + "\u2028",
		"registry.example/guard\u2028@sha256:" + hex,
		"regi\u2028stry.example/guard@sha256:" + hex,
		"regi\u00a0stry.example/guard@sha256:" + hex,
		"registry.example/guard@sha256:" + hex + "\v",
		"registry.example/guard@sha256:" + hex + "\n- name: x",
		" registry.example/guard@sha256:" + hex,
		"registry.example/guard@sha256:" + strings.ToUpper(hex),
		"registry.example/guard@sha256:abc",
		"registry.example/guard@sha512:" + strings.Repeat("ab", 64),
		"registry.example/guard@sha256:" + hex + "@sha256:" + hex,
		"guard@sha256:" + hex,         // no registry: Docker Hub by a guess
		"library/guard@sha256:" + hex, // the same
		"registry.example/guard:v1",
		"registry.example/guard",
		"https://registry.example/guard@sha256:" + hex,
		"",
	} {
		if img, err := ParseDigestPinned(ref); err == nil {
			t.Errorf("ParseDigestPinned(%q) = %+v, want an error", ref, img)
		} else if strings.ContainsAny(err.Error(), "\n\v\u2028") {
			t.Errorf("ParseDigestPinned(%q): the error %q holds a raw control character", ref, err)
		}
	}
}

// TestParseImage: the images of pods and charts, where the registry
// (Docker Hub) and the tag may be left out.
func TestParseImage(t *testing.T) {
	for ref, want := range map[string]Image{
		"registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0": {"registry.k8s.io", "provider-aws/cloud-controller-manager", "v1.35.0", ""},
		"aws-cloud-controller-manager":                                  {"", "aws-cloud-controller-manager", "", ""},
		"corp/aws-cloud-controller-manager:v1":                          {"", "corp/aws-cloud-controller-manager", "v1", ""},
		"localhost/ccm:1":                                               {"localhost", "ccm", "1", ""},
	} {
		got, err := ParseImage(ref)
		if err != nil || got != want {
			t.Errorf("ParseImage(%q) = %+v, %v; want %+v", ref, got, err, want)
		}
	}
	for _, ref := range []string{"", "CCM:v1", "ccm:", "ccm:v1:v2", "registry.k8s.io/ccm:v1\u2028", "a b", "ccm:v1;id", "-ccm"} {
		if img, err := ParseImage(ref); err == nil {
			t.Errorf("ParseImage(%q) = %+v, want an error", ref, img)
		}
	}
}

// FuzzParseImage: a reference the parser takes is printable ASCII, and
// its parts put together give it back.
func FuzzParseImage(f *testing.F) {
	hex := strings.Repeat("ab", 32)
	for _, s := range []string{"registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0", "ccm", "localhost:5000/a/b:c@sha256:" + hex,
		"$(id)@sha256:" + hex, "a\u2028b", "[::1]:80/x", "x:y@sha256:" + hex} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		img, err := ParseImage(s)
		if err != nil {
			return
		}
		for i := 0; i < len(s); i++ {
			if s[i] <= ' ' || s[i] >= 0x7f {
				t.Fatalf("ParseImage(%q) took byte %#x", s, s[i])
			}
		}
		back := img.Name()
		if img.Tag != "" {
			back += ":" + img.Tag
		}
		if img.Digest != "" {
			back += "@" + img.Digest
		}
		if back != s {
			t.Fatalf("ParseImage(%q) = %+v, which writes back as %q", s, img, back)
		}
	})
}
