package renderer

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Tolerations makes a workload tolerate the taints of a distribution's
// control-plane nodes with operator Exists, which matches a taint whatever
// its value. A toleration the profile covers (same key, same or any effect)
// is replaced in its place; every other toleration stays, in order; no
// duplicate is added, and no key-less toleration ever is.
type Tolerations struct {
	Tolerations []Toleration
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
	placed := make([]bool, len(f.Tolerations))
	out := make([]*yaml.Node, 0, len(existing)+len(f.Tolerations))
	for _, n := range existing {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s holds a %s, not a toleration", path, kindName(n))
		}
		t := readToleration(n)
		i := f.covering(t)
		switch {
		case i < 0:
			out = append(out, n)
			for j, want := range f.Tolerations {
				if broader(t, want) {
					placed[j] = true
				}
			}
		case !placed[i]:
			out = append(out, tolerationNode(f.Tolerations[i]))
			placed[i] = true
		}
	}
	for i, want := range f.Tolerations {
		if !placed[i] {
			out = append(out, tolerationNode(want))
		}
	}
	mapSet(spec, "tolerations", seqNode(out...))
	return nil
}

// covering returns the index of the wanted toleration that covers t, or -1.
func (f Tolerations) covering(t Toleration) int {
	for i, want := range f.Tolerations {
		if t.Key == want.Key && t.Key != "" && (want.Effect == "" || t.Effect == want.Effect) {
			return i
		}
	}
	return -1
}

// broader reports whether t tolerates everything want does.
func broader(t, want Toleration) bool {
	return t.Operator == "Exists" && (t.Key == "" || t.Key == want.Key) && (t.Effect == "" || t.Effect == want.Effect)
}

func readToleration(n *yaml.Node) Toleration {
	get := func(k string) string {
		if v := mapGet(n, k); v != nil && v.Kind == yaml.ScalarNode {
			return v.Value
		}
		return ""
	}
	t := Toleration{Key: get("key"), Operator: get("operator"), Value: get("value"), Effect: get("effect")}
	if t.Operator == "" {
		t.Operator = "Equal"
	}
	return t
}

func tolerationNode(t Toleration) *yaml.Node {
	return pairsNode("key", t.Key, "operator", t.Operator, "value", t.Value, "effect", t.Effect)
}
