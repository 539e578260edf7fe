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
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Distribution names beyond the renderer's.
const (
	DistroUnknown = "unknown"
	DistroMixed   = "mixed"
)

// Node facts beyond the distributions' records: the kubelet's
// provided-node-ip annotation (kubernetes/kubernetes
// staging/src/k8s.io/cloud-provider/api/well_known_annotations.go at
// v1.26.15) and the region labels (staging/src/k8s.io/api/core/v1/
// well_known_labels.go at v1.26.15).
const (
	annotationProvidedIP = "alpha.kubernetes.io/provided-node-ip"
	labelRegion          = "topology.kubernetes.io/region"
	labelRegionBeta      = "failure-domain.beta.kubernetes.io/region"
)

// nodeDistro says which distribution one node shows, and by what: the
// records' signs, the strongest first (distros.DetectNode).
func nodeDistro(n *corev1.Node) (distro, evidence string) {
	d, ev := distros.DetectNode(distros.Records(), n.Labels, n.Annotations, n.Status.NodeInfo.KubeletVersion)
	return string(d), ev
}

// facts are the node facts of a distribution's record; none for another
// name (unknown, mixed).
func facts(distro string) distros.NodeFacts {
	p, _ := distros.RecordOf(distros.Distro(distro))
	return p.Node
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
			res.Evidence = append(res.Evidence, fmt.Sprintf("%s: %s on %d of %d %s", d, ev, how[d][ev], len(nodes), Plural(len(nodes), "node", "nodes")))
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
func DetectDistro(ctx context.Context, client kubernetes.Interface) (distros.Distro, Distribution, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return "", Distribution{}, clusterError("list", "nodes", "", err)
	}
	d := Detect(list.Items)
	switch d.Detected {
	case DistroUnknown:
		return "", d, &renderer.UsageError{Err: fmt.Errorf("--distro=detect: none of the %d nodes shows its distribution (%s); pass --distro", len(list.Items), distros.SignsHint(distros.Records()))}
	case DistroMixed:
		return "", d, &renderer.UsageError{Err: fmt.Errorf("--distro=detect: the nodes disagree (%s); pass --distro", strings.Join(d.Evidence, "; "))}
	}
	return distros.Distro(d.Detected), d, nil
}

// renderedFor infers the --distro a pod template was rendered for from
// its placement, when it carries the renderer's marks (the uninitialized
// and CriticalAddonsOnly tolerations with operator Exists).
func renderedFor(spec corev1.PodSpec) string {
	marks := 0
	for _, t := range spec.Tolerations {
		if t.Operator == corev1.TolerationOpExists && (t.Key == distros.TaintUninitialized || t.Key == distros.TaintCriticalAddon) {
			marks++
		}
	}
	if marks < 2 {
		return ""
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		auto, _ := distros.RecordOf(distros.Auto)
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
			return string(distros.Auto)
		}
		return ""
	}
	var matches []string
	for _, d := range distros.All {
		p, _ := distros.RecordOf(d)
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
	if rendered == string(distros.Auto) {
		return true
	}
	for _, r := range strings.Split(rendered, "/") {
		if r == detected {
			return true
		}
		rp, ok1 := distros.RecordOf(distros.Distro(r))
		dp, ok2 := distros.RecordOf(distros.Distro(detected))
		if ok1 && ok2 && maps.Equal(rp.NodeSelector, dp.NodeSelector) && slices.Equal(rp.Tolerations, dp.Tolerations) {
			return true
		}
	}
	return false
}

// nodeArgs reads the node's recorded arguments (the server or agent
// command line as a JSON list) from the annotation its distribution's
// record names (NodeFacts.NodeArgs).
func nodeArgs(n *corev1.Node) []string {
	for _, p := range distros.Records() {
		if v, ok := n.Annotations[p.Node.NodeArgs]; ok && p.Node.NodeArgs != "" {
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
