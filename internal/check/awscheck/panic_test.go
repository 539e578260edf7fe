package awscheck

import (
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"strings"
	"testing"
)

// TestAWSProviderIDPanics: a node whose providerID names no instance is an
// error for every release; for the releases whose node informer panics on
// it (before v1.23.20, v1.24.19, v1.25.15, v1.26.11, v1.27.6 and v1.28.0)
// the finding says the CCM exits and initialises no node. The e2e
// calibration (e2e/awsccm TestCheckAWSCalibration) saw v1.26.0 exit so.
func TestAWSProviderIDPanics(t *testing.T) {
	for _, c := range []struct {
		tag    string
		panics bool
	}{
		{"v1.22.0", false}, {"v1.23.0", true}, {"v1.25.14", true}, {"v1.25.15", false},
		{"v1.26.0", true}, {"v1.26.10", true}, {"v1.26.11", false},
		{"v1.27.5", true}, {"v1.27.6", false}, {"v1.28.0", false}, {"v1.35.3", false},
	} {
		s := healthyAWSWith(t, ccmImage("registry.k8s.io/provider-aws/cloud-controller-manager:"+c.tag))
		s.Nodes[1].Spec.ProviderID = "aws"
		var got []check.Finding
		for _, f := range awsFindings(check.Evaluate(s)) {
			if f.Area == check.AreaInstance && f.Severity == check.Error && strings.Contains(f.Message, `providerID "aws" names no instance`) {
				got = append(got, f)
			}
		}
		if len(got) != 1 {
			t.Errorf("%s: %d instance errors for the providerID, want 1", c.tag, len(got))
			continue
		}
		if says := strings.Contains(got[0].Message, "panics") && strings.Contains(got[0].Message, "initialises no node at all"); says != c.panics {
			t.Errorf("%s: %q: says the CCM panics: %v, want %v", c.tag, got[0].Message, says, c.panics)
		}
	}
}
