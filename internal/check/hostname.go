package check

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The kubernetes.io/hostname label: the kubelet sets it to its own host
// name (--hostname-override, else the host's) at every start, on existing
// nodes too (pkg/kubelet/kubelet_node_status.go updateDefaultLabels). Under
// the in-tree provider the node's name came from the EC2 API, the label
// from the host: where they differ, the switch to the external provider
// changes one of them, and local PersistentVolumes and workloads pinned to
// the label's old value lose their node.

// collectPinned reads what may be pinned to a node's hostname label: the
// PersistentVolumes always (a PV pinned to a value no node carries is
// worth a line too), and, only when some node's label is not its name,
// the pods of every namespace pinned to such a label (pinnedPods).
func (s *Snapshot) collectPinned(ctx context.Context, client kubernetes.Interface) error {
	pvs, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return clusterError("list", "persistentvolumes", "", err)
	}
	s.PersistentVolumes = pvs.Items
	differs := hostnameDiffers(s.Nodes)
	if len(differs) == 0 {
		return nil
	}
	pods, err := pinnedPods(ctx, client, differs)
	if err != nil {
		return clusterError("list", "pods", "", err)
	}
	s.PodsEverywhere = pods
	return nil
}

// pinnedPageSize is how many pods a page of the pods of every namespace
// holds.
const pinnedPageSize = 500

// pinnedPods reads the pods of every namespace in pages and keeps those
// pinned to the label value of a node in differs (podHostnames), of each
// only what the hostname rule reads (pinnedPart): what check holds at once
// is two pages and the pods it keeps, however many pods the cluster runs.
// No field selector tells pods by their nodeSelector or node affinity.
//
// The pages are lists with limit and continue, at resourceVersion "": a
// list at resourceVersion "0" is served from the API server's cache, whole
// whatever the limit.
func pinnedPods(ctx context.Context, client kubernetes.Interface, differs map[string]string) ([]corev1.Pod, error) {
	labels := map[string]bool{}
	for _, l := range differs {
		labels[l] = true
	}
	p := &pager.ListPager{PageSize: pinnedPageSize, PageBufferSize: 0, PageFn: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Pods("").List(ctx, o)
	}}
	out := []corev1.Pod{}
	err := p.EachListItem(ctx, metav1.ListOptions{}, func(o runtime.Object) error {
		pod, ok := o.(*corev1.Pod)
		if !ok {
			return fmt.Errorf("a list of pods holds a %T", o)
		}
		if slices.ContainsFunc(podHostnames(pod), func(v string) bool { return labels[v] }) {
			out = append(out, pinnedPart(pod))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pinnedPart is what the hostname rule reads of a pod (podHostnames,
// workloadOf): its name, namespace, labels and owners, its nodeSelector
// and its required node affinity. It shares them with the pod, not the
// page the pod was listed in.
func pinnedPart(p *corev1.Pod) corev1.Pod {
	out := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, OwnerReferences: p.OwnerReferences},
		Spec: corev1.PodSpec{NodeSelector: p.Spec.NodeSelector}}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		out.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution}}
	}
	return out
}

// hostnameDiffers maps the nodes whose hostname label is set and is not
// their name to the label's value.
func hostnameDiffers(nodes []corev1.Node) map[string]string {
	out := map[string]string{}
	for _, n := range nodes {
		if l := n.Labels[corev1.LabelHostname]; l != "" && l != n.Name {
			out[n.Name] = l
		}
	}
	return out
}

// hostnameValues are the values of kubernetes.io/hostname a node selector
// requires: In expressions of its terms.
func hostnameValues(sel *corev1.NodeSelector) []string {
	if sel == nil {
		return nil
	}
	var out []string
	for _, t := range sel.NodeSelectorTerms {
		for _, e := range t.MatchExpressions {
			if e.Key == corev1.LabelHostname && e.Operator == corev1.NodeSelectorOpIn {
				out = append(out, e.Values...)
			}
		}
	}
	return out
}

// podHostnames are the hostname label values a pod is pinned to, by its
// nodeSelector or its required node affinity.
func podHostnames(p *corev1.Pod) []string {
	var out []string
	if v := p.Spec.NodeSelector[corev1.LabelHostname]; v != "" {
		out = append(out, v)
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		out = append(out, hostnameValues(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)...)
	}
	return out
}

// workloadOf names the workload a pod belongs to: its controller, a
// ReplicaSet's Deployment by the pod-template-hash the Deployment
// controller names its ReplicaSets with; the pod itself without one.
func workloadOf(p *corev1.Pod) string {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return "Pod " + p.Namespace + "/" + p.Name
	}
	if h := p.Labels["pod-template-hash"]; ref.Kind == "ReplicaSet" && h != "" {
		if d, ok := strings.CutSuffix(ref.Name, "-"+h); ok {
			return "Deployment " + p.Namespace + "/" + d
		}
	}
	return ref.Kind + " " + p.Namespace + "/" + ref.Name
}

