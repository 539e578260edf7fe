// Package renderer patches the manifests of the aws-cloud-controller-manager
// Helm chart so the CCM runs on the control-plane nodes of RKE1, RKE2, K3s
// and kubeadm clusters, with the flags, RBAC and leader migration the move
// off the in-tree AWS cloud provider needs.
//
// The input is a stream of YAML documents, as `helm template` prints it. The
// renderer finds the CCM's workload, its service account and the roles bound
// to it by meaning, not by name; parses only those; applies one kyaml filter
// per patch; and writes every other document back byte for byte.
package renderer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Renderer applies one set of options to manifest streams.
type Renderer struct {
	opts    Options
	profile Profile
	args    Args
}

// New validates the options and returns a Renderer; bad options give a
// *UsageError.
func New(o Options) (*Renderer, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ops, err := o.argMerge()
	if err != nil {
		return nil, err
	}
	r := &Renderer{opts: o}
	r.profile, _ = ProfileFor(o.Distro)
	for _, f := range forcedArgs {
		r.args.Set = append(r.args.Set, Flag{Name: f.name, Value: f.value})
	}
	switch {
	case o.Mode == ModeInstall:
		r.args.Remove = append(r.args.Remove, flagEnableLeaderMigration, flagLeaderMigrationConfig)
	case o.LeaderMigrationConfig == LeaderMigrationRendered:
		r.args.Set = append(r.args.Set, Flag{Name: flagEnableLeaderMigration, Value: "true"},
			Flag{Name: flagLeaderMigrationConfig, Value: LeaderMigrationConfigPath})
	default:
		r.args.Set = append(r.args.Set, Flag{Name: flagEnableLeaderMigration, Value: "true"})
		r.args.Remove = append(r.args.Remove, flagLeaderMigrationConfig)
	}
	for _, f := range ops.set {
		r.args.Set = append(r.args.Set, Flag{Name: f.name, Value: f.value})
	}
	r.args.Remove = append(r.args.Remove, ops.remove...)
	return r, nil
}

// Options returns the renderer's options.
func (r *Renderer) Options() Options { return r.opts }

// Profile returns the profile of the renderer's distribution.
func (r *Renderer) Profile() Profile { return r.profile }

// MergeArgs returns a CCM args list as the renderer writes it.
func (r *Renderer) MergeArgs(list []string) []string { return r.args.Merge(list) }

// RendersLeaderMigrationConfig reports whether the output carries the
// leader migration ConfigMap, volume and mount.
func (r *Renderer) RendersLeaderMigrationConfig() bool { return r.renderMigrationConfig() }

// renderMigrationConfig reports whether the output carries the rendered
// LeaderMigrationConfiguration.
func (r *Renderer) renderMigrationConfig() bool {
	return r.opts.Mode == ModeMigrate && r.opts.LeaderMigrationConfig == LeaderMigrationRendered
}

// workloadFilters are the patches applied to each CCM workload, in order.
func (r *Renderer) workloadFilters() []kio.Filter {
	return []kio.Filter{
		Placement{Profile: r.profile},
		Tolerations{Tolerations: r.profile.Tolerations},
		HostNetwork{Enabled: *r.opts.HostNetwork},
		Args{Set: r.args.Set, Remove: r.args.Remove},
		LeaderMigration{Mount: r.renderMigrationConfig()},
	}
}

// Output is a rendered stream: slices of the input and new documents, in
// order. It is only ever returned whole.
type Output struct {
	parts    [][]byte
	size     int
	Warnings []string // things the user should know; the stream is still valid
	Changed  int      // how many documents the patches changed, added or removed
}

// Len returns the size of the rendered stream in bytes.
func (o *Output) Len() int { return o.size }

