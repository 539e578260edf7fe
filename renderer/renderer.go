// Package renderer patches the manifests of the aws-cloud-controller-manager
// Helm chart so the CCM runs on the control-plane nodes of the clusters of
// every distribution in distros.Records (renderer/distros), with the flags, RBAC and leader migration the move
// off the in-tree AWS cloud provider needs.
//
// The flow (docs/dev/architecture.md draws it): input bytes → split into
// documents (package stream, never parsing) → identify the targets (the CCM's
// workload, the role its access decision patches, objects earlier renders
// generated; only those are parsed) → run the plan, an ordered list of
// kio.Filters, one per patch, over the targets → join: untouched documents
// are copied as slices of the input, changed ones re-encoded, generated ones
// added before the workload. Items of a KRM ResourceList take the same path
// from the identification on.
package renderer

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// Renderer applies one set of options to manifest streams.
type Renderer struct {
	opts     Options
	profile  distros.Record
	warnings []string // about the options
	spelling Spelling // of the options warnings name
}

// New validates the options and returns a Renderer; bad options give a
// *UsageError.
func New(o Options) (*Renderer, error) {
	warnings, err := o.check()
	if err != nil {
		return nil, err
	}
	if o.Strict && len(warnings) > 0 {
		return nil, &UsageError{Err: strictError(warnings)}
	}
	r := &Renderer{opts: o, warnings: warnings, spelling: FlagSpelling}
	r.profile, _ = distros.RecordOf(o.Distro)
	return r, nil
}

// WithSpelling returns a copy of the renderer whose warnings spell options
// with sp (errors carry their options and are spelled by Message).
func (r *Renderer) WithSpelling(sp Spelling) *Renderer {
	c := *r
	c.spelling = sp
	return &c
}

// Options returns the renderer's options.
func (r *Renderer) Options() Options { return r.opts }

// Output is a rendered stream. It is only ever returned whole.
type Output struct {
	stream.Builder
	Warnings []string // things the user should know; the stream is still valid
	Changed  int      // how many documents the patches changed, added or removed
}

const noWorkloadWarning = "no AWS cloud-controller-manager DaemonSet or Deployment in the input: passed through unchanged"

// Render patches a manifest stream. It returns the whole output or an error,
// never a part: an *InputError for manifests it cannot accept.
func (r *Renderer) Render(in []byte) (*Output, error) {
	return r.RenderChunks([][]byte{in})
}

// RenderChunks patches a manifest stream read by stream.Read.
func (r *Renderer) RenderChunks(in [][]byte) (*Output, error) {
	if !slices.ContainsFunc(in, func(c []byte) bool { return len(bytes.TrimSpace(c)) > 0 }) {
		return nil, &InputError{Err: errorf("empty input: expected the manifests `helm template` prints, on stdin")}
	}
	objs, err := readStream(in)
	if err != nil {
		return nil, err
	}
	res, err := r.run(objs)
	if err != nil {
		return nil, err
	}
	out := &Output{Warnings: res.warnings}
	for _, obj := range objs {
		if obj == res.anchor {
			for _, n := range res.added {
				text, err := encodeNew(n)
				if err != nil {
					return nil, &InputError{Err: err}
				}
				out.Add(text)
				out.Changed++
			}
		}
		switch {
		case res.removed[obj]:
			out.Changed++
		case obj.changed():
			text, err := encodePatched(obj.node.YNode(), obj.doc.Raw[obj.doc.ContentStart():])
			if err != nil {
				return nil, &InputError{Location: obj.loc(), Object: obj.ref(), Err: err}
			}
			out.Replace(obj.doc, text)
			out.Changed++
		default:
			out.Keep(obj.doc)
		}
	}
	return out, nil
}

// readStream cuts a stream into its documents and scans them.
func readStream(in [][]byte) ([]*object, error) {
	docs := stream.Split(in)
	if err := stream.Scan(docs); err != nil {
		var se *stream.Error
		if errors.As(err, &se) {
			return nil, &InputError{Location: Location{Index: se.Doc.Index, Line: se.Doc.Line, Source: se.Doc.Source()}, Err: err}
		}
		return nil, &InputError{Err: err}
	}
	return docObjects(docs), nil
}

