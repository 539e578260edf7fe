package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// diff compares manifests object by object, the way helm-diff does: each
// object is keyed by its API group, kind, namespace and name, both sides
// are decoded and encoded again by the YAML library (keys sorted, one
// quoting and indentation style, no comments), and only objects whose
// decoded values differ are shown, with a header naming them.

// manifestObject is one object of a manifest stream.
type manifestObject struct {
	APIVersion string
	Kind       string
	Namespace  string // the object's, else the release's (as Helm applies it)
	Name       string
	value      map[string]any // as the YAML library decodes it, Secret data redacted
	text       string         // value encoded by the YAML library, when needed
}

// yaml returns the object as the diff shows it, encoded once.
func (o *manifestObject) yaml() string {
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
func (o *manifestObject) group() string {
	if g, _, ok := strings.Cut(o.APIVersion, "/"); ok {
		return g
	}
	return o.APIVersion
}

// key identifies an object on both sides: a change of its version (apps/v1
// for apps/v1beta2) is a change of the object, not another object.
func (o *manifestObject) key() string {
	return o.group() + "\x00" + o.Kind + "\x00" + o.Namespace + "\x00" + o.Name
}

// Title names the object as helm-diff's headers do: "NAMESPACE, NAME, KIND (GROUP)".
func (o *manifestObject) Title() string {
	return fmt.Sprintf("%s, %s, %s (%s)", o.Namespace, o.Name, o.Kind, o.group())
}

// parseManifests decodes a manifest stream into its objects. Empty
// documents and documents of comments only are skipped; a List's items are
// objects of their own. Secret values are redacted before anything else
// sees them.
func parseManifests(stream, defaultNamespace string) ([]*manifestObject, error) {
	dec := yaml.NewDecoder(strings.NewReader(stream))
	var objs []*manifestObject
	seen := map[string]bool{}
	for i := 1; ; i++ {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if doc == nil {
			continue
		}
		doc = stringKeys(doc)
		m, ok := doc.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d is not an object", i)
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
			o, err := newManifestObject(m, defaultNamespace)
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", i, err)
			}
			if seen[o.key()] {
				return nil, fmt.Errorf("%s is in the manifests twice", o.Title())
			}
			seen[o.key()] = true
			objs = append(objs, o)
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

func newManifestObject(m map[string]any, defaultNamespace string) (*manifestObject, error) {
	meta, _ := m["metadata"].(map[string]any)
	o := &manifestObject{APIVersion: str(m["apiVersion"]), Kind: str(m["kind"]), Name: str(meta["name"]), Namespace: str(meta["namespace"])}
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

// redactSecretValues replaces the values under data and stringData of a
// Secret with a tag, the same for the same value within one run.
func redactSecretValues(m map[string]any) {
	for _, field := range []string{"data", "stringData"} {
		data, ok := m[field].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range data {
			h := sha256.Sum256(append(append([]byte{}, redactSalt...), fmt.Sprint(v)...))
			data[k] = "(redacted " + hex.EncodeToString(h[:4]) + ")"
		}
	}
}

// Change kinds of an object.
const (
	changeAdded   = "added"
	changeRemoved = "removed"
	changeChanged = "changed"
	changeDrifted = "drifted"
)

// objectChange is one object that differs, as -o json prints it.
type objectChange struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Change is added, removed, changed, or drifted (the cluster's object
	// differs from the release's manifest).
	Change string `json:"change"`
	// Fields are the changed fields of a changed or drifted object.
	Fields []fieldChange `json:"fields,omitempty"`
	// Object is an added or removed object whole.
	Object map[string]any `json:"object,omitempty"`
	// Diff is the unified diff of the object's YAML, as the text output
	// shows it (without colour).
	Diff string `json:"diff"`

	title string
}

// fieldChange is one changed field. Lists of objects with unique names
// (containers, env, volumes) are compared item by item matched by name,
// other lists item by item when their lengths are the same, else whole.
type fieldChange struct {
	Path   string `json:"path"`
	Op     string `json:"op"` // add, remove, replace
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// diffSummary counts what a comparison found.
type diffSummary struct {
	Added, Removed, Changed, Unchanged, Drifted int
}

func (s diffSummary) changes() int { return s.Added + s.Removed + s.Changed }

// compareObjects compares two sides object by object. The changes come in
// the order of the objects in to, then the removed ones in the order of
// from; context is the number of unchanged lines around each change (-1:
// the whole object).
func compareObjects(from, to []*manifestObject, context int) ([]objectChange, diffSummary) {
	var changes []objectChange
	var sum diffSummary
	old := map[string]*manifestObject{}
	for _, o := range from {
		old[o.key()] = o
	}
	matched := map[string]bool{}
	for _, n := range to {
		o, ok := old[n.key()]
		if !ok {
			sum.Added++
			changes = append(changes, wholeObject(n, changeAdded, '+'))
			continue
		}
		matched[n.key()] = true
		if reflect.DeepEqual(o.value, n.value) {
			sum.Unchanged++
			continue
		}
		sum.Changed++
		changes = append(changes, changedObject(o, n, changeChanged, context))
	}
	for _, o := range from {
		if !matched[o.key()] {
			sum.Removed++
			changes = append(changes, wholeObject(o, changeRemoved, '-'))
		}
	}
	return changes, sum
}

func newChange(o *manifestObject, change string) objectChange {
	return objectChange{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Change: change, title: o.Title()}
}

func wholeObject(o *manifestObject, change string, sign byte) objectChange {
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

func changedObject(from, to *manifestObject, change string, context int) objectChange {
	c := newChange(to, change)
	c.Fields = fieldChanges("", from.value, to.value, nil)
	c.Diff = objectHunks(from.yaml(), to.yaml(), context)
	return c
}

// objectHunks is the line diff of one object's YAML: each hunk starts with
// "@@ PATH @@", PATH being where in the object its first change is; lines
// are "- " removed, "+ " added, "  " unchanged.
func objectHunks(from, to string, context int) string {
	a, b := splitLines(from), splitLines(to)
	ops := diffLines(a, b)
	if context < 0 {
		context = len(ops)
	}
	var out strings.Builder
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start, end := max(i-context, 0), i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		path := ""
		if ops[i].kind == '-' {
			path = yamlPathAt(a, ops[i].a)
		} else {
			path = yamlPathAt(b, ops[i].b)
		}
		fmt.Fprintf(&out, "@@ %s @@\n", path)
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteByte(' ')
			out.WriteString(op.line)
			out.WriteByte('\n')
		}
		i = end
	}
	return out.String()
}

// yamlPathAt returns where line i of a YAML text made by encodeYAML stands:
// the keys that enclose it and its own, list items as [name=NAME] when the
// item has a name, else [] (e.g. spec.template.spec.containers[name=ccm].args).
func yamlPathAt(lines []string, i int) string {
	var segs []string
	limit := contentCol(lines[i])
	if k := keyOf(lines[i][limit:]); k != "" {
		segs = append(segs, k)
	}
	if isItem(lines[i]) {
		segs = append(segs, itemName(lines, i))
		limit = indentOf(lines[i])
	}
	for j := i - 1; j >= 0 && limit > 0; j-- {
		l := lines[j]
		if strings.TrimSpace(l) == "" {
			continue
		}
		col := contentCol(l)
		if isItem(l) {
			dash := indentOf(l)
			if dash >= limit {
				continue
			}
			if k := keyOf(l[col:]); k != "" && col < limit {
				segs = append(segs, k)
			}
			segs = append(segs, itemName(lines, j))
			limit = dash
			continue
		}
		if col < limit {
			if k := keyOf(l[col:]); k != "" {
				segs = append(segs, k)
				limit = col
			}
		}
	}
	if len(segs) == 0 {
		return "(top)"
	}
	slices.Reverse(segs)
	var b strings.Builder
	for _, s := range segs {
		if strings.HasPrefix(s, "[") || b.Len() == 0 {
			b.WriteString(s)
		} else {
			b.WriteString("." + s)
		}
	}
	return b.String()
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

func isItem(l string) bool {
	t := strings.TrimLeft(l, " ")
	return t == "-" || strings.HasPrefix(t, "- ")
}

// contentCol is where a line's content starts, after its indentation and
// any "- " of a list item.
func contentCol(l string) int {
	c := indentOf(l)
	for strings.HasPrefix(l[c:], "- ") {
		c += 2
	}
	return c
}

var plainKey = regexp.MustCompile(`^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s"'#:][^:]*?):(?: |$)`)

// keyOf returns the key a line's content starts with, or "".
func keyOf(content string) string {
	m := plainKey.FindStringSubmatch(content)
	if m == nil {
		return ""
	}
	k := m[1]
	if uq, err := strconv.Unquote(k); err == nil && strings.HasPrefix(k, `"`) {
		k = uq
	} else if strings.HasPrefix(k, "'") {
		k = strings.ReplaceAll(k[1:len(k)-1], "''", "'")
	}
	return k
}

// itemName is "[name=NAME]" for the list item starting at line j when it
// has a name key at its own level, else "[]".
func itemName(lines []string, j int) string {
	dash := indentOf(lines[j])
	col := contentCol(lines[j])
	for k := j; k < len(lines); k++ {
		l := lines[k]
		if k > j && (indentOf(l) <= dash) {
			break
		}
		c := contentCol(l)
		if k > j && c != col {
			continue
		}
		if rest, ok := strings.CutPrefix(l[c:], "name: "); ok {
			return "[name=" + strings.Trim(rest, `"'`) + "]"
		}
	}
	return "[]"
}

// fieldChanges lists the differences of two decoded values under path.
func fieldChanges(path string, a, b any, out []fieldChange) []fieldChange {
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
				out = append(out, fieldChange{Path: p, Op: "add", After: bv})
			case !bin:
				out = append(out, fieldChange{Path: p, Op: "remove", Before: av})
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
					out = append(out, fieldChange{Path: p, Op: "add", After: bn[n]})
				case bn[n] == nil:
					out = append(out, fieldChange{Path: p, Op: "remove", Before: an[n]})
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
	return append(out, fieldChange{Path: pathOr(path), Op: "replace", Before: a, After: b})
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

var simpleKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func joinPath(path, key string) string {
	if !simpleKey.MatchString(key) {
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

// diffText is the text diff output: each changed object with its header,
// then a one-line summary; "" when nothing changed.
func diffText(changes []objectChange, sum diffSummary, what string, color bool) string {
	if len(changes) == 0 {
		return ""
	}
	var b strings.Builder
	for i, c := range changes {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(terminal.Paint(color, terminal.BoldYellow, c.title+" "+changeVerb(c.Change)+":"))
		b.WriteByte('\n')
		for _, l := range splitLines(c.Diff) {
			switch {
			case strings.HasPrefix(l, "@@"):
				b.WriteString(terminal.Paint(color, terminal.Cyan, l))
			case strings.HasPrefix(l, "-"):
				b.WriteString(terminal.Paint(color, terminal.Red, l))
			case strings.HasPrefix(l, "+"):
				b.WriteString(terminal.Paint(color, terminal.Green, l))
			default:
				b.WriteString(l)
			}
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
	b.WriteString(terminal.Paint(color, terminal.Bold, summaryLine(sum, what)))
	b.WriteByte('\n')
	return b.String()
}

func changeVerb(change string) string {
	switch change {
	case changeAdded:
		return "has been added"
	case changeRemoved:
		return "has been removed"
	case changeDrifted:
		return "differs in the cluster from the release"
	}
	return "has changed"
}

// summaryLine is the last line of a text diff.
func summaryLine(s diffSummary, what string) string {
	line := fmt.Sprintf("Summary: %d changed, %d added, %d removed, %d unchanged", s.Changed, s.Added, s.Removed, s.Unchanged)
	if s.Drifted > 0 {
		verb := "differ"
		if s.Drifted == 1 {
			verb = "differs"
		}
		// Changed outside Helm, or by an upgrade that failed.
		line += fmt.Sprintf("; %d %s in the cluster from the release", s.Drifted, verb)
	}
	return line + " (" + what + ")"
}

// compareStreams compares two manifest streams. Documents whose content is
// byte for byte on both sides are unchanged without being decoded (most of
// a chart's output, most of an upgrade's); the others are decoded and
// compared object by object.
func compareStreams(fromName, from, toName, to, namespace string, context int) ([]objectChange, diffSummary, error) {
	fd, td := docsOf(from), docsOf(to)
	onFrom := map[string]int{}
	for _, d := range fd {
		if k, ok := plainDoc(d); ok {
			onFrom[k]++
		}
	}
	var sum diffSummary
	same := map[string]int{}
	var restTo []string
	for _, d := range td {
		if k, ok := plainDoc(d); ok && onFrom[k] > 0 {
			onFrom[k]--
			same[k]++
			sum.Unchanged++
			continue
		}
		restTo = append(restTo, string(d.Body()))
	}
	var restFrom []string
	for _, d := range fd {
		if k, ok := plainDoc(d); ok && same[k] > 0 {
			same[k]--
			continue
		}
		restFrom = append(restFrom, string(d.Body()))
	}
	a, err := parseSide(fromName, strings.Join(restFrom, "\n---\n"), namespace)
	if err != nil {
		return nil, sum, err
	}
	b, err := parseSide(toName, strings.Join(restTo, "\n---\n"), namespace)
	if err != nil {
		return nil, sum, err
	}
	changes, rest := compareObjects(a, b, context)
	rest.Unchanged += sum.Unchanged
	return changes, rest, nil
}

// docsOf cuts a stream into documents with the renderer's byte layer; when
// its checker refuses one, the stream is one document, for the YAML
// library to say what is wrong.
func docsOf(s string) []*stream.Doc {
	docs := stream.Split([][]byte{[]byte(s)})
	if stream.Scan(docs) != nil {
		return []*stream.Doc{{Raw: []byte(s)}}
	}
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

// parseSide parses one side of a diff, as an input error naming it.
func parseSide(name, stream, namespace string) ([]*manifestObject, error) {
	objs, err := parseManifests(stream, namespace)
	if err != nil {
		return nil, &renderer.InputError{Err: fmt.Errorf("%s: %w", name, err)}
	}
	return objs, nil
}
