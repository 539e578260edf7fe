package check

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// withImage sets the rendered CCM's image tag.
func withImage(objs []runtime.Object, tag string) []runtime.Object {
	for _, o := range objs {
		if ds, ok := o.(*appsv1.DaemonSet); ok {
			ds.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/provider-aws/cloud-controller-manager:" + tag
		}
	}
	return objs
}

// kubeadmConfig is kubeadm's ConfigMap with a ClusterConfiguration of an
// API version.
func kubeadmConfig(api string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kubeadm-config", Namespace: "kube-system"},
		Data: map[string]string{"ClusterConfiguration": "apiVersion: " + api + "\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.1\n"}}
}

// TestOptionsRule: each option change of internal/releases against what
// the API shows of the components' options, at their own minor and at
// --upgrade-to; silent where nothing changes.
func TestOptionsRule(t *testing.T) {
	const ext = "--cloud-provider=external"
	kubeadm2 := []corev1.Node{kubeadmCP("cp-1"), kubeadmCP("cp-2")}
	apiserver := func(node, tag string, rke2 bool, flags ...string) corev1.Pod {
		image := "registry.k8s.io/kube-apiserver:" + tag
		if rke2 {
			image = "rancher/hardened-kubernetes:" + tag + "-rke2r1-build20250612"
		}
		return staticPod(programAPIServer, node, image, rke2, flags...)
	}
	kcm := func(node, tag string, flags ...string) corev1.Pod {
		return staticPod(programKCM, node, "registry.k8s.io/kube-controller-manager:"+tag, false, flags...)
	}
	rke2At := func(name, version, args string) corev1.Node {
		return node(name, kubelet(version), annotation(annotationRKE2NodeArgs, args), label(distros.LabelControlPlane, "true"), providerID("aws:///us-west-2a/i-"+name))
	}
	apiSays := "kube-apiserver has no --cloud-provider or --cloud-config from 1.33 and exits on the unknown flag"
	for _, c := range []struct {
		name    string
		nodes   []corev1.Node
		pods    []corev1.Pod
		server  string
		upgrade string
		kubeadm *corev1.ConfigMap
		want    []want
	}{
		{"kube-apiserver with --cloud-provider at 1.33", kubeadm2, []corev1.Pod{apiserver("cp-1", "v1.33.0", false, ext)}, "v1.32.4", "", nil,
			[]want{{"kube-apiserver on cp-1", Error, "--cloud-provider=external at 1.33: " + apiSays, "remove --cloud-provider and --cloud-config from kube-apiserver's flags (RKE2: kube-apiserver-arg; kubeadm: apiServer.extraArgs)"}}},
		{"kube-apiserver at 1.32 (RKE2's image): a warning", []corev1.Node{rke2Server("s-1")}, []corev1.Pod{apiserver("s-1", "v1.32.5", true, ext)}, "v1.32.5+rke2r1", "", nil,
			[]want{{"kube-apiserver on s-1", Warning, "--cloud-provider=external at 1.32: " + apiSays, "kube-apiserver-arg; kubeadm: apiServer.extraArgs), before 1.33"}}},
		{"kube-apiserver at 1.32, upgrading to 1.33: an error", kubeadm2, []corev1.Pod{apiserver("cp-1", "v1.32.4", false, ext), apiserver("cp-2", "v1.32.4", false, ext)}, "v1.32.4", "1.33", nil,
			[]want{{"kube-apiserver on 2 nodes: cp-1 and cp-2", Error, "--cloud-provider=external at 1.32, upgrading to 1.33: " + apiSays, "apiServer.extraArgs), before the upgrade to 1.33"}}},
		{"kube-apiserver with --cloud-provider at 1.26: a fact", kubeadm2, []corev1.Pod{apiserver("cp-1", "v1.26.5", false, "--cloud-provider=aws")}, "v1.26.5", "", nil,
			[]want{{"kube-apiserver on cp-1", Info, "--cloud-provider=aws at 1.26: " + apiSays, "before 1.33"}}},
		{"kube-apiserver with --cloud-config alone", kubeadm2, []corev1.Pod{apiserver("cp-1", "v1.33.0", false, "--cloud-config=/etc/aws.conf")}, "v1.33.0", "", nil,
			[]want{{"kube-apiserver on cp-1", Error, "--cloud-config=/etc/aws.conf at 1.33", ""}}},
		{"kube-apiserver at 1.32 while 1.33 answers: its own image counts", kubeadm2, []corev1.Pod{apiserver("cp-1", "v1.32.4", false, ext)}, "v1.33.1", "", nil,
			[]want{{"kube-apiserver on cp-1", Warning, "at 1.32", "before 1.33"}}},
		{"kube-apiserver without --cloud-provider: silent", kubeadm2, []corev1.Pod{apiserver("cp-1", "v1.33.0", false, "--secure-port=6443")}, "v1.33.0", "1.37", nil, nil},
		{"the controller manager's in-tree provider at 1.26: the migration's, silent", kubeadm2, []corev1.Pod{kcm("cp-1", "v1.26.5", "--cloud-provider=aws")}, "v1.26.5", "", nil, nil},
		{"the controller manager's in-tree provider, upgrading to 1.27", kubeadm2, []corev1.Pod{kcm("cp-1", "v1.26.5", "--cloud-provider=aws")}, "v1.26.5", "v1.27.0", nil,
			[]want{{"kube-controller-manager on cp-1", Error, "--cloud-provider=aws at 1.26, upgrading to 1.27: kube-controller-manager has no in-tree AWS provider from 1.27", "--cloud-provider=external, before the upgrade to 1.27"}}},
		{"the controller manager naming its cloud controllers at 1.36, upgrading to 1.37", kubeadm2,
			[]corev1.Pod{kcm("cp-1", "v1.36.1", ext, "--controllers=*,-service,-route,-cloud-node-lifecycle")}, "v1.36.1", "1.37", nil,
			[]want{{"kube-controller-manager on cp-1", Error, "--controllers naming -service,-route,-cloud-node-lifecycle at 1.36, upgrading to 1.37: kube-controller-manager no longer registers its cloud controllers", "drop service, route and cloud-node-lifecycle"}}},
		{"the controller manager naming them at 1.37", kubeadm2, []corev1.Pod{kcm("cp-1", "v1.37.2", "--controllers=*,-cloud-node-lifecycle-controller")}, "v1.37.2", "", nil,
			[]want{{"kube-controller-manager on cp-1", Error, "--controllers naming -cloud-node-lifecycle-controller at 1.37", ""}}},
		{"the controller manager's other controllers: silent", kubeadm2, []corev1.Pod{kcm("cp-1", "v1.37.2", "--controllers=*,-bootstrapsigner")}, "v1.37.2", "", nil, nil},
		{"an RKE2 kubelet given cloud-config at 1.34", []corev1.Node{rke2At("s-1", "v1.34.2+rke2r1", `["server","--kubelet-arg","cloud-config=/etc/aws.conf","--disable-cloud-controller"]`)}, nil, "v1.34.2+rke2r1", "", nil,
			[]want{{"kubelet on s-1", Error, "kubelet-arg cloud-config=/etc/aws.conf at 1.34: the kubelet has no --cloud-config from 1.34", "remove --cloud-config"}}},
		{"an RKE2 kubelet given cloud-provider=aws at 1.27", []corev1.Node{rke2At("s-1", "v1.27.16+rke2r1", `["server","--kubelet-arg","cloud-provider=aws","--disable-cloud-controller"]`)}, nil, "v1.27.16+rke2r1", "", nil,
			[]want{{"kubelet on s-1", Error, "kubelet-arg cloud-provider=aws at 1.27: the kubelet has no in-tree AWS provider from 1.27", "--cloud-provider=external"}}},
		{"kubeadm's v1beta3 configuration, upgrading to 1.37", kubeadm2, nil, "v1.36.1", "1.37", kubeadmConfig("kubeadm.k8s.io/v1beta3"),
			[]want{{"kubeadm: ConfigMap kube-system/kubeadm-config", Error, "ClusterConfiguration kubeadm.k8s.io/v1beta3 at 1.36, upgrading to 1.37: kubeadm refuses the v1beta3 configuration API from 1.37", "kubeadm.k8s.io/v1beta4"}}},
		{"kubeadm's v1beta4 configuration: silent", kubeadm2, nil, "v1.36.1", "1.37", kubeadmConfig("kubeadm.k8s.io/v1beta4"), nil},
		{"an RKE2 server with cloud-provider-name and its own cloud controller at 1.36", []corev1.Node{rke2At("s-1", "v1.36.0+rke2r1", `["server","--cloud-provider-name","external"]`)}, nil, "v1.36.0+rke2r1", "", nil,
			[]want{{"rke2 on s-1", Error, "cloud-provider-name without disable-cloud-controller at 1.36: RKE2 no longer turns its own cloud controller off", "disable-cloud-controller: true"}}},
		{"the same at 1.35, upgrading to 1.36", []corev1.Node{rke2At("s-1", "v1.35.7+rke2r1", `["server","--cloud-provider-name","external"]`)}, nil, "v1.35.7+rke2r1", "1.36", nil,
			[]want{{"rke2 on s-1", Error, "at 1.35, upgrading to 1.36", "before the upgrade to 1.36"}}},
		// RKE2's naming shim over an explicit node-name (the agent's
		// node-args as RKE2 records a config file's keys: "--key", "value").
		{"an RKE2 node given node-name and cloud-provider-name: aws, before its line's renaming release", []corev1.Node{rke2At("ip-10-0-1-7.ec2.internal", "v1.31.2+rke2r1", `["agent","--node-name","ip-10-0-1-7.ec2.internal","--cloud-provider-name","aws"]`)}, nil, "v1.31.2+rke2r1", "", nil,
			[]want{{"rke2 on ip-10-0-1-7.ec2.internal", Warning, "node-name ip-10-0-1-7.ec2.internal with cloud-provider-name: aws at v1.31.2+rke2r1: from v1.31.3+rke2r1 on, with cloud-provider-name: aws", "99-node-name.yaml: cloud-provider-name: external, node-name-from-cloud-provider-metadata: false, and its node-name, before the upgrade to v1.31.3+rke2r1"}}},
		{"the same with the metadata key at 1.28: the next line's first release", []corev1.Node{rke2At("n-1", "v1.28.15+rke2r1", `["agent","--node-name","n-1","--node-name-from-cloud-provider-metadata","true"]`)}, nil, "v1.28.15+rke2r1", "", nil,
			[]want{{"rke2 on n-1", Warning, "node-name n-1 with node-name-from-cloud-provider-metadata: true at v1.28.15+rke2r1: from v1.29.11+rke2r1 on", "before the upgrade to v1.29.11+rke2r1"}}},
		{"renamed from the metadata already: its Node under node-name left behind", []corev1.Node{
			rke2At("ip-10-0-1-7.corp.example", "v1.32.4+rke2r1", `["agent","--node-name","ip-10-0-1-7.ec2.internal","--node-name-from-cloud-provider-metadata"]`),
			rke2At("ip-10-0-1-7.ec2.internal", "v1.31.2+rke2r1", `["agent","--node-name","ip-10-0-1-7.ec2.internal","--node-name-from-cloud-provider-metadata=false"]`)}, nil, "v1.32.4+rke2r1", "", nil,
			[]want{{"rke2 on ip-10-0-1-7.corp.example", Error, "node-name ip-10-0-1-7.ec2.internal with node-name-from-cloud-provider-metadata: true at v1.32.4+rke2r1: with cloud-provider-name: aws or", "99-node-name.yaml"}}},
		{"named from the metadata, never registered under node-name: silent", []corev1.Node{rke2At("ip-10-0-1-7.corp.example", "v1.32.4+rke2r1", `["agent","--node-name","pool1-abc","--node-name-from-cloud-provider-metadata"]`)}, nil, "v1.32.4+rke2r1", "", nil, nil},
		{"upgrading across the renaming release: an error", []corev1.Node{rke2At("n-1", "v1.31.2+rke2r1", `["agent","--node-name","n-1","--cloud-provider-name","aws"]`)}, nil, "v1.31.2+rke2r1", "1.32", nil,
			[]want{{"rke2 on n-1", Error, "at v1.31.2+rke2r1, upgrading to 1.32", "before the upgrade to 1.32"}}},
		{"the key's last occurrence counts (0 is false)", []corev1.Node{rke2At("n-1", "v1.31.2+rke2r1", `["agent","--node-name","n-1","--node-name-from-cloud-provider-metadata","--node-name-from-cloud-provider-metadata=0"]`)}, nil, "v1.31.2+rke2r1", "", nil, nil},
		{"named from the metadata as its node-name says: silent", []corev1.Node{rke2At("n-1", "v1.32.4+rke2r1", `["agent","--node-name","n-1","--cloud-provider-name","aws"]`)}, nil, "v1.32.4+rke2r1", "", nil, nil},
		{"node-name with the key turned off: silent", []corev1.Node{rke2At("n-1", "v1.31.2+rke2r1", `["agent","--node-name","n-1","--node-name-from-cloud-provider-metadata","false","--cloud-provider-name","external"]`)}, nil, "v1.31.2+rke2r1", "", nil, nil},
		{"the shim without node-name: silent", []corev1.Node{rke2At("n-1", "v1.31.2+rke2r1", `["agent","--cloud-provider-name","aws"]`)}, nil, "v1.31.2+rke2r1", "", nil, nil},
		{"an RKE2 server with disable-cloud-controller: silent", []corev1.Node{rke2At("s-1", "v1.36.0+rke2r1", `["server","--cloud-provider-name","external","--disable-cloud-controller"]`)}, nil, "v1.36.0+rke2r1", "1.37", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, c.nodes, render(t, distros.Auto, renderer.ModeInstall), false)
			s.ControlPlanePods, s.KubernetesVersion, s.UpgradeTo, s.KubeadmConfig = c.pods, c.server, c.upgrade, c.kubeadm
			r := Evaluate(s)
			expectArea(t, r, AreaOptions, c.want, false)
			for _, f := range findings(r, AreaOptions, "") {
				t.Errorf("a finding without a subject: %+v", f)
			}
			for _, f := range r.Findings {
				if f.Area == AreaOptions && (f.Source == "" || !strings.Contains(f.Source, "/")) {
					t.Errorf("no source: %+v", f)
				}
			}
		})
	}
	// kubeadm's ConfigMap not readable: said when the upgrade would need it.
	s := snapshotOf(t, kubeadm2, render(t, distros.Kubeadm, renderer.ModeInstall), false)
	s.KubeadmConfigUnread, s.UpgradeTo = "check may not get configmaps kube-system/kubeadm-config", "1.37"
	expectArea(t, Evaluate(s), AreaOptions, []want{{"kubeadm", Info, "its ClusterConfiguration is not checked", "kubeadm-config"}}, false)
}

