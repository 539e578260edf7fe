package check

import (
	"strings"
	"testing"
)

// TestInstanceIDOf: the providerIDs the CCM takes (MapToAWSInstanceID) and
// refuses.
func TestInstanceIDOf(t *testing.T) {
	for in, want := range map[string]string{
		"aws:///us-west-2a/i-0abc": "i-0abc", "aws:////i-0abc": "i-0abc", "i-0abc": "i-0abc", "aws://us-west-2a/i-0abc": "i-0abc",
		"aws:///us-west-2a/fargate-ip-10-0-0-1": "fargate-ip-10-0-0-1",
		"aws":                                   "", "aws://": "", "aws:///": "", "aws:///us-west-2a/": "", "aws:///us-west-2a/node-1": "",
	} {
		got, _, ok := InstanceIDOf(in)
		if got != want || ok != (want != "") {
			t.Errorf("instanceIDOf(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// FuzzInstanceIDOf: whatever a node's providerID holds, check reads an
// instance ID out of it only as the CCM would (the last path segment,
// i-... or fargate-..., no slash), never panics, and agrees with itself
// when the value is given with the aws:/// prefix the CCM adds.
func FuzzInstanceIDOf(f *testing.F) {
	for _, s := range []string{"aws:///us-west-2a/i-0abc", "aws", "aws://", "i-0abc", "aws:////i-0abc", "gce://p/z/i-x", "aws:///%zz/i-1", "aws:///a/fargate-x", "", "/", "aws:///i-a/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pid string) {
		id, fargate, ok := InstanceIDOf(pid)
		if !ok {
			if id != "" || fargate {
				t.Fatalf("refused %q but returned %q, %v", pid, id, fargate)
			}
			return
		}
		if strings.Contains(id, "/") || !(strings.HasPrefix(id, "i-") || fargate && strings.HasPrefix(id, "fargate-")) {
			t.Fatalf("instanceIDOf(%q) = %q", pid, id)
		}
		if !strings.HasPrefix(pid, "aws://") {
			if id2, _, ok2 := InstanceIDOf("aws:///" + pid); !ok2 || id2 != id {
				t.Fatalf("%q gives %q, aws:///%q gives %q, %v", pid, id, pid, id2, ok2)
			}
		}
	})
}
