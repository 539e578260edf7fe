package moto

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/smithy-go"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// One server for the package's tests.
func start(t *testing.T) *Server {
	t.Helper()
	s, err := Start(context.Background(), testtools.Root(), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// TestServer: the launcher starts the pinned moto, the cluster's network and
// instances are seeded with EC2 private DNS names, a user gets its own key,
// and the record tells who called what, IAM refusals included.
func TestServer(t *testing.T) {
	ctx := context.Background()
	s := start(t)
	if !regexp.MustCompile(`^5\.\d+\.\d+$`).MatchString(s.Version) {
		t.Errorf("moto %q, want 5.x", s.Version)
	}
	c := Cluster{ID: "unit", Zone: "us-west-2a"}
	n, err := s.SeedNetwork(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	is, err := s.RunInstances(ctx, c, n, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	dns := regexp.MustCompile(`^ip-10-0-1-\d+\.us-west-2\.compute\.internal$`)
	for _, i := range is {
		if !dns.MatchString(i.PrivateDNSName) || !strings.HasPrefix(i.ID, "i-") || i.Zone != c.Zone {
			t.Errorf("instance %+v: want an EC2 private DNS name in %s", i, c.Zone)
		}
		if i.ProviderID() != "aws:///us-west-2a/"+i.ID {
			t.Errorf("providerID %s", i.ProviderID())
		}
	}
	if is[0].PrivateDNSName == is[1].PrivateDNSName {
		t.Errorf("two instances named %s", is[0].PrivateDNSName)
	}
	var tagged struct {
		Reservations []struct{ Instances []struct{ InstanceId string } }
	}
	if err := s.Call(ctx, "ec2", "DescribeInstances", map[string]any{
		"Filters": []map[string]any{{"Name": "tag-key", "Values": []string{c.Tag()}}},
	}, &tagged); err != nil {
		t.Fatal(err)
	}
	if len(tagged.Reservations) != 2 {
		t.Errorf("%d reservations tagged %s, want 2", len(tagged.Reservations), c.Tag())
	}

	// A user that may only describe instances; IAM enforced.
	u, err := s.CreateUser(ctx, "reader", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeInstances","Resource":"*"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Enforce(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Unenforce(context.Background()) })
	// The administrator still works.
	lbs, err := s.LoadBalancers(ctx)
	if err != nil || len(lbs) != 0 {
		t.Fatalf("load balancers %v, %v: want none", lbs, err)
	}
	reqs, err := s.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(By(reqs, u.AccessKeyID)) != 0 {
		t.Errorf("requests by %s before it sent any: %v", u.User, By(reqs, u.AccessKeyID))
	}
	var admin []string
	for _, r := range reqs {
		if !r.Admin {
			t.Errorf("request %+v not marked as the administrator's", r)
		}
		admin = append(admin, r.Action)
	}
	for _, want := range []string{"CreateVpc", "RunInstances", "CreateAccessKey", "DescribeLoadBalancers"} {
		if !slices.Contains(admin, want) {
			t.Errorf("no %s in the record: %v", want, admin)
		}
	}
}

// TestDenied reads refusals from records as the server writes them.
func TestDenied(t *testing.T) {
	reqs := []Request{
		{AccessKey: "A", Service: "ec2", Action: "DescribeInstances", Status: 200},
		{AccessKey: "A", Service: "ec2", Action: "DescribeAvailabilityZones", Status: 403, Error: "UnauthorizedOperation"},
		{AccessKey: "B", Service: "elasticloadbalancing", Action: "CreateLoadBalancer", Status: 403, Error: "AccessDenied"},
		{AccessKey: "A", Service: "ec2", Action: "DescribeAvailabilityZones", Status: 403, Error: "UnauthorizedOperation"},
		{AccessKey: "A", Service: "ec2", Action: "DescribeInstanceTopology", Status: 400, Error: "InvalidAction"},
	}
	if got := Denied(By(reqs, "A")); !slices.Equal(got, []string{"ec2:DescribeAvailabilityZones"}) {
		t.Errorf("A denied %v", got)
	}
	if got := Denied(reqs); !slices.Equal(got, []string{"ec2:DescribeAvailabilityZones", "elasticloadbalancing:CreateLoadBalancer"}) {
		t.Errorf("all denied %v", got)
	}
}

// TestWithoutMoto: a Python without moto fails the start with the way to
// install it; no test goes on without it.
func TestWithoutMoto(t *testing.T) {
	python := filepath.Join(t.TempDir(), "python")
	// -S: without site-packages, where moto is installed.
	if err := os.WriteFile(python, []byte("#!/bin/sh\nexec python3 -S \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, python string }{
		{"no moto", python},
		{"no python", filepath.Join(t.TempDir(), "missing")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Start(context.Background(), testtools.Root(), Options{Dir: t.TempDir(), Python: tc.python})
			// The launcher's message pins the version: moto[server]==5.x.y.
			if err == nil || !strings.Contains(err.Error(), "pip install 'moto[server]") {
				t.Fatalf("got %v, want an error saying %s", err, Install)
			}
		})
	}
}

// iamClient is aws-sdk-go-v2's IAM client against the server, signed with
// the user's key.
func iamClient(t *testing.T, s *Server, u Credentials) *iam.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(u.AccessKeyID, u.SecretAccessKey, "")),
		config.WithBaseEndpoint(s.URL),
		// Never through a proxy: the server is on loopback. A buildable
		// client, which takes AWS_CA_BUNDLE when it is set.
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) { tr.Proxy = nil })),
		config.WithRetryMaxAttempts(1),
	)
	if err != nil {
		t.Fatal(err)
	}
	return iam.NewFromConfig(cfg)
}

