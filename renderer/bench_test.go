package renderer

import (
	"bytes"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/benchdata"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

func benchRender(b *testing.B, in []byte) {
	o := DefaultOptions()
	o.Distro = distros.RKE2
	r, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	render := func() {
		out, err := r.Render(in)
		if err != nil {
			b.Fatal(err)
		}
		if out.Changed == 0 {
			b.Fatal("nothing patched")
		}
	}
	peak := peakHeap(render)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		render()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peak)/float64(len(in)), "peak-heap/input")
}

// peakHeap runs f once and returns the most heap its objects took while it
// ran, beyond what was live before, sampled every 100 µs (runtime/metrics
// reads without stopping the world).
func peakHeap(f func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	<-sampled
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// BenchmarkRenderChart: one CCM release, as Helm runs the post-renderer.
func BenchmarkRenderChart(b *testing.B) { benchRender(b, []byte(benchdata.CCM)) }

// BenchmarkRenderUmbrella: a 10,000-document stream with the CCM inside.
func BenchmarkRenderUmbrella(b *testing.B) { benchRender(b, benchdata.Umbrella(10000)) }

// BenchmarkRenderManyRoles: 10,000 ClusterRoles bound to the CCM's account
// (3.6 MB), the RBAC analysis's worst case: it must stay linear.
func BenchmarkRenderManyRoles(b *testing.B) { benchRender(b, benchdata.ManyRoles(10000)) }

// BenchmarkRenderAliasBindings: 100 bindings of the CCM's account (653 KiB)
// whose aliases expand each to 200,000 nodes, under the YAML library's
// limit: peak memory must stay a small multiple of the input.
func BenchmarkRenderAliasBindings(b *testing.B) { benchRender(b, benchdata.AliasBindings(100)) }

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
