package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/benchdata"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

func mustParse(t testing.TB, stream string) []*Object {
	t.Helper()
	objs, err := Parse(stream, "kube-system")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestCompareObjectsNormalises: what only the spelling of YAML changes
// (indentation, quoting, double spaces, trailing spaces, flow or block
// style, key order, comments, separators) is no change.
func TestCompareObjectsNormalises(t *testing.T) {
	a := `---
# Source: c/templates/ds.yaml
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ccm
  labels:
    k8s-app:  ccm
    helm.sh/chart: "c-1"
spec:
  template:
    spec:
      securityContext:
        {}
      env:
        []
      tolerations: 
      - key: a
        effect: NoSchedule
---
---
# only a comment
`
	b := `apiVersion: "apps/v1"
kind: DaemonSet
metadata:
  labels: {helm.sh/chart: c-1, k8s-app: 'ccm'}
  name: ccm
  namespace: kube-system
spec:
  template:
    spec:
      env: []
      securityContext: {}
      tolerations:
        - effect: NoSchedule
          key: a
`
	changes, sum := Compare(mustParse(t, a), mustParse(t, b), 3)
	if len(changes) != 0 || sum != (Summary{Unchanged: 1}) {
		t.Errorf("spelling shows as a change: %+v %+v", changes, sum)
	}
	// A type is not spelling: "true" is not true.
	c := strings.Replace(b, "k8s-app: 'ccm'", "k8s-app: 'true'", 1)
	d := strings.Replace(b, "k8s-app: 'ccm'", "k8s-app: true", 1)
	changes, _ = Compare(mustParse(t, c), mustParse(t, d), 3)
	if len(changes) != 1 || !strings.Contains(changes[0].Diff, "-     k8s-app: \"true\"\n+     k8s-app: true\n") {
		t.Errorf("string to bool: %+v", changes)
	}
}

// TestCompareObjects: objects matched by group, kind, namespace and name;
// added, removed and changed objects, in the order of the new side, then
// the removed ones; the changed fields.
func TestCompareObjects(t *testing.T) {
	from := `apiVersion: v1
kind: ServiceAccount
metadata: {name: sa}
---
apiVersion: apps/v1beta2
kind: DaemonSet
metadata: {name: ccm, namespace: kube-system}
spec:
  template:
    spec:
      containers:
        - name: ccm
          args: [--v=2, --cloud-provider=aws]
        - name: sidecar
          image: s:1
      nodeSelector: {node-role.kubernetes.io/control-plane: ""}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: gone}
`
	to := `apiVersion: v1
kind: ConfigMap
metadata: {name: new, namespace: other}
data: {k: v}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ccm}
spec:
  template:
    spec:
      containers:
        - name: ccm
          args: [--v=2, --cloud-provider=aws, --use-service-account-credentials=true]
      hostNetwork: true
      nodeSelector: {node-role.kubernetes.io/control-plane: "true"}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: sa, namespace: kube-system}
`
	changes, sum := Compare(mustParse(t, from), mustParse(t, to), 3)
	if sum != (Summary{Added: 1, Removed: 1, Changed: 1, Unchanged: 1}) {
		t.Errorf("summary %+v", sum)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.title+" "+c.Change)
	}
	want := []string{
		"other, new, ConfigMap (v1) added",
		"kube-system, ccm, DaemonSet (apps) changed",
		"kube-system, gone, ConfigMap (v1) removed",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
	if changes[0].Diff != "+ apiVersion: v1\n+ data:\n+   k: v\n+ kind: ConfigMap\n+ metadata:\n+   name: new\n+   namespace: other\n" {
		t.Errorf("added object:\n%s", changes[0].Diff)
	}
	if !strings.HasPrefix(changes[2].Diff, "- apiVersion: v1\n") || changes[2].Object["kind"] != "ConfigMap" {
		t.Errorf("removed object: %+v", changes[2])
	}
	var fields []string
	for _, f := range changes[1].Fields {
		b, _ := json.Marshal(f)
		fields = append(fields, string(b))
	}
	wantFields := []string{
		`{"path":"apiVersion","op":"replace","before":"apps/v1beta2","after":"apps/v1"}`,
		`{"path":"spec.template.spec.containers[name=ccm].args","op":"replace","before":["--v=2","--cloud-provider=aws"],"after":["--v=2","--cloud-provider=aws","--use-service-account-credentials=true"]}`,
		`{"path":"spec.template.spec.containers[name=sidecar]","op":"remove","before":{"image":"s:1","name":"sidecar"}}`,
		`{"path":"spec.template.spec.hostNetwork","op":"add","after":true}`,
		`{"path":"spec.template.spec.nodeSelector[\"node-role.kubernetes.io/control-plane\"]","op":"replace","before":"","after":"true"}`,
	}
	if !slices.Equal(fields, wantFields) {
		t.Errorf("fields:\n%s\nwant:\n%s", strings.Join(fields, "\n"), strings.Join(wantFields, "\n"))
	}
	for _, h := range []string{
		"@@ apiVersion @@\n- apiVersion: apps/v1beta2\n+ apiVersion: apps/v1\n",
		"@@ spec.template.spec.containers[name=ccm].args[] @@\n",
		"+             - --use-service-account-credentials=true\n",
		"-         - image: s:1\n-           name: sidecar\n+       hostNetwork: true\n",
		"-         node-role.kubernetes.io/control-plane: \"\"\n+         node-role.kubernetes.io/control-plane: \"true\"\n",
	} {
		if !strings.Contains(changes[1].Diff, h) {
			t.Errorf("changed object's diff lacks %q:\n%s", h, changes[1].Diff)
		}
	}
}

// TestParseManifestsErrors: what cannot be compared is an error naming the
// document.
func TestParseManifestsErrors(t *testing.T) {
	for in, want := range map[string]string{
		"kind: A\nmetadata: {name: a}\n---\nkind: A\nmetadata: {name: a}\n": "kube-system, a, A () is in the manifests twice",
		"- a\n- b\n":                     "document 1 is not an object",
		"kind: A\n---\n":                 "document 1: an object without kind or metadata.name",
		"kind: A\nmetadata: {name: [}\n": "document 1: yaml:",
		"kind: A\nmetadata: {name: a}\n---\nkind: A\nkind: B\n":                         "document 2",
		"kind: A\nmetadata: {name: a}\n---\nkind: A\nmetadata:\n  name: b\n  name: c\n": "document 2",
	} {
		_, err := Parse(in, "kube-system")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
	// A List's items are objects of their own.
	objs, err := Parse("apiVersion: v1\nkind: List\nitems:\n- {kind: A, metadata: {name: a}}\n- {kind: B, metadata: {name: b}}\n", "ns")
	if err != nil || len(objs) != 2 || objs[1].Title() != "ns, b, B ()" {
		t.Errorf("list: %v %v", objs, err)
	}
}

// TestRedactSecrets: the values under data and stringData of a Secret never
// reach the diff or its JSON; the same value has the same tag, another
// value another; a ConfigMap's data is shown.
func TestRedactSecrets(t *testing.T) {
	secret := func(pass, token string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  password: " + pass + "\nstringData:\n  token: " + token +
			"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  password: visible-" + token + "\n"
	}
	changes, _ := Compare(mustParse(t, secret("c2VjcmV0", "hunter2")), mustParse(t, secret("c2VjcmV0", "hunter3")), -1)
	out, _ := json.Marshal(changes)
	text := Text(changes, Summary{Changed: 2}, "x", false)
	for _, s := range []string{"c2VjcmV0", "token: hunter", `"hunter2"`, `"hunter3"`} {
		if strings.Contains(text, s) || strings.Contains(string(out), s) {
			t.Errorf("secret value %q shown:\n%s\n%s", s, text, out)
		}
	}
	tag := regexp.MustCompile(`password: \(redacted ([0-9a-f]{8})\)`).FindAllStringSubmatch(text, -1)
	if len(tag) != 1 || !strings.Contains(text, "  password: (redacted ") {
		t.Errorf("an unchanged secret value is a context line with its tag:\n%s", text)
	}
	if !regexp.MustCompile(`\n-   token: \(redacted [0-9a-f]{8}\)\n\+   token: \(redacted [0-9a-f]{8}\)\n`).MatchString(text) {
		t.Errorf("a changed secret value does not show as changed:\n%s", text)
	}
	if !strings.Contains(text, "visible-hunter3") {
		t.Errorf("a ConfigMap's data is redacted:\n%s", text)
	}
}

// TestNonStringKeys: a mapping key that YAML reads as a number or a bool
// (data: {1234: ...}) is a string to the API server, as it is here: a
// Secret's values under such keys are redacted too, and -o json encodes
// the object.
func TestNonStringKeys(t *testing.T) {
	stream := "apiVersion: v1\nkind: Secret\nmetadata: {name: s, labels: {1: one}}\ndata:\n  1234: c2VjcmV0LXZhbHVl\n  key: c2VjcmV0LXZhbHVl\nstringData:\n  true: hunter2\n"
	changes, _ := Compare(nil, mustParse(t, stream), 3)
	out, err := json.Marshal(changes)
	if err != nil {
		t.Fatalf("-o json: %v", err)
	}
	text := Text(changes, Summary{Added: 1}, "x", false)
	for _, s := range []string{"c2VjcmV0LXZhbHVl", "hunter2"} {
		if strings.Contains(text, s) || strings.Contains(string(out), s) {
			t.Errorf("secret value %q shown:\n%s\n%s", s, text, out)
		}
	}
	if !strings.Contains(text, `"1234": (redacted `) || !strings.Contains(string(out), `"1":"one"`) {
		t.Errorf("keys not kept as strings:\n%s\n%s", text, out)
	}
}

// TestDiffText: helm-diff's headers, colour only when asked, the summary
// last; nothing at all without changes.
func TestDiffText(t *testing.T) {
	from := mustParse(t, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ccm}\nspec: {a: 1}\n")
	to := mustParse(t, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ccm}\nspec: {a: 2}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}\n")
	changes, sum := Compare(from, to, 3)
	got := Text(changes, sum, "a → b", false)
	want := `kube-system, ccm, DaemonSet (apps) has changed:
@@ spec.a @@
  metadata:
    name: ccm
  spec:
-   a: 1
+   a: 2

kube-system, sa, ServiceAccount (v1) has been added:
+ apiVersion: v1
+ kind: ServiceAccount
+ metadata:
+   name: sa

Summary: 1 changed, 1 added, 0 removed, 0 unchanged (a → b)
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	coloured := Text(changes, sum, "a → b", true)
	for _, w := range []string{"\x1b[1;33mkube-system, ccm, DaemonSet (apps) has changed:\x1b[0m\n", "\x1b[36m@@ spec.a @@\x1b[0m\n",
		"\x1b[31m-   a: 1\x1b[0m\n", "\x1b[32m+   a: 2\x1b[0m\n", "\n  spec:\n", "\x1b[1mSummary: "} {
		if !strings.Contains(coloured, w) {
			t.Errorf("coloured output lacks %q:\n%q", w, coloured)
		}
	}
	sum.Drifted = 2
	if s := summaryLine(sum, "x"); s != "Summary: 1 changed, 1 added, 0 removed, 0 unchanged; 2 differ in the cluster from the release (x)" {
		t.Errorf("summary with drift: %q", s)
	}
	if Text(nil, Summary{Unchanged: 3}, "x", true) != "" {
		t.Error("no changes print something")
	}
}

// TestObjectHunks: context lines, hunks merged when their context meets,
// -1 for the whole object.
func TestObjectHunks(t *testing.T) {
	var a, b []string
	for i := range 20 {
		a = append(a, fmt.Sprintf("k%02d: %d", i, i))
	}
	b = slices.Clone(a)
	b[2], b[15] = "k02: x", "k15: y"
	got := objectHunks(strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n", 1)
	want := "@@ k02 @@\n  k01: 1\n- k02: 2\n+ k02: x\n  k03: 3\n@@ k15 @@\n  k14: 14\n- k15: 15\n+ k15: y\n  k16: 16\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := objectHunks(strings.Join(a, "\n"), strings.Join(b, "\n"), 6); strings.Count(got, "@@ ") != 1 {
		t.Errorf("context 6 does not merge the hunks:\n%s", got)
	}
	if got := objectHunks(strings.Join(a, "\n"), strings.Join(b, "\n"), -1); strings.Count(got, "\n") != 23 || !strings.HasPrefix(got, "@@ k02 @@\n  k00: 0\n") {
		t.Errorf("whole object:\n%s", got)
	}
}

// TestLinePaths: where a line stands, from the node tree of encodeYAML's
// text.
func TestLinePaths(t *testing.T) {
	text, err := encodeYAML(map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"a.io/b": "x"}},
		"spec": map[string]any{"containers": []any{
			map[string]any{"name": "ccm", "args": []any{"--v=2"}, "env": []any{map[string]any{"name": "E", "value": "1"}}},
			map[string]any{"image": "i"},
		}, "data": "line1\nline2\n"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := splitLines(text)
	find := func(s string) int {
		for i, l := range lines {
			if strings.TrimSpace(l) == s {
				return i
			}
		}
		t.Fatalf("no line %q in\n%s", s, text)
		return -1
	}
	for line, want := range map[string]string{
		"a.io/b: x":    "metadata.annotations.a.io/b",
		"- --v=2":      "spec.containers[name=ccm].args[]",
		"value: \"1\"": "spec.containers[name=ccm].env[name=E].value",
		"- image: i":   "spec.containers[].image",
		"name: ccm":    "spec.containers[name=ccm].name",
		"line2":        "spec.data",
		"metadata:":    "metadata",
	} {
		if got := (&linePaths{text: text}).at(find(line)); got != want {
			t.Errorf("%q: %q, want %q\n%s", line, got, want, text)
		}
	}
	for text, want := range map[string]string{"a: [\n": "(top)", "- - x\n  - y: 1\n": "[][].y", "k:\n- name: n\n  v: 1\n": "k[name=n].v"} {
		lines := splitLines(text)
		if got := (&linePaths{text: text}).at(len(lines) - 1); got != want {
			t.Errorf("%q, last line: %q, want %q", text, got, want)
		}
	}
}

// TestDiffLinesShortest checks the edit script on random line sequences: it
// turns a into b, keeps only common lines, and has as few edits as the
// longest common subsequence allows.
func TestDiffLinesShortest(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	seq := func() []string {
		s := make([]string, rnd.IntN(30))
		for i := range s {
			s[i] = string(rune('a' + rnd.IntN(4)))
		}
		return s
	}
	for range 3000 {
		a, b := seq(), seq()
		ops := diffLines(a, b)
		var gotA, gotB []string
		edits := 0
		for i, op := range ops {
			if op.kind != '+' {
				if op.a != len(gotA) {
					t.Fatalf("%q → %q: op %d at a=%d, want %d", a, b, i, op.a, len(gotA))
				}
				gotA = append(gotA, op.line)
			}
			if op.kind != '-' {
				if op.b != len(gotB) {
					t.Fatalf("%q → %q: op %d at b=%d, want %d", a, b, i, op.b, len(gotB))
				}
				gotB = append(gotB, op.line)
			}
			if op.kind != ' ' {
				edits++
			}
			if op.kind == '-' && i > 0 && ops[i-1].kind == '+' {
				t.Fatalf("%q → %q: an insertion before a deletion", a, b)
			}
		}
		if !slices.Equal(gotA, a) || !slices.Equal(gotB, b) {
			t.Fatalf("%q → %q: the script gives %q → %q", a, b, gotA, gotB)
		}
		if want := len(a) + len(b) - 2*lcsLen(a, b); edits != want {
			t.Fatalf("%q → %q: %d edits, want %d", a, b, edits, want)
		}
	}
}

func lcsLen(a, b []string) int {
	l := make([][]int, len(a)+1)
	for i := range l {
		l[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	return l[0][0]
}

// TestDiffLinesLarge: one object of 200,000 lines with a few changes gives
// three hunks.
func TestDiffLinesLarge(t *testing.T) {
	a := make([]string, 200000)
	for i := range a {
		a[i] = fmt.Sprintf("line %d", i)
	}
	b := slices.Clone(a)
	b[1000], b[150000] = "changed", "changed too"
	b = slices.Insert(b, 90000, "new")
	got := objectHunks(strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n", 3)
	if strings.Count(got, "@@ ") != 3 || !strings.Contains(got, "- line 1000\n+ changed\n") || !strings.Contains(got, "\n+ new\n") {
		t.Errorf("diff:\n%s", got)
	}
}

// umbrellaSides is an umbrella chart's output of n documents with the CCM
// inside, and what the renderer makes of it.
func umbrellaSides(b testing.TB, n int) (string, string) {
	in := benchdata.Umbrella(n)
	o := renderer.DefaultOptions()
	o.Distro = renderer.DistroRKE2
	r, err := renderer.New(o)
	if err != nil {
		b.Fatal(err)
	}
	out, err := r.Render(in)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := out.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	return string(in), buf.String()
}

// TestDiffUmbrella: in an umbrella chart's output only the CCM's objects
// differ; documents the same byte for byte are matched without decoding,
// the others by meaning.
func TestDiffUmbrella(t *testing.T) {
	from, to := umbrellaSides(t, 1000)
	changes, sum, err := CompareStreams("a", from, "b", to, "kube-system", 3)
	if err != nil {
		t.Fatal(err)
	}
	if sum != (Summary{Changed: 2, Unchanged: 998}) {
		t.Errorf("summary %+v", sum)
	}
	for _, c := range changes {
		if c.Name != "aws-cloud-controller-manager" && c.Name != "system:cloud-controller-manager" {
			t.Errorf("changed: %s", c.title)
		}
	}
	// The same through the YAML library alone.
	all, allSum := Compare(mustParse(t, from), mustParse(t, to), 3)
	if allSum != sum || len(all) != len(changes) || all[0].Diff != changes[0].Diff {
		t.Errorf("decoding everything: %+v, %d changes", allSum, len(all))
	}
}

// TestCompareStreams: byte-identical documents are unchanged, moved ones
// too; respelled ones are matched by meaning; a List and documents of
// comments only are no shortcut; an unparseable side is an error naming it.
func TestCompareStreams(t *testing.T) {
	a := "# Source: x\napiVersion: v1\nkind: A\nmetadata: {name: a}\n---\nkind: B\nmetadata: {name: b}\n---\n# nothing\n---\nkind: List\nitems: [{kind: C, metadata: {name: c}}]\n"
	b := "kind: B\nmetadata: {name: b}\n---\n# Source: y\napiVersion: v1\nkind: A\nmetadata: {name: a}\n---\nkind: C\nmetadata:\n  name: c\n  labels: {x: y}\n"
	changes, sum, err := CompareStreams("a", a, "b", b, "ns", 3)
	if err != nil || sum != (Summary{Changed: 1, Unchanged: 2}) || len(changes) != 1 || changes[0].Kind != "C" {
		t.Errorf("%+v %+v %v", changes, sum, err)
	}
	_, _, err = CompareStreams("the release's manifest", "kind: A\nmetadata: {name: [}\n", "b", b, "ns", 3)
	if err == nil || !strings.HasPrefix(err.Error(), "the release's manifest: ") || !renderer.IsInputError(err) {
		t.Errorf("unparseable: %v", err)
	}
}

// BenchmarkDiff: the whole diff (match documents, decode and compare the
// others, the text) of an umbrella chart's output against the renderer's,
// and, for comparison, decoding every document.
func BenchmarkDiff(b *testing.B) {
	for _, n := range []int{10, 1000} {
		from, to := umbrellaSides(b, n)
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(from) + len(to)))
			for b.Loop() {
				changes, sum, err := CompareStreams("a", from, "b", to, "kube-system", 3)
				if err != nil || Text(changes, sum, "x", false) == "" {
					b.Fatal("no diff", err)
				}
			}
		})
		b.Run(fmt.Sprintf("docs=%d,decode-all", n), func(b *testing.B) {
			b.SetBytes(int64(len(from) + len(to)))
			for b.Loop() {
				changes, sum := Compare(mustParse(b, from), mustParse(b, to), 3)
				if Text(changes, sum, "x", false) == "" {
					b.Fatal("no diff")
				}
			}
		})
	}
	b.Run("lines=200000", func(b *testing.B) {
		a := make([]string, 200000)
		for i := range a {
			a[i] = fmt.Sprintf("line %d", i)
		}
		c := slices.Clone(a)
		c[1000], c[150000] = "changed", "changed too"
		from, to := strings.Join(a, "\n"), strings.Join(c, "\n")
		for b.Loop() {
			objectHunks(from, to, 3)
		}
	})
}

// TestFieldChangesLists: lists of the same length item by item, others
// whole, named items by name.
func TestFieldChangesLists(t *testing.T) {
	a := map[string]any{"rules": []any{map[string]any{"verbs": []any{"create"}}, map[string]any{"verbs": []any{"get"}}}, "args": []any{"a"}}
	b := map[string]any{"rules": []any{map[string]any{"verbs": []any{"create", "get"}}, map[string]any{"verbs": []any{"get"}}}, "args": []any{"a", "b"}}
	var got []string
	for _, f := range fieldChanges("", a, b, nil) {
		got = append(got, f.Path+" "+f.Op)
	}
	if want := []string{"args replace", "rules[0].verbs replace"}; !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}
