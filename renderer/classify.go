package renderer

import (
	"errors"
	"fmt"
	"io"
	"strings"

	yaml2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// One reading of YAML. What the renderer decides (which workload is the CCM,
// who else holds its roles, what it generated) is only as good as its idea
// of what the stream holds, and that must be the idea of the clients that
// apply it: Helm 3 and kubectl read a stream with apimachinery's
// YAMLOrJSONDecoder (documents cut at "---" lines, each converted to JSON by
// a YAML 1.1 library), decode each into an Unstructured object, and flatten
// lists: a document with an "items" key is a list whatever its kind, and
// they apply its items (which take the list's kind, less "List", and
// apiVersion when they name neither) and never the list itself
// (k8s.io/cli-runtime resource.StreamVisitor and FlattenListVisitor,
// k8s.io/apimachinery unstructured.UnstructuredJSONScheme, at v0.37.0).
//
// classify reads every document and item that way: the byte layer proves
// most documents simple (block style, one "kind", no "items"), and their
// kind is all it needs; every other one is parsed and read here. Where a
// YAML parser and those clients could read a document differently, the
// renderer refuses it rather than guess: a tag, merge key ("<<"), alias or
// duplicate among the keys that say what an object is (its top level, its
// metadata, a list's items), a non-string value there, or a nested list.
// The objects the renderer goes on to read in full (bindings, roles,
// workloads, its own) are held to the same rules throughout (checkTree).
// FuzzClassify checks this reading against the clients' decoder.

// identity is what says which object a document or item is.
type identity struct {
	apiVersion, kind, namespace, name string
	marked                            bool // it has the GeneratedAnnotation
}

// classify returns the objects Kubernetes' clients apply from objs, the
// documents of a stream or the items of a ResourceList: a document or item
// itself, nothing (an empty one, or one that is not a mapping, which they
// fail to decode), or the items of a list (objects whose in is the list).
func classify(objs []*object) ([]*object, error) {
	out := make([]*object, 0, len(objs))
	for _, o := range objs {
		if o.doc != nil && o.doc.Simple {
			if o.kind != "" {
				out = append(out, o)
			}
			continue
		}
		applied, err := o.applied()
		if err != nil {
			return nil, err
		}
		out = append(out, applied...)
		o.forget() // parsed again if read in full: the renderer keeps bytes, not trees
	}
	return out, nil
}

// applied reads a parsed document or item.
func (o *object) applied() ([]*object, error) {
	rn, err := o.tree()
	if err != nil {
		return nil, err
	}
	if rn == nil {
		return nil, nil
	}
	root := deref(rn.YNode())
	if root.Kind != yaml.MappingNode {
		o.kind = ""
		return nil, nil // nothing a client applies: it fails to decode a scalar or a sequence
	}
	id, err := readIdentity(root, "", o.lineOffset())
	if err != nil {
		return nil, o.errorf("%w", err)
	}
	o.kind, o.id = id.kind, &id
	items := mapGet(root, "items")
	if items == nil {
		return []*object{o}, nil
	}
	o.list = true
	if isNull(items) {
		return nil, nil // a list of nothing: the object itself is not applied either
	}
	if items.Kind != yaml.SequenceNode {
		return nil, o.errorf("items is a %s: Kubernetes' clients read an object with items as a list, and fail on this one", KindName(items))
	}
	itemKind := strings.TrimSuffix(id.kind, "List")
	out := make([]*object, 0, len(items.Content))
	seen := make(map[*yaml.Node]bool, len(items.Content))
	for i, it := range items.Content {
		it = deref(it)
		path := fmt.Sprintf("items[%d]", i)
		if it.Kind != yaml.MappingNode {
			return nil, o.errorf("%s is a %s, not an object", path, KindName(it))
		}
		iid, err := readIdentity(it, path+".", o.lineOffset())
		if err != nil {
			return nil, o.errorf("%w", err)
		}
		if nested := mapGet(it, "items"); nested != nil && nested.Kind == yaml.SequenceNode {
			return nil, o.errorf("%s is a list inside a list, which Kubernetes' clients fail on", path)
		}
		if iid.kind == "" && iid.apiVersion == "" {
			iid.kind, iid.apiVersion = itemKind, id.apiVersion // as apimachinery's decodeToList sets them
		}
		if seen[it] {
			continue // an alias of an item already listed: the same object, applied twice
		}
		seen[it] = true
		out = append(out, &object{index: o.index, in: o, node: yaml.NewRNode(it), kind: iid.kind, id: &iid, parsed: true, item: i})
	}
	return out, nil
}

// readIdentity reads an object's identity from its mapping; prefix names the
// mapping in messages.
func readIdentity(m *yaml.Node, prefix string, offset int) (identity, error) {
	var id identity
	if err := identityMap(m, prefix, offset, "apiVersion", "kind", "metadata", "items"); err != nil {
		return id, err
	}
	var err error
	if id.apiVersion, err = identityString(m, "apiVersion", prefix, offset); err != nil {
		return id, err
	}
	if id.kind, err = identityString(m, "kind", prefix, offset); err != nil {
		return id, err
	}
	meta := mapGet(m, "metadata")
	if meta == nil || isNull(meta) {
		return id, nil
	}
	if meta.Kind != yaml.MappingNode {
		return id, fmt.Errorf("%smetadata is a %s, not a map", prefix, KindName(meta))
	}
	prefix += "metadata."
	if err := identityMap(meta, prefix, offset, "name", "namespace", "labels", "annotations"); err != nil {
		return id, err
	}
	if id.name, err = identityString(meta, "name", prefix, offset); err != nil {
		return id, err
	}
	if id.namespace, err = identityString(meta, "namespace", prefix, offset); err != nil {
		return id, err
	}
	for _, field := range []string{"labels", "annotations"} {
		if v := mapGet(meta, field); v != nil && !isNull(v) && v.Kind != yaml.MappingNode {
			return id, fmt.Errorf("%s%s is a %s, not a map", prefix, field, KindName(v))
		}
	}
	if a := mapGet(meta, "annotations"); a != nil && a.Kind == yaml.MappingNode {
		id.marked = mapGet(a, GeneratedAnnotation) != nil
	}
	return id, nil
}

// identityMap checks the keys of a mapping that says what an object is:
// each a string key both readings agree on (no tag but !!str, no alias, not
// a merge key, not a YAML 1.1 boolean or number), and each of unique at
// most once (clients take the last of duplicate keys).
func identityMap(m *yaml.Node, prefix string, offset int, unique ...string) error {
	var seen [8]bool
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if err := checkKey(k, func() string { return prefix }, offset); err != nil {
			return err
		}
		for j, u := range unique {
			if k.Value != u {
				continue
			}
			if seen[j] {
				return fmt.Errorf("duplicate key %q in %s at line %d: Kubernetes' clients read the last one, a YAML tree holds both; remove one",
					u, orTop(prefix), offset+k.Line)
			}
			seen[j] = true
		}
	}
	return nil
}

