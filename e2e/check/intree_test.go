package check

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
)

// create makes an object for the test and removes it afterwards.
func create[T any](t *testing.T, what string, made func(context.Context) (T, error), remove func(context.Context) error) T {
	t.Helper()
	obj, err := made(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Cleanup(func() { ignoreNotFound(t, remove(context.Background())) })
	return obj
}

// staticPod is the mirror pod the kubelet makes of a kubeadm static pod:
// in kube-system, named after the program and the node, labelled
// component and tier, the flags in the command, marked as a mirror.
func staticPod(t *testing.T, program, node, image string, flags ...string) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: program + "-" + node, Namespace: "kube-system",
		Labels:      map[string]string{"component": program, "tier": "control-plane"},
		Annotations: map[string]string{"kubernetes.io/config.mirror": "d41d8cd98f00b204e9800998ecf8427e", "kubernetes.io/config.source": "file"}},
		Spec: corev1.PodSpec{NodeName: node, HostNetwork: true, PriorityClassName: "system-node-critical",
			Containers: []corev1.Container{{Name: program, Image: image, Command: append([]string{program}, flags...)}}}}
	pods := cp.Client.CoreV1().Pods("kube-system")
	create(t, "pod "+p.Name, func(ctx context.Context) (*corev1.Pod, error) { return pods.Create(ctx, p, metav1.CreateOptions{}) },
		func(ctx context.Context) error {
			return pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))})
		})
}

