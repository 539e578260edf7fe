package harness

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/nodefit"
)

// Settle waits until the DaemonSet controller has acted on a DaemonSet's
// current generation and created a pod for every node it wants, the same
// state seen on consecutive polls, and returns the names of the nodes its
// pods are pinned to, sorted. It fails the test after a minute.
func Settle(t testing.TB, client kubernetes.Interface, ns, name string) []string {
	t.Helper()
	var last string
	var nodes []string
	stable := 0
	WaitForState(t, 60*time.Second, fmt.Sprintf("DaemonSet %s/%s to settle", ns, name), func() (bool, string) {
		ds, err := client.AppsV1().DaemonSets(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		nodes = PodNodes(t, client, ds)
		state := fmt.Sprintf("gen %d/%d desired %d pods %v", ds.Status.ObservedGeneration, ds.Generation, ds.Status.DesiredNumberScheduled, nodes)
		if ds.Status.ObservedGeneration == ds.Generation && int(ds.Status.DesiredNumberScheduled) == len(nodes) {
			if state == last {
				stable++
			} else {
				stable = 0
			}
		}
		last = state
		return stable >= 2, state
	})
	return nodes
}

// PodNodes returns, sorted, the nodes a DaemonSet's pods (those not being
// deleted) are pinned to: the DaemonSet controller writes each pod's node
// as a required node affinity on metadata.name.
func PodNodes(t testing.TB, client kubernetes.Interface, ds *appsv1.DaemonSet) []string {
	t.Helper()
	pods, err := client.CoreV1().Pods(ds.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, p := range pods.Items {
		if !OwnedBy(p, ds) || p.DeletionTimestamp != nil {
			continue
		}
		node := PinnedNode(p)
		if node == "" {
			t.Fatalf("pod %s has no node affinity on metadata.name", p.Name)
		}
		nodes = append(nodes, node)
	}
	sort.Strings(nodes)
	return nodes
}

// OwnedBy says whether a pod belongs to a DaemonSet.
func OwnedBy(p corev1.Pod, ds *appsv1.DaemonSet) bool {
	for _, o := range p.OwnerReferences {
		if o.UID == ds.UID {
			return true
		}
	}
	return false
}

// PinnedNode is the node the DaemonSet controller pinned a pod to, or "".
func PinnedNode(p corev1.Pod) string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// ControlPlaneNodes returns, sorted, the names of the control-plane nodes
// of a node fixture (testdata/nodes: the roles annotation says which).
func ControlPlaneNodes(fixture []corev1.Node) []string {
	var out []string
	for _, n := range fixture {
		if slices.Contains(strings.Split(n.Annotations[nodefit.RolesAnnotation], ","), "controlplane") {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out
}

// OnFixture keeps the node names that belong to a node fixture.
func OnFixture(names []string, fixture []corev1.Node) []string {
	var out []string
	for _, name := range names {
		if slices.ContainsFunc(fixture, func(n corev1.Node) bool { return n.Name == name }) {
			out = append(out, name)
		}
	}
	return out
}
