package benchdata

import (
	"bytes"
	"errors"
	"io"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// TestUmbrellaIsStrictYAML: every document decodes into a map without
// duplicate keys, as an API server would read it.
func TestUmbrellaIsStrictYAML(t *testing.T) {
	dec := yaml.NewDecoder(bytes.NewReader(Umbrella(200)))
	for n := 0; ; n++ {
		var v map[string]any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("document %d: %v", n+1, err)
		}
	}
}