func orTop(prefix string) string {
	if prefix == "" {
		return "the object's top level"
	}
	return strings.TrimSuffix(prefix, ".")
}

// checkKey refuses a mapping key the two readings could read differently;
// prefix names the mapping in a message (it is called for one only).
func checkKey(k *yaml.Node, prefix func() string, offset int) error {
	line := offset + k.Line
	ok := k.Kind == yaml.ScalarNode && k.Value != "<<" && k.Style == 0 && (k.Tag == yaml.NodeTagString || k.Tag == "") && plainStringToV2(k.Value)
	if ok {
		return nil // the common key: plain, untagged, a string to both
	}
	where := orTop(prefix())
	switch {
	case k.Kind != yaml.ScalarNode:
		return fmt.Errorf("a key of %s at line %d is a %s: use plain string keys", where, line, KindName(k))
	case k.Value == "<<" || k.ShortTag() == yaml.MergeTag:
		return fmt.Errorf("a merge key (<<) in %s at line %d: Kubernetes' clients merge it, the renderer would not; write the fields out", where, line)
	case k.Style&yaml.TaggedStyle != 0 && k.ShortTag() != yaml.NodeTagString:
		return fmt.Errorf("a key of %s at line %d has the tag %s, which YAML libraries read differently; write the key plainly", where, line, k.Tag)
	case k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 && k.Style&yaml.TaggedStyle == 0 && !plainStringToV2(k.Value):
		return fmt.Errorf("the key %q of %s at line %d is not a string to Kubernetes' clients (YAML 1.1): quote it", k.Value, where, line)
	}
	return nil
}

