package testtools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
)

// Schema compiles one of the JSON schemas of docs/ (e.g.
// "diff.schema.json"), with its formats asserted.
func Schema(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join(Root(), "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return schema
}

// CCMOf splits a rendered stream and returns its CCM workload and the CCM
// container's args.
func CCMOf(t testing.TB, stream []byte) (manifest.Object, []string) {
	t.Helper()
	objs, err := manifest.Split(stream)
	if err != nil {
		t.Fatal(err)
	}
	ccm, err := manifest.CCM(objs)
	if err != nil {
		t.Fatal(err)
	}
	return ccm, manifest.Args(ccm)
}
