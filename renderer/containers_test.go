package renderer

import (
	"strings"
	"testing"
)

var digest = "sha256:" + strings.Repeat("01", 32)

// TestIsCCMContainer: the CCM by what only it has.
func TestIsCCMContainer(t *testing.T) {
	cases := []struct {
		command []string
		image   string
		want    bool
	}{
		{nil, "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0", true},
		{nil, "registry.k8s.io/provider-aws/cloud-controller-manager@" + digest, true},
		{nil, "registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.1@" + digest, true},
		{nil, "us.gcr.io/k8s-artifacts-prod/provider-aws/cloud-controller-manager:v1.22.0-alpha.0", true},
		{nil, "gcr.io/k8s-staging-provider-aws/cloud-controller-manager:v1.20.0-alpha.0", true},
		{nil, "harbor.corp.example:8443/mirror/registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.1", true},
		{nil, "123456789012.dkr.ecr.eu-west-1.amazonaws.com/aws-cloud-controller-manager:v1.26.1", true},
		{nil, "localhost:5000/aws-cloud-controller-manager", true},
		{[]string{"/bin/aws-cloud-controller-manager", "--v=2"}, "corp.example/anything:1", true},
		{[]string{"aws-cloud-controller-manager"}, "", true},
		// Not the AWS CCM.
		{nil, "registry.k8s.io/cloud-controller-manager:v1.30.0", false},
		{nil, "example.com/xprovider-aws/cloud-controller-manager:v1", false},
		{nil, "gcr.io/k8s-staging-cloud-provider-gcp/cloud-controller-manager:v30", false},
		{nil, "123456789012.dkr.ecr.eu-west-1.amazonaws.com/cloud-controller-manager:v1", false},
		{nil, "registry.k8s.io/autoscaling/cluster-autoscaler:v1.26.2", false},
		{[]string{"./cluster-autoscaler", "--cloud-provider=aws"}, "registry.k8s.io/autoscaling/cluster-autoscaler:v1.26.2", false},
		// A command replaces the image's entrypoint: only the command counts.
		{[]string{"/bin/sh", "-c", "exec aws-cloud-controller-manager"}, "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0", false},
		{nil, "", false},
		// Not image references at all.
		{nil, "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0\u2028", false},
		{nil, "registry.k8s.io/Provider-aws/cloud-controller-manager:v1.35.0", false},
		{nil, "registry.k8s.io/provider-aws/cloud-controller-manager@sha256:0123", false},
		{nil, "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0 ", false},
	}
	for _, c := range cases {
		if got := IsCCMContainer(c.command, c.image); got != c.want {
			t.Errorf("IsCCMContainer(%q, %q) = %v, want %v", c.command, c.image, got, c.want)
		}
	}
}

func TestImageTag(t *testing.T) {
	for image, want := range map[string]string{
		"registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0": "v1.35.0",
		"localhost:5000/ccm":                                                "",
		"localhost:5000/ccm:v1.26.1@" + digest:                              "v1.26.1",
		"registry.k8s.io/provider-aws/cloud-controller-manager@" + digest:   "",
		"registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0;id":  "",
		"registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0\x0b": "",
	} {
		if got := ImageTag(image); got != want {
			t.Errorf("ImageTag(%q) = %q, want %q", image, got, want)
		}
	}
}
