package renderer

import (
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Small helpers over yaml.Node trees. The filters edit the parsed tree in
// place so that everything they do not touch keeps its order and comments.

// mapGet returns the value under key, or nil; an alias gives the node it
// names (the renderer reads the objects it does not patch as written).
func mapGet(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return deref(m.Content[i+1])
		}
	}
	return nil
}

// mapSet sets key to v, keeping the key's place when it exists and
// appending it otherwise.
func mapSet(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, strNode(key), v)
}

// podSpecOrder is where the renderer puts the pod spec fields it adds:
// after the fields of this list that come before, before those that come
// after. So the fields end up in the same order whatever earlier render
// added or removed which, and rendering an output again with other options
// gives what rendering the original would.
var podSpecOrder = []string{"nodeSelector", "affinity", "tolerations", "hostNetwork", "volumes"}

// mapSetOrdered sets key to v in place when key exists; a new key goes
// before the first key of m that order puts after it, else at the end.
func mapSetOrdered(m *yaml.Node, key string, v *yaml.Node, order []string) {
	if mapGet(m, key) != nil {
		mapSet(m, key, v)
		return
	}
	rank := slices.Index(order, key)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if r := slices.Index(order, m.Content[i].Value); rank >= 0 && r > rank {
			m.Content = slices.Insert(m.Content, i, strNode(key), v)
			return
		}
	}
	m.Content = append(m.Content, strNode(key), v)
}

// mapDelete removes key and reports whether it was there.
func mapDelete(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return true
		}
	}
	return false
}

// mapField returns the mapping under key, creating it when absent or null
// (in the place podSpecOrder gives it); a value of another kind is an error
// naming path.
func mapField(m *yaml.Node, key, path string) (*yaml.Node, error) {
	v := mapGet(m, key)
	if v == nil || isNull(v) {
		v = &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		mapSetOrdered(m, key, v, podSpecOrder)
	}
	if v.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s is a %s, not a map", path, KindName(v))
	}
	return v, nil
}

// listField returns the sequence under key, or nil when absent or null; a
// value of another kind is an error naming path.
func listField(m *yaml.Node, key, path string) (*yaml.Node, error) {
	v := mapGet(m, key)
	if v == nil || isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s is a %s, not a list", path, KindName(v))
	}
	return v, nil
}

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s}
}

func boolNode(b bool) *yaml.Node {
	v := "false"
	if b {
		v = "true"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: v}
}

func seqNode(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: items}
}

// pairsNode builds a mapping from alternating keys and values, skipping
// pairs whose value is "".
func pairsNode(kv ...string) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			m.Content = append(m.Content, strNode(kv[i]), strNode(kv[i+1]))
		}
	}
	return m
}

// scalarStrings reads a sequence of scalars; path names it in errors.
func scalarStrings(seq *yaml.Node, path string) ([]string, error) {
	if seq == nil {
		return nil, nil
	}
	out := make([]string, 0, len(seq.Content))
	for _, n := range seq.Content {
		n = deref(n)
		if n.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s holds a %s, not a string", path, KindName(n))
		}
		out = append(out, n.Value)
	}
	return out, nil
}

// isNull reports whether a value is YAML null ("~", "null" or nothing).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == yaml.NodeTagNull
}

// cloneNode copies a tree.
func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = cloneNode(k)
	}
	return &c
}

// sameNode compares two trees by kind, tag and value, ignoring style,
// comments and positions.
func sameNode(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || a.Value != b.Value || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode && a.ShortTag() != b.ShortTag() {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// KindName names a node's kind for messages.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "node"
}

// scalar returns the value of a scalar field of a mapping, "" when absent
// or not a scalar.
func scalar(m *yaml.Node, key string) string {
	if v := mapGet(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}
