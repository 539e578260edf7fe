package diff

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/benchdata"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
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
		"kind: A\nmetadata: {name: [}\n": "document 1 (line 1): input line 1: did not find expected node content",
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
	o.Distro = distros.RKE2
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

// numberTags replaces each distinct redaction tag by its number in order of
// appearance: the salt differs from run to run, what the tags tell (the
// same value, or another) does not.
func numberTags(s string) string {
	seen := map[string]string{}
	return regexp.MustCompile(`\(redacted [0-9a-f]{8}\)`).ReplaceAllStringFunc(s, func(tag string) string {
		if seen[tag] == "" {
			seen[tag] = fmt.Sprintf("(redacted %d)", len(seen)+1)
		}
		return seen[tag]
	})
}

// TestRedactAppliedSecrets: every Secret Helm 3 or kubectl would apply has
// its values redacted wherever it sits in the stream, as renderer.Applied
// reads it: an item of a ConfigMap's items (clients flatten items of any
// object), an item without a kind of a SecretList (it takes the list's),
// the values under data and stringData, a data or stringData that is no
// mapping, and the last-applied-configuration annotation kubectl writes
// with the Secret's values in it. The text and the JSON hold none of the
// values; the rows are the exact text.
func TestRedactAppliedSecrets(t *testing.T) {
	// A ConfigMap c whose annotation is redacted, and nothing else.
	const annotationRedacted = `kube-system, c, ConfigMap (v1) has changed:
@@ metadata.annotations.kubectl.kubernetes.io/last-applied-configuration @@
  kind: ConfigMap
  metadata:
    annotations:
-     kubectl.kubernetes.io/last-applied-configuration: (redacted 1)
+     kubectl.kubernetes.io/last-applied-configuration: (redacted 2)
    name: c

Summary: 1 changed, 0 added, 0 removed, 0 unchanged (a → b)
`
	const (
		pass1 = "aHVudGVyMQ==" // hunter1
		pass2 = "aHVudGVyMg==" // hunter2
	)
	for _, c := range []struct {
		name string
		from string // with PASS for the value: pass1 before, pass2 after
		want string
	}{{
		name: "a Secret as an item of a ConfigMap's items",
		from: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: carrier}\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: s}\n  data: {password: PASS}\n",
		want: `kube-system, s, Secret (v1) has changed:
@@ data.password @@
  apiVersion: v1
  data:
-   password: (redacted 1)
+   password: (redacted 2)
  kind: Secret
  metadata:
    name: s

Summary: 1 changed, 0 added, 0 removed, 0 unchanged (a → b)
`,
	}, {
		name: "an item without a kind of a SecretList",
		from: "apiVersion: v1\nkind: SecretList\nmetadata: {}\nitems:\n- metadata: {name: s, namespace: other}\n  stringData: {token: PASS}\n",
		want: `other, s, Secret (v1) has changed:
@@ stringData.token @@
    name: s
    namespace: other
  stringData:
-   token: (redacted 1)
+   token: (redacted 2)

Summary: 1 changed, 0 added, 0 removed, 0 unchanged (a → b)
`,
	}, {
		name: "kubectl's last-applied-configuration of a Secret",
		from: "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      {\"apiVersion\":\"v1\",\"data\":{\"password\":\"PASS\"},\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\"}}\ndata: {password: PASS}\n",
		want: `kube-system, s, Secret (v1) has changed:
@@ data.password @@
  apiVersion: v1
  data:
-   password: (redacted 1)
+   password: (redacted 2)
  kind: Secret
  metadata:
    annotations:
-     kubectl.kubernetes.io/last-applied-configuration: (redacted 3)
+     kubectl.kubernetes.io/last-applied-configuration: (redacted 4)
    name: s

Summary: 1 changed, 0 added, 0 removed, 0 unchanged (a → b)
`,
	}, {
		name: "a stringData that is no mapping",
		from: "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: PASS\n",
		want: `kube-system, s, Secret (v1) has changed:
@@ stringData @@
  kind: Secret
  metadata:
    name: s
- stringData: (redacted 1)
+ stringData: (redacted 2)

Summary: 1 changed, 0 added, 0 removed, 0 unchanged (a → b)
`,
	}, {
		name: "a ConfigMap whose last-applied-configuration holds a Secret",
		from: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      {\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\"},\"data\":{\"password\":\"PASS\"}}\n",
		want: annotationRedacted,
	}, {
		name: "a ConfigMap whose last-applied-configuration holds a kindless item of a SecretList",
		from: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{\"apiVersion\":\"v1\",\"kind\":\"SecretList\",\"items\":[{\"metadata\":{\"name\":\"s\"},\"data\":{\"password\":\"PASS\"}}]}'\n",
		want: annotationRedacted,
	}, {
		name: "a ConfigMap whose last-applied-configuration cannot be read",
		from: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{\"data\": PASS'\n",
		want: annotationRedacted,
	}, {
		name: "a Secret of another apiVersion, its kind in lower case",
		from: "apiVersion: example.com/v1\nkind: secret\nmetadata: {name: s}\ndata: {password: PASS}\n",
		want: `kube-system, s, secret (example.com) has changed:
@@ data.password @@
  apiVersion: example.com/v1
  data:
-   password: (redacted 1)
+   password: (redacted 2)
  kind: secret
  metadata:
    name: s

Summary: 1 changed, 0 added, 0 removed, 0 unchanged (a → b)
`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			from := strings.ReplaceAll(c.from, "PASS", pass1)
			to := strings.ReplaceAll(c.from, "PASS", pass2)
			changes, sum, err := CompareStreams("a", from, "b", to, "kube-system", 3)
			if err != nil {
				t.Fatal(err)
			}
			text := Text(changes, sum, "a → b", false)
			js, err := json.Marshal(changes)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{pass1, pass2, "hunter"} {
				if strings.Contains(text, secret) || strings.Contains(string(js), secret) {
					t.Errorf("the value %q is shown:\n%s\n%s", secret, text, js)
				}
			}
			if got := numberTags(text); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// TestCompareStreamsPlaces: documents matched byte for byte are not read
// again, and what is wrong with another names its place in the stream
// (document and line), CRLF streams too; a Secret after matched
// documents is still redacted.
func TestCompareStreamsPlaces(t *testing.T) {
	same := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: same}\ndata:\n  a: b\n  c: d\n"
	other := strings.Replace(same, "name: same", "name: other", 1)
	bad := "apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata: {name: x}\n"
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {password: PASS}\n"
	for _, eol := range []string{"\n", "\r\n"} {
		crlf := func(s string) string { return strings.ReplaceAll(s, "\n", eol) }
		from := crlf(same + "---\n" + other + "---\n" + strings.Replace(secret, "PASS", "aHVudGVyMQ==", 1))
		to := crlf(same + "---\n" + other + "---\n" + strings.Replace(secret, "PASS", "aHVudGVyMg==", 1))
		changes, sum, err := CompareStreams("a", from, "b", to, "ns", 3)
		if err != nil || sum != (Summary{Changed: 1, Unchanged: 2}) || len(changes) != 1 || strings.Contains(changes[0].Diff, "aHVudGVy") {
			t.Errorf("%q: %+v %+v %v", eol, changes, sum, err)
		}
		_, _, err = CompareStreams("a", from, "b", crlf(same+"---\n"+same+"---\n"+bad), "ns", 3)
		if want := "b: document 3 (line 14): duplicate key \"kind\" in the object's top level at line 17"; err == nil || !strings.HasPrefix(err.Error(), want) || !renderer.IsInputError(err) {
			t.Errorf("%q: error %v, want %q", eol, err, want)
		}
	}
}

// TestRedactionProperty: on random streams of Secrets in every place Helm
// 3 and kubectl take them from (a document, an item of a ConfigMap's or a
// List's items, a kindless item of a SecretList, data, stringData, a data
// that is no mapping, the last-applied-configuration annotation of the
// Secret and of a ConfigMap) no value of a Secret, base64 or decoded,
// shows in the diff's text or JSON, whichever way round and whether the
// object changed, came or went; a ConfigMap's value beside them does show.
func TestRedactionProperty(t *testing.T) {
	rnd := rand.New(rand.NewPCG(20, 4))
	value := func(secrets *[]string) string {
		b := make([]byte, 12)
		for i := range b {
			b[i] = byte(rnd.IntN(256))
		}
		plain := fmt.Sprintf("v%x", b)
		*secrets = append(*secrets, plain, base64Of(plain))
		return base64Of(plain)
	}
	secret := func(name string, secrets *[]string, withKind bool) string {
		head := "apiVersion: v1\nkind: Secret\n"
		if !withKind {
			head = ""
		}
		body := fmt.Sprintf("metadata: {name: %s}\n", name)
		switch rnd.IntN(4) {
		case 0:
			body += fmt.Sprintf("data: {password: %s, token: %s}\n", value(secrets), value(secrets))
		case 1:
			body += fmt.Sprintf("stringData: {password: %q}\n", value(secrets))
		case 2:
			body += fmt.Sprintf("data: %s\n", value(secrets))
		default:
			v := value(secrets)
			body = fmt.Sprintf("metadata:\n  name: %s\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      {\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":%q},\"data\":{\"password\":%q}}\ndata: {password: %s}\n", name, name, v, v)
		}
		return head + body
	}
	indent := func(s string) string {
		return "- " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
	}
	// place writes the i-th object of a stream in one of the places.
	place := func(i, where int, secrets *[]string, control string) string {
		name := fmt.Sprintf("s%d", i)
		switch where {
		case 0:
			return secret(name, secrets, true)
		case 1:
			return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: carrier%d}\nitems:\n", i) + indent(secret(name, secrets, true))
		case 2:
			return "apiVersion: v1\nkind: List\nitems:\n" + indent(secret(name, secrets, true)) +
				indent(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata: {shown: %s}\n", i, control))
		case 3:
			return "apiVersion: v1\nkind: SecretList\nitems:\n" + indent(secret(name, secrets, false))
		default:
			return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      {\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":%q},\"stringData\":{\"password\":%q}}\ndata: {shown: %s}\n", i, name, value(secrets), control)
		}
	}
	for run := range 100 {
		var secrets []string
		n := 1 + rnd.IntN(4)
		var from, to []string
		controlFrom, controlTo := fmt.Sprintf("before%d", run), fmt.Sprintf("after%d", run)
		for i := range n {
			where := rnd.IntN(5)
			// Most objects are on both sides; some come or go.
			switch rnd.IntN(5) {
			case 0:
				from = append(from, place(i, where, &secrets, controlFrom))
			case 1:
				to = append(to, place(i, where, &secrets, controlTo))
			default:
				from = append(from, place(i, where, &secrets, controlFrom))
				to = append(to, place(i, where, &secrets, controlTo))
			}
		}
		a, b := strings.Join(from, "---\n"), strings.Join(to, "---\n")
		for _, sides := range [][2]string{{a, b}, {b, a}} {
			changes, sum, err := CompareStreams("a", sides[0], "b", sides[1], "kube-system", rnd.IntN(5)-1)
			if err != nil {
				t.Fatalf("run %d: %v\n%s\n---\n%s", run, err, sides[0], sides[1])
			}
			js, err := json.Marshal(changes)
			if err != nil {
				t.Fatal(err)
			}
			out := Text(changes, sum, "a → b", false) + string(js)
			for _, v := range secrets {
				if strings.Contains(out, v) {
					t.Fatalf("run %d: %q is shown:\n%s\n---\n%s\n---\n%s", run, v, sides[0], sides[1], out)
				}
			}
			if strings.Contains(a+b, "shown: ") && !strings.Contains(out, "shown: ") {
				t.Fatalf("run %d: a ConfigMap's value is not shown:\n%s", run, out)
			}
		}
	}
}

func base64Of(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
