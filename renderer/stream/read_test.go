package stream

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/benchdata"
)

func TestReadStream(t *testing.T) {
	big := "---\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  a: " + strings.Repeat("x", 300) + "\n"
	inputs := map[string]string{
		"umbrella":           string(benchdata.Umbrella(300)),
		"one large document": big + big + benchdata.CCM,
		"no final newline":   benchdata.CCM + "---\nkind: ConfigMap",
		"no separators":      strings.Repeat("# a comment line\n", 100),
		"separator at end":   benchdata.CCM + "---\n",
		"empty":              "",
	}
	for name, in := range inputs {
		for _, first := range []int{7, 64, 100} {
			chunks, err := readStream(iotest.HalfReader(strings.NewReader(in)), 0, first, 256)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := string(bytes.Join(chunks, nil)); got != in {
				t.Fatalf("%s (chunk %d): the chunks do not add up to the input", name, first)
			}
			for i, c := range chunks {
				if len(c) == 0 {
					t.Fatalf("%s: empty chunk %d", name, i)
				}
				if i > 0 && !isSeparator(firstLine(c)) {
					t.Fatalf("%s: chunk %d does not start at a document: %q", name, i, firstLine(c))
				}
			}
			if name == "umbrella" && len(chunks) < 10 {
				t.Fatalf("%d chunks: the test does not exercise the cutting", len(chunks))
			}
		}
	}
}
