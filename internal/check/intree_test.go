package check

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// staticPod is the mirror pod of a control-plane static pod: kubeadm's
// shape (the flags in the command), or RKE2's (the program alone in the
// command, the flags in args).
func staticPod(program, node, image string, rke2 bool, flags ...string) corev1.Pod {
	c := corev1.Container{Name: program, Image: image, Command: append([]string{program}, flags...)}
	if rke2 {
		c.Command, c.Args = []string{program}, flags
	}
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: program + "-" + node, Namespace: "kube-system",
		Labels:      map[string]string{"component": program, "tier": "control-plane"},
		Annotations: map[string]string{mirrorAnnotation: "0123abcd"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{c}}}
}

func kcmPod(node string, rke2 bool, flags ...string) corev1.Pod {
	return staticPod(programKCM, node, "registry.k8s.io/kube-controller-manager:v1.26.5", rke2, flags...)
}

var kubeadmNode = annotation(annotationKubeadmCRISocket, "unix:///run/containerd/containerd.sock")

func kubeadmCP(name string) corev1.Node {
	return node(name, kubeadmNode, label(distros.LabelControlPlane, ""), providerID("aws:///us-west-2a/i-"+name))
}

// TestInTreeRule: the controller managers' flags against the CCM's mode,
// their route controller, the kubelets' recorded arguments; what the API
// cannot show; and where it is silent. (kube-apiserver's --cloud-provider
// is the options rule's: TestOptionsRule.)
func TestInTreeRule(t *testing.T) {
	const aws, ext, lm = "--cloud-provider=aws", "--cloud-provider=external", "--enable-leader-migration=true"
	routes := []string{aws, lm, "--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16"}
	kubeadm2 := []corev1.Node{kubeadmCP("cp-1"), kubeadmCP("cp-2")}
	rke2 := []corev1.Node{rke2Server("s-1"), rke2Agent("a-1", annotation(annotationRKE2NodeArgs, `["agent","--kubelet-arg","cloud-provider=external"]`)), rke2Agent("a-2")}
	k3sServer := func(args string) corev1.Node {
		return node("k-s", kubelet("v1.30.14+k3s1"), label(distros.LabelControlPlane, "true"), annotation(annotationK3sNodeArgs, args))
	}
	k3sAgent := node("k-a", kubelet("v1.30.14+k3s1"), annotation(annotationK3sNodeArgs, `["agent"]`))
	for _, c := range []struct {
		name      string
		nodes     []corev1.Node
		pods      []corev1.Pod
		mode      renderer.Mode
		installed bool
		noCCM     bool
		setArgs   []string // the CCM's --set-arg
		server    string
		want      []want
	}{
		{"kubeadm, leader migration on, the CCM's manifests in migrate mode", kubeadm2,
			[]corev1.Pod{kcmPod("cp-1", false, aws, lm), kcmPod("cp-2", false, aws, lm)}, renderer.ModeMigrate, false, false, nil, "",
			[]want{{"kube-controller-manager on 2 nodes: cp-1 and cp-2", OK, "--cloud-provider=aws, --enable-leader-migration: it runs the cloud controllers only while it holds the migration lease", ""}}},
		{"kubeadm, no leader migration yet, before the install", kubeadm2,
			[]corev1.Pod{kcmPod("cp-1", false, aws)}, renderer.ModeMigrate, false, false, nil, "",
			[]want{{"kube-controller-manager on cp-1", Warning, "no leader migration: the migration lease means nothing to it", "before.kcm-leader-migration"}}},
		{"kubeadm, no leader migration, the CCM installed in migrate mode", kubeadm2,
			[]corev1.Pod{kcmPod("cp-1", false, aws)}, renderer.ModeMigrate, true, false, nil, "",
			[]want{{"kube-controller-manager on cp-1", Error, "whatever the migration lease says, and so does the CCM (migrate mode)", "--enable-leader-migration"}}},
		{"RKE2, leader migration on, the CCM installed in install mode", rke2[:1],
			[]corev1.Pod{kcmPod("s-1", true, aws, lm)}, renderer.ModeInstall, true, false, nil, "",
			[]want{{"kube-controller-manager on s-1", Error, "which the CCM in install mode ignores", "--mode=migrate"}}},
		{"switched, leader migration left on, the CCM in migrate mode", kubeadm2,
			[]corev1.Pod{kcmPod("cp-1", false, ext, lm)}, renderer.ModeMigrate, true, false, nil, "",
			[]want{{"kube-controller-manager on cp-1", Error, "it runs no cloud controller, yet takes the migration lease", "without --enable-leader-migration"}}},
		{"switched, leader migration left on, the CCM in install mode", kubeadm2,
			[]corev1.Pod{kcmPod("cp-1", false, ext, lm)}, renderer.ModeInstall, true, false, nil, "",
			[]want{{"kube-controller-manager on cp-1", Warning, "left on, with nothing to migrate", "remove --enable-leader-migration"}}},
		{"during the switch: one switched, one not", kubeadm2,
			[]corev1.Pod{kcmPod("cp-1", false, ext), kcmPod("cp-2", false, aws, lm)}, renderer.ModeMigrate, true, false, nil, "",
			[]want{{"kube-controller-manager on cp-1", OK, "--cloud-provider=external, no leader migration: the cloud controllers are the CCM's", ""},
				{"kube-controller-manager on cp-2", OK, "only while it holds the migration lease", ""}}},
		{"no CCM: a fact", kubeadm2, []corev1.Pod{kcmPod("cp-1", false, aws)}, "", false, true, nil, "",
			[]want{{"kube-controller-manager on cp-1", Info, "the in-tree provider runs the cloud controllers", ""}}},
		{"the in-tree route controller, the CCM without routes", kubeadm2, []corev1.Pod{kcmPod("cp-1", false, routes...)}, renderer.ModeMigrate, false, false, nil, "",
			[]want{{"kube-controller-manager on cp-1", OK, "", ""},
				{"route controller", Warning, "--cluster-cidr=10.244.0.0/16): it writes a VPC route for each node's pod CIDR; the CCM as rendered does not", "--set-arg=configure-cloud-routes=true --set-arg=cluster-cidr=10.244.0.0/16"}}},
		{"the route controller, the CCM taking the routes over", kubeadm2, []corev1.Pod{kcmPod("cp-1", false, routes...)}, renderer.ModeMigrate, false, false,
			[]string{"configure-cloud-routes=true", "cluster-cidr=10.244.0.0/16"}, "",
			[]want{{"kube-controller-manager on cp-1", OK, "", ""}, {"route controller", OK, "the CCM's route controller takes them over", ""}}},
		{"the route controller, the CCM with another CIDR", kubeadm2, []corev1.Pod{kcmPod("cp-1", false, routes...)}, renderer.ModeMigrate, false, false,
			[]string{"configure-cloud-routes=true", "cluster-cidr=10.42.0.0/16"}, "",
			[]want{{"kube-controller-manager on cp-1", OK, "", ""}, {"route controller", Error, "for another cluster CIDR", "--set-arg=cluster-cidr=10.244.0.0/16"}}},
		{"routes off in the controller manager: silent", kubeadm2, []corev1.Pod{kcmPod("cp-1", false, append(routes, "--configure-cloud-routes=false")...)}, renderer.ModeMigrate, false, false, nil, "",
			[]want{{"kube-controller-manager on cp-1", OK, "", ""}}},
		{"no node CIDRs allocated: silent", kubeadm2, []corev1.Pod{kcmPod("cp-1", false, aws, lm, "--allocate-node-cidrs=false")}, renderer.ModeMigrate, false, false, nil, "",
			[]want{{"kube-controller-manager on cp-1", OK, "", ""}}},
		{"RKE1: not visible", []corev1.Node{node("n", label(distros.LabelRKE1ControlPlane, "true"))}, nil, renderer.ModeMigrate, false, false, nil, "",
			[]want{{"", Info, "RKE1 runs kube-controller-manager and kube-apiserver as Docker containers", "docker inspect"}}},
		{"K3s: not visible", []corev1.Node{k3sServer(`["server"]`)}, nil, renderer.ModeInstall, false, false, nil, "",
			[]want{{"", Info, "K3s runs the controller manager inside its own process", ""}}},
		{"kubeadm without mirror pods", kubeadm2, nil, renderer.ModeMigrate, false, false, nil, "",
			[]want{{"", Info, "no kube-controller-manager pod in kube-system", ""}}},
		{"a cluster of no known distribution without them: silent", []corev1.Node{node("n")}, nil, renderer.ModeMigrate, false, false, nil, "", nil},
		{"RKE2 switching: a node's kubelet without cloud-provider=external", rke2, []corev1.Pod{kcmPod("s-1", true, ext)}, renderer.ModeMigrate, true, false, nil, "",
			[]want{{"kube-controller-manager on s-1", OK, "", ""},
				{"a-2", Error, "its kubelet is not given cloud-provider=external (rke2.io/node-args): it keeps the in-tree provider, while the switch has begun (a controller manager runs with --cloud-provider=external; 2 nodes' kubelets have it)", "machineSelectorConfig"}}},
		{"RKE2 before the switch: silent", []corev1.Node{rke2Server("s-1", annotation(annotationRKE2NodeArgs, `["server","--cloud-provider-name","aws"]`)), rke2Agent("a-2")},
			[]corev1.Pod{kcmPod("s-1", true, aws, lm)}, renderer.ModeMigrate, true, false, nil, "",
			[]want{{"kube-controller-manager on s-1", OK, "", ""}}},
		{"K3s with disable-cloud-controller: agents need the kubelet-arg", []corev1.Node{k3sServer(`["server","--disable-cloud-controller","--kubelet-arg","cloud-provider=external"]`), k3sAgent}, nil, renderer.ModeInstall, false, false, nil, "",
			[]want{{"", Info, "K3s runs", ""}, {"k-a", Error, "with disable-cloud-controller on the servers K3s gives it no cloud provider", "kubelet-arg: [cloud-provider=external]"}}},
		{"K3s with its embedded controller: silent", []corev1.Node{k3sServer(`["server"]`), k3sAgent}, nil, renderer.ModeInstall, false, false, nil, "",
			[]want{{"", Info, "K3s runs", ""}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs := render(t, distros.Auto, renderer.ModeInstall)
			if !c.noCCM {
				o := renderer.DefaultOptions()
				o.Mode, o.SetArgs = c.mode, c.setArgs
				objs = renderWith(t, o)
			}
			s := snapshotOf(t, c.nodes, objs, c.installed)
			if c.noCCM {
				s.Workload, s.Installed = nil, nil
			}
			s.ControlPlanePods = c.pods
			if c.server != "" {
				s.KubernetesVersion = c.server
			}
			expectArea(t, Evaluate(s), AreaInTree, c.want, false)
		})
	}
}

