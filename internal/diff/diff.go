// Package diff compares Kubernetes manifests object by object, the way
// helm-diff does: each object is keyed by its API group, kind, namespace
// and name, both sides are decoded and encoded again by the YAML library
// (keys sorted, one quoting and indentation style, no comments), and only
// objects whose decoded values differ are shown, with a header naming them,
// their changed fields, and hunks headed by where in the object they are.
// The values of a Secret's data never reach its output.
package diff

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// Change kinds of an object.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
	Drifted = "drifted"
)

// Change is one object that differs, as -o json prints it.
type Change struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Change is added, removed, changed, or drifted (the cluster's object
	// differs from the release's manifest).
	Change string `json:"change"`
	// Fields are the changed fields of a changed or drifted object.
	Fields []FieldChange `json:"fields,omitempty"`
	// Object is an added or removed object whole.
	Object map[string]any `json:"object,omitempty"`
	// Diff is the unified diff of the object's YAML, as the text output
	// shows it (without colour).
	Diff string `json:"diff"`

	title string
}

// FieldChange is one changed field. Lists of objects with unique names
// (containers, env, volumes) are compared item by item matched by name,
// other lists item by item when their lengths are the same, else whole.
type FieldChange struct {
	Path   string `json:"path"`
	Op     string `json:"op"` // add, remove, replace
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// Summary counts what a comparison found.
type Summary struct {
	Added, Removed, Changed, Unchanged, Drifted int
}

func (s Summary) changes() int { return s.Added + s.Removed + s.Changed }

// Compare compares two sides object by object. The changes come in
// the order of the objects in to, then the removed ones in the order of
// from; context is the number of unchanged lines around each change (-1:
// the whole object).
func Compare(from, to []*Object, context int) ([]Change, Summary) {
	var changes []Change
	var sum Summary
	old := map[string]*Object{}
	for _, o := range from {
		old[o.key()] = o
	}
	matched := map[string]bool{}
	for _, n := range to {
		o, ok := old[n.key()]
		if !ok {
			sum.Added++
			changes = append(changes, Whole(n, Added))
			continue
		}
		matched[n.key()] = true
		if reflect.DeepEqual(o.value, n.value) {
			sum.Unchanged++
			continue
		}
		sum.Changed++
		changes = append(changes, changedObject(o, n, Changed, context))
	}
	for _, o := range from {
		if !matched[o.key()] {
			sum.Removed++
			changes = append(changes, Whole(o, Removed))
		}
	}
	return changes, sum
}

func newChange(o *Object, change string) Change {
	return Change{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Change: change, title: o.Title()}
}

// Whole is an object added, removed or drifted as a change: the object
// whole, every line added ('+', when added) or removed.
func Whole(o *Object, change string) Change {
	sign := byte('-')
	if change == Added {
		sign = '+'
	}
	c := newChange(o, change)
	c.Object = o.value
	var b strings.Builder
	for _, l := range splitLines(o.yaml()) {
		b.WriteByte(sign)
		b.WriteByte(' ')
		b.WriteString(l)
		b.WriteByte('\n')
	}
	c.Diff = b.String()
	return c
}

func changedObject(from, to *Object, change string, context int) Change {
	c := newChange(to, change)
	c.Fields = fieldChanges("", from.value, to.value, nil)
	c.Diff = objectHunks(from.yaml(), to.yaml(), context)
	return c
}

// fieldChanges lists the differences of two decoded values under path.
func fieldChanges(path string, a, b any, out []FieldChange) []FieldChange {
	if reflect.DeepEqual(a, b) {
		return out
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := joinPath(path, k)
			av, ain := am[k]
			bv, bin := bm[k]
			switch {
			case !ain:
				out = append(out, FieldChange{Path: p, Op: "add", After: bv})
			case !bin:
				out = append(out, FieldChange{Path: p, Op: "remove", Before: av})
			default:
				out = fieldChanges(p, av, bv, out)
			}
		}
		return out
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok {
		an, bn := namedItems(al), namedItems(bl)
		if an != nil && bn != nil {
			var names []string
			for _, it := range al {
				names = append(names, str(it.(map[string]any)["name"]))
			}
			for _, it := range bl {
				if n := str(it.(map[string]any)["name"]); an[n] == nil {
					names = append(names, n)
				}
			}
			for _, n := range names {
				p := path + "[name=" + n + "]"
				switch {
				case an[n] == nil:
					out = append(out, FieldChange{Path: p, Op: "add", After: bn[n]})
				case bn[n] == nil:
					out = append(out, FieldChange{Path: p, Op: "remove", Before: an[n]})
				default:
					out = fieldChanges(p, an[n], bn[n], out)
				}
			}
			return out
		}
		if len(al) == len(bl) {
			// The same length: item by item (a rule's verbs, one arg).
			for i := range al {
				out = fieldChanges(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], out)
			}
			return out
		}
	}
	return append(out, FieldChange{Path: pathOr(path), Op: "replace", Before: a, After: b})
}

