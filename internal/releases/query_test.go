package releases

import (
	"fmt"
	"strings"
	"testing"
)

// TestForCluster: a cluster's version of any spelling picks its minor's
// releases; what is not a version, and a minor without a release, are
// refused with what to do.
func TestForCluster(t *testing.T) {
	for _, kv := range []string{"v1.34.2", "1.34", "v1.34.2+rke2r1", "v1.34.0-rc.1+k3s1"} {
		c, err := ForCluster(kv)
		if err != nil || c.Minor != 34 || c.Latest != Tag(34) {
			t.Errorf("ForCluster(%q) = %+v, %v; want the releases of 1.34", kv, c, err)
		}
	}
	for kv, want := range map[string]string{
		"":                                    "is not a Kubernetes version",
		"latest":                              "is not a Kubernetes version",
		"v2.1.0":                              "is not a Kubernetes version",
		"v1.21.3":                             "no CCM release of Kubernetes 1.21",
		fmt.Sprintf("v1.%d.0", LastMinor()+1): fmt.Sprintf("pin the CCM's image tag, a v1.%d.x release", LastMinor()+1),
	} {
		if _, err := ForCluster(kv); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ForCluster(%q): %v, want %q", kv, err, want)
		}
	}
}

// TestFirstAfter: the release an upgrade from a distribution release
// reaches first with a change that came with patch releases.
func TestFirstAfter(t *testing.T) {
	c, ok := Change("rke2", "node-name")
	if !ok {
		t.Fatal("no rke2 node-name change")
	}
	for release, want := range map[string]string{
		"v1.28.15+rke2r1": "v1.29.11+rke2r1", "v1.29.10+rke2r1": "v1.29.11+rke2r1", "v1.31.2+rke2r1": "v1.31.3+rke2r1",
		"v1.31.3+rke2r1": "", "v1.31.5+rke2r1": "", "v1.34.1+rke2r1": "", "v1.31.2": "v1.31.3+rke2r1", "not a version": "",
	} {
		if got := c.FirstAfter(release); got != want {
			t.Errorf("FirstAfter(%s) = %q, want %q", release, got, want)
		}
		if in := c.InRelease(release); in != (want == "" && release != "not a version") {
			t.Errorf("InRelease(%s) = %v", release, in)
		}
	}
}
