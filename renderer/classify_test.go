package renderer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// appliedView is an object as Kubernetes' clients apply it, reduced to what
// the renderer's decisions rest on.
type appliedView struct {
	Kind, Namespace, Name string
	RoleRef               string   // kind/name, bindings only
	Subjects              []string // kind/namespace/name, bindings only
	rules                 string   // roles only, as JSON; not compared by FuzzClassify
}

func (v appliedView) String() string {
	s := v.Kind + " " + v.Namespace + "/" + v.Name
	if v.RoleRef != "" || v.Subjects != nil {
		s += " roleRef=" + v.RoleRef + " subjects=" + strings.Join(v.Subjects, ",")
	}
	return s
}

// decodeApplied reads a stream as Helm 3 and kubectl do before they apply
// it: k8s.io/cli-runtime's resource builder, unstructured objects, lists
// flattened (Helm's kube.Client.Build, without its server-side mapping). It
// returns what it read, and the error it met, if any (kubectl applies what
// it read before one; Helm nothing).
func decodeApplied(in []byte) ([]appliedView, error) {
	infos, err := resource.NewLocalBuilder().Unstructured().ContinueOnError().
		Stream(bytes.NewReader(in), "input").Flatten().Do().Infos()
	out := make([]appliedView, 0, len(infos))
	for _, info := range infos {
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			return out, fmt.Errorf("%T is not an unstructured object", info.Object)
		}
		out = append(out, viewOf(u.Object))
	}
	return out, err
}

// viewOf reads an object's view from its JSON fields: strings only, as the
// API server reads them.
func viewOf(obj map[string]any) appliedView {
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	meta, _ := obj["metadata"].(map[string]any)
	v := appliedView{Kind: str(obj, "kind"), Namespace: str(meta, "namespace"), Name: str(meta, "name")}
	if v.Kind == "Role" || v.Kind == "ClusterRole" {
		b, _ := json.Marshal(obj["rules"])
		v.rules = string(b)
	}
	if v.Kind != "RoleBinding" && v.Kind != "ClusterRoleBinding" {
		return v
	}
	if ref, ok := obj["roleRef"].(map[string]any); ok {
		v.RoleRef = str(ref, "kind") + "/" + str(ref, "name")
	}
	subjects, _ := obj["subjects"].([]any)
	v.Subjects = []string{}
	for _, s := range subjects {
		m, _ := s.(map[string]any)
		v.Subjects = append(v.Subjects, str(m, "kind")+"/"+str(m, "namespace")+"/"+str(m, "name"))
	}
	return v
}