// TestParseUpgradeTo: the versions --upgrade-to takes.
func TestParseUpgradeTo(t *testing.T) {
	for v, want := range map[string]int{"1.37": 37, "v1.37": 37, "v1.37.2": 37, "1.27.0": 27, "latest": 0, "1.37x": 0, "2.0": 0, "1": 0, "": 0, "v1.37.2+rke2r1": 0} {
		m, err := ParseUpgradeTo(v)
		if m != want || (err == nil) != (want != 0) {
			t.Errorf("%q: %d %v, want %d", v, m, err, want)
		}
	}
}

// rke2CCMPod is the mirror pod of RKE2's own cloud controller.
func rke2CCMPod(node string) corev1.Pod {
	p := staticPod(programCCM, node, "rancher/rke2-cloud-provider:v1.33.1-build20250612", true, "--cloud-provider=rke2")
	return p
}

// TestControllersRule: a distribution's own cloud controller beside the
// AWS CCM, before it, or alone; a second AWS CCM.
func TestControllersRule(t *testing.T) {
	k3sServer := func(args string) corev1.Node {
		return node("k-s", kubelet("v1.33.4+k3s1"), label(distros.LabelControlPlane, "true"), annotation(annotationK3sNodeArgs, args), providerID("aws:///us-west-2a/i-0123"))
	}
	late := rke2Agent("late", providerID("rke2://late"))
	late.CreationTimestamp = metav1.NewTime(time.Now().Add(time.Hour))
	other := func(lease string) candidate {
		objs := render(t, distros.RKE2, renderer.ModeInstall)
		c := candidates(objs, "kube-system")[0]
		c.namespace, c.name = "ccm-old", "aws-cloud-controller-manager"
		if lease != "" {
			c.spec.Spec.Containers[c.container].Args = append(c.spec.Spec.Containers[c.container].Args, "--leader-elect-resource-name="+lease)
		}
		return c
	}
	for _, c := range []struct {
		name      string
		nodes     []corev1.Node
		pods      []corev1.Pod
		leases    []*coordinationv1.Lease
		others    []candidate
		installed bool
		noCCM     bool
		want      []want
	}{
		{"RKE2's pod beside the installed CCM", []corev1.Node{rke2Server("s-1")}, []corev1.Pod{rke2CCMPod("s-1")}, nil, nil, true, false,
			[]want{{"RKE2's cloud controller", Error, "runs beside the AWS CCM (its pod cloud-controller-manager-s-1 in kube-system): both initialise new nodes, and those it takes first get rke2:// providerIDs", "disable-cloud-controller: true in /etc/rancher/rke2/config.yaml of every server"}}},
		{"RKE2's lease and a node it initialised after the CCM", []corev1.Node{rke2Server("s-1"), late}, nil, []*coordinationv1.Lease{lease("rke2-cloud-controller-manager", "s-1_abc", 0)}, nil, true, false,
			[]want{{"RKE2's cloud controller", Error, "Lease kube-system/rke2-cloud-controller-manager held by s-1_abc; 1 node registered after the AWS CCM was installed got rke2:// providerIDs (late)", "register again"}}},
		{"RKE2's pod before the install", []corev1.Node{rke2Server("s-1")}, []corev1.Pod{rke2CCMPod("s-1")}, nil, nil, false, false,
			[]want{{"RKE2's cloud controller", Warning, "the AWS CCM installed beside it would race it", "before installing the AWS CCM"}}},
		{"RKE2's pod, no AWS CCM: a fact", []corev1.Node{rke2Server("s-1")}, []corev1.Pod{rke2CCMPod("s-1")}, nil, nil, false, true,
			[]want{{"RKE2's cloud controller", Info, "it initialises the nodes, with rke2:// providerIDs", ""}}},
		{"K3s's lease, its node controllers on", []corev1.Node{k3sServer(`["server"]`)}, nil, []*coordinationv1.Lease{lease("k3s-cloud-controller-manager", "k-s_abc", 0)}, nil, true, false,
			[]want{{"K3s's cloud controller", Error, "Lease kube-system/k3s-cloud-controller-manager held by k-s_abc", "disable-cloud-controller: true in /etc/rancher/k3s/config.yaml"}}},
		{"K3s's lease with disable-cloud-controller: ServiceLB's, silent", []corev1.Node{k3sServer(`["server","--disable-cloud-controller"]`)}, nil, []*coordinationv1.Lease{lease("k3s-cloud-controller-manager", "k-s_abc", 0)}, nil, true, false, nil},
		{"K3s's lease lapsed: silent", []corev1.Node{k3sServer(`["server"]`)}, nil, []*coordinationv1.Lease{lease("k3s-cloud-controller-manager", "k-s_abc", time.Hour)}, nil, true, false, nil},
		{"a second AWS CCM under its own lease", []corev1.Node{rke2Server("s-1")}, nil, []*coordinationv1.Lease{lease("old-ccm", "s-1_x", 0)}, []candidate{other("old-ccm")}, true, false,
			[]want{{"DaemonSet ccm-old/aws-cloud-controller-manager", Error, "leads under Lease kube-system/old-ccm (held by s-1_x), DaemonSet kube-system/aws-cloud-controller-manager under kube-system/cloud-controller-manager: both run the cloud controllers", "kubectl delete -n ccm-old daemonset/aws-cloud-controller-manager"}}},
		{"a second AWS CCM sharing the lease", []corev1.Node{rke2Server("s-1")}, nil, nil, []candidate{other("")}, true, false,
			[]want{{"DaemonSet ccm-old/aws-cloud-controller-manager", Warning, "shares Lease kube-system/cloud-controller-manager with DaemonSet kube-system/aws-cloud-controller-manager: one leads at a time", "keep one AWS CCM"}}},
		{"manifests that would add a second one", []corev1.Node{rke2Server("s-1")}, nil, nil, []candidate{other("")}, false, false,
			[]want{{"DaemonSet ccm-old/aws-cloud-controller-manager", Error, "installing DaemonSet kube-system/aws-cloud-controller-manager as well makes two", "upgrade that one instead"}}},
		{"nothing else: silent", []corev1.Node{rke2Server("s-1")}, nil, nil, nil, true, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, c.nodes, render(t, distros.RKE2, renderer.ModeInstall), c.installed)
			if c.noCCM {
				s.Workload, s.Installed = nil, nil
			}
			if s.Installed != nil {
				s.Installed.SetCreationTimestamp(metav1.NewTime(time.Now()))
			}
			s.ControlPlanePods, s.OtherCCMs, s.Now = c.pods, c.others, testNow
			for _, l := range c.leases {
				s.Leases["kube-system/"+l.Name] = l
			}
			expectArea(t, Evaluate(s), AreaControllers, c.want, false)
		})
	}
}