// identityString reads a string field that says what an object is: absent
// or null is "".
func identityString(m *yaml.Node, key, prefix string, offset int) (string, error) {
	v := mapGet(m, key)
	if v == nil || isNull(v) && v.Style&yaml.TaggedStyle == 0 {
		return "", nil
	}
	return stringValue(v, prefix+key, offset)
}

// stringValue reads a scalar both readings take for the same string.
func stringValue(v *yaml.Node, path string, offset int) (string, error) {
	line := offset + v.Line
	switch {
	case v.Kind != yaml.ScalarNode:
		return "", fmt.Errorf("%s is a %s, not a string", path, KindName(v))
	case v.Style&yaml.TaggedStyle != 0 && v.ShortTag() != yaml.NodeTagString:
		return "", fmt.Errorf("%s has the tag %s at line %d, which YAML libraries read differently (Kubernetes' clients decode !!binary, say); write it as a plain string",
			path, v.Tag, line)
	case v.ShortTag() != yaml.NodeTagString:
		return "", fmt.Errorf("%s is %q at line %d, a %s to YAML, not a string: quote it", path, v.Value, line, strings.TrimPrefix(v.ShortTag(), "!!"))
	case v.Style&yaml.TaggedStyle == 0 && v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 && !plainStringToV2(v.Value):
		return "", fmt.Errorf("%s is %q at line %d, which Kubernetes' clients read as YAML 1.1, as a boolean or number: quote it", path, v.Value, v.Line)
	}
	return v.Value, nil
}

// yaml11Words are the plain scalars YAML 1.1 reads as booleans or null and
// YAML 1.2 as strings (go.yaml.in/yaml/v2 resolve.go).
var yaml11Words = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "n": true, "N": true, "no": true, "No": true, "NO": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
}

// plainStringToV2 reports whether go.yaml.in/yaml/v2, which sigs.k8s.io/yaml
// and so Kubernetes' clients read YAML with, reads the plain scalar s as
// the string s. Only a few first characters can make it something else.
func plainStringToV2(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c >= '0' && c <= '9', c == '+', c == '-', c == '.':
		var v any
		if err := yaml2.Unmarshal([]byte(s), &v); err != nil {
			return false
		}
		got, ok := v.(string)
		return ok && got == s
	case c == '~' || c == '<':
		return s != "~" && s != "<<"
	}
	return !yaml11Words[s]
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// checkTree refuses, anywhere under n, what a YAML parser and Kubernetes'
// clients could read differently: a duplicate key (they read the last, a
// tree holds both), a merge key, a tag other than !!str, !!map and !!seq on
// the node of that kind, a key that is not a string to either. Aliases are
// not followed: the nodes they name are checked where they stand. path is
// n's field path; offset turns the tree's lines into input lines.
func checkTree(n *yaml.Node, path string, offset int) error {
	c := treeCheck{offset: offset}
	if path != "" {
		c.path = append(c.path, pathStep{key: path, index: -1})
	}
	return c.check(n)
}

// treeCheck walks a tree for checkTree; the field path is built only for
// a message.
type treeCheck struct {
	offset int
	path   []pathStep
	seen   []map[string]int // one per mapping depth, reused
}

type pathStep struct {
	key   string
	index int // of a sequence item; -1 for a key
}

