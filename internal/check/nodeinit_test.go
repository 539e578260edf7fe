package check

import (
	"fmt"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

var uninit = taint(distros.TaintUninitialized, "true", corev1.TaintEffectNoSchedule)

// workers are n RKE2 agents the CCM has not initialised, named by their
// instances.
func workers(n int, more ...nodeOpt) []corev1.Node {
	var out []corev1.Node
	for i := range n {
		out = append(out, rke2Agent(fmt.Sprintf("ip-10-0-3-%d.us-west-2.compute.internal", i+1), append([]nodeOpt{providerID(""), uninit}, more...)...))
	}
	return out
}

// TestNodeGroups: findings alike about several nodes are one, which counts
// them and names a few (all of them in JSON); the summary is ✓ only when
// every node is initialised.
func TestNodeGroups(t *testing.T) {
	for _, c := range []struct {
		name  string
		nodes []corev1.Node
		// the node findings: subject (prefix), count, severity, message part
		want []struct {
			subject string
			count   int
			sev     Severity
			says    string
		}
		summary Severity // "": no summary line
	}{
		{"40 uninitialised workers and 3 servers", append(workers(40), rke2Server("cp-1"), rke2Server("cp-2"), rke2Server("cp-3")),
			[]struct {
				subject string
				count   int
				sev     Severity
				says    string
			}{{"40 nodes: ip-10-0-3-1.us-west-2.compute.internal, ip-10-0-3-2.us-west-2.compute.internal, ip-10-0-3-3.us-west-2.compute.internal and 37 more", 40, Error, "uninitialised: tainted"}},
			Info},
		{"one uninitialised worker: about the node", append(workers(1), rke2Server("cp-1")),
			[]struct {
				subject string
				count   int
				sev     Severity
				says    string
			}{{"ip-10-0-3-1.us-west-2.compute.internal", 0, Error, "uninitialised: tainted"}},
			Info},
		{"two K3s nodes on k3s:// provider IDs, one misnamed and uninitialised", []corev1.Node{
			rke2Agent("a", providerID("k3s://a")), rke2Agent("b", providerID("k3s://b")), rke2Agent("c", providerID(""), uninit)},
			[]struct {
				subject string
				count   int
				sev     Severity
				says    string
			}{{"2 nodes: a and b", 2, Error, "providerID k3s://…: initialised by K3s's embedded cloud controller"}, {"c", 0, Error, "not an EC2 private DNS name"}},
			""},
		{"every node initialised", []corev1.Node{rke2Server("cp-1"), rke2Agent("w-1")}, nil, OK},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, c.nodes, render(t, distros.RKE2, renderer.ModeInstall), true)
			r := Evaluate(s)
			var got, summary []Finding
			for _, f := range r.Findings {
				switch {
				case f.Area != AreaNode:
				case f.Subject == "":
					summary = append(summary, f)
				default:
					got = append(got, f)
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d node findings, want %d: %+v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				f := got[i]
				if f.Subject != w.subject || f.Count != w.count || len(f.Subjects) != w.count || f.Severity != w.sev || !strings.Contains(f.Message, w.says) {
					t.Errorf("finding %d: %+v, want %q (%d) %s %q", i, f, w.subject, w.count, w.sev, w.says)
				}
			}
			switch {
			case c.summary == "" && len(summary) != 0:
				t.Errorf("a summary line: %+v", summary)
			case c.summary != "" && (len(summary) != 1 || summary[0].Severity != c.summary):
				t.Errorf("summary: %+v, want %s", summary, c.summary)
			}
		})
	}
}

// TestExpectedName: the name a misnamed node should have comes from its
// InternalIP and its region, or the region the other nodes show; without
// an InternalIP, or any region, the fix says what kind of name.
func TestExpectedName(t *testing.T) {
	for _, c := range []struct {
		name  string
		nodes []corev1.Node
		fix   string
	}{
		{"the region from the other nodes' names", []corev1.Node{rke2Server("ip-10-0-1-10.eu-west-1.compute.internal"), rke2Agent("myhost", providerID(""), uninit, internal("10.0.1.13"))},
			"RKE2: name the node ip-10-0-1-13.eu-west-1.compute.internal"},
		{"the region from a label, us-east-1's own form", []corev1.Node{rke2Server("cp", label(labelRegion, "us-east-1")), rke2Agent("myhost", providerID(""), uninit, internal("10.0.1.13"))},
			"RKE2: name the node ip-10-0-1-13.ec2.internal"},
		{"no InternalIP", []corev1.Node{rke2Server("ip-10-0-1-10.eu-west-1.compute.internal"), rke2Agent("myhost", providerID(""), uninit)},
			"RKE2: name the node its EC2 private DNS name"},
		{"no region anywhere", []corev1.Node{rke2Agent("myhost", providerID(""), uninit, internal("10.0.1.13"))},
			"RKE2: name the node its EC2 private DNS name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Evaluate(snapshotOf(t, c.nodes, render(t, distros.RKE2, renderer.ModeInstall), false))
			if f := one(t, r, AreaNode, "myhost"); !strings.HasPrefix(f.Fix, c.fix+":") {
				t.Errorf("%q, want it to start %q", f.Fix, c.fix)
			}
		})
	}
}

// TestReadLog: an uninitialised node's fix says how to read the log of
// the CCM that leads (no event says why a node is not initialised).
func TestReadLog(t *testing.T) {
	nodes := append(workers(1), rke2Server("ip-10-0-1-11.us-west-2.compute.internal"), rke2Server("ip-10-0-1-12.us-west-2.compute.internal"))
	for _, c := range []struct {
		name, holder string
		want         string
	}{
		{"the leader's pod, by its host name", "ip-10-0-1-12_0c6f2d8e", "kubectl logs -n kube-system ccm-b | grep -e 'error syncing' -e UnauthorizedOperation -e AccessDenied"},
		{"a holder on no node of the CCM's: the DaemonSet's", "elsewhere_1", "kubectl logs -n kube-system daemonset/aws-cloud-controller-manager | grep"},
		{"no leader", "", "kubectl logs -n kube-system daemonset/aws-cloud-controller-manager | grep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, nodes, render(t, distros.RKE2, renderer.ModeInstall), true)
			s.Now = testNow
			s.Pods["ip-10-0-1-11.us-west-2.compute.internal"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ccm-a"}}
			s.Pods["ip-10-0-1-12.us-west-2.compute.internal"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ccm-b"}}
			if c.holder != "" {
				s.Leases = map[string]*coordinationv1.Lease{"kube-system/cloud-controller-manager": lease("cloud-controller-manager", c.holder, 0)}
			}
			f := one(t, Evaluate(s), AreaNode, "ip-10-0-3-1.us-west-2.compute.internal")
			if !strings.Contains(f.Fix, "records no event when it cannot") || !strings.Contains(f.Fix, c.want) {
				t.Errorf("%q, want %q", f.Fix, c.want)
			}
		})
	}
}
