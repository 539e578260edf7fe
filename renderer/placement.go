package renderer

import (
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Placement puts a workload's pods on the control-plane nodes of one
// distribution. It removes the control-plane keys charts select on and
// writes the profile's nodeSelector, or for auto a required node affinity
// with one term per control-plane label. Other selector keys and other
// affinity terms stay.
type Placement struct {
	distros.Record
}

var _ kio.Filter = Placement{}

func (p Placement) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	return eachPodSpec(nodes, func(_, spec *yaml.RNode) error { return p.apply(spec.YNode()) })
}

func (p Placement) apply(spec *yaml.Node) error {
	if err := p.nodeSelector(spec); err != nil {
		return err
	}
	return p.affinity(spec)
}

func (p Placement) nodeSelector(spec *yaml.Node) error {
	sel := mapGet(spec, "nodeSelector")
	if sel != nil && !isNull(sel) && sel.Kind != yaml.MappingNode {
		return fmt.Errorf("spec.template.spec.nodeSelector is a %s, not a map", KindName(sel))
	}
	if sel != nil && sel.Kind == yaml.MappingNode {
		for _, key := range distros.ControlPlaneLabels {
			if _, ok := p.Record.NodeSelector[key]; !ok {
				mapDelete(sel, key)
			}
		}
	}
	// The nodeSelector is always there, {} when auto empties it: a later
	// render for a named distribution then writes its selector where the
	// chart had it, as rendering the chart's output for it directly does.
	sel, err := mapField(spec, "nodeSelector", "spec.template.spec.nodeSelector")
	if err != nil {
		return err
	}
	if len(sel.Content) == 0 {
		sel.Style = 0 // "{}" emptied by an earlier render: written in block style again
	}
	for _, key := range sortedKeys(p.Record.NodeSelector) {
		mapSet(sel, key, strNode(p.Record.NodeSelector[key]))
	}
	return nil
}

// affinity writes (auto) or strips (a named distro) the control-plane terms
// of the required node affinity. Terms the user wrote are kept: with auto,
// each of them is combined with each control-plane label, because terms are
// ORed and the pod must match both the user's term and a control-plane label.
func (p Placement) affinity(spec *yaml.Node) error {
	const path = "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
	aff := mapGet(spec, "affinity")
	var na, req *yaml.Node
	if aff != nil && aff.Kind == yaml.MappingNode {
		if na = mapGet(aff, "nodeAffinity"); na != nil && na.Kind == yaml.MappingNode {
			req = mapGet(na, "requiredDuringSchedulingIgnoredDuringExecution")
		}
	}
	var base []*yaml.Node // the user's terms without control-plane expressions
	touched := false
	if req != nil && !isNull(req) {
		if req.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is a %s, not a map", path, KindName(req))
		}
		terms, err := listField(req, "nodeSelectorTerms", path+".nodeSelectorTerms")
		if err != nil {
			return err
		}
		if terms != nil {
			for _, t := range terms.Content {
				if t.Kind != yaml.MappingNode {
					return fmt.Errorf("%s.nodeSelectorTerms holds a %s, not a term", path, KindName(t))
				}
				b, stripped, err := stripControlPlane(t, path)
				if err != nil {
					return err
				}
				touched = touched || stripped
				if !slices.ContainsFunc(base, func(x *yaml.Node) bool { return sameNode(x, b) }) {
					base = append(base, b)
				}
			}
		}
	}
	if len(p.Record.AffinityLabels) == 0 {
		if !touched {
			return nil
		}
		if len(base) == 0 || slices.ContainsFunc(base, emptyTerm) {
			mapDelete(na, "requiredDuringSchedulingIgnoredDuringExecution")
			if len(na.Content) == 0 {
				mapDelete(aff, "nodeAffinity")
			}
			if len(aff.Content) == 0 {
				mapDelete(spec, "affinity")
			}
			return nil
		}
		mapSet(req, "nodeSelectorTerms", seqNode(base...))
		return nil
	}
	if slices.ContainsFunc(base, emptyTerm) {
		base = nil // an empty term matches every node: the user's terms add nothing
	}
	var terms []*yaml.Node
	for _, label := range p.Record.AffinityLabels {
		if len(base) == 0 {
			terms = append(terms, withExpression(pairsNode(), label))
		}
		for _, b := range base {
			terms = append(terms, withExpression(cloneNode(b), label))
		}
	}
	aff, err := mapField(spec, "affinity", "spec.template.spec.affinity")
	if err != nil {
		return err
	}
	if na, err = mapField(aff, "nodeAffinity", "spec.template.spec.affinity.nodeAffinity"); err != nil {
		return err
	}
	if req, err = mapField(na, "requiredDuringSchedulingIgnoredDuringExecution", path); err != nil {
		return err
	}
	mapSet(req, "nodeSelectorTerms", seqNode(terms...))
	return nil
}

// withExpression adds "label Exists" to a node selector term.
func withExpression(term *yaml.Node, label string) *yaml.Node {
	exprs := mapGet(term, "matchExpressions")
	if exprs == nil || exprs.Kind != yaml.SequenceNode {
		exprs = seqNode()
		mapSet(term, "matchExpressions", exprs)
	}
	exprs.Content = append(exprs.Content, pairsNode("key", label, "operator", "Exists"))
	return term
}

// stripControlPlane returns a copy of a node selector term without the
// expressions on control-plane labels, and whether it had any.
func stripControlPlane(term *yaml.Node, path string) (*yaml.Node, bool, error) {
	t := cloneNode(term)
	exprs, err := listField(t, "matchExpressions", path+".nodeSelectorTerms[].matchExpressions")
	if err != nil || exprs == nil {
		return t, false, err
	}
	kept := exprs.Content[:0:0]
	for _, e := range exprs.Content {
		if e.Kind == yaml.MappingNode {
			if k := mapGet(e, "key"); k != nil && slices.Contains(distros.ControlPlaneLabels, k.Value) {
				continue
			}
		}
		kept = append(kept, e)
	}
	if len(kept) == len(exprs.Content) {
		return t, false, nil
	}
	if len(kept) == 0 {
		mapDelete(t, "matchExpressions")
	} else {
		exprs.Content = kept
	}
	return t, true, nil
}

// emptyTerm reports whether a node selector term has no requirement left.
func emptyTerm(t *yaml.Node) bool {
	for i := 0; i+1 < len(t.Content); i += 2 {
		if v := t.Content[i+1]; len(v.Content) > 0 {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