func (c *treeCheck) where() string {
	var b strings.Builder
	for _, p := range c.path {
		if p.index >= 0 {
			fmt.Fprintf(&b, "[%d]", p.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p.key)
	}
	return b.String()
}

func (c *treeCheck) check(n *yaml.Node) error {
	if n.Style&yaml.TaggedStyle != 0 {
		want := ""
		switch n.Kind {
		case yaml.ScalarNode:
			want = yaml.NodeTagString
		case yaml.MappingNode:
			want = yaml.NodeTagMap
		case yaml.SequenceNode:
			want = yaml.NodeTagSeq
		}
		if n.ShortTag() != want {
			return fmt.Errorf("the tag %s%s at line %d: YAML libraries read tags differently (Kubernetes' clients decode !!binary, say); write the value plainly",
				n.Tag, inField(c.where()), c.offset+n.Line)
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		depth := len(c.path)
		for len(c.seen) <= depth {
			c.seen = append(c.seen, map[string]int{})
		}
		seen := c.seen[depth]
		clear(seen)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if err := checkKey(k, func() string { return c.where() + "." }, c.offset); err != nil {
				return err
			}
			if first, dup := seen[k.Value]; dup {
				return fmt.Errorf("duplicate key %q%s at line %d (first at line %d): Kubernetes reads the last one, "+
					"the renderer would read the first; remove one", k.Value, inField(c.where()), c.offset+k.Line, c.offset+first)
			}
			seen[k.Value] = k.Line
			c.path = append(c.path, pathStep{key: k.Value, index: -1})
			err := c.check(n.Content[i+1])
			c.path = c.path[:depth]
			if err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		depth := len(c.path)
		for i, item := range n.Content {
			c.path = append(c.path, pathStep{index: i})
			err := c.check(item)
			c.path = c.path[:depth]
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// maxExpansion bounds what expanding the aliases of an object the renderer
// patches may add: twice its nodes as written, and 10,000 more.
func maxExpansion(written int) int { return 2*written + 10_000 }

// expand replaces the aliases of an object the renderer patches with copies
// of what they name, so that a patch changes only the object it is made on.
// An object whose aliases would expand it beyond maxExpansion is refused.
func (o *object) expand() error {
	n := o.node.YNode()
	expanded, written := stream.ExpandedSize(n)
	if expanded == written {
		return nil
	}
	if expanded > maxExpansion(written) {
		return o.errorf("its aliases expand its %d nodes to %d; the renderer patches objects whose aliases at most double them (and 10,000 nodes): write it out",
			written, expanded)
	}
	return o.node.DeAnchor()
}

// tree returns the document's or item's tree as written, parsing a document
// the first time (nil for a document without content).
func (o *object) tree() (*yaml.RNode, error) {
	if o.parsed {
		return o.node, o.err
	}
	o.parsed = true
	text, err := o.doc.Content()
	if err != nil {
		o.err = &InputError{Location: o.loc(), Err: err}
		return nil, o.err
	}
	o.node, err = yaml.Parse(string(text))
	if errors.Is(err, io.EOF) {
		o.node, err = nil, nil
	}
	if err != nil {
		o.err = &InputError{Location: o.loc(), Err: o.doc.ParseError(err)}
	}
	return o.node, o.err
}

// AppliedObject is one object Helm 3 and kubectl apply from a stream, as
// the renderer reads it (see classify): a document, or an item of a list.
type AppliedObject struct {
	Ref      ObjectRef
	Location Location    // the document's, for an item its list's
	Item     int         // its index among its list's items; -1 for a document of its own
	Node     *yaml.RNode // its tree as written (aliases not expanded)
}

// Applied reads a manifest stream the way Helm 3 and kubectl read it
// before they apply it and returns the objects they would apply, in order:
// what a front end that shows or redacts objects (a diff, say) must go by
// so that it sees what the cluster gets, a Secret that is an item of a
// ConfigMap's items included. It refuses, with an *InputError, what the two
// readings could disagree on, as Render does.
func Applied(in []byte) ([]AppliedObject, error) {
	applied, err := appliedObjects(in)
	if err != nil {
		return nil, err
	}
	out := make([]AppliedObject, 0, len(applied))
	for _, o := range applied {
		rn, err := o.tree()
		if err != nil {
			return nil, err
		}
		if o.id == nil { // a document the byte layer proved: its identity read here
			id, err := readIdentity(deref(rn.YNode()), "", o.lineOffset())
			if err != nil {
				return nil, o.errorf("%w", err)
			}
			o.id = &id
		}
		item := -1
		if o.in != nil {
			item = o.item
		}
		out = append(out, AppliedObject{Ref: *o.ref(), Location: o.loc(), Item: item, Node: rn})
	}
	return out, nil
}

// appliedObjects reads and classifies a stream.
func appliedObjects(in []byte) ([]*object, error) {
	objs, err := readStream([][]byte{in})
	if err != nil {
		return nil, err
	}
	return classify(objs)
}
