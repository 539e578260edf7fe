package check

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Distribution names beyond the renderer's.
const (
	DistroUnknown = "unknown"
	DistroMixed   = "mixed"
)

// Node facts the distributions leave: kubeadm's CRI socket annotation
// (kubernetes/kubernetes cmd/kubeadm/app/constants/constants.go at
// v1.26.15), the node-args annotation RKE2 and K3s record (k3s-io/k3s
// pkg/nodeconfig/nodeconfig.go, version.Program + ".io/node-args"), the
// kubelet's provided-node-ip annotation (kubernetes/kubernetes
// staging/src/k8s.io/cloud-provider/api/well_known_annotations.go at
// v1.26.15) and the region labels (staging/src/k8s.io/api/core/v1/
// well_known_labels.go at v1.26.15).
const (
	annotationKubeadmCRISocket = "kubeadm.alpha.kubernetes.io/cri-socket"
	annotationRKE2NodeArgs     = "rke2.io/node-args"
	annotationK3sNodeArgs      = "k3s.io/node-args"
	annotationProvidedIP       = "alpha.kubernetes.io/provided-node-ip"
	labelRegion                = "topology.kubernetes.io/region"
	labelRegionBeta            = "failure-domain.beta.kubernetes.io/region"
)

// nodeDistro says which distribution one node shows, and by what. The
// strongest sign comes first: the kubelet's version suffix, then the
// distribution's own annotations, then RKE1's and kubeadm's marks.
func nodeDistro(n *corev1.Node) (distro, evidence string) {
	v := n.Status.NodeInfo.KubeletVersion
	switch {
	case strings.Contains(v, "+rke2"):
		return string(renderer.DistroRKE2), "kubelet " + suffix(v)
	case strings.Contains(v, "+k3s"):
		return string(renderer.DistroK3s), "kubelet " + suffix(v)
	}
	if k := annotationWithPrefix(n, "rke2.io/"); k != "" {
		return string(renderer.DistroRKE2), "annotation " + k
	}
	if k := annotationWithPrefix(n, "k3s.io/"); k != "" {
		return string(renderer.DistroK3s), "annotation " + k
	}
	if k := annotationWithPrefix(n, "rke.cattle.io/"); k != "" {
		return string(renderer.DistroRKE), "annotation " + k
	}
	if _, ok := n.Labels[renderer.LabelRKE1ControlPlane]; ok {
		return string(renderer.DistroRKE), "label " + renderer.LabelRKE1ControlPlane
	}
	if _, ok := n.Annotations[annotationKubeadmCRISocket]; ok {
		return string(renderer.DistroKubeadm), "annotation " + annotationKubeadmCRISocket
	}
	return "", ""
}

// suffix is the +build part of a version: +rke2r1.
func suffix(v string) string {
	if i := strings.IndexByte(v, '+'); i >= 0 {
		return "+" + strings.TrimLeft(v[i+1:], "+")
	}
	return v
}

// annotationWithPrefix returns the first annotation key (sorted) with the
// prefix.
func annotationWithPrefix(n *corev1.Node, prefix string) string {
	for _, k := range slices.Sorted(maps.Keys(n.Annotations)) {
		if strings.HasPrefix(k, prefix) {
			return k
		}
	}
	return ""
}

// Detect tells the distribution from the nodes: the one every node with a
// sign points to; "mixed" when nodes disagree, "unknown" when none shows
// one.
func Detect(nodes []corev1.Node) Distribution {
	count := map[string]int{}
	how := map[string]map[string]int{}
	for i := range nodes {
		d, ev := nodeDistro(&nodes[i])
		if d == "" {
			continue
		}
		count[d]++
		if how[d] == nil {
			how[d] = map[string]int{}
		}
		how[d][ev]++
	}
	res := Distribution{Detected: DistroUnknown}
	ds := slices.Sorted(maps.Keys(count))
	for _, d := range ds {
		evs := slices.Sorted(maps.Keys(how[d]))
		for _, ev := range evs {
			res.Evidence = append(res.Evidence, fmt.Sprintf("%s: %s on %d of %d %s", d, ev, how[d][ev], len(nodes), plural(len(nodes), "node", "nodes")))
		}
	}
	switch len(ds) {
	case 0:
	case 1:
		res.Detected = ds[0]
	default:
		res.Detected = DistroMixed
	}
	return res
}

