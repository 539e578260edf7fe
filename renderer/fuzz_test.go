package renderer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goyaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/benchdata"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// fuzzOptions are the option sets the fuzz target renders with; the fuzzer
// picks one by index.
var fuzzOptions = func() []Options {
	var sets []Options
	for _, d := range distros.All {
		for _, m := range ModesOf(mustProfile(d)) {
			o := DefaultOptions()
			o.Distro, o.Mode, o.CCMVersion = d, m, "v1.26.1"
			sets = append(sets, o)
		}
	}
	o := DefaultOptions()
	o.SetArgs, o.RemoveArgs = []string{"v=4", "cluster-name=prod"}, []string{"allocate-node-cidrs"}
	f := false
	o.HostNetwork = &f
	narrowed := DefaultOptions()
	narrowed.Distro, narrowed.CCMVersion, narrowed.TokenScope = distros.RKE2, "v1.26.1", TokenScopeControllers
	return append(sets, o, narrowed)
}()

// fuzzSeeds are the seed corpus: every chart version's output for every
// distribution and mode (the Helm golden files), the sample chart's inputs,
// the benchmark's umbrella stream, and each of those mutated the ways GitOps
// pipelines mutate streams.
func fuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, pattern := range []string{"../testdata/golden/helm3/*/*.yaml", "testdata/render/*/input.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	}
	if len(seeds) < 70 {
		t.Fatalf("only %d seeds: are the golden files there?", len(seeds))
	}
	seeds = append(seeds, benchdata.Umbrella(40))
	for _, h := range hiddenBindings(t) { // the ways a sharing binding was hidden
		seeds = append(seeds, []byte(hiddenBase(t)+"---\n"+h.doc))
	}
	var mutated [][]byte
	for _, s := range seeds {
		for _, m := range mutations {
			mutated = append(mutated, m(s))
		}
	}
	return append(seeds, mutated...)
}

// mutations change a stream the ways other tools do, or the ways that
// tripped the renderer before.
var mutations = []func([]byte) []byte{
	func(b []byte) []byte { // documents in reverse order, the first without a separator
		docs := stream.Split([][]byte{b})
		var out []byte
		for i := len(docs) - 1; i >= 0; i-- {
			body := docs[i].Body()
			if len(out) > 0 {
				out = append(out, "---\n"...)
			}
			out = append(out, body...)
			if len(body) > 0 && body[len(body)-1] != '\n' {
				out = append(out, '\n')
			}
		}
		return out
	},
	func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) },
	func(b []byte) []byte { return bytes.TrimRight(bytes.TrimPrefix(b, []byte("---\n")), "\n") },
	func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("---\n"), []byte("---\n# moved comment\n\n")) },
	func(b []byte) []byte { // a duplicate key in the CCM's pod spec
		return bytes.Replace(b, []byte("      serviceAccountName:"), []byte("      hostNetwork: false\n      hostNetwork: true\n      serviceAccountName:"), 1)
	},
	func(b []byte) []byte { // the CCM's ClusterRole bound to everyone too
		return append(b, []byte("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: everyone\nroleRef:\n  kind: ClusterRole\n  name: system:cloud-controller-manager\nsubjects:\n- kind: Group\n  name: system:authenticated\n")...)
	},
	func(b []byte) []byte { return append([]byte(caDoc+"---\n"), b...) }, // cluster-autoscaler first
	func(b []byte) []byte { return append(append(b, b...), "\n"...) },    // the stream twice
}

// FuzzRender renders mutated streams with every option set and checks, for
// every input the renderer accepts, what must hold whatever the input: the
// output splits into the input's documents plus or minus only generated
// ones; every document it does not patch comes out byte for byte, in order;
// rendering the output again gives the same bytes. On an error there is no
// output. `make test` runs the seeds; `make fuzz` runs it for longer.
func FuzzRender(f *testing.F) {
	for i, s := range fuzzSeeds(f) {
		f.Add(s, uint8(i%len(fuzzOptions)))
	}
	f.Fuzz(func(t *testing.T, in []byte, pick uint8) {
		o := fuzzOptions[int(pick)%len(fuzzOptions)]
		r, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.Render(in)
		if err != nil {
			checkRefusal(t, out != nil, err)
			return
		}
		got := out.Bytes()
		checkOracle(t, in, got)
		checkNotWidened(t, in, got)
		again, err := r.Render(got)
		if err != nil {
			t.Fatalf("rendering the output again: %v", err)
		}
		if !bytes.Equal(again.Bytes(), got) {
			t.Fatalf("rendering the output again changed it:\n%s\nvs\n%s", again.Bytes(), got)
		}
	})
}