// RenderNodes patches the items of a KRM ResourceList in place and returns
// the new list: generated objects are added before the CCM's workload, and
// objects earlier renders generated may be removed. Warnings come back
// beside it.
func (r *Renderer) RenderNodes(items []*yaml.RNode) ([]*yaml.RNode, []string, error) {
	objs := itemObjects(items)
	res, err := r.run(objs)
	if err != nil {
		return nil, nil, err
	}
	out := make([]*yaml.RNode, 0, len(items)+len(res.added))
	for _, obj := range objs {
		if obj == res.anchor {
			out = append(out, res.added...)
		}
		if !res.removed[obj] {
			out = append(out, obj.node)
		}
	}
	return out, res.warnings, nil
}

// result is what a run did: the objects it changed in place carry their new
// trees; these say what else changes.
type result struct {
	anchor   *object          // the workload: new objects go before it
	added    []*yaml.RNode    // new generated objects
	removed  map[*object]bool // generated objects no longer wanted
	warnings []string
}

// run identifies the targets, builds the plan and runs it; with Strict, a
// warning is an error.
func (r *Renderer) run(objs []*object) (*result, error) {
	res, err := r.runPlan(objs)
	if err == nil && r.opts.Strict && len(res.warnings) > 0 {
		return nil, &InputError{Err: strictError(res.warnings)}
	}
	return res, err
}

// strictError is the error Strict makes of warnings.
func strictError(warnings []string) error {
	return errorf("%s (%s: warnings are errors)", strings.Join(warnings, "; "), OptStrict)
}

func (r *Renderer) runPlan(objs []*object) (*result, error) {
	res := &result{warnings: slices.Clone(r.warnings)}
	applied, err := classify(objs)
	if err != nil {
		return nil, err
	}
	t, err := identify(applied, r.opts)
	if err != nil {
		return nil, err
	}
	if t == nil {
		res.warnings = append(res.warnings, noWorkloadWarning)
		return res, nil
	}
	warn := func(err error) { res.warnings = append(res.warnings, spell(err, r.spelling)) }
	for _, w := range t.warnings {
		warn(w)
	}
	steps, err := r.plan(t, warn)
	if err != nil {
		return nil, err
	}
	targets := append([]*object{t.workload}, t.generated...)
	if t.access.patch != nil {
		targets = append(targets, t.access.patch)
	}
	narrowed := make([]*yaml.RNode, 0, len(t.access.narrow))
	for _, o := range t.access.narrow {
		if !slices.Contains(targets, o) {
			targets = append(targets, o)
		}
		narrowed = append(narrowed, o.node)
	}
	for _, obj := range targets {
		if err := obj.expand(); err != nil {
			return nil, err
		}
		obj.before = cloneNode(obj.node.YNode())
	}
	generated := make([]*yaml.RNode, len(t.generated))
	for i, g := range t.generated {
		generated[i] = g.node
	}
	for _, s := range steps {
		var err error
		switch s.on {
		case onWorkload:
			_, err = s.filter.Filter([]*yaml.RNode{t.workload.node})
		case onRole:
			_, err = s.filter.Filter([]*yaml.RNode{t.access.patch.node})
		case onNarrowed:
			_, err = s.filter.Filter(narrowed)
		case onGenerated:
			generated, err = s.filter.Filter(generated)
		}
		if err != nil {
			return nil, locate(err, targets, s)
		}
	}
	res.anchor, res.removed = t.workload, map[*object]bool{}
	for _, g := range t.generated {
		if !slices.Contains(generated, g.node) {
			res.removed[g] = true
		}
	}
	for _, n := range generated {
		if !slices.ContainsFunc(t.generated, func(g *object) bool { return g.node == n }) {
			res.added = append(res.added, n)
		}
	}
	if err := collisions(applied, t.generated, res.added); err != nil {
		return nil, err
	}
	return res, nil
}