// DetectDistro lists the cluster's nodes and tells its distribution, for
// --distro=detect. It fails when the nodes show none, or several.
func DetectDistro(ctx context.Context, client kubernetes.Interface) (renderer.Distro, Distribution, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return "", Distribution{}, clusterError("list", "nodes", "", err)
	}
	d := Detect(list.Items)
	switch d.Detected {
	case DistroUnknown:
		return "", d, &renderer.UsageError{Err: fmt.Errorf("--distro=detect: none of the %d nodes shows its distribution (no +rke2/+k3s kubelet version, no rke2.io/, k3s.io/, rke.cattle.io/ or kubeadm annotation); pass --distro", len(list.Items))}
	case DistroMixed:
		return "", d, &renderer.UsageError{Err: fmt.Errorf("--distro=detect: the nodes disagree (%s); pass --distro", strings.Join(d.Evidence, "; "))}
	}
	return renderer.Distro(d.Detected), d, nil
}

// renderedFor infers the --distro a pod template was rendered for from
// its placement, when it carries the renderer's marks (the uninitialized
// and CriticalAddonsOnly tolerations with operator Exists).
func renderedFor(spec corev1.PodSpec) string {
	marks := 0
	for _, t := range spec.Tolerations {
		if t.Operator == corev1.TolerationOpExists && (t.Key == renderer.TaintUninitialized || t.Key == renderer.TaintCriticalAddon) {
			marks++
		}
	}
	if marks < 2 {
		return ""
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		auto, _ := renderer.ProfileFor(renderer.DistroAuto)
		var keys []string
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, e := range t.MatchExpressions {
				keys = append(keys, e.Key)
			}
		}
		sort.Strings(keys)
		want := slices.Clone(auto.AffinityLabels)
		sort.Strings(want)
		if slices.Equal(keys, want) {
			return string(renderer.DistroAuto)
		}
		return ""
	}
	var matches []string
	for _, d := range renderer.Distros {
		p, _ := renderer.ProfileFor(d)
		if p.NodeSelector == nil {
			continue
		}
		ok := true
		for k, v := range p.NodeSelector {
			if got, has := spec.NodeSelector[k]; !has || got != v {
				ok = false
			}
		}
		if ok {
			matches = append(matches, string(d))
		}
	}
	return strings.Join(matches, "/")
}

// samePlacement tells whether the rendered distribution places pods as the
// detected one needs.
func samePlacement(rendered, detected string) bool {
	if rendered == string(renderer.DistroAuto) {
		return true
	}
	for _, r := range strings.Split(rendered, "/") {
		if r == detected {
			return true
		}
		rp, ok1 := renderer.ProfileFor(renderer.Distro(r))
		dp, ok2 := renderer.ProfileFor(renderer.Distro(detected))
		if ok1 && ok2 && maps.Equal(rp.NodeSelector, dp.NodeSelector) && slices.Equal(rp.Tolerations, dp.Tolerations) {
			return true
		}
	}
	return false
}

// nodeArgs reads RKE2's or K3s's node-args annotation: the server or agent
// command line as a JSON list.
func nodeArgs(n *corev1.Node) []string {
	for _, k := range []string{annotationRKE2NodeArgs, annotationK3sNodeArgs} {
		if v, ok := n.Annotations[k]; ok {
			var args []string
			if json.Unmarshal([]byte(v), &args) == nil {
				return args
			}
		}
	}
	return nil
}

// argValues returns the values of --name in a node-args list (both
// "--name value" and "--name=value").
func argValues(args []string, name string) []string {
	var out []string
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			out = append(out, v)
		} else if a == "--"+name && i+1 < len(args) {
			out = append(out, args[i+1])
		}
	}
	return out
}