// rendererApplied is the renderer's own reading of the same stream: the
// objects classify finds, each read as the renderer reads it when it must
// (its identity; roleRef and subjects of a binding, as the RBAC decision
// reads them).
func rendererApplied(in []byte) ([]appliedView, error) {
	applied, err := appliedObjects(in)
	if err != nil {
		return nil, err
	}
	out := make([]appliedView, 0, len(applied))
	for _, o := range applied {
		simple := o.doc != nil && o.in == nil && o.doc.Simple
		if _, err := o.parse(); err != nil {
			return nil, err
		}
		if simple && o.kind != o.id.kind {
			return nil, fmt.Errorf("%s: the fast path read the kind %q, a parse %q", o.loc(), o.kind, o.id.kind)
		}
		v := appliedView{Kind: o.kind, Namespace: o.id.namespace, Name: o.id.name}
		if o.kind == "RoleBinding" || o.kind == "ClusterRoleBinding" {
			b, err := readBinding(o)
			if err != nil {
				return nil, err
			}
			// As the API server reads it: a ServiceAccount subject without a
			// namespace is not defaulted in the object.
			v.RoleRef, v.Subjects = b.role.kind+"/"+b.role.name, []string{}
			for i, s := range b.subjects {
				ns := s.namespace
				if raw := deref(mapGet(o.node.YNode(), "subjects")).Content[i]; mapGet(deref(raw), "namespace") == nil {
					ns = ""
				}
				v.Subjects = append(v.Subjects, s.kind+"/"+ns+"/"+s.name)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

const (
	// noTokenRole is the CCM's ClusterRole without the service account
	// permissions: the renderer adds create serviceaccounts/token to it
	// when it is the CCM's alone.
	noTokenRole = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: ccm\nrules:\n- apiGroups: [\"\"]\n  resources: [nodes]\n  verbs: [get]\n"
	// toAll binds the CCM's ClusterRole to every authenticated user.
	toAll = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: everyone\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: ccm\nsubjects:\n- kind: Group\n  name: system:authenticated\n"
)

// indent indents every line of a document by n spaces.
func indent(d string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSuffix(d, "\n"), "\n", "\n"+pad) + "\n"
}

// hiddenBindings are the ways a binding of the CCM's role to
// system:authenticated was hidden from the renderer while Helm and kubectl
// applied it: each file of testdata/hidden but ccm.yaml is the toAll binding
// written another way. They are the table rows of TestOneReading, seeds of
// FuzzClassify, and the charts e2e/onereading_test.go installs with Helm.
func hiddenBindings(t testing.TB) []struct{ name, doc string } {
	files, err := filepath.Glob("testdata/hidden/[0-9][0-9]-*.yaml")
	if err != nil || len(files) < 15 {
		t.Fatalf("testdata/hidden: %d rows, %v", len(files), err)
	}
	var out []struct{ name, doc string }
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, struct{ name, doc string }{strings.TrimSuffix(filepath.Base(f), ".yaml"), string(b)})
	}
	return out
}

// hiddenBase is the rest of each row's stream: the CCM's service account,
// its ClusterRole without the service account permissions, its binding and
// its DaemonSet (testdata/hidden/ccm.yaml).
func hiddenBase(t testing.TB) string {
	b, err := os.ReadFile("testdata/hidden/ccm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOneReading (class 10): a binding that shares the CCM's role is seen
// however it is written, or the input is refused; the role is never
// widened. Each row first shows that Kubernetes' clients apply the binding.
func TestOneReading(t *testing.T) {
	shared := appliedView{Kind: "ClusterRoleBinding", Name: "everyone", RoleRef: "ClusterRole/ccm", Subjects: []string{"Group//system:authenticated"}}
	dedicated := accountRBACName(serviceAccount{namespace: "kube-system", name: "ccm"})
	notWidened := func(t *testing.T, out []byte, objs []*yaml.RNode, warnings []string) {
		t.Helper()
		if !bytes.Contains(out, []byte(noTokenRole)) {
			t.Errorf("the shared ClusterRole changed:\n%s", out)
		}
		if find(objs, "Role", dedicated) == nil {
			t.Errorf("no dedicated role: %q", ids(objs))
		}
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "also bound to Group system:authenticated") }) {
			t.Errorf("warnings %q, want one naming the sharing binding", warnings)
		}
	}
	want := map[string][]string{ // the refusals; the other rows are read and not widened
		"01-the-roles-name-as-a-binary-scalar":    {"document 6 (line 54)", "the tag !!binary in roleRef.name at line 62", "write the value plainly"},
		"02-the-kind-as-a-binary-scalar":          {"document 6 (line 54)", "kind has the tag !!binary at line 56"},
		"05-a-second-kind-key":                    {"document 6 (line 54)", `duplicate key "kind" in the object's top level at line 57`},
		"06-the-kind-from-a-merge-key":            {"document 6 (line 54)", "a merge key (<<) in the object's top level at line 56"},
		"07-the-roleRef-from-a-merge-key":         {"document 6 (line 54)", "a merge key (<<) in roleRef at line 60"},
		"08-a-second-kind-after-a-LS-line-break":  {"document 6 (line 54)", "input line 56", "LS, U+2028"},
		"09-a-second-kind-after-a-NEL-line-break": {"document 6 (line 54)", "input line 56", "NEL, U+0085"},
		"10-a-second-kind-after-a-lone-CR":        {"document 6 (line 54)", "input line 56", "a CR without a LF"},
	}
	var cases []safetyCase
	for _, h := range hiddenBindings(t) {
		in := hiddenBase(t) + "---\n" + h.doc
		applied, err := decodeApplied([]byte(in))
		if err != nil || !slices.ContainsFunc(applied, func(v appliedView) bool { return v.String() == shared.String() }) {
			t.Fatalf("%s: Kubernetes' clients do not apply the sharing binding: %v, %q", h.name, err, applied)
		}
		c := safetyCase{name: h.name, in: in, check: notWidened, wantErr: want[h.name]}
		if strings.Contains(h.name, "generated-annotation") {
			c.check = func(t *testing.T, out []byte, objs []*yaml.RNode, warnings []string) {
				notWidened(t, out, objs, warnings)
				if !slices.ContainsFunc(warnings, func(w string) bool {
					return strings.Contains(w, "is not an object the renderer generates: taken as yours")
				}) {
					t.Errorf("warnings %q", warnings)
				}
			}
		}
		cases = append(cases, c)
	}
	runSafetyCases(t, cases)
}

// classifySeeds are FuzzClassify's seeds: the bypasses, the shapes of
// lists and documents that clients read specially, and FuzzRender's seeds.
func classifySeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, h := range hiddenBindings(t) {
		seeds = append(seeds, []byte(hiddenBase(t)+"---\n"+h.doc))
	}
	for _, s := range []string{
		docs(list("List", toAll, saDoc), "apiVersion: v1\nkind: DaemonSet\nmetadata: {name: a}\nitems: ~\n"),
		docs("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - {apiVersion: v1, kind: Secret, metadata: {name: nested}}\n"),
		docs("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}\n", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 2001-12-14, namespace: \"0x1F\"}\n"),
		docs("~\n", "", "# only a comment\n", "[a, b]\n", "just text\n"),
		"--- # a comment\n" + toAll + "--- \t\n" + saDoc + "---\r\n" + bindDoc,
		docs("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n"),
		docs("apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: a}\n---\nmetadata: *m\n"),
		docs("a: &a [x, x]\nb: &b [*a, *a]\nkind: ConfigMap\nmetadata: {name: aliased}\n"),
		"{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"json\"}}\n",
		docs("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n...\n# after the end\n"),
		docs("apiVersion: v1\n\"kind\": ConfigMap\n'metadata': {\"na\\x6De\": escaped}\n"),
	} {
		seeds = append(seeds, []byte(s))
	}
	return append(seeds, fuzzSeeds(t)...)
}

