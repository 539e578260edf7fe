package upstream_test

import (
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

// TestUsesSDKv2: the SDK of each release, as pkg/providers/v1/aws_sdk.go
// builds its clients at the tag; the rows around each switch.
func TestUsesSDKv2(t *testing.T) {
	for _, c := range []struct {
		tag    string
		v2, ok bool
	}{
		{"v1.26.14", false, true}, {"v1.28.11", false, true},
		{"v1.29.8", false, true}, {"v1.29.9", true, true}, {"v1.29.10", true, true},
		{"v1.30.0", false, true}, {"v1.30.9", false, true}, {"v1.30.10", true, true},
		{"v1.31.8", false, true}, {"v1.31.9", true, true},
		{"v1.32.3", false, true}, {"v1.32.4", true, true}, {"v1.32.8", true, true},
		{"v1.33.0", false, true}, {"v1.33.1", true, true},
		{"v1.34.0", true, true}, {"v1.35.3", true, true}, {"1.36.0", true, true},
		{"v1.35.0-alpha.0", true, true},
		{"latest", false, false}, {"", false, false}, {"v2.0.0", false, false},
	} {
		if v2, ok := upstream.UsesSDKv2(c.tag); v2 != c.v2 || ok != c.ok {
			t.Errorf("%q: %v %v, want %v %v", c.tag, v2, ok, c.v2, c.ok)
		}
	}
	if got := upstream.SDKv2Releases(); got != "v1.29.9, v1.30.10, v1.31.9, v1.32.4, v1.33.1 and every later patch of their minors, and every release from v1.34.0" {
		t.Error(got)
	}
}

func TestServiceNames(t *testing.T) {
	for _, c := range []struct {
		name, prefix string
		v2, ok       bool
	}{
		{"EC2", "ec2", true, true}, {"ec2", "ec2", false, true},
		{"Elastic Load Balancing v2", "elasticloadbalancing", true, true}, {"elasticloadbalancing", "elasticloadbalancing", false, true},
		{"KMS", "kms", true, true},
		{"Ec2", "", false, false}, {"s3", "", false, false},
	} {
		s, v2, ok := upstream.ServiceOfName(c.name)
		if s.IAMPrefix != c.prefix || v2 != c.v2 || ok != c.ok {
			t.Errorf("%q: %+v %v %v", c.name, s, v2, ok)
		}
	}
	if s, ok := upstream.ServiceOfID("Elastic Load Balancing"); !ok || s.EndpointID != "elasticloadbalancing" {
		t.Errorf("%+v %v", s, ok)
	}
	if _, ok := upstream.ServiceOfID("ec2"); ok {
		t.Error("an endpoint ID taken for a service ID")
	}
}