// checkRefusal checks how a render refused its input: no output, an input
// error, on one line.
func checkRefusal(t *testing.T, output bool, err error) {
	t.Helper()
	if output {
		t.Fatal("output with an error")
	}
	if !IsInputError(err) {
		t.Fatalf("%T is not an input error: %v", err, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("the error spans lines: %q", err)
	}
}

// fuzzDoc is a document of the oracle's view.
type fuzzDoc struct {
	body      []byte
	kind      string
	generated bool
}

func fuzzDocs(t *testing.T, b []byte) []fuzzDoc {
	t.Helper()
	var out []fuzzDoc
	for _, d := range stream.Split([][]byte{b}) {
		fd := fuzzDoc{body: d.Body()}
		// A tree, not a map: keys need not be strings, nor unique.
		var n goyaml.Node
		if err := goyaml.NewDecoder(bytes.NewReader(d.Body())).Decode(&n); err == nil && len(n.Content) == 1 {
			root := n.Content[0]
			fd.kind = scalar(root, "kind")
			if md := mapGet(root, "metadata"); md != nil {
				if a := mapGet(md, "annotations"); a != nil {
					fd.generated = mapGet(a, GeneratedAnnotation) != nil
				}
			}
		}
		out = append(out, fd)
	}
	return out
}

// checkOracle checks an accepted render: documents the renderer does not
// patch come out byte for byte and in order; the others are the CCM's
// workload, one role, or the renderer's own generated objects; each output
// document parses on its own (none merged into a neighbour).
func checkOracle(t *testing.T, in, out []byte) {
	t.Helper()
	ins, outs := fuzzDocs(t, in), fuzzDocs(t, out)
	for _, d := range stream.Split([][]byte{out}) {
		var v goyaml.Node // a tree: documents passed through may have duplicate keys
		dec := goyaml.NewDecoder(bytes.NewReader(d.Body()))
		if err := dec.Decode(&v); err != nil && err.Error() != "EOF" {
			t.Fatalf("output %s does not parse: %v", d, err)
		}
	}
	patchable := map[string]bool{"DaemonSet": true, "Deployment": true, "Role": true, "ClusterRole": true}
	// Align the streams on their longest common subsequence of identical
	// documents: what is left on either side is what the render changed.
	lcs := make([][]int, len(ins)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(outs)+1)
	}
	for i := len(ins) - 1; i >= 0; i-- {
		for j := len(outs) - 1; j >= 0; j-- {
			if bytes.Equal(ins[i].body, outs[j].body) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	changed := map[string]int{}
	for i, j := 0, 0; i < len(ins) || j < len(outs); {
		switch {
		case i < len(ins) && j < len(outs) && bytes.Equal(ins[i].body, outs[j].body):
			i, j = i+1, j+1
		case j < len(outs) && (i == len(ins) || lcs[i][j+1] >= lcs[i+1][j]):
			// New in the output: a patched target or a generated object.
			if o := outs[j]; !o.generated && !patchable[o.kind] {
				t.Fatalf("a new %s document in the output:\n%s", o.kind, o.body)
			}
			j++
		default:
			// Patched or removed: only a target may be.
			d := ins[i]
			if !d.generated && !patchable[d.kind] {
				t.Fatalf("a %s document changed or went:\n%s\noutput:\n%s", d.kind, d.body, out)
			}
			if !d.generated {
				changed[d.kind]++
			}
			i++
		}
	}
	if changed["DaemonSet"]+changed["Deployment"] > 1 || changed["Role"]+changed["ClusterRole"] > 1 {
		t.Fatalf("more than the CCM's workload and one role changed: %v", changed)
	}
}