// FuzzClassify checks the renderer's reading of a stream (classify, and a
// binding as the RBAC decision reads it) against the decoder Helm 3 and
// kubectl apply it with: unless the renderer refuses the stream, every
// object the clients apply is one the renderer sees, with the same kind,
// namespace, name, roleRef and subjects; and when the clients read the
// whole stream without an error, the renderer sees no other object. A
// document the fast path proves has the kind a parse gives.
func FuzzClassify(f *testing.F) {
	for _, s := range classifySeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := rendererApplied(in)
		if err != nil {
			checkRefusal(t, false, err)
			return
		}
		want, derr := decodeApplied(in)
		count := map[string]int{}
		for _, v := range got {
			count[v.String()]++
		}
		for _, v := range want {
			if count[v.String()] == 0 {
				t.Fatalf("Kubernetes' clients apply %s; the renderer sees %q", v, got)
			}
			count[v.String()]--
		}
		if derr == nil {
			for s, n := range count {
				if n > 0 {
					t.Fatalf("the renderer sees %s, which Kubernetes' clients do not apply (they apply %q)", s, want)
				}
			}
		}
	})
}

// TestApplied: the objects a front end must show or redact are those
// Kubernetes' clients apply: a Secret that is an item of a ConfigMap's
// items is one, the ConfigMap is not; what the readings could disagree on
// is refused.
func TestApplied(t *testing.T) {
	secret := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: apps\ndata:\n  password: aHVudGVyMg==\n"
	in := docs(saDoc, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decoy\nitems:\n-"+indent(secret, 2)[1:])
	got, err := Applied([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, o := range got {
		refs = append(refs, fmt.Sprintf("%s item %d of %s", o.Ref, o.Item, o.Location))
	}
	want := []string{"ServiceAccount kube-system/ccm item -1 of document 1 (line 1)", "Secret apps/s item 0 of document 2 (line 7)"}
	if !slices.Equal(refs, want) {
		t.Errorf("applied %q, want %q", refs, want)
	}
	if len(got) == 2 && field(t, got[1].Node, "data", "password") != "aHVudGVyMg==" {
		t.Errorf("the Secret's tree: %s", got[1].Node.MustString())
	}
	if _, err := Applied([]byte(docs(strings.Replace(secret, "kind: Secret", "kind: !!binary U2VjcmV0", 1)))); !IsInputError(err) {
		t.Errorf("a !!binary kind: %v, want an input error", err)
	}
}

// checkNotWidened checks a render against what Kubernetes' clients apply:
// a role whose rules the render changed is bound, in the input, to one
// service account alone (the CCM's). Input the clients fail on proves
// nothing either way.
func checkNotWidened(t *testing.T, in, out []byte) {
	t.Helper()
	before, err := decodeApplied(in)
	if err != nil {
		return
	}
	after, err := decodeApplied(out)
	if err != nil {
		t.Fatalf("Kubernetes' clients fail on the output: %v", err)
	}
	rules := map[string]string{}
	for _, v := range before {
		rules[v.Kind+" "+v.Namespace+"/"+v.Name] = v.rules
	}
	for _, v := range after {
		key := v.Kind + " " + v.Namespace + "/" + v.Name
		was, ok := rules[key]
		if v.Kind != "Role" && v.Kind != "ClusterRole" || !ok || was == v.rules {
			continue
		}
		holders := map[string]bool{}
		for _, b := range before {
			if b.RoleRef == v.Kind+"/"+v.Name && (v.Kind == "ClusterRole" || b.Namespace == v.Namespace) {
				for _, s := range b.Subjects {
					holders[s] = true
				}
			}
		}
		if len(holders) > 1 || slices.ContainsFunc(slices.Collect(maps.Keys(holders)), func(s string) bool { return !strings.HasPrefix(s, "ServiceAccount/") }) {
			t.Fatalf("the render changed the rules of %s, which is bound to %q", key, slices.Sorted(maps.Keys(holders)))
		}
	}
}
