package awscheck

import (
	"bytes"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check/output"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/schematest"
)

// TestAWSOutput: the AWS areas in the table (the area column as wide as
// its longest name) and the fleet summary's AWS column.
func TestAWSOutput(t *testing.T) {
	healthy := check.Evaluate(healthyAWS(t))
	s := healthyAWS(t)
	s.AWS.Instances[1].Tags = nil
	s.AWS.Unread = []check.AWSUnread{{Area: check.AreaLoadBalancer, Action: "elasticloadbalancing:DescribeLoadBalancers", Code: "AccessDenied", Denied: true}}
	faulty := check.Evaluate(s)
	faulty.Context = "prod"
	var b strings.Builder
	if err := output.WriteTable(&b, faulty, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{
		"  ✗ cluster-id      instance i-0789: no cluster tag",
		"                    → aws ec2 create-tags --resources i-0789 --tags Key=kubernetes.io/cluster/c1,Value=owned",
		"  · load-balancer   elasticloadbalancing:DescribeLoadBalancers: could not read: AWS refused check elasticloadbalancing:DescribeLoadBalancers (AccessDenied)",
		"                    → grant elasticloadbalancing:DescribeLoadBalancers to the identity check runs as",
		"  ✓ security-group  2 instances: i-0123 and i-0789: one security group tagged",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q", want)
		}
	}
	b.Reset()
	if err := output.WriteSummary(&b, []*check.Report{healthy, faulty, check.Evaluate(rke2Snapshot(t, nil, nil))}, false); err != nil {
		t.Fatal(err)
	}
	sum := b.String()
	t.Log("\n" + sum)
	for _, want := range []string{"AWS\n", "us-west-2: ok\n", "us-west-2: 2 errors, 1 unread\n", "  -\n"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
}

// TestAWSSchema: a report with --aws, one read refused, follows check's
// JSON schema (package check's TestSchema: the others).
func TestAWSSchema(t *testing.T) {
	s := healthyAWS(t)
	s.AWS.Unread = []check.AWSUnread{{Area: check.AreaSubnet, Action: "ec2:DescribeSubnets", Code: "UnauthorizedOperation", Message: "no", Denied: true}}
	var b bytes.Buffer
	if err := output.WriteJSON(&b, []*check.Report{check.Evaluate(s)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"aws": {`) {
		t.Fatalf("no aws summary:\n%s", b.String())
	}
	inst, err := jsonschema.UnmarshalJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if err := schematest.Compile(t, "check.schema.json").Validate(inst); err != nil {
		t.Error(err)
	}
}