// TestSimulatePrincipalPolicy: the server answers iam:SimulatePrincipalPolicy
// to aws-sdk-go-v2 with moto's evaluation of a role's inline and attached
// policies and of a user's own and group policies, NoSuchEntity for an
// unknown principal, and AccessDenied to a user whose policy does not allow
// the call.
func TestSimulatePrincipalPolicy(t *testing.T) {
	ctx := context.Background()
	s := start(t)
	call := func(service, action string, params map[string]any) {
		t.Helper()
		if err := s.Call(ctx, service, action, params, nil); err != nil {
			t.Fatal(err)
		}
	}
	policy := func(statements ...string) string {
		return `{"Version":"2012-10-17","Statement":[` + strings.Join(statements, ",") + `]}`
	}
	allow := func(action string) string { return `{"Effect":"Allow","Action":"` + action + `","Resource":"*"}` }
	deny := func(action string) string { return `{"Effect":"Deny","Action":"` + action + `","Resource":"*"}` }

	// A node role: an inline policy, and a managed one attached.
	call("iam", "CreateRole", map[string]any{"RoleName": "node", "AssumeRolePolicyDocument": policy(
		`{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}`)})
	call("iam", "PutRolePolicy", map[string]any{"RoleName": "node", "PolicyName": "node",
		"PolicyDocument": policy(allow("ec2:DescribeInstances"), deny("ec2:TerminateInstances"))})
	var created struct{ Policy struct{ Arn string } }
	if err := s.Call(ctx, "iam", "CreatePolicy", map[string]any{"PolicyName": "regions",
		"PolicyDocument": policy(allow("ec2:DescribeRegions"))}, &created); err != nil {
		t.Fatal(err)
	}
	call("iam", "AttachRolePolicy", map[string]any{"RoleName": "node", "PolicyArn": created.Policy.Arn})
	// A user with a policy of its own and one of its group's.
	call("iam", "CreateUser", map[string]any{"UserName": "operator"})
	call("iam", "PutUserPolicy", map[string]any{"UserName": "operator", "PolicyName": "own", "PolicyDocument": policy(deny("elasticloadbalancing:DeleteLoadBalancer"))})
	call("iam", "CreateGroup", map[string]any{"GroupName": "operators"})
	call("iam", "PutGroupPolicy", map[string]any{"GroupName": "operators", "PolicyName": "lbs", "PolicyDocument": policy(allow("elasticloadbalancing:*"))})
	call("iam", "AddUserToGroup", map[string]any{"GroupName": "operators", "UserName": "operator"})

	checker, err := s.CreateUser(ctx, "checker", []byte(policy(allow("iam:SimulatePrincipalPolicy"))))
	if err != nil {
		t.Fatal(err)
	}
	reader, err := s.CreateUser(ctx, "reader", []byte(policy(allow("ec2:DescribeInstances"))))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Enforce(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Unenforce(context.Background()) })

	type decision struct{ action, resource, decision, source string }
	simulate := func(c *iam.Client, arn string, actions ...string) ([]decision, error) {
		out, err := c.SimulatePrincipalPolicy(ctx, &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String(arn), ActionNames: actions})
		if err != nil {
			return nil, err
		}
		if out.IsTruncated {
			t.Errorf("simulation of %s truncated", arn)
		}
		var ds []decision
		for _, r := range out.EvaluationResults {
			d := decision{action: aws.ToString(r.EvalActionName), resource: aws.ToString(r.EvalResourceName), decision: string(r.EvalDecision)}
			for _, m := range r.MatchedStatements {
				d.source += aws.ToString(m.SourcePolicyId) + "(" + string(m.SourcePolicyType) + ")"
			}
			ds = append(ds, d)
		}
		return ds, nil
	}
	c := iamClient(t, s, checker)
	role := "arn:aws:iam::123456789012:role/node"
	got, err := simulate(c, role, "ec2:DescribeInstances", "ec2:DescribeAvailabilityZones", "ec2:TerminateInstances", "ec2:DescribeRegions")
	if err != nil {
		t.Fatal(err)
	}
	want := []decision{
		{"ec2:DescribeInstances", "*", "allowed", "node(role)"},
		{"ec2:DescribeAvailabilityZones", "*", "implicitDeny", ""},
		{"ec2:TerminateInstances", "*", "explicitDeny", "node(role)"},
		{"ec2:DescribeRegions", "*", "allowed", "regions(user-managed)"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("role:\n got %v\nwant %v", got, want)
	}
	// In pages, as check --aws reads them: the SDK's paginator follows the
	// Marker.
	pg := iam.NewSimulatePrincipalPolicyPaginator(c, &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String(role),
		ActionNames: []string{"ec2:DescribeInstances", "ec2:DescribeAvailabilityZones", "ec2:TerminateInstances", "ec2:DescribeRegions"}, MaxItems: aws.Int32(3)})
	var pages, paged []string
	for pg.HasMorePages() {
		out, err := pg.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, fmt.Sprint(len(out.EvaluationResults), out.IsTruncated))
		for _, r := range out.EvaluationResults {
			paged = append(paged, string(r.EvalDecision))
		}
	}
	if want := []string{"3 true", "1 false"}; !slices.Equal(pages, want) {
		t.Errorf("pages (results, truncated) %v, want %v", pages, want)
	}
	if want := []string{"allowed", "implicitDeny", "explicitDeny", "allowed"}; !slices.Equal(paged, want) {
		t.Errorf("paged decisions %v, want %v", paged, want)
	}

	got, err = simulate(c, "arn:aws:iam::123456789012:user/operator", "elasticloadbalancing:DescribeLoadBalancers", "elasticloadbalancing:DeleteLoadBalancer", "ec2:DescribeInstances")
	if err != nil {
		t.Fatal(err)
	}
	want = []decision{
		{"elasticloadbalancing:DescribeLoadBalancers", "*", "allowed", "lbs(group)"},
		{"elasticloadbalancing:DeleteLoadBalancer", "*", "explicitDeny", "own(user)"},
		{"ec2:DescribeInstances", "*", "implicitDeny", ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("user:\n got %v\nwant %v", got, want)
	}

	var missing *iamtypes.NoSuchEntityException
	if _, err := simulate(c, "arn:aws:iam::123456789012:role/missing", "ec2:DescribeInstances"); !errors.As(err, &missing) {
		t.Errorf("unknown role: got %v, want NoSuchEntity", err)
	}
	var apiErr smithy.APIError
	if _, err := simulate(iamClient(t, s, reader), role, "ec2:DescribeInstances"); !errors.As(err, &apiErr) || apiErr.ErrorCode() != "AccessDenied" {
		t.Errorf("a user without iam:SimulatePrincipalPolicy: got %v, want AccessDenied", err)
	}

	reqs, err := s.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w := Writes(By(reqs, checker.AccessKeyID)); len(By(reqs, checker.AccessKeyID)) != 5 || len(w) != 0 {
		t.Errorf("checker sent %v, writes %v: want five simulations, no write", By(reqs, checker.AccessKeyID), w)
	}
	if got := Denied(By(reqs, reader.AccessKeyID)); !slices.Equal(got, []string{"iam:SimulatePrincipalPolicy"}) {
		t.Errorf("reader denied %v", got)
	}
}

// TestWrites: every request but a read (Describe*, Get*, List*,
// SimulatePrincipalPolicy) is a write, and one of unknown action too.
func TestWrites(t *testing.T) {
	reqs := []Request{
		{Seq: 1, Action: "DescribeInstances"},
		{Seq: 2, Action: "GetCallerIdentity"},
		{Seq: 3, Action: "ListRoles"},
		{Seq: 4, Action: "SimulatePrincipalPolicy"},
		{Seq: 5, Action: "ModifyInstanceMetadataOptions"},
		{Seq: 6, Action: "SimulateCustomPolicy"},
		{Seq: 7, Action: "CreateTags"},
		{Seq: 8, Action: ""},
		{Seq: 9, Action: "describeInstances"},
		{Seq: 10, Action: "DescribeLoadBalancers", Status: 403, Error: "AccessDenied"},
	}
	var got []int
	for _, r := range Writes(reqs) {
		got = append(got, r.Seq)
	}
	if want := []int{5, 6, 7, 8, 9}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	if w := Writes(reqs[:4]); w != nil {
		t.Errorf("reads only: writes %v", w)
	}
}