// TestForeignProviderIDs: nodes on another cloud controller's providerIDs,
// per node group with counts, with what the CCM's release does with them;
// one whose last part is an instance ID is usable; nodes without providerID
// or taint can be tainted by hand.
func TestForeignProviderIDs(t *testing.T) {
	nodes := []corev1.Node{
		rke2Server("s-1", providerID("rke2://s-1")),
		rke2Agent("a-1", providerID("rke2://a-1")), rke2Agent("a-2", providerID("rke2://a-2")), rke2Agent("a-3", providerID("rke2://a-3")), rke2Agent("a-4", providerID("rke2://a-4")),
		rke2Agent("i-0abc", providerID("rke2://i-0abc")),
	}
	for _, c := range []struct {
		tag, release string
	}{
		{"v1.34.3", "CCM v1.34.3, which leaves it uninitialized if it is tainted node.cloudprovider.kubernetes.io/uninitialized again (from 1.30 it reads providerIDs only)"},
		{"v1.29.10", "CCM v1.29.10, which looks such a node up by its name if it is tainted node.cloudprovider.kubernetes.io/uninitialized again (up to 1.29)"},
	} {
		s := snapshotOf(t, nodes, withImage(render(t, distros.RKE2, renderer.ModeInstall), c.tag), true)
		r := Evaluate(s)
		cp := one(t, r, AreaNode, "s-1")
		if cp.Severity != Error || cp.Message != "providerID rke2://s-1: initialised by RKE2's embedded cloud controller, not the AWS CCM; the AWS CCM cannot read an instance ID from it (Invalid format for AWS instance): every release leaves the node out of its load balancers and never deletes it; "+c.release ||
			!strings.HasPrefix(cp.Fix, "a providerID changes only from empty, so the node must register again: RKE2: ") || !strings.Contains(cp.Source, "MapToAWSInstanceID") {
			t.Errorf("%s: control plane: %+v", c.tag, cp)
		}
		w := one(t, r, AreaNode, "4 nodes: a-1, a-2, a-3 and 1 more")
		if w.Severity != Error || w.Count != 4 || len(w.Subjects) != 4 || !strings.HasPrefix(w.Message, "providerID rke2://…: initialised by RKE2's embedded cloud controller, not the AWS CCM (workers); ") || !strings.HasSuffix(w.Message, c.release) {
			t.Errorf("%s: workers: %+v", c.tag, w)
		}
		if i := one(t, r, AreaNode, "i-0abc"); i.Severity != Info || i.Message != "providerID rke2://i-0abc: initialised by RKE2's embedded cloud controller; the AWS CCM reads instance i-0abc from it, so it can use the node" {
			t.Errorf("%s: instance-named: %+v", c.tag, i)
		}
	}
	// No workload: the release for the cluster's minor.
	s := snapshotOf(t, nodes[:1], render(t, distros.RKE2, renderer.ModeInstall), false)
	s.Workload, s.KubernetesVersion = nil, "v1.31.4+rke2r1"
	if f := one(t, Evaluate(s), AreaNode, "s-1"); !strings.Contains(f.Message, "CCM "+releases.Tag(31)+" (the release for 1.31), which leaves it uninitialized") {
		t.Errorf("no workload: %+v", f)
	}
	// No providerID, no taint: the taint by hand, naming the node.
	w1 := "ip-10-0-2-21.us-west-2.compute.internal"
	s = snapshotOf(t, []corev1.Node{kubeadmCP("cp-1"), node(w1, kubeadmNode, providerID(""))}, render(t, distros.Kubeadm, renderer.ModeInstall), true)
	f := one(t, Evaluate(s), AreaNode, w1)
	if f.Severity != Error || !strings.Contains(f.Message, "the CCM only initialises nodes that carry the taint") ||
		!strings.HasSuffix(f.Fix, "; or keep the Node: kubectl taint node "+w1+" node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule has the CCM initialise it and set its providerID (a providerID may change from empty); give its kubelet --cloud-provider=external too, for the next registration") {
		t.Errorf("no providerID: %+v", f)
	}
}

