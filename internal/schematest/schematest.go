// Package schematest compiles the JSON schemas of docs/ for the tests that
// validate output against them. It is apart from testtools so that the
// e2e module, which uses testtools, does not need the schema library.
package schematest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// Compile compiles one of the JSON schemas of docs/ (e.g.
// "diff.schema.json"), with its formats asserted.
func Compile(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join(testtools.Root(), "docs", name))
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
