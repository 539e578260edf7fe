package renderer

import (
	"bytes"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/benchdata"
)

func benchRender(b *testing.B, in []byte) {
	o := DefaultOptions()
	o.Distro = DistroRKE2
	r, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		out, err := r.Render(in)
		if err != nil {
			b.Fatal(err)
		}
		if out.Changed == 0 {
			b.Fatal("nothing patched")
		}
	}
}

// BenchmarkRenderChart: one CCM release, as Helm runs the post-renderer.
func BenchmarkRenderChart(b *testing.B) { benchRender(b, []byte(benchdata.CCM)) }

// BenchmarkRenderUmbrella: a 10,000-document stream with the CCM inside.
func BenchmarkRenderUmbrella(b *testing.B) { benchRender(b, benchdata.Umbrella(10000)) }

// BenchmarkKyamlRoundTrip is the peer: read every document into kyaml nodes
// and write them back, what a filter over the whole stream costs at least.
func BenchmarkKyamlRoundTrip(b *testing.B) {
	in := benchdata.Umbrella(10000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var out bytes.Buffer
		err := kio.Pipeline{
			Inputs:  []kio.Reader{&kio.ByteReader{Reader: bytes.NewReader(in), OmitReaderAnnotations: true}},
			Outputs: []kio.Writer{kio.ByteWriter{Writer: &out}},
		}.Execute()
		if err != nil {
			b.Fatal(err)
		}
	}
}