// WriteTo writes the stream to w.
func (o *Output) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, p := range o.parts {
		m, err := w.Write(p)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Bytes returns the stream as one slice.
func (o *Output) Bytes() []byte {
	b := make([]byte, 0, o.size)
	for _, p := range o.parts {
		b = append(b, p...)
	}
	return b
}

func (o *Output) add(p []byte) {
	if len(p) == 0 {
		return
	}
	// Input documents that follow each other in the input stay one slice.
	if n := len(o.parts); n > 0 {
		if last := o.parts[n-1]; cap(last) > len(last) && &last[:len(last)+1][len(last)] == &p[0] {
			o.parts[n-1] = last[:len(last)+len(p)]
			o.size += len(p)
			return
		}
	}
	o.parts = append(o.parts, p)
	o.size += len(p)
}

// target is a document the renderer parsed because it may need a patch.
type target struct {
	doc    *document
	node   *yaml.RNode
	before *yaml.Node // a copy taken before the patches
}

// Render patches a manifest stream. It returns the whole output or an error,
// never a part: an *InputError for manifests it cannot accept.
func (r *Renderer) Render(in []byte) (*Output, error) {
	return r.RenderChunks([][]byte{in})
}

// RenderChunks patches a manifest stream read by ReadStream.
func (r *Renderer) RenderChunks(in [][]byte) (*Output, error) {
	if !slices.ContainsFunc(in, func(c []byte) bool { return len(bytes.TrimSpace(c)) > 0 }) {
		return nil, &InputError{Err: errors.New("empty input: expected the manifests `helm template` prints, on stdin")}
	}
	docs := splitChunks(in)
	if err := checkAll(docs); err != nil {
		return nil, err
	}
	out := &Output{}
	p, err := r.patch(docs)
	if err != nil {
		return nil, err
	}
	if p == nil {
		for _, c := range in {
			out.add(c)
		}
		out.Warnings = append(out.Warnings, noWorkloadWarning)
		return out, nil
	}
	out.Warnings = p.warnings
	for _, t := range append(p.workloads, p.roles...) {
		if sameNode(t.before, t.node.YNode()) {
			continue
		}
		s, err := t.encode()
		if err != nil {
			return nil, &InputError{Doc: t.doc.describe(), Err: err}
		}
		t.doc.out = append(append(slices.Clip(t.doc.raw[:t.doc.prefix()]), separatorIfNeeded(t.doc)...), s...)
	}
	for _, d := range docs {
		if cm, ok := p.insert[d]; ok {
			out.add(cm)
			out.Changed++
		}
		switch {
		case d.removed:
			out.Changed++
		case d.out != nil:
			out.add(d.out)
			out.Changed++
		default:
			out.add(d.raw)
		}
	}
	return out, nil
}

const noWorkloadWarning = "no AWS cloud-controller-manager DaemonSet or Deployment in the input: passed through unchanged"

// patched is what patch found and did.
type patched struct {
	workloads, roles []*target
	insert           map[*document][]byte // ConfigMaps to add before a workload's document
	warnings         []string
}

// patch finds the targets among the documents and applies the filters to
// them. It returns nil, nil when there is no CCM workload and the options
// allow that.
func (r *Renderer) patch(docs []*document) (*patched, error) {
	workloads, err := r.findWorkloads(docs)
	if err != nil {
		return nil, err
	}
	if len(workloads) == 0 {
		if r.opts.AllowMissingWorkload {
			return nil, nil
		}
		objects := 0
		for _, d := range docs {
			if d.kind != "" {
				objects++
			}
		}
		return nil, &InputError{Err: fmt.Errorf("no AWS cloud-controller-manager DaemonSet or Deployment among the %d objects of the input; "+
			"pass --allow-missing-workload to let such input through unchanged", objects)}
	}
	roles, warnings, err := r.findRoles(docs, workloads)
	if err != nil {
		return nil, err
	}
	if err := applyFilters(workloads, r.workloadFilters()); err != nil {
		return nil, err
	}
	if err := applyFilters(roles, []kio.Filter{RBAC{Permissions: CCMServiceAccountPermissions}}); err != nil {
		return nil, err
	}
	insert, err := r.migrationConfigMaps(docs, workloads)
	if err != nil {
		return nil, err
	}
	return &patched{workloads: workloads, roles: roles, insert: insert, warnings: warnings}, nil
}

// RenderNodes patches parsed objects in place, as the KRM function gets
// them, and returns the new list: objects may be added (the leader
// migration ConfigMap, before its workload) or removed. Warnings come back
// beside it.
func (r *Renderer) RenderNodes(nodes []*yaml.RNode) ([]*yaml.RNode, []string, error) {
	docs := make([]*document, len(nodes))
	for i, n := range nodes {
		docs[i] = &document{index: i + 1, node: n, kind: n.GetKind()}
	}
	p, err := r.patch(docs)
	if err != nil {
		return nil, nil, err
	}
	if p == nil {
		return nodes, []string{noWorkloadWarning}, nil
	}
	out := make([]*yaml.RNode, 0, len(nodes)+len(p.insert))
	for _, d := range docs {
		if text, ok := p.insert[d]; ok {
			for _, part := range bytes.Split(text, []byte("---\n")) {
				if len(bytes.TrimSpace(part)) == 0 {
					continue
				}
				if bytes.HasPrefix(part, []byte("#")) { // the "# Source:" line: no comments in objects
					part = part[bytes.IndexByte(part, '\n')+1:]
				}
				n, err := yaml.Parse(string(part))
				if err != nil {
					return nil, nil, err
				}
				out = append(out, n)
			}
		}
		switch {
		case d.removed:
		case d.replace != nil:
			n, err := yaml.Parse(string(d.replace))
			if err != nil {
				return nil, nil, err
			}
			out = append(out, n)
		default:
			out = append(out, d.node)
		}
	}
	return out, p.warnings, nil
}

// separatorIfNeeded returns a line break when a patched document's prefix
// ends without one (a separator line at the very end of a document).
func separatorIfNeeded(d *document) []byte {
	p := d.prefix()
	if p > 0 && d.raw[p-1] != '\n' {
		return []byte("\n")
	}
	return nil
}

func applyFilters(targets []*target, filters []kio.Filter) error {
	if len(targets) == 0 {
		return nil
	}
	nodes := make([]*yaml.RNode, len(targets))
	for i, t := range targets {
		nodes[i] = t.node
	}
	for _, f := range filters {
		if _, err := f.Filter(nodes); err != nil {
			// Filters name the object; find its document for the message.
			return &InputError{Doc: describeTargets(targets, err), Err: err}
		}
	}
	return nil
}

func describeTargets(targets []*target, err error) string {
	msg := err.Error()
	for _, t := range targets {
		if name := objectName(t.node); len(msg) >= len(name) && msg[:len(name)] == name {
			return t.doc.describe()
		}
	}
	return ""
}

// encode writes a patched document in the sequence indentation style, wide
// or compact, that keeps the most of its input's lines, so that a diff shows
// little beyond what the patches changed. (Templated documents often mix
// both styles; the encoder writes one.)
func (t *target) encode() ([]byte, error) {
	orig := t.doc.raw[t.doc.prefix():]
	have := map[string]bool{}
	for _, line := range bytes.Split(orig, []byte("\n")) {
		have[string(bytes.TrimRight(line, " \r"))] = true
	}
	var best []byte
	bestNew := -1
	for _, style := range []yaml.SequenceIndentStyle{yaml.SequenceIndentStyle(yaml.DeriveSeqIndentStyle(string(orig))), yaml.CompactSequenceStyle, yaml.WideSequenceStyle} {
		b, err := yaml.MarshalWithOptions(t.node.YNode(), &yaml.EncoderOptions{SeqIndent: style})
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

// parse builds the tree of a document the renderer may patch.
func (r *Renderer) parse(d *document) (*target, error) {
	if d.node != nil {
		if d.node.YNode().Kind != yaml.MappingNode {
			return nil, &InputError{Doc: d.describe(), Err: fmt.Errorf("a %s is a %s, not an object", d.kind, kindName(d.node.YNode()))}
		}
		return &target{doc: d, node: d.node, before: cloneNode(d.node.YNode())}, nil
	}
	if d.multi {
		return nil, &InputError{Doc: d.describe(), Err: errors.New(`a "..." line ends a document inside it; separate documents with "---"`)}
	}
	rn, err := yaml.Parse(string(d.raw[d.prefix():]))
	if err != nil {
		return nil, &InputError{Doc: d.describe(), Err: relocate(err, d.line+bytes.Count(d.raw[:d.prefix()], []byte("\n")))}
	}
	if !d.simple {
		if err := rn.DeAnchor(); err != nil {
			return nil, &InputError{Doc: d.describe(), Err: err}
		}
	}
	if rn.YNode().Kind != yaml.MappingNode {
		return nil, &InputError{Doc: d.describe(), Err: fmt.Errorf("a %s is a %s, not an object", d.kind, kindName(rn.YNode()))}
	}
	return &target{doc: d, node: rn, before: cloneNode(rn.YNode())}, nil
}
