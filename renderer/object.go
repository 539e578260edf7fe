package renderer

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// object is one document of a stream or one item of a ResourceList: what
// target identification looks at, and what the output is made of. Items
// arrive parsed; documents are parsed only when they may be targets.
type object struct {
	index int // 1-based position in the stream or list
	kind  string
	doc   *stream.Doc // a document of a stream; nil for an item

	node   *yaml.RNode // the parsed tree, once parsed
	in     *object     // the List this object is an item of, for reading only
	before *yaml.Node  // a copy taken before the plan ran (targets only)
	err    error       // the parse error, once parsed
	parsed bool
}

func docObjects(docs []*stream.Doc) []*object {
	objs := make([]*object, len(docs))
	for i, d := range docs {
		objs[i] = &object{doc: d, kind: d.Kind, index: d.Index}
	}
	return objs
}

// itemObjects are the objects of parsed items. An item that is not a
// mapping (a list or a scalar in a hand-written ResourceList) has no kind,
// as a document of the byte layer that is not one: it is nobody's target
// and passes through.
func itemObjects(items []*yaml.RNode) []*object {
	objs := make([]*object, len(items))
	for i, n := range items {
		o := &object{node: n, index: i + 1}
		if n.YNode().Kind == yaml.MappingNode {
			o.kind = n.GetKind()
		}
		objs[i] = o
	}
	return objs
}

// loc says where the object is, for messages (computed then: finding
// Helm's "# Source:" line costs a scan).
func (o *object) loc() Location {
	if o.in != nil {
		return o.in.loc()
	}
	if o.doc == nil {
		return Location{Index: o.index, Item: true}
	}
	return Location{Index: o.index, Line: o.doc.Line, Source: o.doc.Source()}
}

// mentions reports whether the object may contain s: a cheap test before
// parsing. Parsed items always may.
func (o *object) mentions(s string) bool {
	return o.doc == nil || o.doc.Mentions([]byte(s))
}

// parse returns the object's tree, parsing the document the first time.
// Only mappings without duplicate keys are accepted: the renderer must read
// what Kubernetes reads, and Kubernetes takes the last of duplicate keys
// where the tree keeps both.
func (o *object) parse() (*yaml.RNode, error) {
	if o.parsed {
		return o.node, o.err
	}
	o.parsed = true
	o.node, o.err = o.read()
	if o.err == nil {
		o.err = o.checkMetadata()
	}
	if o.err == nil {
		offset := 0 // an item's lines are those of the ResourceList
		if o.doc != nil {
			offset = o.doc.ContentLine() - 1
		}
		if err := duplicateKeys(o.node.YNode(), "", offset); err != nil {
			o.err = o.errorf("%w", err)
		}
	}
	return o.node, o.err
}

// checkMetadata makes sure metadata and its labels and annotations are
// maps where present: the renderer reads names and annotations with kyaml's
// getters, which take that for granted.
func (o *object) checkMetadata() error {
	meta := mapGet(o.node.YNode(), "metadata")
	if meta == nil || isNull(meta) {
		return nil
	}
	if meta.Kind != yaml.MappingNode {
		return &InputError{Location: o.loc(), Err: fmt.Errorf("a %s whose metadata is a %s, not a map", o.kind, KindName(meta))}
	}
	for _, field := range []string{"name", "namespace"} {
		if v := mapGet(meta, field); v != nil && v.Kind != yaml.ScalarNode {
			return &InputError{Location: o.loc(), Err: fmt.Errorf("a %s whose metadata.%s is a %s, not a string", o.kind, field, KindName(v))}
		}
	}
	for _, field := range []string{"labels", "annotations"} {
		if v := mapGet(meta, field); v != nil && !isNull(v) && v.Kind != yaml.MappingNode {
			return &InputError{Location: o.loc(), Err: fmt.Errorf("a %s whose metadata.%s is a %s, not a map", o.kind, field, KindName(v))}
		}
	}
	return nil
}

