package main

import (
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/benchdata"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
)

// TestUmbrellaSizes: every stream the benchmark renders fits the input
// bound the renderer reads (it refuses a larger one, and make bench failed
// on a 107 MB stream), and the big one is several times the small one.
func TestUmbrellaSizes(t *testing.T) {
	sizes := umbrellaSizes()
	if len(sizes) != 2 || sizes[1] < 4*sizes[0] {
		t.Fatalf("sizes %v: want a small stream and one at least 4 times larger", sizes)
	}
	for _, docs := range sizes {
		if n := len(benchdata.Umbrella(docs)); int64(n) > safefile.MaxRead {
			t.Errorf("%d documents are %d bytes, over the renderer's input bound of %d", docs, n, safefile.MaxRead)
		}
	}
}
