package renderer

import (
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Tolerations makes a workload tolerate the taints of a distribution's
// control-plane nodes with operator Exists, which matches a taint whatever
// its value. The renderer owns the tolerations of every key some profile
// tolerates (ManagedTolerationKeys): those are replaced by the profile's, as
// one block where the first of them stood (at the end when there was none);
// every other toleration stays, in order. So the result depends only on the
// tolerations the renderer does not own, and rendering its own output with
// another distribution gives what rendering the original would. No key-less
// toleration is ever added.
type Tolerations struct {
	Tolerations []distros.Toleration
}

var _ kio.Filter = Tolerations{}

func (f Tolerations) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	return eachPodSpec(nodes, func(_, spec *yaml.RNode) error { return f.apply(spec.YNode()) })
}

func (f Tolerations) apply(spec *yaml.Node) error {
	const path = "spec.template.spec.tolerations"
	list, err := listField(spec, "tolerations", path)
	if err != nil {
		return err
	}
	var existing []*yaml.Node
	if list != nil {
		existing = list.Content
	}
	out := make([]*yaml.Node, 0, len(existing)+len(f.Tolerations))
	at := -1 // where the block goes
	for _, n := range existing {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s holds a %s, not a toleration", path, KindName(n))
		}
		if slices.Contains(distros.ManagedTolerationKeys, scalar(n, "key")) {
			if at < 0 {
				at = len(out)
			}
			continue
		}
		out = append(out, n)
	}
	if at < 0 {
		at = len(out)
	}
	block := make([]*yaml.Node, len(f.Tolerations))
	for i, t := range f.Tolerations {
		block[i] = tolerationNode(t)
	}
	out = slices.Insert(out, at, block...)
	if list != nil && sameList(list.Content, out) {
		return nil // written back as it was
	}
	mapSetOrdered(spec, "tolerations", seqNode(out...), podSpecOrder)
	return nil
}

// sameList reports whether two lists of nodes hold the same trees.
func sameList(a, b []*yaml.Node) bool {
	return slices.EqualFunc(a, b, sameNode)
}

func tolerationNode(t distros.Toleration) *yaml.Node {
	return pairsNode("key", t.Key, "operator", t.Operator, "value", t.Value, "effect", t.Effect)
}
