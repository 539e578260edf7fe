// Package conformancetest runs the conformance table (internal/conformance)
// through a front end and holds what it gives to the renderer's own output,
// warnings and refusals.
package conformancetest

import (
	"encoding/json"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/termtest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Result is what a front end gave for a case.
type Result struct {
	Stdout, Stderr []byte
	Err            error
	// Objects are the manifests, when the front end's output needs more than
	// splitting Stdout (Fleet's marks removed, say); nil: Stdout's.
	Objects []manifest.Object
	// Shown is what the user reads besides the manifests when the front end
	// renders: the terminal's text, Helm's notes. Stderr if empty.
	Shown string
}

var refs sync.Map // case name -> *reference

type reference struct {
	once     sync.Once
	objs     []manifest.Object
	warnings []string
	err      error
	chart    []byte
}

// ChartOutput is the upstream chart's own output for a case (real Helm 3):
// the input every post-renderer front end gets.
func ChartOutput(t *testing.T, c conformance.Case) []byte {
	t.Helper()
	return referenceOf(t, c).chart
}

func referenceOf(t *testing.T, c conformance.Case) *reference {
	return referenceWith(t, c, c.Options())
}

// referenceWith is the renderer's output for a case with options o.
func referenceWith(t *testing.T, c conformance.Case, o renderer.Options) *reference {
	t.Helper()
	opts, err := json.Marshal(o) // by value: HostNetwork is a pointer
	if err != nil {
		t.Fatal(err)
	}
	v, _ := refs.LoadOrStore(c.Name+"|"+c.CCMTag+"|"+string(opts), &reference{})
	r := v.(*reference)
	r.once.Do(func() {
		r.chart = testtools.HelmTemplate(t, testtools.UpstreamChart(t, c.ChartVersion), nil, conformance.ChartValues(c)...)
		rr, err := renderer.New(o)
		if err != nil {
			r.err = err
			return
		}
		out, err := rr.Render(r.chart)
		if err != nil {
			r.err = err
			return
		}
		r.warnings = out.Warnings
		r.objs, r.err = manifest.Split(out.Bytes())
	})
	if r.chart == nil {
		t.Fatalf("case %q: helm template of chart %s failed", c.Name, c.ChartVersion)
	}
	return r
}

// Run runs every case through one front end, run giving its result, and
// holds the result to the renderer's: the renderer library itself first
// (the table's verdicts are the renderer's), then the front end.
func Run(t *testing.T, fe conformance.FrontEnd, run func(t *testing.T, c conformance.Case) Result) {
	t.Helper()
	nodes := testtools.Fixtures(t)
	for _, c := range conformance.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			checkReference(t, c, referenceOf(t, c))
			want, words := c.Want, c.Verdict.Reason
			var l conformance.Limit
			limited := false
			if fe.Limit != nil {
				l, limited = fe.Limit(c)
			}
			if limited {
				want, words = l.Want, l.Words
			}
			if want == conformance.Inexpressible {
				t.Logf("%s cannot be asked for this: %s", fe.Name, l.Why)
				return
			}
			rc, o := c, c.Options()
			if fe.Pins != nil && c.CCMTag == "" {
				rc.CCMTag = fe.Pins(c)
			}
			if fe.Guard {
				o.GuardImage = images.PinnedGuard
			}
			if limited && l.Distro != "" {
				o.Distro = l.Distro
			}
			if want != conformance.Refused {
				o.Strict = false // a front end that cannot be strict, say
			}
			ref := referenceWith(t, rc, o)
			if want != conformance.Refused && ref.err != nil {
				t.Fatalf("the renderer refuses the CCM %s with %+v: %v", rc.Tag(), o, ref.err)
			}
			r := run(t, c)
			shown := r.Shown
			if shown == "" {
				shown = string(r.Stderr)
			}
			switch want {
			case conformance.Refused:
				said := string(r.Stderr)
				if fe.TerminalOnly != "" {
					said = r.Shown
				}
				if r.Err == nil || len(strings.TrimSpace(string(r.Stdout))) != 0 || !strings.Contains(said, words) {
					t.Fatalf("%s: exit %v, %d bytes on stdout, stderr:\n%s\nwant it refused with %q", fe.Name, r.Err, len(r.Stdout), r.Stderr, words)
				}
				return
			case conformance.Warned:
				if fe.Quiet == "" && !strings.Contains(shown, words) {
					t.Errorf("%s shows:\n%s\nwant the warning %q", fe.Name, shown, words)
				}
			case conformance.Rendered:
				for _, v := range renderer.Verdicts {
					if strings.Contains(shown, v.Reason) {
						t.Errorf("%s shows %q, want no warning:\n%s", fe.Name, v.Reason, shown)
					}
				}
			}
			if r.Err != nil {
				t.Fatalf("%s: %v\n%s", fe.Name, r.Err, r.Stderr)
			}
			objs := r.Objects
			if objs == nil {
				var err error
				if objs, err = manifest.Split(r.Stdout); err != nil {
					t.Fatalf("%s's output: %v", fe.Name, err)
				}
			}
			wantObjs := ref.objs
			if fe.Unrecorded != "" {
				wantObjs = withoutRecord(wantObjs)
			}
			testtools.SameAsRenderer(t, objs, wantObjs, nodes)
		})
	}
}

// checkReference holds the renderer library to the case's verdict.
func checkReference(t *testing.T, c conformance.Case, ref *reference) {
	t.Helper()
	var said string
	switch {
	case c.Want == conformance.Refused && ref.err == nil, c.Want != conformance.Refused && ref.err != nil:
		t.Fatalf("the renderer: %v, want %s", ref.err, c.Want)
	case ref.err != nil:
		said = ref.err.Error()
	default:
		said = strings.Join(ref.warnings, "\n")
	}
	if c.Want == conformance.Rendered && said != "" {
		t.Fatalf("the renderer warns %q, want no warning", said)
	}
	if c.Want != conformance.Rendered && !strings.Contains(said, c.Verdict.Reason) {
		t.Fatalf("the renderer says %q, want the words %q", said, c.Verdict.Reason)
	}
}

// Command runs a front end's command line: plainly for its stdout, stderr
// and exit, and again on a terminal for what a person running it would
// read (Shown): Helm 3 shows a post-renderer's stderr only when it fails,
// Helm 4 a plugin's never, and the renderer then writes its messages to the
// terminal.
func Command(t *testing.T, env []string, name string, args ...string) Result {
	t.Helper()
	var r Result
	r.Stdout, r.Stderr, r.Err = testtools.Run(t, env, name, args...)
	_, r.Shown = termtest.RunOnTerminal(t, env, name, args...)
	return r
}

// withoutRecord is objs without the options the renderer records on the
// workload.
func withoutRecord(objs []manifest.Object) []manifest.Object {
	out := make([]manifest.Object, len(objs))
	for i, o := range objs {
		out[i] = o
		if a, ok := manifest.Get(o.Doc, "metadata", "annotations").(map[string]any); ok && a[renderer.OptionsAnnotation] != nil {
			doc := maps.Clone(o.Doc)
			meta := maps.Clone(doc["metadata"].(map[string]any))
			annotations := maps.Clone(a)
			delete(annotations, renderer.OptionsAnnotation)
			if len(annotations) == 0 {
				delete(meta, "annotations")
			} else {
				meta["annotations"] = annotations
			}
			doc["metadata"] = meta
			out[i].Doc = doc
		}
	}
	return out
}
