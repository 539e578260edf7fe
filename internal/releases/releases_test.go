package releases

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
)

// TestCCMTable: one entry a minor, in order, each tag of its own minor.
func TestCCMTable(t *testing.T) {
	for i, c := range CCM {
		if i > 0 && c.Minor != CCM[i-1].Minor+1 {
			t.Errorf("minor %d follows %d", c.Minor, CCM[i-1].Minor)
		}
		v, ok := parse(c.Latest)
		if !ok || int(v.Minor()) != c.Minor || !strings.HasPrefix(c.Latest, "v") {
			t.Errorf("minor %d: tag %q", c.Minor, c.Latest)
		}
		if c.SDKv2From > int(v.Patch()) {
			t.Errorf("minor %d: the first v2 patch %d is after the latest %s", c.Minor, c.SDKv2From, c.Latest)
		}
	}
	if got, _ := Latest(26); got != "v1.26.14" {
		t.Error(got)
	}
	if _, ok := Latest(LastMinor() + 1); ok {
		t.Error("a tag for a minor past the table")
	}
	if got := Tag(LastMinor() + 1); got != "v1.38.<patch>" {
		t.Error(got)
	}
}

// TestUsesSDKv2: the rows around each switch, as aws_sdk.go builds its
// clients at the tag.
func TestUsesSDKv2(t *testing.T) {
	for _, c := range []struct {
		tag    string
		v2, ok bool
	}{
		{"v1.22.8", false, true}, {"v1.26.14", false, true}, {"v1.28.11", false, true},
		{"v1.29.8", false, true}, {"v1.29.9", true, true},
		{"v1.30.9", false, true}, {"v1.30.10", true, true},
		{"v1.33.0", false, true}, {"v1.33.1", true, true},
		{"v1.34.0", true, true}, {"v1.37.1", true, true}, {"v1.40.0", true, true},
		{"v1.20.0-alpha.0", false, true}, {"v1.31.8", false, true}, {"v1.31.9", true, true},
		{"v1.32.3", false, true}, {"v1.32.4", true, true}, {"v1.35.0-alpha.0", true, true}, {"1.36.0", true, true},
		{"latest", false, false}, {"", false, false}, {"v2.0.0", false, false},
	} {
		if v2, ok := UsesSDKv2(c.tag); v2 != c.v2 || ok != c.ok {
			t.Errorf("%q: %v %v, want %v %v", c.tag, v2, ok, c.v2, c.ok)
		}
	}
	if got := SDKv2Releases(); got != "v1.29.9, v1.30.10, v1.31.9, v1.32.4, v1.33.1 and every later patch of their minors, and every release from v1.34.0" {
		t.Error(got)
	}
}

// TestIAM: each added action at the releases around its arrival.
func TestIAM(t *testing.T) {
	has := func(tag, action string) bool { return slices.Contains(IAMControlPlane(tag), action) }
	for _, c := range []struct {
		tag, action string
		want        bool
	}{
		{"v1.26.0", ActionDescribeAZs, false}, {"v1.26.1", ActionDescribeAZs, true}, {"v1.37.1", ActionDescribeAZs, true},
		{"v1.29.10", ActionInstanceTopology, false}, {"v1.30.3", ActionInstanceTopology, false},
		{"v1.30.4", ActionInstanceTopology, true}, {"v1.31.1", ActionInstanceTopology, false},
		{"v1.31.2", ActionInstanceTopology, true}, {"v1.32.0", ActionInstanceTopology, true}, {"v1.36.2", ActionInstanceTopology, true},
		{"v1.36.2", ActionSetSecurityGroups, false}, {"v1.37.0", ActionSetSecurityGroups, true},
	} {
		if got := has(c.tag, c.action); got != c.want {
			t.Errorf("%s %s: %v", c.tag, c.action, got)
		}
	}
	if n := len(IAMControlPlane("v1.26.0")); n != len(IAMControlPlaneBase) {
		t.Errorf("v1.26.0: %d actions", n)
	}
	if !slices.IsSorted(IAMControlPlane("v1.37.1")) || !slices.IsSorted(IAMNode()) {
		t.Error("not sorted")
	}
}

