package awsccm_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/awsccm"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/moto"
)

// TestRenderedCCM runs each AWS CCM release as the renderer renders it (its
// args and RBAC, --use-service-account-credentials=true, as its service
// account) with the IAM policy of cloud-provider-aws's prerequisites at
// that release, on every distribution's nodes: `check` names the nodes
// registered under a hostname override before the CCM is installed; the
// CCM initialises every node named by its instance and none of the others,
// saying why; a Service of type LoadBalancer gets its Classic ELB in moto;
// every AWS request went to moto.
func TestRenderedCCM(t *testing.T) {
	for _, r := range releases {
		t.Run(r.Version, func(t *testing.T) {
			renders(t)
			for _, d := range fixtureDistros {
				checkNames(t, d)
			}
			registerNodes(t)

			c := startCCM(t, r, prerequisites(r), rendered)
			took := c.waitInitialised(t)
			perDistro := map[string]int{}
			for _, n := range ec2Named() {
				checkInitialised(t, r, n)
				perDistro[n.distro]++
			}
			t.Logf("AWS CCM %s initialised every node named by its instance in %s: %v", r.Version, took.Round(10*time.Millisecond), perDistro)
			c.checkOverridesUninitialised(t)
			initReqs := c.requests(t, 0)
			from := lastSeq(t) + 1

			c.ensuresLoadBalancer(t, fmt.Sprintf("web-%d", r.Minor()))
			lbReqs := c.requests(t, from)
			report(t, r, "prerequisites", initReqs, lbReqs)
			if len(initReqs) == 0 || !slices.Contains(actions(initReqs), "ec2:DescribeInstances") {
				t.Errorf("moto got no ec2:DescribeInstances from the CCM while it initialised the nodes: %v", actions(initReqs))
			}
			if d := moto.Denied(append(initReqs, lbReqs...)); len(d) > 0 {
				t.Errorf("the prerequisites policy of %s: IAM denied %v", r.Version, d)
			}
		})
	}
}

// checkNames runs check on the rendered output with a distribution's nodes
// registered, before the CCM is installed, and asserts that it names the
// node registered under a hostname override as one the CCM cannot look up,
// and no other node.
func checkNames(t *testing.T, distro string) {
	t.Helper()
	defer registerNodes(t, distro)()
	out := check(t, rendered)
	const notEC2 = "the name is not an EC2 private DNS name"
	for _, n := range nodes {
		if n.distro != distro {
			continue
		}
		var lines []string
		all := strings.Split(out, "\n")
		for i, l := range all {
			if strings.Contains(l, n.node.Name) && strings.Contains(l, notEC2) {
				lines = append(lines, strings.TrimSpace(l))
				if i+1 < len(all) && strings.Contains(all[i+1], "→") {
					lines = append(lines, strings.TrimSpace(all[i+1]))
				}
			}
		}
		switch {
		case n.override && len(lines) == 0:
			t.Errorf("check before the install: nothing says %s is %s:\n%s", n.node.Name, notEC2, out)
		case !n.override && len(lines) > 0:
			t.Errorf("check before the install: %s, named by its instance, is said to be misnamed: %q", n.node.Name, lines)
		case n.override:
			t.Logf("check before the install, %s nodes: %s", n.distro, strings.Join(lines, " | "))
		}
	}
}

