package diff

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"

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

// Parse decodes a manifest stream into its objects, cut into documents by
// the renderer's byte layer. Empty documents and documents of comments only
// are skipped; a List's items are objects of their own. Secret values are
// redacted before anything else sees them.
func Parse(s, defaultNamespace string) ([]*Object, error) {
	return parseDocs(stream.Split([][]byte{[]byte(s)}), defaultNamespace)
}

// parseDocs decodes documents, each on its own, into their objects; an
// error names the document by its place in the stream.
func parseDocs(docs []*stream.Doc, defaultNamespace string) ([]*Object, error) {
	var objs []*Object
	seen := map[string]bool{}
	for _, d := range docs {
		dec := yaml.NewDecoder(bytes.NewReader(d.Body()))
		for {
			var doc any
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", d.Index, err)
			}
			if doc == nil {
				continue
			}
			m, ok := stringKeys(doc).(map[string]any)
			if !ok {
				return nil, fmt.Errorf("document %d is not an object", d.Index)
			}
			items := []map[string]any{m}
			if list, ok := m["items"].([]any); ok && strings.HasSuffix(str(m["kind"]), "List") {
				items = items[:0]
				for _, it := range list {
					if im, ok := it.(map[string]any); ok {
						items = append(items, im)
					}
				}
			}
			for _, m := range items {
				o, err := NewObject(m, defaultNamespace)
				if err != nil {
					return nil, fmt.Errorf("document %d: %w", d.Index, err)
				}
				if seen[o.key()] {
					return nil, fmt.Errorf("%s is in the manifests twice", o.Title())
				}
				seen[o.key()] = true
				objs = append(objs, o)
			}
		}
	}
	return objs, nil
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
	if o.Kind == "Secret" && o.group() == "v1" {
		redactSecretValues(m)
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

// redactSecretValues replaces the values under data and stringData of a
// Secret with a tag, the same for the same value within one run.
func redactSecretValues(m map[string]any) {
	for _, field := range []string{"data", "stringData"} {
		data, ok := m[field].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range data {
			h := sha256.Sum256(append(append([]byte{}, redactSalt()...), fmt.Sprint(v)...))
			data[k] = "(redacted " + hex.EncodeToString(h[:4]) + ")"
		}
	}
}
