package upstream_test

import (
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

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