// TestCloudConfigKeys: [Global] keys the release refuses or ignores, and
// values it rejects.
func TestCloudConfigKeys(t *testing.T) {
	subject := "cloud config ConfigMap kube-system/aws-cloud-config (key cloud.conf)"
	for _, c := range []struct {
		name, tag, conf string
		want            []want
	}{
		{"a key no release reads, on a release that refuses it", "v1.26.0", "[Global]\nZone = us-west-2a\nRegoin = us-west-2\n",
			[]want{{subject, Error, "[Global] Regoin is a key no CCM release reads: CCM v1.26.0 refuses a cloud config with a key it does not know and exits", "v1.26.0-v1.26.6"}}},
		{"the same on a release that ignores it", "v1.35.2", "[Global]\nregoin = us-west-2\n",
			[]want{{subject, Warning, "[Global] regoin is a key no CCM release reads: CCM v1.35.2 ignores it", "remove it"}}},
		{"Region on a 1.26 release that refuses it", "v1.26.5", "[Global]\nRegion = us-west-2\n",
			[]want{{subject, Error, "[Global] Region is a key CCM v1.26.5 does not read (read from v1.27.1): CCM v1.26.5 refuses", ""}}},
		{"Region on the 1.26 release that ignores it", "v1.26.14", "[Global]\nRegion = us-west-2\n",
			[]want{{subject, Warning, "[Global] Region is a key CCM v1.26.14 does not read (read from v1.27.1): CCM v1.26.14 ignores it", ""}}},
		{"DisableStrictZoneCheck after its removal", "v1.30.10", "[Global]\nDisableStrictZoneCheck = true\n",
			[]want{{subject, Warning, "does not read (removed in v1.27.1)", ""}}},
		{"NLBSecurityGroupMode with another case", "v1.35.2", "[Global]\nNLBSecurityGroupMode = managed\n",
			[]want{{subject, Error, "[Global] NLBSecurityGroupMode = managed: CCM v1.35.2 accepts empty and Managed; another value: every NLB Service's reconcile fails", "set it to one of empty and Managed"}}},
		{"a health probe mode it accepts: silent", "v1.33.4", "[Global]\nClusterServiceLoadBalancerHealthProbeMode = Shared\n", nil},
		{"a pattern that is no regular expression", "v1.33.4", "[Global]\nSupportedTopologyInstanceTypePattern = ^(p5|trn[12\n",
			[]want{{subject, Error, "[Global] SupportedTopologyInstanceTypePattern = ^(p5|trn[12 is no regular expression", "Go regular expression"}}},
		{"a pattern that is one: silent", "v1.33.4", "[Global]\nSupportedTopologyInstanceTypePattern = ^(p5|trn[12])\\..*\n", nil},
		{"the keys every release reads: silent", "v1.26.0", "[Global]\nZone = us-west-2a\nKubernetesClusterID = c1\nNodeIPFamilies = ipv4\n", nil},
		{"NodeIPFamilies written with capitals", "v1.34.3", "[Global]\nNodeIPFamilies = IPv4\n",
			[]want{{subject, Error, "NodeIPFamilies = IPv4: CCM v1.34.3 accepts ipv4 and ipv6", ""}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, []corev1.Node{rke2Server("cp-1")}, withCloudConfig(t, c.tag, "ConfigMap", c.conf), false)
			s.CloudConfig = &CloudConfig{From: "ConfigMap kube-system/aws-cloud-config (key cloud.conf)", Text: c.conf}
			var r Report
			for _, f := range Evaluate(s).Findings {
				if f.Subject == subject {
					r.Findings = append(r.Findings, f)
				}
			}
			expectArea(t, &r, AreaWorkload, c.want, false)
		})
	}
}

