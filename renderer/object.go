package renderer

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// object is one document of a stream, one item of a ResourceList, or one
// item of a list (a document or item that Kubernetes' clients read as a
// list, see classify): what target identification looks at, and what the
// output is made of. Items arrive parsed; documents are parsed only when
// they may be targets, and their trees are dropped again when they are not.
type object struct {
	index int // 1-based position in the stream or list
	kind  string
	doc   *stream.Doc // a document of a stream; nil for an item

	node   *yaml.RNode // the parsed tree, once parsed
	in     *object     // the list this object is an item of, for reading only
	item   int         // its index among the list's items
	id     *identity   // what says which object it is, once read
	list   bool        // a list to Kubernetes' clients: they apply its items, never it
	before *yaml.Node  // a copy taken before the plan ran (targets only)
	err    error       // the parse error, once parsed
	parsed bool
	strict bool // checkTree passed
}

func docObjects(docs []*stream.Doc) []*object {
	objs := make([]*object, len(docs))
	for i, d := range docs {
		objs[i] = &object{doc: d, kind: d.Kind, index: d.Index}
	}
	return objs
}

// itemObjects are the objects of parsed items; classify reads their kinds.
// An item that is not a mapping (a list or a scalar in a hand-written
// ResourceList) has no kind, as a document of the byte layer that is not
// one: it is nobody's target and passes through.
func itemObjects(items []*yaml.RNode) []*object {
	objs := make([]*object, len(items))
	for i, n := range items {
		objs[i] = &object{node: n, index: i + 1, parsed: true}
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
	return o.doc == nil || o.in != nil || o.doc.Mentions([]byte(s))
}

// parse returns the tree of an object the renderer reads in full, parsing
// a document the first time. Only mappings both readings agree on are
// accepted (checkTree: no duplicate key, merge key or unusual tag anywhere),
// with an identity of strings: the renderer must read what Kubernetes reads.
func (o *object) parse() (*yaml.RNode, error) {
	rn, err := o.tree()
	if err != nil || o.strict {
		return rn, err
	}
	if rn == nil || deref(rn.YNode()).Kind != yaml.MappingNode {
		what := "empty"
		if rn != nil {
			what = "a " + KindName(deref(rn.YNode()))
		}
		o.err = o.errorf("a %s is %s, not an object", o.kind, what)
		return nil, o.err
	}
	if o.id == nil {
		id, err := readIdentity(deref(rn.YNode()), "", o.lineOffset())
		if err != nil {
			o.err = o.errorf("%w", err)
			return nil, o.err
		}
		o.id = &id
	}
	if err := checkTree(rn.YNode(), "", o.lineOffset()); err != nil {
		o.err = o.errorf("%w", err)
		return nil, o.err
	}
	o.strict = true
	return rn, nil
}

// lineOffset turns the lines of the object's tree into input lines: its
// document's (or its list's) from the first content line; an item's lines
// are those of the ResourceList already.
func (o *object) lineOffset() int {
	if o.in != nil {
		return o.in.lineOffset()
	}
	if o.doc != nil {
		return o.doc.ContentLine() - 1
	}
	return 0
}

// forget drops the tree of a document that is no longer needed (not an
// item, whose tree is its list's or the caller's; not a target): what the
// renderer keeps of the input is its bytes.
func (o *object) forget() {
	if o.doc == nil || o.in != nil || o.list || o.before != nil || o.err != nil {
		return
	}
	o.node, o.parsed, o.strict = nil, false, false
}

// ref names the object, as far as it has been read.
func (o *object) ref() *ObjectRef {
	if o.id == nil {
		return &ObjectRef{Kind: o.kind}
	}
	return &ObjectRef{APIVersion: o.id.apiVersion, Kind: o.id.kind, Namespace: o.id.namespace, Name: o.id.name}
}

func refOf(rn *yaml.RNode) *ObjectRef {
	return &ObjectRef{APIVersion: rn.GetApiVersion(), Kind: rn.GetKind(), Namespace: rn.GetNamespace(), Name: rn.GetName()}
}

// errorf returns an *InputError about the object.
func (o *object) errorf(format string, args ...any) *InputError {
	e := &InputError{Location: o.loc(), Err: errorf(format, args...)}
	if o.id != nil {
		e.Object = o.ref()
	}
	return e
}

// changed reports whether the plan changed the object's tree.
func (o *object) changed() bool {
	return o.before != nil && !sameNode(o.before, o.node.YNode())
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
