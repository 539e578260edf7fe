package check

import (
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// TestPullFix: a CCM pod that cannot pull its image is told what to pin
// from the promotion list: a tag the list lacks, the minor's newest
// promoted release by digest; a promoted tag or another registry's image,
// the pod's events.
func TestPullFix(t *testing.T) {
	up := releases.ImageRepository + ":"
	var unpromoted, promoted string
	for _, c := range releases.CCM {
		if len(c.Unpulled) > 0 && !c.Unpromoted() {
			unpromoted, promoted = c.Unpulled[0], c.Latest
		}
	}
	if unpromoted == "" {
		t.Fatal("the release data has no minor with a promoted Latest and an unpulled tag")
	}
	digest, _ := releases.Digest(promoted)
	for _, c := range []struct {
		image     string
		want, not []string
	}{
		{up + unpromoted, []string{unpromoted + " is not in registry.k8s.io's promotion list", "pin " + promoted + "@" + digest, "--set image.tag=" + promoted, "kubernetes/k8s.io", "kubectl describe pod"}, nil},
		{up + promoted, []string{"kubectl describe pod -n kube-system ccm-a", promoted + " is promoted"}, []string{"not in"}},
		{up + "v1.99.0", []string{"v1.99.0 is not in registry.k8s.io's promotion list", "kubectl describe pod"}, []string{"pin v"}},
		{"mirror.example/provider-aws/cloud-controller-manager:" + unpromoted, []string{"kubectl describe pod"}, []string{"not in", "promoted"}},
		{up + promoted + "@" + digest, []string{"kubectl describe pod"}, []string{"not in"}},
		{"not an image ::", []string{"kubectl describe pod"}, []string{"not in"}},
	} {
		got := pullFix(c.image, "kube-system", "ccm-a")
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.image, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: %q says %q", c.image, got, n)
			}
		}
	}
}

// TestTagAlone: registry.k8s.io's CCM given by tag alone is told its pin
// by digest (the promotion list's, or the command that reads it); a pin
// by digest, another registry's image and an unreadable one are not.
func TestTagAlone(t *testing.T) {
	up := releases.ImageRepository + ":"
	promoted := releases.Tag(releases.LastInTreeMinor)
	digest, ok := releases.Digest(promoted)
	if !ok {
		t.Fatalf("%s is not promoted", promoted)
	}
	for _, c := range []struct{ image, want string }{
		{up + promoted, promoted + "@" + digest},
		{up + "v1.99.0", "v1.99.0@<its digest: crane digest " + up + "v1.99.0>"},
		{up + promoted + "@" + digest, ""},
		{"mirror.example/provider-aws/cloud-controller-manager:" + promoted, ""},
		{releases.ImageRepository, ""},
		{"not an image ::", ""},
	} {
		if got := tagAlone(c.image); got != c.want {
			t.Errorf("tagAlone(%s) = %q, want %q", c.image, got, c.want)
		}
	}
}