// TestInTree: the in-tree controller manager and API server as a kubeadm
// control plane's mirror pods show them, against the CCM's migrate-mode
// manifests: leader migration on, the route controller writing routes
// the CCM as rendered will not, kube-apiserver still given
// --cloud-provider; then a controller manager switched to external with
// leader migration left on, which holds the migration lease with nothing
// to run.
func TestInTree(t *testing.T) {
	state(t, "kubeadm")
	const cpNode = "ip-10-0-1-71.us-west-2.compute.internal"
	kcm := func(flags ...string) {
		staticPod(t, "kube-controller-manager", cpNode, "registry.k8s.io/kube-controller-manager:v1.26.15", append([]string{
			"--authentication-kubeconfig=/etc/kubernetes/controller-manager.conf", "--bind-address=127.0.0.1", "--leader-elect=true"}, flags...)...)
	}
	kcm("--cloud-provider=aws", "--cloud-config=/etc/kubernetes/aws.conf", "--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16",
		"--enable-leader-migration=true", "--leader-migration-config=/etc/kubernetes/kcm-leader-migration.yaml")
	staticPod(t, "kube-apiserver", cpNode, "registry.k8s.io/kube-apiserver:v1.26.15", "--advertise-address=10.0.1.71", "--cloud-provider=aws", "--cloud-config=/etc/kubernetes/aws.conf")

	migrate := template(t, "--distro=kubeadm", "--mode=migrate", "--allow-version-skew")
	r := check(t, migrate, "-f", "-")
	says(t, r.out,
		"✓ in-tree       kube-controller-manager on "+cpNode+": --cloud-provider=aws, --enable-leader-migration: it runs the cloud controllers only while it holds the migration lease",
		"! in-tree       route controller: kube-controller-manager on "+cpNode+" runs the in-tree route controller (--allocate-node-cidrs=true, --configure-cloud-routes not false, --cluster-cidr=10.244.0.0/16)",
		"--set-arg=configure-cloud-routes=true --set-arg=cluster-cidr=10.244.0.0/16",
		"· options       kube-apiserver on "+cpNode+": --cloud-provider=aws at 1.26: kube-apiserver has no --cloud-provider or --cloud-config from 1.33",
		"· plan          kube-controller-manager on "+cpNode+" runs the in-tree AWS provider (--cloud-provider=aws): the plan to move it to the AWS CCM starts from in-tree",
		"→ aws-ccm-renderer plan --from=in-tree --distro=kubeadm --kube-version=v1.26",
	)
	golden(t, "in-tree", "check.txt", r.out)

	// Switched, with leader migration left on: the CCM's controllers would
	// wait behind it. A pod's command cannot change: the kubelet makes a
	// new mirror pod; so does the test.
	ignoreNotFound(t, cp.Client.CoreV1().Pods("kube-system").Delete(context.Background(), "kube-controller-manager-"+cpNode, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}))
	harness.WaitFor(t, 30*time.Second, "the old mirror pod to go", func() bool {
		_, err := cp.Client.CoreV1().Pods("kube-system").Get(context.Background(), "kube-controller-manager-"+cpNode, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	kcm("--cloud-provider=external", "--enable-leader-migration=true")
	r = check(t, migrate, "-f", "-")
	want := "✗ in-tree       kube-controller-manager on " + cpNode + ": --cloud-provider=external, --enable-leader-migration: it runs no cloud controller, yet takes the migration lease"
	if r.code != 1 || !strings.Contains(r.out, want) || !strings.Contains(r.out, "→ restart it without --enable-leader-migration") {
		t.Errorf("exit %d, want 1 and %q:\n%s", r.code, want, r.out)
	}
}

// TestHostnameLabel: a kubeadm cluster under the in-tree provider whose
// nodes' hostname labels are the hosts' names, not the node names; a local
// PersistentVolume and a Deployment's pod pinned to a worker's label; a
// bound PersistentVolume pinned to a host no node has.
func TestHostnameLabel(t *testing.T) {
	state(t, "hostname-label")
	ctx := context.Background()
	pvs := cp.Client.CoreV1().PersistentVolumes()
	pv := func(name, host string) *corev1.PersistentVolume {
		p := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
				StorageClassName:              "local-path",
				ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "apps", Name: "data-" + name},
				PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/var/lib/rancher/local-path/" + name}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{host}}}}}}}}}
		made := create(t, "pv "+name, func(ctx context.Context) (*corev1.PersistentVolume, error) {
			return pvs.Create(ctx, p, metav1.CreateOptions{})
		},
			func(ctx context.Context) error { return pvs.Delete(ctx, name, metav1.DeleteOptions{}) })
		// Bound, as the volume binder leaves a PV it gave a claim (no
		// binder runs here).
		made.Status.Phase = corev1.VolumeBound
		if _, err := pvs.UpdateStatus(ctx, made, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		return made
	}
	pv("pvc-0f1e2d3c", "k8s-w-1")
	pv("pvc-9a8b7c6d", "old-host")

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}
	create(t, "namespace apps", func(ctx context.Context) (*corev1.Namespace, error) {
		return cp.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	},
		func(ctx context.Context) error {
			return cp.Client.CoreV1().Namespaces().Delete(ctx, "apps", metav1.DeleteOptions{})
		})
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "apps"}}
	if _, err := cp.Client.CoreV1().ServiceAccounts("apps").Create(ctx, sa, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	// A Deployment's ReplicaSet and its pod, as the Deployment and
	// ReplicaSet controllers leave them (neither runs here).
	labels := map[string]string{"app": "web", "pod-template-hash": "5d4f8c7b9"}
	podTemplate := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelHostname: "k8s-w-1"},
			Containers: []corev1.Container{{Name: "web", Image: "registry.example.com/web:1"}}}}
	rss := cp.Client.AppsV1().ReplicaSets("apps")
	rs := create(t, "replicaset", func(ctx context.Context) (*appsv1.ReplicaSet, error) {
		return rss.Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-5d4f8c7b9", Labels: labels},
			Spec: appsv1.ReplicaSetSpec{Replicas: new(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: podTemplate}}, metav1.CreateOptions{})
	}, func(ctx context.Context) error { return rss.Delete(ctx, "web-5d4f8c7b9", metav1.DeleteOptions{}) })
	pods := cp.Client.CoreV1().Pods("apps")
	create(t, "pod", func(ctx context.Context) (*corev1.Pod, error) {
		return pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-5d4f8c7b9-x7k2p", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
			Spec: podTemplate.Spec}, metav1.CreateOptions{})
	}, func(ctx context.Context) error {
		return pods.Delete(ctx, "web-5d4f8c7b9-x7k2p", metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))})
	})

	r := check(t, template(t, "--distro=kubeadm", "--mode=migrate", "--allow-version-skew"), "-f", "-")
	says(t, r.out,
		"! hostname      ip-10-0-2-81.us-west-2.compute.internal: its kubernetes.io/hostname label is k8s-w-1, not its name:",
		"pinned to k8s-w-1: PersistentVolume pvc-0f1e2d3c; Deployment apps/web, which lose the node when the label changes",
		"→ kubeadm: before the switch give the node's kubelet --hostname-override=<its NAME> in /var/lib/kubelet/kubeadm-flags.env (ip-10-0-2-81.us-west-2.compute.internal (label k8s-w-1))",
		"! hostname      ip-10-0-1-71.us-west-2.compute.internal: its kubernetes.io/hostname label is k8s-cp-1, not its name",
		"! hostname      PersistentVolume pvc-9a8b7c6d: bound (claim apps/data-pvc-9a8b7c6d), and pinned to kubernetes.io/hostname old-host, which no node carries",
	)
	if strings.Contains(r.out, "ip-10-0-2-82.us-west-2.compute.internal: its kubernetes.io/hostname") {
		t.Error("a node whose label is its name is named")
	}
	golden(t, "hostname-label", "check.txt", r.out)
}