// ensuresLoadBalancer creates a Service of type LoadBalancer, asserts that
// its Classic ELB is in moto with the Service's port, a health check and
// instances, and that the CCM deletes it with the Service.
func (c *ccm) ensuresLoadBalancer(t *testing.T, name string) {
	t.Helper()
	start := time.Now()
	host, failure := c.loadBalancer(t, name)
	if failure != "" {
		t.Fatalf("the AWS CCM %s failed to ensure the load balancer: %s", c.release.Version, failure)
	}
	lb := lbOf(t, host)
	if lb == nil {
		t.Fatalf("the Service's hostname %q is no load balancer in moto", host)
	}
	took := time.Since(start)
	if len(lb.ListenerDescriptions) != 1 || lb.ListenerDescriptions[0].Listener.LoadBalancerPort != 80 || lb.HealthCheck.Target == "" || len(lb.Instances) == 0 {
		t.Errorf("load balancer %+v: want a listener on port 80, a health check and instances", *lb)
	}
	t.Logf("Service %s: load balancer %s (%s) in %s, listener 80 -> %d, health check %s, %d instances",
		name, lb.LoadBalancerName, host, took.Round(10*time.Millisecond), lb.ListenerDescriptions[0].Listener.InstancePort, lb.HealthCheck.Target, len(lb.Instances))
	c.deleteService(t, name)
	if lbOf(t, host) != nil {
		t.Errorf("load balancer %s still in moto after its Service was deleted", lb.LoadBalancerName)
	}
}

// report logs what a CCM asked of AWS in each step, and what IAM refused.
func report(t *testing.T, r awsccm.Release, policyName string, initReqs, lbReqs []moto.Request) {
	t.Helper()
	for _, step := range []struct {
		name string
		reqs []moto.Request
	}{{"node initialisation", initReqs}, {"load balancer", lbReqs}} {
		var failed []string
		for _, q := range step.reqs {
			if e := q.Service + ":" + q.Action + " " + q.Error; q.Status >= 400 && !slices.Contains(failed, e) {
				failed = append(failed, e)
			}
		}
		t.Logf("AWS CCM %s, policy %s, %s: %d requests to moto, actions %v; denied: %v; failed: %v",
			r.Version, policyName, step.name, len(step.reqs), actions(step.reqs), moto.Denied(step.reqs), failed)
	}
}

// TestRancherPolicy runs each CCM release as an IAM user with the
// control-plane policy of the Rancher docs (seed 000), which lacks
// ec2:DescribeAvailabilityZones: the 1.26 CCM never asks for it and works;
// the current one asks for it to label a node with its zone ID, is refused,
// and never initialises a node.
func TestRancherPolicy(t *testing.T) {
	for _, r := range releases {
		t.Run(r.Version, func(t *testing.T) {
			renders(t)
			registerNodes(t)
			c := startCCM(t, r, "rancher-control-plane", rendered)
			if r.Name == "1.26" {
				c.waitInitialised(t)
				for _, n := range ec2Named() {
					checkInitialised(t, r, n)
				}
				initReqs := c.requests(t, 0)
				from := lastSeq(t) + 1
				c.ensuresLoadBalancer(t, fmt.Sprintf("rancher-%d", r.Minor()))
				lbReqs := c.requests(t, from)
				report(t, r, "rancher-control-plane", initReqs, lbReqs)
				if d := moto.Denied(append(initReqs, lbReqs...)); len(d) > 0 {
					t.Errorf("IAM denied %v", d)
				}
				return
			}
			const denied = "ec2:DescribeAvailabilityZones"
			// Each node's sync is refused and retried; once every node has
			// been refused twice over, none is initialised.
			harness.WaitFor(t, 3*time.Minute, "IAM to refuse "+denied+" to the CCM for every node", func() bool {
				c.alive(t)
				n := 0
				for _, q := range c.requests(t, 0) {
					if q.Service+":"+q.Action == denied && q.Error == "UnauthorizedOperation" {
						n++
					}
				}
				return n >= 2*len(ec2Named())
			})
			for _, n := range nodes {
				if got := getNode(t, n.node.Name); initialised(got) || got.Spec.ProviderID != "" {
					t.Errorf("%s %s initialised (providerID %q) under the Rancher policy", n.distro, got.Name, got.Spec.ProviderID)
				}
			}
			// The CCM read the refusal as the SDK parses it.
			line := regexp.MustCompile(`[^\n]*UnauthorizedOperation[^\n]*`).FindString(c.proc.Log())
			if !strings.Contains(line, "DescribeAvailabilityZones") {
				t.Errorf("no UnauthorizedOperation for DescribeAvailabilityZones in the CCM's log (first one: %q)", line)
			}
			t.Logf("AWS CCM %s under the Rancher policy: no node initialised; its log: %s", r.Version, strings.TrimSpace(line))
			initReqs := c.requests(t, 0)
			from := lastSeq(t) + 1
			host, failure := c.loadBalancer(t, fmt.Sprintf("rancher-%d", r.Minor()))
			lbReqs := c.requests(t, from)
			report(t, r, "rancher-control-plane", initReqs, lbReqs)
			if !slices.Contains(moto.Denied(initReqs), denied) {
				t.Errorf("node initialisation: IAM denied %v, want %s among them", moto.Denied(initReqs), denied)
			}
			if host != "" || failure == "" {
				t.Errorf("load balancer: hostname %q, failure %q: want no load balancer", host, failure)
			}
			t.Logf("AWS CCM %s under the Rancher policy, Service of type LoadBalancer: SyncLoadBalancerFailed: %s", r.Version, failure)
		})
	}
}