func (o *object) read() (*yaml.RNode, error) {
	if o.doc == nil {
		if o.node.YNode().Kind != yaml.MappingNode {
			return nil, o.errorf("a %s is a %s, not an object", o.kind, KindName(o.node.YNode()))
		}
		return o.node, nil
	}
	text, err := o.doc.Content()
	if err != nil {
		return nil, &InputError{Location: o.loc(), Err: err}
	}
	rn, err := yaml.Parse(string(text))
	if err != nil {
		return nil, &InputError{Location: o.loc(), Err: o.doc.ParseError(err)}
	}
	if !o.doc.Simple {
		if err := rn.DeAnchor(); err != nil {
			return nil, &InputError{Location: o.loc(), Err: err}
		}
	}
	if rn.YNode().Kind != yaml.MappingNode {
		return nil, o.errorf("a %s is a %s, not an object", o.kind, KindName(rn.YNode()))
	}
	return rn, nil
}

// ref names the object; it must have been parsed.
func (o *object) ref() *ObjectRef {
	if o.node == nil {
		return &ObjectRef{Kind: o.kind}
	}
	return refOf(o.node)
}

func refOf(rn *yaml.RNode) *ObjectRef {
	return &ObjectRef{APIVersion: rn.GetApiVersion(), Kind: rn.GetKind(), Namespace: rn.GetNamespace(), Name: rn.GetName()}
}

// errorf returns an *InputError about the object.
func (o *object) errorf(format string, args ...any) *InputError {
	e := &InputError{Location: o.loc(), Err: errorf(format, args...)}
	if o.node != nil {
		e.Object = refOf(o.node)
	}
	return e
}

// changed reports whether the plan changed the object's tree.
func (o *object) changed() bool {
	return o.before != nil && !sameNode(o.before, o.node.YNode())
}

// duplicateKeys returns an error naming the first mapping key that occurs
// twice in the tree under n; path is n's field path, and offset turns the
// tree's line numbers into input lines.
func duplicateKeys(n *yaml.Node, path string, offset int) error {
	switch n.Kind {
	case yaml.MappingNode:
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if first, dup := seen[k.Value]; dup {
				return fmt.Errorf("duplicate key %q%s at line %d (first at line %d): Kubernetes reads the last one, "+
					"the renderer would patch the first; remove one", k.Value, inField(path), offset+k.Line, offset+first)
			}
			seen[k.Value] = k.Line
			if err := duplicateKeys(n.Content[i+1], joinPath(path, k.Value), offset); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := duplicateKeys(c, fmt.Sprintf("%s[%d]", path, i), offset); err != nil {
				return err
			}
		}
	}
	return nil
}

func inField(path string) string {
	if path == "" {
		return ""
	}
	return " in " + path
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// isList tells whether a kind is a list of objects: v1 List, which kubectl
// and Helm apply item by item, or a typed list (ClusterRoleBindingList).
func isList(kind string) bool { return strings.HasSuffix(kind, "List") }

// listItems returns the items of the input's Lists that may hold s, as
// objects to read, never to patch: a binding in a List grants as much as
// one on its own, and a CCM in a List is one more candidate.
func listItems(objs []*object, s string) ([]*object, error) {
	var out []*object
	for _, obj := range objs {
		if !isList(obj.kind) || !obj.mentions(s) {
			continue
		}
		rn, err := obj.parse()
		if err != nil {
			return nil, err
		}
		items := mapGet(rn.YNode(), "items")
		if items == nil || items.Kind != yaml.SequenceNode {
			continue
		}
		for _, it := range items.Content {
			if it.Kind != yaml.MappingNode {
				continue
			}
			item := &object{index: obj.index, in: obj, node: yaml.NewRNode(it), parsed: true}
			item.kind = item.node.GetKind()
			if item.err = item.checkMetadata(); item.err != nil {
				return nil, item.err
			}
			out = append(out, item)
		}
	}
	return out, nil
}
