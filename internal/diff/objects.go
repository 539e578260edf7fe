package diff

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// Object is one object of a manifest stream.
type Object struct {
	APIVersion string
	Kind       string
	Namespace  string // the object's, else the release's (as Helm applies it)
	Name       string
	value      map[string]any // as the YAML library decodes it, Secret data redacted
	text       string         // value encoded by the YAML library, when needed
}

// yaml returns the object as the diff shows it, encoded once.
func (o *Object) yaml() string {
	if o.text == "" {
		text, err := encodeYAML(o.value)
		if err != nil {
			// Decoded by the same library: cannot happen.
			text = fmt.Sprintf("# (cannot show: %v)\n", err)
		}
		o.text = text
	}
	return o.text
}

// group is the API group of apiVersion, or the whole apiVersion for the
// core group ("v1"), as helm-diff prints it.
func (o *Object) group() string {
	if g, _, ok := strings.Cut(o.APIVersion, "/"); ok {
		return g
	}
	return o.APIVersion
}

// key identifies an object on both sides: a change of its version (apps/v1
// for apps/v1beta2) is a change of the object, not another object.
func (o *Object) key() string {
	return o.group() + "\x00" + o.Kind + "\x00" + o.Namespace + "\x00" + o.Name
}

// Title names the object as helm-diff's headers do: "NAMESPACE, NAME, KIND (GROUP)".
func (o *Object) Title() string {
	return fmt.Sprintf("%s, %s, %s (%s)", o.Namespace, o.Name, o.Kind, o.group())
}

// Parse decodes a manifest stream into the objects Helm 3 and kubectl would
// apply from it, as renderer.Applied reads it: the documents, and the items
// of any document with items (a List's, a ConfigMap's), an item without a
// kind taking its list's. Secret values are redacted before anything else
// sees them.
func Parse(s, defaultNamespace string) ([]*Object, error) {
	return parseApplied([]byte(s), stream.Split([][]byte{[]byte(s)}), nil, defaultNamespace)
}

// parseApplied decodes the objects renderer.Applied reads from a stream cut
// into docs, but for the documents in skip, which it reads as blank lines
// (so that what it says about the others names their places in the
// stream). An error names the document by its place in the stream.
func parseApplied(in []byte, docs []*stream.Doc, skip map[int]bool, defaultNamespace string) ([]*Object, error) {
	if len(skip) > 0 {
		in = blanked(docs, skip)
	}
	applied, err := renderer.Applied(in)
	if err != nil {
		return nil, err
	}
	var objs []*Object
	seen := map[string]bool{}
	read := map[int]bool{}
	for _, a := range applied {
		read[a.Location.Index] = true
		var v any
		if err := a.Node.YNode().Decode(&v); err != nil {
			return nil, fmt.Errorf("document %d: %w", a.Location.Index, err)
		}
		m, ok := stringKeys(v).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d is not an object", a.Location.Index)
		}
		if a.Item >= 0 && m["kind"] == nil && m["apiVersion"] == nil {
			// As the clients decode a list: its kind, less List, and
			// its apiVersion.
			m["kind"], m["apiVersion"] = a.Ref.Kind, a.Ref.APIVersion
		}
		o, err := NewObject(m, defaultNamespace)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", a.Location.Index, err)
		}
		if seen[o.key()] {
			return nil, fmt.Errorf("%s is in the manifests twice", o.Title())
		}
		seen[o.key()] = true
		objs = append(objs, o)
	}
	// A document of something other than an object (a list of strings)
	// is nothing the clients apply: they fail on it.
	for _, d := range docs {
		if skip[d.Index] || read[d.Index] {
			continue
		}
		var v any
		if err := yaml.Unmarshal(d.Body(), &v); err == nil && v != nil {
			if _, ok := v.(map[string]any); !ok {
				return nil, fmt.Errorf("document %d is not an object", d.Index)
			}
		}
	}
	return objs, nil
}

// blanked is the stream of docs with the documents in skip made blank
// lines but for their separator lines: the others keep their places and
// their lines.
func blanked(docs []*stream.Doc, skip map[int]bool) []byte {
	var b bytes.Buffer
	for _, d := range docs {
		if !skip[d.Index] {
			b.Write(d.Raw)
			continue
		}
		body := d.Body()
		b.Write(d.Raw[:len(d.Raw)-len(body)])
		eol := "\n"
		if d.CRLF() {
			eol = "\r\n"
		}
		b.WriteString(strings.Repeat(eol, bytes.Count(body, []byte("\n"))))
	}
	return b.Bytes()
}

