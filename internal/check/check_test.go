package check

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check/checktest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// render runs aws-ccm-renderer over testdata/chart.yaml and decodes the
// output.
func render(t *testing.T, distro distros.Distro, mode renderer.Mode) []runtime.Object {
	t.Helper()
	o := renderer.DefaultOptions()
	o.Distro, o.Mode = distro, mode
	return renderWith(t, o)
}

// renderWith renders testdata/chart.yaml with the options.
func renderWith(t *testing.T, o renderer.Options) []runtime.Object {
	t.Helper()
	objs, err := DecodeManifests(checktest.Render(t, o))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func unrendered(t *testing.T) []runtime.Object {
	t.Helper()
	objs, err := DecodeManifests(checktest.Chart(t))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// The nodes of the tests (checktest).
type nodeOpt = checktest.NodeOpt

var (
	node, label, annotation, kubelet = checktest.Node, checktest.Label, checktest.Annotation, checktest.Kubelet
	providerID, internal, taint      = checktest.ProviderID, checktest.Internal, checktest.Taint
	rke2Server, rke2Agent            = checktest.RKE2Server, checktest.RKE2Agent
)

// snapshotOf is a literal snapshot of manifests checked without a
// cluster: the manifests' workload (and its migration ConfigMap), the
// nodes, and optionally the workload as installed; a test adds what else
// Collect would have read.
func snapshotOf(t *testing.T, nodes []corev1.Node, objs []runtime.Object, installed bool) *Snapshot {
	t.Helper()
	s, err := ManifestSnapshot(objs, nodes, installed)
	if err != nil {
		t.Fatal(err)
	}
	s.Now, s.KubernetesVersion = time.Now(), "v1.34.10"
	return s
}

// findings returns the findings of an area about a subject.
func findings(r *Report, area, subject string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Area == area && f.Subject == subject {
			out = append(out, f)
		}
	}
	return out
}

func one(t *testing.T, r *Report, area, subject string) Finding {
	t.Helper()
	fs := findings(r, area, subject)
	if len(fs) != 1 {
		t.Fatalf("%d %s findings about %q, want 1: %+v", len(fs), area, subject, r.Findings)
	}
	return fs[0]
}

func TestIsCCMContainer(t *testing.T) {
	for _, c := range []struct {
		name string
		ctr  corev1.Container
		want bool
	}{
		{"upstream image", corev1.Container{Image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0"}, true},
		{"mirror with a port and a digest", corev1.Container{Image: "mirror.example.com:5000/k8s/provider-aws/cloud-controller-manager@sha256:0123012301230123012301230123012301230123012301230123012301230123"}, true},
		{"bare name", corev1.Container{Image: "aws-cloud-controller-manager"}, true},
		{"own repository", corev1.Container{Image: "example.com/team/aws-cloud-controller-manager:v1"}, true},
		{"command", corev1.Container{Command: []string{"/bin/aws-cloud-controller-manager"}, Image: "example.com/anything"}, true},
		{"another command in the CCM image", corev1.Container{Command: []string{"/bin/sh"}, Image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0"}, false},
		{"cluster-autoscaler with --cloud-provider=aws", corev1.Container{Image: "registry.k8s.io/autoscaling/cluster-autoscaler:v1.34.0", Args: []string{"--cloud-provider=aws"}}, false},
		{"name that only ends alike", corev1.Container{Image: "example.com/xprovider-aws/cloud-controller-manager:v1"}, false},
		{"another cloud's CCM", corev1.Container{Image: "registry.k8s.io/cloud-provider-gcp/cloud-controller-manager:v30"}, false},
	} {
		if got := isCCMContainer(c.ctr); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if got := renderer.ImageTag("mirror.example.com:5000/k8s/provider-aws/cloud-controller-manager:v1.34.1@sha256:0123012301230123012301230123012301230123012301230123012301230123"); got != "v1.34.1" {
		t.Errorf("imageTag: %q", got)
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		name  string
		nodes []corev1.Node
		want  string
	}{
		{"rke2 by kubelet", []corev1.Node{node("a", kubelet("v1.30.14+rke2r1")), node("b", kubelet("v1.30.14+rke2r1"))}, "rke2"},
		{"k3s by kubelet", []corev1.Node{node("a", kubelet("v1.30.14+k3s1"))}, "k3s"},
		{"rke2 by annotation", []corev1.Node{node("a", annotation("rke2.io/hostname", "a"))}, "rke2"},
		{"Rancher-provisioned rke2 with rke.cattle.io marks", []corev1.Node{node("a", kubelet("v1.30.14+rke2r1"), annotation("rke.cattle.io/machine", "m"))}, "rke2"},
		{"rke1 by annotation", []corev1.Node{node("a", annotation("rke.cattle.io/internal-ip", "10.0.0.1"))}, "rke"},
		{"rke1 by label", []corev1.Node{node("a", label(distros.LabelRKE1ControlPlane, "true")), node("b")}, "rke"},
		{"kubeadm", []corev1.Node{node("a", annotation(annotationKubeadmCRISocket, "unix:///run/containerd/containerd.sock"))}, "kubeadm"},
		{"unknown", []corev1.Node{node("a", kubelet("v1.34.2"))}, DistroUnknown},
		{"mixed", []corev1.Node{node("a", kubelet("v1.30.14+rke2r1")), node("b", kubelet("v1.30.14+k3s1"))}, DistroMixed},
	} {
		if got := Detect(c.nodes); got.Detected != c.want {
			t.Errorf("%s: %q (%v), want %q", c.name, got.Detected, got.Evidence, c.want)
		}
	}
	d := Detect([]corev1.Node{node("a", kubelet("v1.30.14+rke2r1")), node("b", annotation("rke2.io/node-args", "[]")), node("c")})
	if strings.Join(d.Evidence, "; ") != "rke2: annotation rke2.io/node-args on 1 of 3 nodes; rke2: kubelet +rke2r1 on 1 of 3 nodes" {
		t.Errorf("evidence: %q", d.Evidence)
	}
}

func TestControlPlane(t *testing.T) {
	for _, c := range []struct {
		name         string
		n            corev1.Node
		cp, labelled bool
		by           string
	}{
		{"label", node("a", label(distros.LabelRKE1ControlPlane, "true")), true, true, `label node-role.kubernetes.io/controlplane="true"`},
		{"taint only", node("a", taint(distros.LabelMaster, "", corev1.TaintEffectNoSchedule)), true, false, "taint node-role.kubernetes.io/master:NoSchedule"},
		{"server node-args", node("a", annotation(annotationK3sNodeArgs, `["server","--cluster-init"]`)), true, false, "node-args of a server"},
		{"etcd-only server", node("a", annotation(annotationRKE2NodeArgs, `["server","--disable-apiserver","true"]`)), false, false, ""},
		{"etcd-only server, = form", node("a", annotation(annotationRKE2NodeArgs, `["server","--disable-apiserver=true"]`)), false, false, ""},
		{"agent", node("a", annotation(annotationRKE2NodeArgs, `["agent"]`)), false, false, ""},
		{"etcd taint alone", node("a", taint(distros.TaintEtcd, "", corev1.TaintEffectNoExecute)), false, false, ""},
	} {
		cp, by, labelled := IsControlPlane(&c.n)
		if cp != c.cp || labelled != c.labelled || by != c.by {
			t.Errorf("%s: %v %q %v, want %v %q %v", c.name, cp, by, labelled, c.cp, c.by, c.labelled)
		}
	}
}

func TestEC2Name(t *testing.T) {
	for _, c := range []struct {
		name, ip, region string
		ok               bool
	}{
		{"ip-10-0-1-10.us-west-2.compute.internal", "10.0.1.10", "us-west-2", true},
		{"ip-10-0-1-10.ec2.internal", "10.0.1.10", "us-east-1", true},
		{"ip-172-31-0-5.us-gov-west-1.compute.internal", "172.31.0.5", "us-gov-west-1", true},
		{"ip-10-0-1-10", "", "", false},
		{"ip-10-0-1-10.example.com", "", "", false},
		{"rke2-server-1", "", "", false},
		{"i-0123456789abcdef0.us-west-2.compute.internal", "", "", false},
	} {
		ip, region, ok := ec2NameOf(c.name)
		if ip != c.ip || region != c.region || ok != c.ok {
			t.Errorf("%s: %q %q %v", c.name, ip, region, ok)
		}
	}
	if got := expectedEC2Name("10.0.1.10", "us-east-1"); got != "ip-10-0-1-10.ec2.internal" {
		t.Error(got)
	}
	if got := expectedEC2Name("10.0.1.10", "eu-central-1"); got != "ip-10-0-1-10.eu-central-1.compute.internal" {
		t.Error(got)
	}
	if got := expectedEC2Name("fd00::1", "eu-central-1") + expectedEC2Name("10.0.1.10", ""); got != "" {
		t.Error(got)
	}
}

func TestFlags(t *testing.T) {
	got := flags(corev1.Container{Command: []string{"aws-cloud-controller-manager", "--v", "2"},
		Args: []string{"--cloud-provider=aws", "--enable-leader-migration", "-leader-elect=false", "--leader-elect-resource-name", "ccm", "--x=1", "--x=2"}})
	want := map[string]string{"v": "2", "cloud-provider": "aws", "enable-leader-migration": "true", "leader-elect": "false", "leader-elect-resource-name": "ccm", "x": "2"}
	if len(got) != len(want) {
		t.Errorf("%v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

func TestConfigMapSource(t *testing.T) {
	spec := corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "lm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
		{Name: "items", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm2"},
			Items: []corev1.KeyToPath{{Key: "config", Path: "lm/file.yaml"}}}}},
		{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
	}}
	ctr := corev1.Container{VolumeMounts: []corev1.VolumeMount{
		{Name: "lm", MountPath: "/etc/lm/"},
		{Name: "lm", MountPath: "/etc/single.yaml", SubPath: "key.yaml"},
		{Name: "items", MountPath: "/etc/items"},
		{Name: "secret", MountPath: "/etc/secret"},
	}}
	for _, c := range []struct{ file, name, key string }{
		{"/etc/lm/leader-migration.yaml", "cm", "leader-migration.yaml"},
		{"/etc/single.yaml", "cm", "key.yaml"},
		{"/etc/items/lm/file.yaml", "cm2", "config"},
		{"/etc/secret/x", "", ""},
		{"/elsewhere", "", ""},
	} {
		name, key, ok := configMapSource(spec, ctr, c.file)
		if name != c.name || key != c.key || ok != (c.name != "") {
			t.Errorf("%s: %q %q %v", c.file, name, key, ok)
		}
	}
}

func TestDecodeManifests(t *testing.T) {
	objs, err := DecodeManifests([]byte("# comment only\n---\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("%d objects, %v", len(objs), err)
	}
	_, err = DecodeManifests([]byte("apiVersion: v1\nkind: ConfigMap\n---\napiVersion: apps/v1\nkind: DaemonSet\nspec: [\n"))
	if !renderer.IsInputError(err) || !strings.Contains(err.Error(), "document 2") {
		t.Errorf("broken document: %v", err)
	}
	_, err = DecodeManifests([]byte("apiVersion: apps/v1\nkind: DaemonSet\nspec:\n  template: 3\n"))
	if !renderer.IsInputError(err) || !strings.Contains(err.Error(), "document 1: DaemonSet") {
		t.Errorf("wrong shape: %v", err)
	}
}

func TestPick(t *testing.T) {
	objs := render(t, distros.RKE2, renderer.ModeInstall)
	second := objs[len(objs)-1].DeepCopyObject().(*appsv1.DaemonSet)
	second.Name = "second"
	cands := candidates(append(objs, second), "kube-system")
	if _, err := pick(cands, "", "the manifests"); !renderer.IsUsageError(err) ||
		!strings.Contains(err.Error(), "2 AWS CCM workloads in the manifests: DaemonSet/kube-system/aws-cloud-controller-manager, DaemonSet/kube-system/second") {
		t.Errorf("two: %v", err)
	}
	if w, err := pick(cands, "daemonset/kube-system/second", "x"); err != nil || w.name != "second" {
		t.Errorf("--target: %v %v", w, err)
	}
	for _, target := range []string{"DaemonSet/kube-system", "DaemonSet/kube-system/third"} {
		if _, err := pick(cands, target, "x"); !renderer.IsUsageError(err) {
			t.Errorf("--target %s: %v", target, err)
		}
	}
	if w, err := pick(nil, "", "x"); w != nil || err != nil {
		t.Errorf("none: %v %v", w, err)
	}
}

// TestRenderedFor: the distribution a workload was rendered for shows in
// the renderer's own output, for every --distro; the chart's own output is
// not taken for one.
func TestRenderedFor(t *testing.T) {
	want := map[distros.Distro]string{distros.Auto: "auto", distros.RKE: "rke", distros.RKE2: "rke2/k3s", distros.K3s: "rke2/k3s", distros.Kubeadm: "kubeadm"}
	for _, d := range distros.All {
		s := snapshotOf(t, nil, render(t, d, renderer.ModeInstall), false)
		if got := renderedFor(s.Workload.spec.Spec); got != want[d] {
			t.Errorf("--distro=%s: %q, want %q", d, got, want[d])
		}
	}
	s := snapshotOf(t, nil, unrendered(t), false)
	if got := renderedFor(s.Workload.spec.Spec); got != "" {
		t.Errorf("the chart's output: %q", got)
	}
	for _, x := range []struct {
		rendered, detected string
		ok                 bool
	}{{"auto", "rke", true}, {"rke2/k3s", "k3s", true}, {"rke2", "k3s", true}, {"rke", "rke2", false}, {"kubeadm", "rke2", false}} {
		if samePlacement(x.rendered, x.detected) != x.ok {
			t.Errorf("samePlacement(%s, %s) != %v", x.rendered, x.detected, x.ok)
		}
	}
}

// TestPlacement: manifests rendered for RKE1 on an RKE2 cluster; the
// chart's defaults; a Deployment.
func TestPlacement(t *testing.T) {
	nodes := []corev1.Node{rke2Server("cp-1"), rke2Server("cp-2"), rke2Agent("w-1")}
	r := Evaluate(snapshotOf(t, nodes, render(t, distros.RKE, renderer.ModeInstall), false))
	if f := one(t, r, AreaDistribution, "DaemonSet kube-system/aws-cloud-controller-manager"); f.Severity != Error || f.Message != "rendered for rke, but the cluster is rke2" {
		t.Errorf("distribution: %+v", f)
	}
	f := one(t, r, AreaPlacement, "cp-1")
	if f.Severity != Error || !strings.Contains(f.Message, `nodeSelector node-role.kubernetes.io/controlplane="true": the node has no such label`) || !strings.Contains(f.Fix, "--distro=rke2") {
		t.Errorf("cp-1: %+v", f)
	}
	if r.Summary.CCMOnControlPlane != 0 || r.Summary.ControlPlaneNodes != 2 {
		t.Errorf("summary: %+v", r.Summary)
	}

	// The chart's defaults: the selector wants an empty value, and the
	// etcd taint is not tolerated either.
	r = Evaluate(snapshotOf(t, nodes, unrendered(t), false))
	if f := one(t, r, AreaDistribution, "DaemonSet kube-system/aws-cloud-controller-manager"); f.Severity != Warning || !strings.Contains(f.Message, "not rendered by aws-ccm-renderer") {
		t.Errorf("distribution: %+v", f)
	}
	if f := one(t, r, AreaPlacement, "cp-2"); !strings.Contains(f.Message, `control-plane="": the node has "true"`) {
		t.Errorf("cp-2: %+v", f)
	}

	// A node selector that does fit, with an etcd taint the pod does not
	// tolerate: the rule named is the taint.
	objs := unrendered(t)
	ds := objs[len(objs)-1].(*appsv1.DaemonSet)
	ds.Spec.Template.Spec.NodeSelector = map[string]string{distros.LabelControlPlane: "true"}
	r = Evaluate(snapshotOf(t, nodes, objs, false))
	if f := one(t, r, AreaPlacement, "cp-1"); !strings.Contains(f.Message, "taint node-role.kubernetes.io/etcd:NoExecute is not tolerated") || !strings.Contains(f.Fix, "render with aws-ccm-renderer --distro=rke2") {
		t.Errorf("etcd taint: %+v", f)
	}

	// The same pod template in a Deployment: a warning per control-plane
	// node it does not fit, an error when it fits none.
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "ccm", Namespace: "kube-system"},
		Spec: appsv1.DeploymentSpec{Selector: ds.Spec.Selector, Template: ds.Spec.Template}}
	dep.Spec.Template.Spec.Tolerations = append(dep.Spec.Template.Spec.Tolerations, corev1.Toleration{Key: distros.TaintEtcd, Operator: corev1.TolerationOpExists})
	noLabel := rke2Server("cp-3")
	delete(noLabel.Labels, distros.LabelControlPlane)
	r = Evaluate(snapshotOf(t, append(nodes, noLabel), []runtime.Object{dep}, false))
	if f := one(t, r, AreaPlacement, "cp-1"); f.Severity != OK || !strings.Contains(f.Message, "may run here") {
		t.Errorf("deployment on cp-1: %+v", f)
	}
	if f := one(t, r, AreaPlacement, "cp-3"); f.Severity != Warning || !strings.Contains(f.Fix, "kubectl label node cp-3 node-role.kubernetes.io/control-plane=true") {
		t.Errorf("deployment on the unlabelled cp-3: %+v", f)
	}
	if fs := findings(r, AreaPlacement, "Deployment kube-system/ccm"); len(fs) != 0 {
		t.Errorf("a Deployment that fits: %+v", fs)
	}
}

// TestPods: the pods of an installed DaemonSet, by node.
func TestPods(t *testing.T) {
	nodes := []corev1.Node{rke2Server("cp-1"), rke2Server("cp-2"), rke2Server("cp-3"), rke2Server("cp-4"), rke2Server("cp-5")}
	s := snapshotOf(t, nodes, render(t, distros.RKE2, renderer.ModeInstall), true)
	pinned := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
				{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}}}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	}
	ready := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ccm-a"}, Spec: corev1.PodSpec{NodeName: "cp-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	crash := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ccm-b"}, Spec: corev1.PodSpec{NodeName: "cp-2"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{RestartCount: 7, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}}
	pull := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ccm-d"}, Spec: corev1.PodSpec{NodeName: "cp-4"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}}}
	for _, p := range []*corev1.Pod{ready, crash, pinned("ccm-c", "cp-3"), pull} {
		s.Pods[podNode(p)] = p
	}
	r := Evaluate(s)
	for node, want := range map[string]struct {
		sev Severity
		msg string
	}{
		"cp-1": {OK, "CCM pod ccm-a running and ready"},
		"cp-2": {Error, "CCM pod ccm-b is CrashLoopBackOff (7 restarts)"},
		"cp-3": {Warning, "CCM pod ccm-c is Pending, not ready"},
		"cp-4": {Error, "CCM pod ccm-d is ImagePullBackOff: image registry.k8s.io/provider-aws/cloud-controller-manager:"},
		"cp-5": {Warning, "the DaemonSet admits this node, but it has no CCM pod yet"},
	} {
		if f := one(t, r, AreaPlacement, node); f.Severity != want.sev || !strings.Contains(f.Message, want.msg) {
			t.Errorf("%s: %+v, want %s %q", node, f, want.sev, want.msg)
		}
	}
}

// TestNodeInitialisation: each way a node can fail to be initialised.
func TestNodeInitialisation(t *testing.T) {
	uninit := taint(distros.TaintUninitialized, "true", corev1.TaintEffectNoSchedule)
	nodes := []corev1.Node{
		rke2Server("ip-10-0-1-10.us-west-2.compute.internal", internal("10.0.1.10")),
		rke2Agent("ip-10-0-1-11.us-west-2.compute.internal", internal("10.0.9.9")),
		rke2Agent("k3s-node", providerID("k3s://k3s-node")),
		rke2Agent("ip-10-0-1-12.us-west-2.compute.internal", providerID(""), uninit),
		rke2Agent("myhost", providerID(""), uninit, internal("10.0.1.13"), label(labelRegion, "eu-west-1")),
		rke2Agent("ip-10-0-1-14.us-west-2.compute.internal", providerID("aws:///us-west-2a/i-0999"), uninit),
		rke2Agent("plain", providerID(""), annotation(annotationRKE2NodeArgs, `["agent"]`)),
		rke2Agent("ip-10-0-1-15.us-west-2.compute.internal", providerID(""), annotation(annotationProvidedIP, "10.0.1.15")),
	}
	for _, installed := range []bool{false, true} {
		r := Evaluate(snapshotOf(t, nodes, render(t, distros.RKE2, renderer.ModeInstall), installed))
		check := func(node string, sev Severity, msg, fix string) {
			t.Helper()
			fs := findings(r, AreaNode, node)
			for _, f := range fs {
				if f.Severity == sev && strings.Contains(f.Message, msg) && strings.Contains(f.Fix, fix) {
					return
				}
			}
			t.Errorf("installed %v, %s: want %s %q (fix %q), got %+v", installed, node, sev, msg, fix, fs)
		}
		if n := len(findings(r, AreaNode, "ip-10-0-1-10.us-west-2.compute.internal")); n != 0 {
			t.Errorf("an initialised node has %d findings", n)
		}
		check("ip-10-0-1-11.us-west-2.compute.internal", Warning, "the name says 10.0.1.11, the node's internal IP is 10.0.9.9", "")
		check("k3s-node", Error, "initialised by K3s's embedded cloud controller", "disable-cloud-controller: true")
		sev := map[bool]Severity{false: Warning, true: Error}[installed]
		check("ip-10-0-1-12.us-west-2.compute.internal", sev, "tainted node.cloudprovider.kubernetes.io/uninitialized, no providerID", "")
		check("myhost", Error, "the name is not an EC2 private DNS name", "RKE2: name the node ip-10-0-1-13.eu-west-1.compute.internal")
		check("ip-10-0-1-14.us-west-2.compute.internal", sev, "set, but still tainted", "")
		check("plain", Error, "the kubelet registered without --cloud-provider=external", "kubelet-arg cloud-provider=external")
		check("plain", Error, "the name is not an EC2 private DNS name", "")
		check("ip-10-0-1-15.us-west-2.compute.internal", Error, "although annotation alpha.kubernetes.io/provided-node-ip show(s) the external provider", "")
		if f := one(t, r, AreaNode, ""); f.Message != "2 of 8 nodes initialised by the AWS CCM (aws:// providerID, no uninitialized taint)" {
			t.Errorf("summary line: %+v", f)
		}
		if r.Summary.Uninitialized != 3 {
			t.Errorf("uninitialised: %d", r.Summary.Uninitialized)
		}
	}
}

var testNow = time.Now()

func lease(name, holder string, renewedAgo time.Duration) *coordinationv1.Lease {
	now := metav1.NewMicroTime(testNow.Add(-renewedAgo))
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), RenewTime: &now, AcquireTime: &now, LeaseDurationSeconds: ptr.To[int32](15)}}
}

