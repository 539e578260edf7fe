package upstream_test

import (
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

func TestPinned(t *testing.T) {
	promoted := releases.Tag(releases.LastInTreeMinor)
	digest, ok := releases.Digest(promoted)
	if !ok {
		t.Fatalf("%s is not in the promotion list", promoted)
	}
	var unpromoted string
	for _, c := range releases.CCM {
		if c.Unpromoted() {
			unpromoted = c.Latest
		}
	}
	if unpromoted == "" {
		t.Fatal("no minor's newest release is unpromoted: the case needs one")
	}
	other := "sha256:" + strings.Repeat("ab", 32)
	for _, c := range []struct {
		in, want, err string
	}{
		{in: promoted, want: promoted + "@" + digest},
		{in: promoted + "@" + digest, want: promoted + "@" + digest},
		{in: promoted + "@" + other, err: "promotion list gives " + promoted + " the digest " + digest},
		{in: unpromoted, err: "crane digest " + releases.ImageRepository + ":" + unpromoted},
		{in: unpromoted + "@" + other, want: unpromoted + "@" + other},
		{in: unpromoted + "@sha512:" + strings.Repeat("ab", 64), err: "not a sha256 one"},
		{in: unpromoted + "@sha256:" + strings.Repeat("AB", 32), err: "not a CCM release tag"},
		{in: unpromoted + "@sha256:abc", err: "not a CCM release tag"},
		{in: "latest", err: "not a CCM release tag"},
		{in: "1.35.2", err: "not a CCM release tag"},
		{in: promoted + "\n", err: "not a CCM release tag"},
		{in: "", err: "not a CCM release tag"},
		{in: promoted + "@", err: "not a CCM release tag"},
		{in: "v1.35.2/evil", err: "not a CCM release tag"},
	} {
		got, err := upstream.Pinned(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("Pinned(%q) = %q, %v; want %q", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || got != ""):
			t.Errorf("Pinned(%q) = %q, %v; want an error with %q", c.in, got, err, c.err)
		}
	}
}