// locate turns a filter's error into an *InputError that says where its
// object is in the input.
func locate(err error, targets []*object, s step) error {
	var pe *patchError
	if errors.As(err, &pe) {
		for _, obj := range targets {
			if r := obj.ref(); r.Kind == pe.Object.Kind && r.Namespace == pe.Object.Namespace && r.Name == pe.Object.Name {
				return &InputError{Location: obj.loc(), Object: pe.Object, Err: pe.Err}
			}
		}
		return &InputError{Object: pe.Object, Err: pe.Err}
	}
	return &InputError{Err: errorf("%s: %w", s.name, err)}
}

// collisions fails when an object the renderer would add is already in the
// input and is not the renderer's own: two objects with one name, of which
// the cluster would keep one.
func collisions(objs, generated []*object, added []*yaml.RNode) error {
	for _, n := range added {
		for _, obj := range objs {
			if obj.kind != n.GetKind() || slices.Contains(generated, obj) || !obj.mentions(n.GetName()) {
				continue
			}
			if _, err := obj.parse(); err != nil {
				return err
			}
			ns := obj.id.namespace
			if obj.id.name == n.GetName() && (ns == n.GetNamespace() || ns == "" || n.GetNamespace() == "") {
				return obj.errorf("the renderer generates an object of this kind and name (%s) for the CCM, and this one is not "+
					"the renderer's; rename it, or remove it if it is a copy of the renderer's output without its %s annotation",
					generatedMark(n), GeneratedAnnotation)
			}
		}
	}
	return nil
}

// encodeNew writes a generated object as a document, with a "# Source:"
// line saying where it comes from, as Helm's documents have.
func encodeNew(n *yaml.RNode) ([]byte, error) {
	b, err := yaml.MarshalWithOptions(n.YNode(), &yaml.EncoderOptions{SeqIndent: yaml.WideSequenceStyle})
	if err != nil {
		return nil, err
	}
	return append([]byte("# Source: aws-ccm-renderer/"+generatedMark(n)+".yaml\n"), b...), nil
}

// encodePatched writes a patched document in the sequence indentation style,
// wide or compact, that keeps the most of its input's lines, so that a diff
// shows little beyond what the patches changed. (Templated documents often
// mix both styles; the encoder writes one.)
func encodePatched(n *yaml.Node, orig []byte) ([]byte, error) {
	have := map[string]bool{}
	for _, line := range bytes.Split(orig, []byte("\n")) {
		have[string(bytes.TrimRight(line, " \r"))] = true
	}
	var best []byte
	bestNew := -1
	for _, style := range []yaml.SequenceIndentStyle{yaml.SequenceIndentStyle(yaml.DeriveSeqIndentStyle(string(orig))), yaml.CompactSequenceStyle, yaml.WideSequenceStyle} {
		b, err := yaml.MarshalWithOptions(n, &yaml.EncoderOptions{SeqIndent: style})
		if err != nil {
			return nil, err
		}
		candidates := [][]byte{b}
		if style == yaml.CompactSequenceStyle {
			// What toYaml piped into nindent prints: the lists of
			// top-level keys indented, the lists inside them compact.
			candidates = append(candidates, indentTopLevelLists(b))
		}
		for _, c := range candidates {
			newLines := 0
			for _, line := range bytes.Split(c, []byte("\n")) {
				if !have[string(line)] {
					newLines++
				}
			}
			if bestNew < 0 || newLines < bestNew {
				best, bestNew = c, newLines
			}
		}
	}
	return best, nil
}

// indentTopLevelLists indents by two spaces the block of every top-level key
// whose value is a list written in compact style ("key:" then "- item").
func indentTopLevelLists(b []byte) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	out := make([]byte, 0, len(b)+len(b)/8)
	shift := false
	for i, line := range lines {
		switch {
		case len(line) > 0 && line[0] != ' ' && line[0] != '-' && line[0] != '#' && line[0] != '\n':
			shift = bytes.HasSuffix(bytes.TrimRight(line, "\n"), []byte(":")) && i+1 < len(lines) && bytes.HasPrefix(lines[i+1], []byte("- "))
		case shift && len(bytes.TrimSpace(line)) > 0:
			out = append(out, ' ', ' ')
		}
		out = append(out, line...)
	}
	return out
}
