package e2e

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// unschedulable is the taint `kubectl cordon` leads to: the node lifecycle
// controller taints every node with spec.unschedulable.
var unschedulable = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// cordon does what `kubectl cordon` and the node lifecycle controller do to
// a node together, and undoes it when the test ends.
func cordon(t *testing.T, name string) {
	t.Helper()
	nodes := cp.Client.CoreV1().Nodes()
	set := func(on bool) error {
		n, err := nodes.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Spec.Unschedulable = on
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(x corev1.Taint) bool { return x.MatchTaint(&unschedulable) })
		if on {
			n.Spec.Taints = append(n.Spec.Taints, unschedulable)
		}
		_, err = nodes.Update(context.Background(), n, metav1.UpdateOptions{})
		return err
	}
	if err := set(true); err != nil {
		t.Fatalf("cordoning %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := set(false); err != nil {
			t.Errorf("uncordoning %s: %v", name, err)
		}
	})
}

// toleratesUnschedulable asks k8s.io/api's own rule (from v0.35 it takes a
// logger and whether the comparison operators are enabled: they are not,
// and the tolerations here use none).
func toleratesUnschedulable(tols []corev1.Toleration) bool {
	return slices.ContainsFunc(tols, func(tol corev1.Toleration) bool {
		return tol.ToleratesTaint(klog.Background(), &unschedulable, false)
	})
}

// TestCordonedControlPlane: cordoning the control-plane nodes does not keep
// the CCM's DaemonSet off them. With every RKE1 control-plane node cordoned
// and tainted node.kubernetes.io/unschedulable, the real DaemonSet
// controller still creates a pod for each of them, with the toleration of
// that taint it adds to every DaemonSet pod itself; the scheduler then lets
// such a pod onto the node.
func TestCordonedControlPlane(t *testing.T) {
	cps := controlPlaneNodes("rke")
	if len(cps) == 0 {
		t.Fatal("the RKE1 fixture has no control-plane node")
	}
	for _, n := range cps {
		cordon(t, n)
	}
	// Migrate mode with the CCM a migration pins (the renderer refuses the
	// chart's 1.35 in migrate mode).
	ns, name := install(t, "cordon", []string{"--distro=rke", "--mode=migrate"}, "--set", "image.tag="+releases.Tag(releases.LastInTreeMinor))
	nodes := onFixture(settle(t, ns, name), "rke")
	if !slices.Equal(nodes, cps) {
		t.Errorf("pods on the RKE1 nodes %v, want one on each cordoned control-plane node %v", nodes, cps)
	}

	ds, err := cp.Client.AppsV1().DaemonSets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if toleratesUnschedulable(ds.Spec.Template.Spec.Tolerations) {
		t.Fatalf("the rendered pod template tolerates %s itself: the pods cannot show what the DaemonSet controller adds", unschedulable.Key)
	}
	pods, err := cp.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tolerating := 0
	for _, p := range pods.Items {
		if !ownedBy(p, ds) || !slices.Contains(cps, pinnedNode(p)) {
			continue
		}
		if toleratesUnschedulable(p.Spec.Tolerations) {
			tolerating++
		} else {
			t.Errorf("pod %s on cordoned node %s does not tolerate %s:%s", p.Name, pinnedNode(p), unschedulable.Key, unschedulable.Effect)
		}
	}
	t.Logf("RKE1 fixture: %d nodes, %d control-plane nodes cordoned (spec.unschedulable, taint %s:%s); the DaemonSet controller created pods on %d RKE1 nodes %v, %d of them tolerating the taint (the rendered template does not)",
		len(fixtures["rke"]), len(cps), unschedulable.Key, unschedulable.Effect, len(nodes), nodes, tolerating)
}