// TestTakeover: the LoadBalancer Services the CCM's service controller
// will give an AWS load balancer, and those it keeps.
func TestTakeover(t *testing.T) {
	svcs := []corev1.Service{lbService("default", "web", "", "203.0.113.10"), lbService("shop", "api", ""),
		lbService("old", "elb", "a1b2-123.us-west-2.elb.amazonaws.com"), lbService("old", "nlb", "a3c4-0123456789abcdef.elb.us-west-2.amazonaws.com")}
	class := lbService("default", "alb", "")
	class.Spec.LoadBalancerClass = ptrTo("service.k8s.aws/nlb")
	svcs = append(svcs, class)
	for _, c := range []struct {
		name      string
		setArgs   []string
		installed bool
		want      []want
	}{
		{"before the install", nil, false, []want{
			{"2 Services: default/web and shop/api", Warning, "once the CCM's service controller runs it creates one for each", "--set-arg=controllers=*,-service"},
			{"2 Services: old/elb and old/nlb", Info, "answered by an AWS load balancer already", ""}}},
		{"held back", []string{"controllers=*,-service"}, true, []want{
			{"2 Services: default/web and shop/api", Info, "held back: the CCM runs with --controllers=*,-service", ""},
			{"2 Services: old/elb and old/nlb", Info, "keeps it", ""}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := renderer.DefaultOptions()
			o.Distro, o.SetArgs = distros.RKE2, c.setArgs
			s := snapshotOf(t, []corev1.Node{rke2Server("cp-1")}, renderWith(t, o), c.installed)
			s.LoadBalancers = svcs
			expectArea(t, Evaluate(s), AreaService, c.want, true)
		})
	}
	for h, want := range map[string]bool{
		"a1b2-123.us-west-2.elb.amazonaws.com": true, "a1b2-0123456789abcdef.elb.us-west-2.amazonaws.com": true,
		"a1b2-123.cn-north-1.elb.amazonaws.com.cn": true, "a1b2-0123456789abcdef.elb.cn-north-1.amazonaws.com.cn": true,
		"a1b2-0123456789abcdef.elb.us-gov-west-1.amazonaws.com": true,
		"lb.example.com": false, "elb.amazonaws.com.example.com": false, "a1b2.elb.example.amazonaws.com": false, "": false,
	} {
		if awsLBHostname(h) != want {
			t.Errorf("awsLBHostname(%q) = %v", h, !want)
		}
	}
	// One Service: its current address.
	s := snapshotOf(t, []corev1.Node{rke2Server("cp-1")}, render(t, distros.RKE2, renderer.ModeInstall), false)
	s.LoadBalancers = svcs[:1]
	if f := one(t, Evaluate(s), AreaService, "Service default/web"); !strings.HasSuffix(f.Message, "(*.elb.amazonaws.com), in place of 203.0.113.10") {
		t.Errorf("one: %+v", f)
	}
	// The CCM's service controller runs: nothing to take over.
	s = snapshotOf(t, []corev1.Node{rke2Server("cp-1")}, render(t, distros.RKE2, renderer.ModeInstall), true)
	s.LoadBalancers = svcs
	expectArea(t, Evaluate(s), AreaService, nil, false)
}

