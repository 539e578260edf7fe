package check

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

func k3sNode(name, pid string, more ...nodeOpt) corev1.Node {
	return node(name, append([]nodeOpt{kubelet("v1.30.14+k3s1"), providerID(pid)}, more...)...)
}

// lbService is a Service of type LoadBalancer with its ingress: an ELB
// hostname, node IPs, or none.
func lbService(ns, name string, hostname string, ips ...string) corev1.Service {
	s := corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
	if hostname != "" {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{Hostname: hostname})
	}
	for _, ip := range ips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	return s
}

// svclb is ServiceLB's DaemonSet for a Service, in kube-system.
func svclb(ns, name string) appsv1.DaemonSet {
	return appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "svclb-" + name + "-1a2b3c4d",
		Labels: map[string]string{svclbNameLabel: name, svclbNamespaceLabel: ns, "svccontroller.k3s.cattle.io/nodeselector": "false"}}}
}

// TestServiceRule: K3s's load balancers on the way to the CCM's ELBs.
func TestServiceRule(t *testing.T) {
	const elbHost = "a1b2c3-123456789.us-west-2.elb.amazonaws.com"
	server := func(args string) corev1.Node {
		return k3sNode("s", "aws:///us-west-2a/i-s", label(distros.LabelControlPlane, "true"), annotation(annotationK3sNodeArgs, args))
	}
	allAWS := []corev1.Node{server(`["server"]`), k3sNode("a", "aws:///us-west-2a/i-a")}
	mixed := []corev1.Node{server(`["server"]`), k3sNode("a", "k3s://a"), k3sNode("b", "k3s://b"), k3sNode("x", "k3s://x", label(labelExcludeLB, ""))}
	allK3s := []corev1.Node{k3sNode("s", "k3s://s", label(distros.LabelControlPlane, "true")), k3sNode("a", "k3s://a")}
	hold := []string{"controllers=*,-service"}
	for _, c := range []struct {
		name      string
		nodes     []corev1.Node
		svcs      []corev1.Service
		dss       []appsv1.DaemonSet
		installed bool
		setArgs   []string
		want      []want
	}{
		{"an ELB, every node aws://: silent", allAWS, []corev1.Service{lbService("default", "web", elbHost)}, nil, true, nil, nil},
		{"an ELB, two nodes not aws://, one excluded from load balancers", mixed, []corev1.Service{lbService("default", "web", elbHost)}, nil, true, nil,
			[]want{{"Service default/web", Warning, "its ELB's backends are the 1 node with an aws:// providerID; 2 nodes (a and b) cannot be", "during.reregister-nodes"}}},
		{"ELBs without any aws:// node: grouped", allK3s, []corev1.Service{lbService("default", "web", elbHost), lbService("shop", "api", elbHost)}, nil, true, nil,
			[]want{{"2 Services: default/web and shop/api", Error, "no node has an aws:// providerID: the CCM registers only those behind an ELB, so it has no backends", "reregister"}}},
		{"no address yet, the CCM's service controller on, no aws:// node", allK3s, []corev1.Service{lbService("default", "web", "")}, nil, true, nil,
			[]want{{"Service default/web", Error, "no address yet, and no node has an aws:// providerID", ""}}},
		{"ServiceLB and the CCM's service controller both", allK3s, []corev1.Service{lbService("default", "web", "", "10.0.1.10")}, []appsv1.DaemonSet{svclb("default", "web")}, true, nil,
			[]want{{"Service default/web", Error, "answered by ServiceLB while the CCM's service controller runs", "--set-arg=controllers=*,-service"}}},
		{"ServiceLB, the CCM's service controller held back: a fact", allK3s, []corev1.Service{lbService("default", "web", "", "10.0.1.10")}, []appsv1.DaemonSet{svclb("default", "web")}, true, hold,
			[]want{{"Service default/web", Info, "answered by ServiceLB (the nodes' addresses); the CCM's service controller is off", ""}}},
		{"ServiceLB, no CCM installed yet: silent", allK3s, []corev1.Service{lbService("default", "web", "", "10.0.1.10")}, []appsv1.DaemonSet{svclb("default", "web")}, false, nil, nil},
		{"a Service of another load balancer class: silent", allK3s, []corev1.Service{func() corev1.Service {
			s := lbService("default", "web", "")
			s.Spec.LoadBalancerClass = new("example.com/lb")
			return s
		}()}, nil, true, nil, nil},
		{"ServiceLB disabled, its DaemonSets left behind", []corev1.Node{server(`["server","--disable","traefik,servicelb"]`)},
			[]corev1.Service{lbService("default", "web", elbHost)}, []appsv1.DaemonSet{svclb("default", "web"), svclb("default", "gone")}, true, nil,
			[]want{{"Service default/web", Error, "answered by ServiceLB while", ""},
				{"2 DaemonSets: kube-system/svclb-web-1a2b3c4d and kube-system/svclb-gone-1a2b3c4d", Warning, "ServiceLB's DaemonSet, left behind", "kubectl delete daemonsets --all-namespaces -l svccontroller.k3s.cattle.io/svcname"}}},
		{"a DaemonSet of a Service gone", allAWS, nil, []appsv1.DaemonSet{svclb("default", "gone")}, true, nil,
			[]want{{"DaemonSet kube-system/svclb-gone-1a2b3c4d", Warning, "its Service default/gone is gone or no longer of type LoadBalancer", ""}}},
		{"not K3s: nothing read, silent", []corev1.Node{rke2Server("cp-1")}, nil, nil, true, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := renderer.DefaultOptions()
			o.Distro, o.SetArgs = distros.K3s, c.setArgs
			s := snapshotOf(t, c.nodes, renderWith(t, o), c.installed)
			if Detect(c.nodes).Detected == string(distros.K3s) {
				s.LoadBalancers, s.ServiceLBDaemonSets = c.svcs, append([]appsv1.DaemonSet{}, c.dss...)
			}
			expectArea(t, Evaluate(s), AreaService, c.want, false)
		})
	}
}