// TestControlPlaneProcesses: the flags of both shapes, the last
// occurrence winning; pods of another program or container left out.
func TestControlPlaneProcesses(t *testing.T) {
	other := kcmPod("cp-3", false, "--cloud-provider=aws")
	other.Spec.Containers[0].Command = []string{"/bin/sh", "-c", "sleep 1"}
	s := &Snapshot{ControlPlanePods: []corev1.Pod{
		kcmPod("cp-1", false, "--cloud-provider=aws", "--cloud-provider=external"),
		kcmPod("cp-2", true, "--cloud-provider", "aws", "--enable-leader-migration"),
		other,
		staticPod(programAPIServer, "cp-1", "registry.k8s.io/kube-apiserver:v1.26.5", false),
	}}
	ps := (&View{Snapshot: s}).controlPlaneProcesses(programKCM)
	if len(ps) != 2 || ps[0].flags["cloud-provider"] != "external" || !ps[0].mirror || ps[0].minor != 26 ||
		ps[1].flags["cloud-provider"] != "aws" || ps[1].flags["enable-leader-migration"] != "true" {
		t.Errorf("%+v", ps)
	}
}

// TestLeaseWithKCMFlags: a missing migration lease while the controller
// manager's mirror pod shows leader migration on says it may not take the
// lease, not that leader migration is off.
func TestLeaseWithKCMFlags(t *testing.T) {
	for _, c := range []struct {
		name string
		pods []corev1.Pod
		says string
	}{
		{"leader migration on", []corev1.Pod{kcmPod("cp-1", false, "--cloud-provider=aws", "--enable-leader-migration")}, "although the in-tree kube-controller-manager runs with --enable-leader-migration"},
		{"leader migration off", []corev1.Pod{kcmPod("cp-1", false, "--cloud-provider=aws")}, "the in-tree controller manager does not run with leader migration"},
		{"not visible", nil, "the in-tree controller manager does not run with leader migration"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, []corev1.Node{kubeadmCP("cp-1")}, render(t, distros.Kubeadm, renderer.ModeMigrate), false)
			s.ControlPlanePods = c.pods
			expectArea(t, Evaluate(s), AreaLease, []want{{"Lease kube-system/cloud-provider-extraction-migration", Warning, c.says, ""}}, false)
		})
	}
}