func TestDefects(t *testing.T) {
	for tag, want := range map[string]int{
		"v1.33.4": 0, "v1.34.0": 1, "v1.34.3": 1, "v1.34.4": 0, "v1.35.2": 1, "v1.35.3": 0,
		"v1.36.0": 1, "v1.36.1": 0, "v1.37.1": 0, "latest": 0,
	} {
		if got := DefectsOf(tag); len(got) != want {
			t.Errorf("%s: %v", tag, got)
		}
	}
}

func TestCloudConfigKeys(t *testing.T) {
	for _, c := range []struct {
		tag, key string
		want     bool
	}{
		{"v1.26.0", "SourceARN", false}, {"v1.26.7", "SourceARN", true}, {"v1.27.2", "SourceARN", false},
		{"v1.27.3", "SourceARN", true}, {"v1.29.0", "SourceARN", true},
		{"v1.26.14", "Region", false}, {"v1.27.0", "Region", false}, {"v1.27.1", "region", true},
		{"v1.27.0", "DisableStrictZoneCheck", true}, {"v1.27.1", "DisableStrictZoneCheck", false},
		{"v1.34.3", "NLBSecurityGroupMode", false}, {"v1.35.0", "NLBSecurityGroupMode", true},
		{"v1.26.0", "Zone", true},
	} {
		if got, _ := ReadsKey(c.tag, c.key); got != c.want {
			t.Errorf("%s %s: %v", c.tag, c.key, got)
		}
	}
	for tag, want := range map[string]bool{"v1.26.0": true, "v1.26.6": true, "v1.26.7": false, "v1.27.2": true, "v1.28.1": true, "v1.28.2": false, "v1.37.1": false} {
		if UnknownKeyFatal(tag) != want {
			t.Errorf("%s: %v", tag, !want)
		}
	}
}

// TestChanges: a change of a minor is in force from it; one of a patch
// release line from the next minor, or from a line whose first release has
// it.
func TestChanges(t *testing.T) {
	count := func(component string, minor int) int { return len(Changes(component, minor)) }
	if count("kube-apiserver", 32) != 0 || count("kube-apiserver", 33) != 1 || count("kube-apiserver", 37) != 1 {
		t.Error("kube-apiserver")
	}
	names := func(minor int) []string {
		var s []string
		for _, c := range Changes("rke2", minor) {
			s = append(s, c.Option)
		}
		return s
	}
	if got := names(31); slices.Contains(got, "cloud-provider-name: aws") {
		t.Errorf("1.31 (v1.31.3 has it, v1.31.0 not): %v", got)
	}
	if got := names(32); !slices.Contains(got, "cloud-provider-name: aws") {
		t.Errorf("1.32: %v", got)
	}
	if got := names(36); !slices.Contains(got, "disable-cloud-controller") {
		t.Errorf("1.36: %v", got)
	}
	for option, want := range map[string]int{"cloud-provider-name: aws": 32, "disable-cloud-controller": 36, "node-external-ip": 0} {
		if c, _ := Change("rke2", option); c.FirstMinor() != want {
			t.Errorf("rke2 %s: first in force at 1.%d, want 1.%d", option, c.FirstMinor(), want)
		}
	}
	for _, c := range OptionChanges {
		if c.Says == "" || c.Fix == "" || c.Source == "" {
			t.Errorf("%s %s: a change says what, how to fix it and where it was read", c.Component, c.Option)
		}
		for _, r := range c.Releases {
			if _, err := version.ParseGeneric(strings.SplitN(r, "+", 2)[0]); err != nil {
				t.Errorf("%s: %v", r, err)
			}
		}
	}
}

func TestNewer(t *testing.T) {
	got := Newer([]string{"v1.25.0", "v1.31.0", "v1.34.3", "v1.34.4", "v1.34.5", "v1.35.3", "v1.37.1", "v1.38.0-beta.0", "v1.38.0", "v1.38.0", "latest", "v2.0.0"})
	want := []string{"v1.34.5", "v1.38.0"}
	if !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	if len(Newer(nil)) != 0 {
		t.Error("nothing served, something new")
	}
	c := Candidates()
	if !slices.Contains(c, "v1.37.2") || !slices.Contains(c, "v1.38.0") || !slices.Contains(c, "v1.39.0") || !slices.Contains(c, "v1.22.9") || !slices.Contains(c, "v1.34.5") {
		t.Error(c)
	}
}