// TestChartRBAC runs each CCM release with the rendered args
// (--use-service-account-credentials=true) as its service account bound to
// the chart's own ClusterRole, which grants create but not get on
// serviceaccounts: the CCM fails as operators see it, on the get the
// renderer adds. With the renderer's RBAC it works (TestRenderedCCM).
func TestChartRBAC(t *testing.T) {
	for _, r := range releases {
		t.Run(r.Version, func(t *testing.T) {
			renders(t)
			c := startCCM(t, r, prerequisites(r), chartOnly)
			want := regexp.MustCompile(`serviceaccounts "[^"]+" is forbidden: User "system:serviceaccount:kube-system:` + ccmAccount + `" cannot get resource "serviceaccounts" in API group "" in the namespace "kube-system"`)
			inLine := regexp.MustCompile(`[^\n]*` + want.String() + `[^\n]*`)
			var line string
			harness.WaitFor(t, 2*time.Minute, "the CCM to fail on get serviceaccounts", func() bool {
				line = inLine.FindString(c.proc.Log())
				return line != ""
			})
			exited := "still running"
			select {
			case <-c.proc.Done():
				exited = "exited"
			case <-time.After(5 * time.Second):
			}
			t.Logf("AWS CCM %s with the chart's RBAC (%s): %s", r.Version, exited, strings.TrimSpace(line))
		})
	}
}

// TestOverrideNames proves the proof that nothing leaves the machine: each
// release given only the other SDK's [ServiceOverride] names ignores them
// and sends its EC2 requests to AWS itself, which the proxy variables turn
// into a connection to the trap; moto gets nothing from it.
func TestOverrideNames(t *testing.T) {
	for _, r := range releases {
		t.Run(r.Version, func(t *testing.T) {
			other := awsccm.SDKv2Services
			if r.Name != "1.26" {
				other = awsccm.SDKv1Services
			}
			tr, err := awsccm.StartTrap()
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			renders(t)
			registerNodes(t)
			conf := awsccm.CloudConfig{Cluster: cluster, Network: network, URL: aws.URL, Services: other}
			c := startCCMWith(t, r, prerequisites(r), rendered, conf, tr)
			host := "ec2." + cluster.Region() + ".amazonaws.com:443"
			harness.WaitFor(t, 2*time.Minute, "the CCM to try "+host+" through the proxy", func() bool {
				c.alive(t)
				return slices.ContainsFunc(tr.Seen(), func(l string) bool { return strings.Contains(l, host) })
			})
			if reqs := c.requests(t, 0); len(reqs) > 0 {
				t.Errorf("moto got %d requests from a CCM whose overrides name only %q: %v", len(reqs), other, actions(reqs))
			}
			t.Logf("AWS CCM %s with [ServiceOverride] names %q only: it went for AWS itself, the trap got %q", r.Version, other, tr.Seen())
		})
	}
}