// TestCollectServices: on K3s the Services of type LoadBalancer and
// ServiceLB's DaemonSets; elsewhere the Services while no CCM service
// controller runs (they are the ones it will take over), else neither.
func TestCollectServices(t *testing.T) {
	web, plain, ds := lbService("default", "web", ""), corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "plain"}}, svclb("default", "web")
	other := appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-proxy"}}
	for _, c := range []struct {
		name      string
		n         corev1.Node
		installed bool
		lbs, dss  int // -1: not read
	}{
		{"K3s", k3sNode("s", "k3s://s"), false, 1, 1},
		{"RKE2 before the CCM runs", rke2Server("cp-1"), false, 1, -1},
		{"RKE2 with the CCM's service controller", rke2Server("cp-1"), true, -1, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs := render(t, distros.K3s, renderer.ModeInstall)
			in := []runtime.Object{&c.n, &web, &plain, &ds, &other}
			if c.installed {
				for _, o := range objs {
					if d, ok := o.(*appsv1.DaemonSet); ok {
						in = append(in, d)
					}
				}
			}
			cs := fake.NewSimpleClientset(in...)
			answerReviews(cs)
			s, err := Collect(context.Background(), cs, Input{Source: SourceManifests, Objects: objs, ManifestNamespace: "kube-system"})
			if err != nil {
				t.Fatal(err)
			}
			count := func(n int, read bool) int {
				if !read {
					return -1
				}
				return n
			}
			if count(len(s.LoadBalancers), s.LoadBalancers != nil) != c.lbs || count(len(s.ServiceLBDaemonSets), s.ServiceLBDaemonSets != nil) != c.dss ||
				c.dss == 1 && s.ServiceLBDaemonSets[0].Name != ds.Name || c.installed != (s.Installed != nil) {
				t.Errorf("services %v, daemonsets %v, installed %v", s.LoadBalancers, s.ServiceLBDaemonSets, s.Installed != nil)
			}
		})
	}
}
