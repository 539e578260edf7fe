package renderer

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestRenderNodes: the parsed-object path (the KRM function's) means the
// same as the byte path, adds and removes the leader migration ConfigMap,
// and reports errors by object.
func TestRenderNodes(t *testing.T) {
	in := pinnedSample(t)
	for name, o := range allOptions() {
		t.Run(name, func(t *testing.T) {
			r, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			want, err := r.Render(in)
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(in), OmitReaderAnnotations: true}).Read()
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := r.RenderNodes(nodes)
			if err != nil {
				t.Fatal(err)
			}
			wantNodes, err := (&kio.ByteReader{Reader: bytes.NewReader(want.Bytes()), OmitReaderAnnotations: true}).Read()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(wantNodes) {
				t.Fatalf("%d objects, the byte path gives %d", len(got), len(wantNodes))
			}
			for i := range got {
				if !sameNode(got[i].YNode(), wantNodes[i].YNode()) {
					t.Errorf("object %d differs:\n%s\nvs\n%s", i+1, got[i].MustString(), wantNodes[i].MustString())
				}
			}
			// Again, with the output as input: nothing changes, and a
			// ConfigMap from an earlier migrate render goes in install mode.
			again, _, err := r.RenderNodes(got)
			if err != nil || len(again) != len(got) {
				t.Fatalf("second run: %d objects, %v", len(again), err)
			}
		})
	}
	migrate := DefaultOptions()
	migrate.Mode = ModeMigrate
	rm, _ := New(migrate)
	nodes, _ := (&kio.ByteReader{Reader: bytes.NewReader(in), OmitReaderAnnotations: true}).Read()
	mid, _, err := rm.RenderNodes(nodes)
	if err != nil {
		t.Fatal(err)
	}
	ri, _ := New(DefaultOptions())
	back, _, err := ri.RenderNodes(mid)
	if err != nil {
		t.Fatal(err)
	}
	if len(mid) != len(nodes)+3 || len(back) != len(nodes) { // ConfigMap, Role, RoleBinding
		t.Fatalf("objects: %d in, %d after migrate, %d after install", len(nodes), len(mid), len(back))
	}

	bad, _ := yaml.Parse("apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ccm\nspec:\n  template:\n    spec:\n      containers:\n      - name: ccm\n        image: registry.k8s.io/provider-aws/cloud-controller-manager:v1\n      tolerations: {a: b}\n")
	_, _, err = ri.RenderNodes([]*yaml.RNode{bad})
	if err == nil || !strings.Contains(err.Error(), "item 1: DaemonSet ccm: ") {
		t.Fatalf("error %v does not name the object", err)
	}

	// An item that is not an object (a list, a scalar) is nobody's target:
	// it passes through, as a document that is not one does on the byte
	// path, and does not stop the render.
	// (A list's items are not read as a mapping's keys and values: this
	// one is not a DaemonSet, and a list of one does not crash.)
	list, _ := yaml.Parse("- kind\n- DaemonSet\n")
	one, _ := yaml.Parse("- x\n")
	scalar, _ := yaml.Parse("plain\n")
	items, _ := (&kio.ByteReader{Reader: bytes.NewReader(in), OmitReaderAnnotations: true}).Read()
	got, _, err := ri.RenderNodes(append([]*yaml.RNode{list, one, scalar}, items...))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(items)+3 || got[0] != list || got[1] != one || got[2] != scalar || got[0].MustString() != "- kind\n- DaemonSet\n" {
		t.Fatalf("objects that are not objects: %d back, first %q", len(got), got[0].MustString())
	}
}