// hostnameRule reports the nodes whose hostname label is not their name,
// with the PersistentVolumes and workloads pinned to the label's value,
// and bound PersistentVolumes pinned to a value no node carries.
func hostnameRule(v *View) []Finding {
	differs := hostnameDiffers(v.Snapshot.Nodes)
	carried := map[string]bool{}
	for _, n := range v.Snapshot.Nodes {
		carried[n.Labels[corev1.LabelHostname]] = true
	}
	pvsOn := map[string][]string{} // label value -> PVs
	var orphans []NodeIssue
	for _, pv := range v.PersistentVolumes {
		if pv.Spec.NodeAffinity == nil {
			continue
		}
		vals := hostnameValues(pv.Spec.NodeAffinity.Required)
		for _, val := range vals {
			pvsOn[val] = append(pvsOn[val], pv.Name)
		}
		if pv.Status.Phase != corev1.VolumeBound || len(vals) == 0 || slices.ContainsFunc(vals, func(s string) bool { return carried[s] }) {
			continue
		}
		claim := ""
		if c := pv.Spec.ClaimRef; c != nil {
			claim = " (claim " + c.Namespace + "/" + c.Name + ")"
		}
		i := NodeIssue{Node: pv.Name, Finding: Finding{Area: AreaHostname, Severity: Warning,
			Message: "bound, and pinned to a kubernetes.io/hostname no node carries: the pods of its claim cannot be scheduled",
			Fix:     "a PV's nodeAffinity cannot change: if its node was renamed or relabelled (the switch to the external provider does either where the label was not the name), create the PV again with the node's new label value and bind the claim to it; if the node is gone, the data went with it"}}
		i.One = fmt.Sprintf("bound%s, and pinned to kubernetes.io/hostname %s, which no node carries: the claim's pods cannot be scheduled", claim, JoinAnd(vals))
		orphans = append(orphans, i)
	}
	workloadsOn := map[string][]string{}
	for i := range v.PodsEverywhere {
		p := &v.PodsEverywhere[i]
		for _, val := range podHostnames(p) {
			if w := workloadOf(p); !slices.Contains(workloadsOn[val], w) {
				workloadsOn[val] = append(workloadsOn[val], w)
			}
		}
	}
	const why = "the kubelet set the label from the host's name, while the node was named after its instance; after the switch to the external provider the kubelet names the node and its label alike, so one of them changes"
	distro := v.Distribution.Detected
	var plain []NodeIssue
	var pinned []Finding
	for _, n := range v.Snapshot.Nodes {
		label, ok := differs[n.Name]
		if !ok {
			continue
		}
		note := n.Name + " (label " + label + ")"
		pvs, ws := pvsOn[label], workloadsOn[label]
		if len(pvs) == 0 && len(ws) == 0 {
			i := NodeIssue{Node: n.Name, Note: note, Finding: Finding{Area: AreaHostname, Severity: Warning,
				Message: "its kubernetes.io/hostname label is not its name: " + why}}
			i.One = "its kubernetes.io/hostname label is " + label + ", not its name: " + why
			i.FixFor = func(notes []string) string { return keepNameFix(distro, notes) }
			plain = append(plain, i)
			continue
		}
		sort.Strings(pvs)
		sort.Strings(ws)
		var what []string
		if len(pvs) > 0 {
			what = append(what, Plural(len(pvs), "PersistentVolume ", "PersistentVolumes ")+SomeOf(pvs))
		}
		if len(ws) > 0 {
			what = append(what, SomeOf(ws))
		}
		pinned = append(pinned, Finding{Area: AreaHostname, Severity: Warning, Subject: n.Name,
			Message: fmt.Sprintf("its kubernetes.io/hostname label is %s, not its name: %s; pinned to %s: %s, which lose the node when the label changes", label, why, label, strings.Join(what, "; ")),
			Fix: keepNameFix(distro, []string{note}) + "; or, to take the new label, set each PV's persistentVolumeReclaimPolicy to Retain now and create it again with the new value after the switch " +
				"(a PV's nodeAffinity cannot change), and change the workloads' nodeSelector or affinity in the same window"})
	}
	out := append(pinned, GroupNodes(plain)...)
	return append(out, GroupOf(orphans, "PersistentVolume", "PersistentVolumes")...)
}

// keepNameFix says how to keep each node's name and move its label to it
// at the switch, per distribution.
func keepNameFix(distro string, notes []string) string {
	what := "the node"
	if len(notes) > 1 {
		what = "each node"
	}
	nodes := " (" + SomeOf(notes) + ")"
	if t := facts(distro).KeepNameFix; t != "" {
		return distros.FillText(t, "what", what, "nodes", nodes)
	}
	return "before the switch start " + what + "'s kubelet with --hostname-override=<its NAME>" + nodes + ": the node keeps its name and the label becomes it"
}
