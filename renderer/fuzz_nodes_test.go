package renderer

import (
	"bytes"
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readItems parses a stream the way a KRM orchestrator hands it over: one
// parsed object per document, without the reader's annotations.
func readItems(b []byte) ([]*yaml.RNode, error) {
	return (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
}

// FuzzRenderNodes fuzzes the parsed-object path, the KRM function's, with
// the seeds and option sets of FuzzRender, and checks it against the byte
// path on the same stream:
//   - an error is an input error on one line;
//   - the items the renderer does not patch come back as the same objects,
//     unchanged, in their order; the others are the CCM's workload, one
//     role, or objects the renderer generates;
//   - rendering the result again changes nothing;
//   - when both paths accept the stream, they give the same objects.
func FuzzRenderNodes(f *testing.F) {
	for i, s := range fuzzSeeds(f) {
		f.Add(s, uint8(i%len(fuzzOptions)))
	}
	f.Fuzz(func(t *testing.T, in []byte, pick uint8) {
		items, err := readItems(in)
		if err != nil || len(items) == 0 {
			return // not a stream an orchestrator would pass on
		}
		o := fuzzOptions[int(pick)%len(fuzzOptions)]
		r, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		before := make([]string, len(items))
		for i, n := range items {
			before[i] = n.MustString()
		}
		work := copyItems(items)
		got, _, err := r.RenderNodes(work)
		if err != nil {
			checkRefusal(t, got != nil, err)
			return
		}
		checkItems(t, work, before, got)

		again, _, err := r.RenderNodes(copyItems(got))
		if err != nil {
			t.Fatalf("rendering the result again: %v", err)
		}
		sameItems(t, "rendering the result again", again, got)

		// The byte path on the same stream: when it accepts too, the same
		// objects, both as the function's writer writes them (an anchored
		// null key is written as "", a null annotations map not at all). The byte layer may
		// refuse what a parser accepts, a stream that is not well formed;
		// the converse is checked by the byte path's own fuzz target.
		out, err := r.Render(in)
		if err != nil || slices.ContainsFunc(got, func(n *yaml.RNode) bool { return n.YNode().Kind != yaml.MappingNode }) {
			return // (a ResourceList of anything but objects, fn refuses)
		}
		want, err := readItems(out.Bytes())
		if err != nil {
			t.Fatalf("the byte path's output does not parse: %v", err)
		}
		sameItems(t, "against the byte path", written(t, got), written(t, want))
	})
}

// written returns objects as kyaml's writer writes them (the function's
// writer: it drops an empty or null annotations map, say), read back.
func written(t *testing.T, items []*yaml.RNode) []*yaml.RNode {
	t.Helper()
	var text bytes.Buffer
	if err := (&kio.ByteWriter{Writer: &text}).Write(items); err != nil {
		t.Fatalf("writing the objects: %v", err)
	}
	back, err := readItems(text.Bytes())
	if err != nil {
		t.Fatalf("the objects as written do not parse: %v\n%s", err, text.Bytes())
	}
	return back
}

// sameItems fails the test unless got and want are the same objects, in
// the same order.
func sameItems(t *testing.T, what string, got, want []*yaml.RNode) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d objects, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !sameNode(got[i].YNode(), want[i].YNode()) {
			t.Fatalf("%s: object %d differs:\n%s\nvs\n%s", what, i+1, got[i].MustString(), want[i].MustString())
		}
	}
}

func copyItems(items []*yaml.RNode) []*yaml.RNode {
	c := make([]*yaml.RNode, len(items))
	for i, n := range items {
		c[i] = n.Copy()
	}
	return c
}

// checkItems checks an accepted RenderNodes: every item it neither patched
// nor removed comes back as the same object with the same text, in order;
// what changed, went or came is a workload, a role, or a generated object,
// and at most one workload and one role changed.
func checkItems(t *testing.T, in []*yaml.RNode, before []string, out []*yaml.RNode) {
	t.Helper()
	patchable := map[string]bool{"DaemonSet": true, "Deployment": true, "Role": true, "ClusterRole": true}
	generated := func(n *yaml.RNode) bool {
		_, ok := n.GetAnnotations()[GeneratedAnnotation]
		return ok
	}
	pos := make(map[*yaml.RNode]int, len(in))
	for i, n := range in {
		pos[n] = i
	}
	last := -1
	kept := map[int]bool{}
	changed := map[string]int{}
	for _, n := range out {
		i, ok := pos[n]
		if !ok {
			if !generated(n) && !patchable[n.GetKind()] {
				t.Fatalf("a new %s object in the result:\n%s", n.GetKind(), n.MustString())
			}
			continue
		}
		if i <= last {
			t.Fatalf("item %d comes back out of order", i+1)
		}
		last, kept[i] = i, true
		if n.MustString() != before[i] && !generated(n) {
			if !patchable[n.GetKind()] {
				t.Fatalf("a %s item changed:\n%s\nto\n%s", n.GetKind(), before[i], n.MustString())
			}
			changed[n.GetKind()]++
		}
	}
	for i, n := range in {
		if !kept[i] && !generated(n) {
			t.Fatalf("item %d (%s %s) went, and the renderer did not generate it:\n%s", i+1, n.GetKind(), n.GetName(), before[i])
		}
	}
	if changed["DaemonSet"]+changed["Deployment"] > 1 || changed["Role"]+changed["ClusterRole"] > 1 {
		t.Fatalf("more than the CCM's workload and one role changed: %v", changed)
	}
}