func ptrTo[T any](v T) *T { return &v }

// TestPlanRule: which plan --from fits the cluster, as a command line.
func TestPlanRule(t *testing.T) {
	kubeadm2 := []corev1.Node{kubeadmCP("cp-1"), node("w-1", kubeadmNode, providerID(""))}
	bare := []corev1.Node{node("cp-1", kubeadmNode, label(distros.LabelControlPlane, "")), node("w-1", kubeadmNode)}
	for _, c := range []struct {
		name      string
		nodes     []corev1.Node
		pods      []corev1.Pod
		server    string
		installed bool
		noCCM     bool
		want      []want
	}{
		{"the in-tree provider", kubeadm2, []corev1.Pod{kcmPod("cp-1", false, "--cloud-provider=aws")}, "v1.26.15", false, false,
			[]want{{"", Info, "kube-controller-manager on cp-1 runs the in-tree AWS provider (--cloud-provider=aws): the plan to move it to the AWS CCM starts from in-tree", "aws-ccm-renderer plan --from=in-tree --distro=kubeadm --kube-version=v1.26.15"}}},
		{"aws:// nodes at 1.26 and no CCM: the in-tree provider's", []corev1.Node{kubeadmCP("cp-1")}, nil, "v1.26.15", false, true,
			[]want{{"", Info, "1 of 1 nodes have aws:// providerIDs and no AWS CCM runs, at 1.26", "--from=in-tree"}}},
		{"RKE2's own providerIDs", []corev1.Node{rke2Server("s-1", providerID("rke2://s-1")), rke2Agent("a-1")}, nil, "v1.35.7+rke2r1", true, false,
			[]want{{"", Info, "1 of 2 nodes have rke2:// providerIDs from RKE2's own cloud controller", "aws-ccm-renderer plan --from=builtin --distro=rke2 --kube-version=v1.35.7"}}},
		{"no cloud provider", bare, nil, "v1.34.2", false, true,
			[]want{{"", Info, "no cloud provider: none of the 2 nodes has a providerID, and no AWS CCM runs", "aws-ccm-renderer plan --from=none --distro=kubeadm --kube-version=v1.34.2"}}},
		{"every node waits for the CCM: a new cluster", []corev1.Node{
			node("cp-1", kubeadmNode, label(distros.LabelControlPlane, ""), taint(releases.UninitializedTaint, "true", corev1.TaintEffectNoSchedule)),
			node("w-1", kubeadmNode, taint(releases.UninitializedTaint, "true", corev1.TaintEffectNoSchedule))}, nil, "v1.37.2", false, true,
			[]want{{"", Info, "every node (2) waits for the CCM, tainted uninitialized without providerID", "aws-ccm-renderer plan --from=new --distro=kubeadm --kube-version=v1.37.2"}}},
		{"--cloud-provider=aws at 1.37: no in-tree plan", bare, []corev1.Pod{staticPod(programKCM, "cp-1", "registry.k8s.io/kube-controller-manager:v1.37.2", false, "--cloud-provider=aws")}, "v1.37.2", false, true,
			[]want{{"", Info, "no cloud provider", "--from=none"}}},
		{"in-tree controller managers older than the API server: the plan of their minor", kubeadm2, []corev1.Pod{kcmPod("cp-1", false, "--cloud-provider=aws")}, "v1.37.2", false, false,
			[]want{{"", Info, "runs the in-tree AWS provider", "aws-ccm-renderer plan --from=in-tree --distro=kubeadm --kube-version=v1.26"}}},
		{"no nodes", nil, nil, "v1.34.2", false, true,
			[]want{{"", Info, "no node has joined", "aws-ccm-renderer plan --from=new --distro=DISTRO --kube-version=v1.34.2"}}},
		{"the AWS CCM runs: silent", kubeadm2, nil, "v1.34.2", true, false, nil},
		{"its manifests against aws:// nodes at 1.34: silent", []corev1.Node{kubeadmCP("cp-1")}, nil, "v1.34.2", false, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, c.nodes, render(t, distros.Auto, renderer.ModeInstall), c.installed)
			if c.noCCM {
				s.Workload, s.Installed = nil, nil
			}
			s.ControlPlanePods, s.KubernetesVersion = c.pods, c.server
			expectArea(t, Evaluate(s), AreaPlan, c.want, false)
		})
	}
}
