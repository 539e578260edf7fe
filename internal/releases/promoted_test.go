package releases

import (
	"regexp"
	"strings"
	"testing"
)

// TestPromoted: every recorded digest is a sha256 digest of a release tag
// of a minor the data covers, no two tags share one, the unpulled tags are
// not recorded, and today's unpromoted minors are 1.36 and 1.37.
func TestPromoted(t *testing.T) {
	digest := regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	tagOf := map[string]string{}
	for tag, d := range Promoted {
		v, ok := parse(tag)
		if !ok || !strings.HasPrefix(tag, "v") || v.PreRelease() != "" || int(v.Minor()) < FirstMinor() {
			t.Errorf("%q is no release tag of 1.%d or later", tag, FirstMinor())
		}
		if !digest.MatchString(d) {
			t.Errorf("%s: %q is no sha256 digest", tag, d)
		}
		if other, ok := tagOf[d]; ok {
			t.Errorf("%s and %s share %s", tag, other, d)
		}
		tagOf[d] = tag
	}
	var unpromoted []int
	for _, c := range CCM {
		for _, u := range c.Unpulled {
			if _, ok := Promoted[u]; ok {
				t.Errorf("1.%d: %s is unpulled and promoted", c.Minor, u)
			}
		}
		if c.Unpromoted() {
			unpromoted = append(unpromoted, c.Minor)
		}
	}
	if len(unpromoted) != 2 || unpromoted[0] != 36 || unpromoted[1] != 37 {
		t.Errorf("unpromoted minors %v, want [36 37]", unpromoted)
	}
}

// TestPin: a promoted tag pins tag@digest, any other tag itself.
func TestPin(t *testing.T) {
	for tag, want := range map[string]string{
		"v1.35.2":   "v1.35.2@sha256:5a5d4e5942ad078a184c12bf5435f8226ccb157ee15e9e1f87c183a4bf4b8f1a",
		"v1.26.14":  "v1.26.14@sha256:bfdfbfe6ddee363786d27a3f47cdaaf7de06edb38352e825038847c5d0935064",
		"v1.36.2":   "v1.36.2",
		"v1.35.3":   "v1.35.3",
		"latest":    "latest",
		"v1.35.2.1": "v1.35.2.1",
	} {
		if got := Pin(tag); got != want {
			t.Errorf("Pin(%q) = %q, want %q", tag, got, want)
		}
	}
	if d, ok := Digest("v1.34.3"); !ok || d != "sha256:ab45cec4a1ee68a556d09a362746db8fd66b258101aefcf0542f51e960248810" {
		t.Error(d, ok)
	}
	if _, ok := Digest("v1.37.1"); ok {
		t.Error("v1.37.1 has a digest")
	}
}
