package awsccm_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// fixFor is how check's fix for a misnamed node starts on each
// distribution: its own way to name the node.
var fixFor = map[string]string{"rke": "RKE1: name the node ", "rke2": "RKE2: name the node ", "k3s": "K3s: name the node ", "kubeadm": "kubeadm: name the node "}

// checkNames runs check on the rendered output with a distribution's nodes
// registered, before the CCM is installed, and asserts that it names the
// node registered under a hostname override as one the CCM cannot look up,
// and no other node, with the distribution's own fix and the name the node
// should have: its instance's private DNS name, from its InternalIP and
// the region of the other nodes' names.
func checkNames(t *testing.T, distro string) {
	t.Helper()
	defer registerNodes(t, distro)()
	out := check(t, rendered)
	const notEC2 = "the name is not an EC2 private DNS name"
	for _, n := range nodes {
		if n.distro != distro {
			continue
		}
		var found []string
		for _, l := range lines(out, n.node.Name, notEC2) {
			found = append(found, strings.Split(l, "\n")...)
		}
		switch {
		case n.override && len(found) == 0:
			t.Errorf("check before the install: nothing says %s is %s:\n%s", n.node.Name, notEC2, out)
		case !n.override && len(found) > 0:
			t.Errorf("check before the install: %s, named by its instance, is said to be misnamed: %q", n.node.Name, found)
		case n.override:
			t.Logf("check before the install, %s nodes: %s", n.distro, strings.Join(found, " | "))
			if want := "→ " + fixFor[distro] + n.instance.PrivateDNSName; len(found) < 2 || !strings.HasPrefix(found[1], want) {
				t.Errorf("check before the install, %s: the fix for %s does not start %q: %q", distro, n.node.Name, want, found)
			}
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
	// The service controller registers the nodes its informer holds as
	// initialised; those it sees later, on a later sync.
	harness.WaitFor(t, time.Minute, "the load balancer of Service "+name+" to have instances", func() bool {
		c.alive(t)
		lb = lbOf(t, host)
		return lb != nil && len(lb.Instances) > 0
	})
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
// the later ones ask for it to label a node with its zone ID, are refused,
// and never initialise a node.
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
				if iam := lines(check(t, rendered), " iam "); len(iam) > 0 {
					t.Errorf("check names IAM findings where AWS refused nothing: %q", iam)
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
			// check, with the CCM's workload in the cluster: every node
			// uninitialised, one finding; no event says why (the cloud
			// node controller records none), so it points at the log.
			installWorkload(t, rendered)
			out := check(t, nil)
			grouped := lines(out, fmt.Sprintf("✗ node          %d nodes: ", len(ec2Named())), "uninitialised: tainted")
			noEvent := lines(out, "· iam ", "no AWS refusal in the events", "records no event when it cannot initialise a node")
			if len(grouped) != 1 || len(noEvent) != 1 || !strings.Contains(noEvent[0], "kubectl logs -n kube-system") {
				t.Errorf("check of the cluster before a load balancer: want one node finding for the %d nodes named by their instances and the iam line pointing at the log:\n%s", len(ec2Named()), out)
			}
			t.Logf("check before a load balancer: %q %q", grouped, noEvent)
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
			// The Service's event names the action: check names it, with
			// the fix.
			out = check(t, nil)
			iam := lines(out, "✗ iam ", denied+": AWS refused it to the cloud controllers (UnauthorizedOperation): SyncLoadBalancerFailed on Service default/"+fmt.Sprintf("rancher-%d", r.Minor()))
			if len(iam) != 1 || !strings.Contains(iam[0], "→ add "+denied+" to the IAM policy of the control-plane instances' role") {
				t.Errorf("check after SyncLoadBalancerFailed: want the iam finding naming %s:\n%s", denied, out)
			}
			t.Logf("check after SyncLoadBalancerFailed: %q", iam)
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

// TestK3sLoadBalancers: a K3s cluster half way to the CCM. The current
// CCM initialises the nodes named by their instances; one node still has
// the k3s:// provider ID K3s's embedded controller gave it (the CCM leaves
// it alone), one is registered under a hostname override; a Service of type
// LoadBalancer gets its ELB; a ServiceLB DaemonSet of a Service since
// deleted is left behind. check, reading the cluster, counts the ELB's
// backends as moto has them, names the nodes left out, and the DaemonSet.
func TestK3sLoadBalancers(t *testing.T) {
	r := releases[len(releases)-1]
	renders(t)
	registerNodes(t, "k3s")
	var k3s []node
	for _, n := range ec2Named() {
		if n.distro == "k3s" {
			k3s = append(k3s, n)
		}
	}
	legacy := k3s[len(k3s)-1].node.DeepCopy()
	legacy.Name, legacy.Spec.ProviderID = "k3s-legacy", "k3s://k3s-legacy"
	legacy.Labels["kubernetes.io/hostname"] = legacy.Name
	legacy.Spec.Taints = slices.DeleteFunc(legacy.Spec.Taints, func(t corev1.Taint) bool { return t.Key == uninitializedTaint })
	legacy.Status.Addresses = nil
	if err := cp.CreateNodes(context.Background(), []corev1.Node{*legacy}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cp.Client.CoreV1().Nodes().Delete(context.Background(), legacy.Name, metav1.DeleteOptions{})
	})
	leftover := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "svclb-old-web-5a1b2c3d", Namespace: "kube-system",
		Labels: map[string]string{"svccontroller.k3s.cattle.io/svcname": "old-web", "svccontroller.k3s.cattle.io/svcnamespace": "default"}},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "svclb-old-web-5a1b2c3d"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "svclb-old-web-5a1b2c3d"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "lb-tcp-80", Image: "rancher/klipper-lb:v0.4.9"}}}}}}
	if _, err := cp.Client.AppsV1().DaemonSets("kube-system").Create(context.Background(), leftover, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cp.Client.AppsV1().DaemonSets("kube-system").Delete(context.Background(), leftover.Name, metav1.DeleteOptions{})
	})

	c := startCCM(t, r, prerequisites(r), rendered)
	harness.WaitFor(t, 3*time.Minute, "the CCM to initialise the K3s nodes named by their instances", func() bool {
		c.alive(t)
		for _, n := range k3s {
			if !initialised(getNode(t, n.node.Name)) {
				return false
			}
		}
		return true
	})
	if got := getNode(t, legacy.Name); got.Spec.ProviderID != "k3s://k3s-legacy" {
		t.Errorf("the CCM changed the k3s:// node: providerID %q", got.Spec.ProviderID)
	}
	installWorkload(t, rendered)
	name := "k3s-web"
	host, failure := c.loadBalancer(t, name)
	if failure != "" {
		t.Fatalf("no load balancer: %s", failure)
	}
	lb := lbOf(t, host)
	if lb == nil {
		t.Fatalf("the Service's hostname %q is no load balancer in moto", host)
	}
	// The service controller registers the nodes its informer holds as
	// initialised when it creates the load balancer, and those it sees
	// initialised later on a later sync: wait for every K3s node named by
	// its instance before check counts the backends.
	harness.WaitFor(t, 2*time.Minute, fmt.Sprintf("the load balancer to have the %d K3s nodes named by their instances", len(k3s)), func() bool {
		c.alive(t)
		lb = lbOf(t, host)
		return lb != nil && len(lb.Instances) == len(k3s)
	})
	out := check(t, nil)
	backends := lines(out, "! service       Service default/"+name+": ", fmt.Sprintf("its ELB's backends are the %d nodes with an aws:// providerID; 2 nodes (", len(lb.Instances)), "k3s-legacy")
	left := lines(out, "! service       DaemonSet kube-system/"+leftover.Name+": ", "its Service default/old-web is gone")
	if len(lb.Instances) != len(k3s) || len(backends) != 1 || len(left) != 1 {
		t.Errorf("moto's ELB has %d instances (want %d, the K3s nodes named by their instances); check:\n%s", len(lb.Instances), len(k3s), out)
	}
	t.Logf("K3s, ELB %s with %d instances in moto; check: %q %q", lb.LoadBalancerName, len(lb.Instances), backends, left)
}
