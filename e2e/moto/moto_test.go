package moto

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

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