// namedItems indexes a list of objects by their unique names, or returns
// nil when it is not such a list.
func namedItems(l []any) map[string]any {
	if len(l) == 0 {
		return nil
	}
	m := map[string]any{}
	for _, it := range l {
		o, ok := it.(map[string]any)
		if !ok {
			return nil
		}
		n, ok := o["name"].(string)
		if !ok || m[n] != nil {
			return nil
		}
		m[n] = o
	}
	return m
}

// simpleKey tells whether a key can stand in a path as it is:
// [A-Za-z_][A-Za-z0-9_-]*.
func simpleKey(key string) bool {
	for i, r := range key {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r == '-' || r >= '0' && r <= '9')) {
			return false
		}
	}
	return key != ""
}

func joinPath(path, key string) string {
	if !simpleKey(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func pathOr(p string) string {
	if p == "" {
		return "(top)"
	}
	return p
}

// CompareStreams compares two manifest streams. Documents whose content is
// byte for byte on both sides are unchanged without being decoded (most of
// a chart's output, most of an upgrade's); the objects of the others are
// read as renderer.Applied reads them (Parse) and compared object by object.
func CompareStreams(fromName, from, toName, to, namespace string, context int) ([]Change, Summary, error) {
	fd, td := docsOf(from), docsOf(to)
	onFrom := map[string]int{}
	for _, d := range fd {
		if k, ok := plainDoc(d); ok {
			onFrom[k]++
		}
	}
	var sum Summary
	same := map[string]int{}
	skipTo := map[int]bool{}
	for _, d := range td {
		if k, ok := plainDoc(d); ok && onFrom[k] > 0 {
			onFrom[k]--
			same[k]++
			sum.Unchanged++
			skipTo[d.Index] = true
		}
	}
	skipFrom := map[int]bool{}
	for _, d := range fd {
		if k, ok := plainDoc(d); ok && same[k] > 0 {
			same[k]--
			skipFrom[d.Index] = true
		}
	}
	a, err := parseSide(fromName, from, fd, skipFrom, namespace)
	if err != nil {
		return nil, sum, err
	}
	b, err := parseSide(toName, to, td, skipTo, namespace)
	if err != nil {
		return nil, sum, err
	}
	changes, rest := Compare(a, b, context)
	rest.Unchanged += sum.Unchanged
	return changes, rest, nil
}

// docsOf cuts a stream into documents with the renderer's byte layer and
// learns their kinds. A document its checker refuses has none; Applied
// says what is wrong with it.
func docsOf(s string) []*stream.Doc {
	docs := stream.Split([][]byte{[]byte(s)})
	_ = stream.Scan(docs)
	return docs
}

// plainDoc returns the content of a document that is one object (a kind,
// not a List, no "..." inside), to match documents by their bytes.
func plainDoc(d *stream.Doc) (string, bool) {
	if d.Kind == "" || d.Multi || strings.HasSuffix(d.Kind, "List") {
		return "", false
	}
	return strings.TrimSpace(string(d.Raw[d.ContentStart():])), true
}

// parseSide parses one side of a diff but the documents in skip, as an
// input error naming it.
func parseSide(name, s string, docs []*stream.Doc, skip map[int]bool, namespace string) ([]*Object, error) {
	objs, err := parseApplied([]byte(s), docs, skip, namespace)
	if err != nil {
		return nil, &renderer.InputError{Err: fmt.Errorf("%s: %w", name, err)}
	}
	return objs, nil
}