// TestLeases: who holds the migration lease, against the mode.
func TestLeases(t *testing.T) {
	const kcm, ccm, other = "cp-1_kcm", "cp-2_ccm", "elsewhere_x"
	for _, c := range []struct {
		name      string
		mode      renderer.Mode
		installed bool
		leases    []*coordinationv1.Lease
		area      string // the lease finding's subject
		sev       Severity
		msg       string
		holder    string // --migration-lease-holder
	}{
		{"install: the KCM still migrates", renderer.ModeInstall, true,
			[]*coordinationv1.Lease{lease("kube-controller-manager", kcm, 0), lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, kcm, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", Error, "the in-tree kube-controller-manager: it still runs cloud controllers", ""},
		{"install: an old CCM instance still migrates", renderer.ModeInstall, true,
			[]*coordinationv1.Lease{lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, ccm, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", Warning, "although the workload runs in install mode", ""},
		{"install: an expired migration lease is history", renderer.ModeInstall, true,
			[]*coordinationv1.Lease{lease("kube-controller-manager", kcm, 0), lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, kcm, time.Hour)},
			"Lease kube-system/cloud-provider-extraction-migration", "", "", ""},
		{"migrate: the KCM holds it", renderer.ModeMigrate, true,
			[]*coordinationv1.Lease{lease("kube-controller-manager", kcm, 0), lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, kcm, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", OK, "the in-tree kube-controller-manager: the CCM's migrated controllers wait", ""},
		{"migrate: the CCM holds it", renderer.ModeMigrate, true,
			[]*coordinationv1.Lease{lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, ccm, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", OK, "the cloud controllers have moved", ""},
		{"migrate: someone else", renderer.ModeMigrate, true,
			[]*coordinationv1.Lease{lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, other, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", Warning, "which leads neither", ""},
		{"migrate: nobody", renderer.ModeMigrate, true,
			[]*coordinationv1.Lease{lease("cloud-controller-manager", ccm, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", Warning, "the migration lease is missing", ""},
		{"migrate, the KCM should hold it and does", renderer.ModeMigrate, true,
			[]*coordinationv1.Lease{lease("kube-controller-manager", kcm, 0), lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, kcm, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", OK, "the in-tree kube-controller-manager: the CCM's migrated controllers wait", LeaseKCM},
		{"migrate, the KCM should hold it, the CCM does", renderer.ModeMigrate, true,
			[]*coordinationv1.Lease{lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, ccm, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", Error, "the CCM's leader: the cloud controllers have moved (next, once no controller manager runs the in-tree provider: render with --mode=install); at this step the in-tree kube-controller-manager should hold it (--migration-lease-holder=kube-controller-manager)", LeaseKCM},
		{"migrate, the KCM should hold it, nobody does", renderer.ModeMigrate, false,
			[]*coordinationv1.Lease{lease("kube-controller-manager", kcm, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", Error, "the migration lease is missing: the in-tree controller manager does not run with leader migration", LeaseKCM},
		{"migrate, the CCM should hold it, the KCM does", renderer.ModeMigrate, true,
			[]*coordinationv1.Lease{lease("kube-controller-manager", kcm, 0), lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, kcm, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", Error, "at this step the CCM's leader should hold it (--migration-lease-holder=ccm)", LeaseCCM},
		{"migrate, the CCM should hold it and does", renderer.ModeMigrate, true,
			[]*coordinationv1.Lease{lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, ccm, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", OK, "the cloud controllers have moved", LeaseCCM},
		{"migrate, the CCM should hold it, expired", renderer.ModeMigrate, true,
			[]*coordinationv1.Lease{lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, ccm, time.Minute)},
			"Lease kube-system/cloud-provider-extraction-migration", Error, "expired", LeaseCCM},
		{"migrate, the CCM should hold it, someone else does", renderer.ModeMigrate, true,
			[]*coordinationv1.Lease{lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, other, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", Error, "which leads neither", LeaseCCM},
		{"install: the holder asked for is migrate mode's alone", renderer.ModeInstall, true,
			[]*coordinationv1.Lease{lease("cloud-controller-manager", ccm, 0), lease(renderer.DefaultLeaderName, ccm, 0)},
			"Lease kube-system/cloud-provider-extraction-migration", Warning, "although the workload runs in install mode", LeaseKCM},
		{"installed, no leader", renderer.ModeInstall, true, nil,
			"Lease kube-system/cloud-controller-manager", Error, "no CCM instance has taken its leader-election lease", ""},
		{"installed, leader gone", renderer.ModeInstall, true, []*coordinationv1.Lease{lease("cloud-controller-manager", ccm, time.Minute)},
			"Lease kube-system/cloud-controller-manager", Error, "last renewed 1m0s ago by cp-2_ccm, expired: no CCM instance leads", ""},
		{"not installed, another CCM leads", renderer.ModeInstall, false, []*coordinationv1.Lease{lease("cloud-controller-manager", other, 0)},
			"Lease kube-system/cloud-controller-manager", Warning, "another cloud controller manager with this lease name already runs", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, nil, render(t, distros.RKE2, c.mode), c.installed)
			s.Now, s.MigrationHolder = testNow, c.holder
			for _, l := range c.leases {
				s.Leases[l.Namespace+"/"+l.Name] = l
			}
			want := []leaseWant{{LeaseKCM, "kube-system/kube-controller-manager"}, {LeaseCCM, "kube-system/cloud-controller-manager"}, {LeaseMigration, "kube-system/" + renderer.DefaultLeaderName}}
			if wants := describeWorkload(s).leaseWants(); !slices.Equal(wants, want) {
				t.Errorf("the leases wanted: %v, want %v", wants, want)
			}
			r := Evaluate(s)
			fs := findings(r, AreaLease, c.area)
			if c.sev == "" {
				if len(fs) != 0 {
					t.Errorf("want no finding, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != c.sev || !strings.Contains(fs[0].Message, c.msg) {
				t.Errorf("want %s %q, got %+v", c.sev, c.msg, fs)
			}
			if len(r.Leases) != 3 {
				t.Errorf("%d leases reported", len(r.Leases))
			}
		})
	}
}

// TestMigrationConfig: the leader migration configuration the CCM mounts.
func TestMigrationConfig(t *testing.T) {
	objs := render(t, distros.RKE2, renderer.ModeMigrate)
	s := snapshotOf(t, nil, objs, false)
	r := Evaluate(s)
	w := r.Workload
	if w.Mode != "migrate" || w.MigrationLease != "kube-system/cloud-provider-extraction-migration" ||
		w.MigrationConfig != "ConfigMap kube-system/aws-cloud-controller-manager-leader-migration (key leader-migration.yaml)" || describeWorkload(s).lmc == nil {
		t.Errorf("%+v", w)
	}
	if fs := findings(r, AreaWorkload, "leader migration"); len(fs) != 0 {
		t.Errorf("the rendered config: %+v", fs)
	}
	// Without the ConfigMap, and with a config that names the old
	// controllers only.
	var noCM []runtime.Object
	var cm *corev1.ConfigMap
	for _, o := range objs {
		if m, ok := o.(*corev1.ConfigMap); ok {
			cm = m
		} else {
			noCM = append(noCM, o)
		}
	}
	old := cm.DeepCopy()
	old.Data["leader-migration.yaml"] = "apiVersion: controllermanager.config.k8s.io/v1\nkind: LeaderMigrationConfiguration\nleaderName: my-lease\ncontrollerLeaders:\n- name: route\n  component: '*'\n- name: service\n  component: '*'\n"
	r = Evaluate(snapshotOf(t, nil, append(noCM[:len(noCM):len(noCM)], old), false))
	if f := one(t, r, AreaWorkload, "leader migration"); f.Severity != Warning || !strings.Contains(f.Message, "names route and service but not service-lb-controller") {
		t.Errorf("old names: %+v", f)
	}
	if r.Workload.MigrationLease != "kube-system/my-lease" {
		t.Errorf("leaderName: %s", r.Workload.MigrationLease)
	}
	r = Evaluate(snapshotOf(t, nil, noCM, false))
	if f := one(t, r, AreaWorkload, "leader migration"); f.Severity != Error || !strings.Contains(f.Message, "does not exist") {
		t.Errorf("no ConfigMap: %+v", f)
	}
	// The built-in default.
	ds := noCM[len(noCM)-1].(*appsv1.DaemonSet)
	ds.Spec.Template.Spec.Containers[0].Args = []string{"--cloud-provider=aws", "--enable-leader-migration=true"}
	r = Evaluate(snapshotOf(t, nil, noCM, false))
	if f := one(t, r, AreaWorkload, "leader migration"); f.Severity != Warning || !strings.Contains(f.Message, "without --leader-migration-config") ||
		r.Workload.MigrationLease != "kube-system/cloud-provider-extraction-migration" {
		t.Errorf("built-in default: %+v", f)
	}
}

// TestRBACFindings groups the answers by resource.
func TestRBACFindings(t *testing.T) {
	s := snapshotOf(t, nil, render(t, distros.RKE2, renderer.ModeMigrate), true)
	access := describeWorkload(s).ccmAccess()
	// A token per controller account (aws-cloud-provider, node-controller,
	// service-controller: no route-controller without routes) instead of
	// one for any account.
	if len(access) != 24 {
		t.Errorf("%d accesses for a migrating CCM: %+v", len(access), access)
	}
	sa := serviceAccountSubject("kube-system", "cloud-controller-manager")
	s.Access = []Permission{
		{Subject: sa.label, Verb: "get", Resource: "serviceaccounts", Namespace: "kube-system"},
		{Subject: sa.label, Verb: "create", Resource: "serviceaccounts", Namespace: "kube-system", Allowed: true},
		{Subject: sa.label, Verb: "create", Resource: "events"}, {Subject: sa.label, Verb: "patch", Resource: "events"},
	}
	fs := findings(Evaluate(s), AreaRBAC, sa.label)
	if len(fs) != 2 || fs[0].Message != "may not get serviceaccounts in namespace kube-system: with --use-service-account-credentials=true the CCM cannot start its controllers" ||
		fs[1].Message != "may not create and patch events cluster-wide" {
		t.Errorf("%+v", fs)
	}
	// Not installed: its roles are not asked about.
	s.Installed = nil
	if f := one(t, Evaluate(s), AreaRBAC, sa.label); f.Severity != Info || !strings.Contains(f.Message, "not checked") {
		t.Errorf("not installed: %+v", f)
	}
	// The in-tree controller manager, before the install, with and without
	// a binding for it in the manifests.
	kcm := kcmSubject(renderer.DefaultKCMUser)
	denied := []Permission{{Subject: kcm.label, Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system", Name: renderer.DefaultLeaderName}}
	var withoutGrant []runtime.Object // the renderer's lease Role and RoleBinding left out
	for _, o := range render(t, distros.RKE2, renderer.ModeMigrate) {
		if m, ok := o.(metav1.Object); !ok || m.GetAnnotations()[renderer.GeneratedAnnotation] != "leader-migration-rbac" {
			withoutGrant = append(withoutGrant, o)
		}
	}
	s = snapshotOf(t, nil, withoutGrant, false)
	s.Access = denied
	if f := one(t, Evaluate(s), AreaRBAC, kcm.label); f.Severity != Error {
		t.Errorf("%+v", f)
	}
	s = snapshotOf(t, nil, append(withoutGrant, &rbacBinding), false)
	s.Access = denied
	if f := one(t, Evaluate(s), AreaRBAC, kcm.label); f.Severity != Warning || !strings.Contains(f.Fix, "RoleBinding kube-system/kcm-migration grants it") {
		t.Errorf("%+v", f)
	}
	// The renderer's own grant, in migrate mode's output.
	s = snapshotOf(t, nil, render(t, distros.RKE2, renderer.ModeMigrate), false)
	s.Access = denied
	if f := one(t, Evaluate(s), AreaRBAC, kcm.label); f.Severity != Warning || !strings.Contains(f.Fix, "RoleBinding kube-system/aws-cloud-controller-manager-leader-migration grants it") {
		t.Errorf("%+v", f)
	}
}

func TestVersions(t *testing.T) {
	for _, c := range []struct {
		server, image string
		sev           Severity
	}{
		{"v1.34.10", "v1.34.0", OK},
		{"v1.34.10", "v1.33.2", Warning},
		{"v1.34.10", "v1.35.0", Error},
		{"v1.34.10", "v1.32.0", Error},
		{"v1.34.10", "latest", Warning},
		{"v1.30.14+rke2r1", "v1.30.1", OK},
	} {
		objs := render(t, distros.RKE2, renderer.ModeInstall)
		objs[len(objs)-1].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/provider-aws/cloud-controller-manager:" + c.image
		s := snapshotOf(t, nil, objs, false)
		s.KubernetesVersion = c.server
		r := Evaluate(s)
		if f := one(t, r, AreaVersion, "image registry.k8s.io/provider-aws/cloud-controller-manager:"+c.image); f.Severity != c.sev {
			t.Errorf("%s on %s: %+v", c.image, c.server, f)
		}
		if f := findings(r, AreaVersion, ""); len(f) != 1 || f[0].Message != "chart aws-cloud-controller-manager-0.0.11 (its default image is v1.35.0)" {
			t.Errorf("chart: %+v", f)
		}
	}
	// Migrate mode: only a 1.26 or older cluster has an in-tree provider,
	// and the CCM must read the config's API version.
	objs := render(t, distros.RKE, renderer.ModeMigrate)
	objs[len(objs)-1].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/provider-aws/cloud-controller-manager:v1.23.0-alpha.0"
	s := snapshotOf(t, nil, objs, false)
	s.KubernetesVersion = "v1.23.17"
	if f := one(t, Evaluate(s), AreaVersion, "leader migration"); f.Severity != Error || !strings.Contains(f.Message, "cannot read a LeaderMigrationConfiguration of controllermanager.config.k8s.io/v1 (its libraries know it from 1.24)") {
		t.Errorf("%+v", f)
	}
	objs[len(objs)-1].(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/provider-aws/cloud-controller-manager:v1.34.0"
	s = snapshotOf(t, nil, objs, false)
	s.KubernetesVersion = "v1.34.1"
	if f := one(t, Evaluate(s), AreaVersion, "leader migration"); f.Severity != Warning || !strings.Contains(f.Message, "has no in-tree AWS provider") {
		t.Errorf("%+v", f)
	}
}

var rbacBinding = rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "kcm-migration", Namespace: "kube-system"},
	RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "kcm-migration"},
	Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: renderer.DefaultKCMUser}}}

// TestOptionsAnnotation: the options the renderer records on the workload
// name the distribution; a mode there that the flags contradict is a
// warning.
func TestOptionsAnnotation(t *testing.T) {
	objs := render(t, distros.RKE2, renderer.ModeInstall)
	ds := objs[len(objs)-1].(*appsv1.DaemonSet)
	ds.Annotations = map[string]string{renderer.OptionsAnnotation: `{"distro":"k3s","mode":"migrate"}`}
	r := Evaluate(snapshotOf(t, []corev1.Node{rke2Server("cp-1")}, objs, false))
	if d := r.Distribution; d.Rendered != "k3s" || d.RenderedFrom != "annotation" {
		t.Errorf("%+v", d)
	}
	if f := one(t, r, AreaDistribution, "DaemonSet kube-system/aws-cloud-controller-manager"); f.Severity != OK || f.Message != "rendered for k3s, which fits rke2" {
		t.Errorf("%+v", f)
	}
	var mode []Finding
	for _, f := range findings(r, AreaWorkload, "DaemonSet kube-system/aws-cloud-controller-manager") {
		if f.Severity == Warning {
			mode = append(mode, f)
		}
	}
	if len(mode) != 1 || !strings.Contains(mode[0].Message, "says mode migrate, but the CCM's flags run it in install mode") {
		t.Errorf("%+v", mode)
	}
}

// TestNameFix: each distribution's way to name a node is its own; K3s has
// no cloud-provider-name setting.
func TestNameFix(t *testing.T) {
	for distro, want := range map[string][]string{
		"rke":     {"RKE1: name the node n.example", "useInstanceMetadataHostname"},
		"rke2":    {"RKE2: name the node n.example", "cloud-provider-name: aws", "/etc/rancher/rke2/config.yaml"},
		"k3s":     {"K3s: name the node n.example", "node-name in /etc/rancher/k3s/config.yaml", "provider-id=aws:///"},
		"kubeadm": {"kubeadm: name the node n.example", "nodeRegistration.name"},
		"":        {"register the node as n.example", "--provider-id=aws:///"},
	} {
		got := nameFix(distro, []string{"node-1 → n.example"})
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: %q lacks %q", distro, got, w)
			}
		}
		if distro == "k3s" && (strings.Contains(got, "cloud-provider-name") || strings.Contains(got, "machineGlobalConfig")) {
			t.Errorf("k3s: %q names an RKE2 setting", got)
		}
		// Several nodes: each node's own name, a few of them.
		got = nameFix(distro, []string{"a → ip-1", "b → ip-2", "c", "d → ip-4"})
		if !strings.Contains(got, "each node") || !strings.Contains(got, "its EC2 private DNS name (a → ip-1, b → ip-2, c and 1 more)") {
			t.Errorf("%q, several nodes: %q", distro, got)
		}
		// One node whose name is not known: the kind of name.
		if got = nameFix(distro, []string{"a"}); !strings.Contains(got, "the node its EC2 private DNS name") && !strings.Contains(got, "the node as its EC2 private DNS name") {
			t.Errorf("%q, a name not known: %q", distro, got)
		}
	}
}

// The annotations the tests' nodes carry.
const (
	annotationKubeadmCRISocket = "kubeadm.alpha.kubernetes.io/cri-socket"
	annotationRKE2NodeArgs     = checktest.AnnotationRKE2NodeArgs
	annotationK3sNodeArgs      = "k3s.io/node-args"
)

// The labels of K3s's ServiceLB on its DaemonSets.
const (
	svclbNameLabel      = "svccontroller.k3s.cattle.io/svcname"
	svclbNamespaceLabel = "svccontroller.k3s.cattle.io/svcnamespace"
)