// stringKeys makes every mapping key a string, as the API server sees it
// (the YAML library decodes a mapping with a key such as 1234 or true into
// a map[any]any, which neither the Secret redaction, the field comparison
// nor the JSON encoding would take for a mapping).
func stringKeys(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = stringKeys(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			key := "null"
			if k != nil {
				key = fmt.Sprint(k)
			}
			m[key] = stringKeys(e)
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = stringKeys(e)
		}
		return v
	}
	return v
}

func NewObject(m map[string]any, defaultNamespace string) (*Object, error) {
	meta, _ := m["metadata"].(map[string]any)
	o := &Object{APIVersion: str(m["apiVersion"]), Kind: str(m["kind"]), Name: str(meta["name"]), Namespace: str(meta["namespace"])}
	if o.Kind == "" || o.Name == "" {
		return nil, fmt.Errorf("an object without kind or metadata.name")
	}
	if o.Namespace == "" {
		o.Namespace = defaultNamespace
	} else if o.Namespace == defaultNamespace {
		// The same object to the API server: Helm puts a namespaced
		// object without one in the release's namespace.
		delete(meta, "namespace")
	}
	if strings.EqualFold(o.Kind, "Secret") {
		// Whatever its apiVersion: a value written there is a secret
		// whether or not the API server would take the object.
		redactSecretValues(m)
	} else if ann := lastAppliedOf(m); holdsSecret(ann) {
		ann[lastApplied] = redactionTag(ann[lastApplied])
	}
	o.value = m
	return o, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// encodeYAML encodes a value as the diff shows it: two-space indentation,
// map keys sorted, scalars quoted only where YAML needs it.
func encodeYAML(v any) (string, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// redactSalt makes the redaction tags differ from run to run, so they tell
// whether a value changed within one diff and nothing more; drawn the first
// time a Secret is read, not by every process that links this package.
var redactSalt = sync.OnceValue(func() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return b
})

// lastApplied is the annotation in which kubectl apply keeps the object
// it applied: a Secret's has its values.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// redactSecretValues replaces the values under data and stringData of a
// Secret, either field whole when it is no mapping, and its
// last-applied-configuration annotation with a tag, the same for the same
// value within one run.
func redactSecretValues(m map[string]any) {
	for _, field := range []string{"data", "stringData"} {
		switch data := m[field].(type) {
		case nil:
		case map[string]any:
			for k, v := range data {
				data[k] = redactionTag(v)
			}
		default:
			m[field] = redactionTag(data)
		}
	}
	if ann := lastAppliedOf(m); ann != nil {
		ann[lastApplied] = redactionTag(ann[lastApplied])
	}
}

// lastAppliedOf is the annotations of an object that has a
// last-applied-configuration annotation, or nil.
func lastAppliedOf(m map[string]any) map[string]any {
	meta, _ := m["metadata"].(map[string]any)
	if ann, ok := meta["annotations"].(map[string]any); ok && ann[lastApplied] != nil {
		return ann
	}
	return nil
}

// holdsSecret tells whether the last-applied-configuration annotation of
// an object other than a Secret holds one: a Secret, or a list with one in
// its items, as renderer.Applied reads it; or anything it cannot read
// (kubectl writes JSON there, but anyone can write anything).
func holdsSecret(ann map[string]any) bool {
	if ann == nil {
		return false
	}
	s, ok := ann[lastApplied].(string)
	if !ok {
		return true
	}
	applied, err := renderer.Applied([]byte(s))
	if err != nil {
		return true
	}
	for _, a := range applied {
		if strings.EqualFold(a.Ref.Kind, "Secret") {
			return true
		}
	}
	return false
}

// redactionTag is what shows instead of a secret value.
func redactionTag(v any) string {
	h := sha256.Sum256(append(append([]byte{}, redactSalt()...), fmt.Sprint(v)...))
	return "(redacted " + hex.EncodeToString(h[:4]) + ")"
}
