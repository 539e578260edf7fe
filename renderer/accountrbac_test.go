package renderer

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// TestDedicatedRBAC (class 11): what the renderer grants the CCM's account
// when no role is its own holds where the CCM needs it and nowhere else:
// Roles and RoleBindings in kube-system and the CCM's namespace, never a
// ClusterRole.
func TestDedicatedRBAC(t *testing.T) {
	toAll := strings.Replace(toAll, "name: ccm\nsubjects", "name: ccm\nsubjects", 1)
	inNS := func(ns string) string {
		return docs(strings.ReplaceAll(saDoc, "kube-system", ns), roleDoc, strings.ReplaceAll(bindDoc, "kube-system", ns), toAll, strings.ReplaceAll(dsDoc, "kube-system", ns))
	}
	dedicated := func(ns string) string { return accountRBACName(serviceAccount{namespace: ns, name: "ccm"}) }
	wantRoles := func(ns string, namespaces ...string) func(*testing.T, []byte, []*yaml.RNode, []string) {
		return func(t *testing.T, out []byte, objs []*yaml.RNode, warnings []string) {
			t.Helper()
			var got []string
			for _, o := range objs {
				if o.GetName() != dedicated(ns) {
					continue
				}
				got = append(got, o.GetKind()+" "+o.GetNamespace())
				if o.GetKind() == "Role" && !onlyRule(t, o, rule{groups: []string{""}, resources: []string{"serviceaccounts"}, verbs: []string{"get"}}) {
					t.Errorf("%s grants %s, want get serviceaccounts", o.GetNamespace(), field(t, o, "rules"))
				}
				if o.GetKind() == "RoleBinding" && (field(t, o, "subjects") != "- kind: ServiceAccount\n  name: ccm\n  namespace: "+ns || field(t, o, "roleRef", "kind") != "Role") {
					t.Errorf("%s binds %s", o.GetNamespace(), field(t, o, "subjects"))
				}
			}
			var want []string
			for _, n := range namespaces {
				want = append(want, "Role "+n, "RoleBinding "+n)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("generated %q, want %q", got, want)
			}
			if !slices.ContainsFunc(warnings, func(w string) bool {
				return strings.Contains(w, "a Role and RoleBinding "+dedicated(ns)+" in "+strings.Join(namespaces, " and ")+" grant it to ServiceAccount "+ns+"/ccm alone")
			}) {
				t.Errorf("warnings %q", warnings)
			}
		}
	}
	legacy := func() string { // what the renderer generated before it granted per namespace
		name := dedicated("kube-system")
		return docs(saDoc, roleDoc, bindDoc, toAll,
			"# Source: aws-ccm-renderer/serviceaccount-rbac.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: "+name+
				"\n  annotations:\n    aws-ccm-renderer.io/generated: serviceaccount-rbac\nrules:\n  - apiGroups:\n      - \"\"\n    resources:\n      - serviceaccounts\n    verbs:\n      - get\n",
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: "+name+
				"\n  annotations:\n    aws-ccm-renderer.io/generated: serviceaccount-rbac\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: "+name+
				"\nsubjects:\n  - kind: ServiceAccount\n    name: ccm\n    namespace: kube-system\n", dsDoc)
	}
	runSafetyCases(t, []safetyCase{
		{name: "a CCM in kube-system: there alone", in: inNS("kube-system"), check: wantRoles("kube-system", "kube-system")},
		{name: "a CCM in its own namespace: kube-system and there", in: inNS("cloud"), check: wantRoles("cloud", "kube-system", "cloud")},
		{name: "an earlier render's ClusterRole and ClusterRoleBinding are replaced", in: legacy(),
			check: func(t *testing.T, out []byte, objs []*yaml.RNode, warnings []string) {
				wantRoles("kube-system", "kube-system")(t, out, objs, warnings)
				if find(objs, "ClusterRole", dedicated("kube-system")) != nil {
					t.Errorf("the earlier ClusterRole stayed:\n%s", out)
				}
			}},
	})
}

// TestTokenScope (class 12): --token-scope=controllers narrows what the
// chart grants the CCM, create serviceaccounts/token on every account, to
// its controllers' accounts in kube-system, by name.
func TestTokenScope(t *testing.T) {
	controllers := func(o *Options) { o.TokenScope = TokenScopeControllers }
	tokens := tokenRBACName(serviceAccount{namespace: "kube-system", name: "ccm"})
	narrowed := func(t *testing.T, out []byte, objs []*yaml.RNode, warnings []string) {
		t.Helper()
		role := find(objs, "ClusterRole", "ccm")
		rules, err := readRules(role.YNode())
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(rules, broadTokenRule) || !granted([][]rule{rules}, Permission{Resource: "serviceaccounts", Verb: "get"}) {
			t.Errorf("the CCM's ClusterRole, narrowed:\n%s", role.MustString())
		}
		tr, tb := find(objs, "Role", tokens), find(objs, "RoleBinding", tokens)
		if tr == nil || tb == nil || tr.GetNamespace() != "kube-system" || tb.GetNamespace() != "kube-system" {
			t.Fatalf("no Role and RoleBinding %s in kube-system: %q", tokens, ids(objs))
		}
		want := rule{groups: []string{""}, resources: []string{"serviceaccounts/token"}, verbs: []string{"create"},
			names: []string{"aws-cloud-provider", "node-controller", "route-controller", "service-controller", "tagging-controller"}}
		if !onlyRule(t, tr, want) {
			t.Errorf("the token Role grants\n%s", field(t, tr, "rules"))
		}
		if got := field(t, tb, "subjects"); got != "- kind: ServiceAccount\n  name: ccm\n  namespace: kube-system" {
			t.Errorf("the token RoleBinding binds %s", got)
		}
		if !bytes.Contains(out, []byte(`"tokenScope":"controllers"`)) {
			t.Errorf("the options annotation does not record the token scope:\n%s", out)
		}
	}
	mixed := strings.Replace(roleDoc, "- apiGroups: [\"\"]\n  resources: [serviceaccounts/token]\n  verbs: [create]\n", "- apiGroups: [\"\"]\n  resources: [configmaps, serviceaccounts/token]\n  verbs: [create]\n", 1)
	runSafetyCases(t, []safetyCase{
		{name: "the chart's grant narrowed", opts: controllers, in: docs(saDoc, roleDoc, bindDoc, dsDoc), check: narrowed},
		{name: "a rule for more resources loses serviceaccounts/token alone", opts: controllers, in: docs(saDoc, mixed, bindDoc, dsDoc),
			check: func(t *testing.T, out []byte, objs []*yaml.RNode, warnings []string) {
				narrowed(t, out, objs, warnings)
				if !strings.Contains(field(t, find(objs, "ClusterRole", "ccm"), "rules"), "resources: [configmaps]") {
					t.Errorf("configmaps lost:\n%s", out)
				}
			}},
		{name: "a role without the grant: the Role alone", opts: controllers,
			in: docs(saDoc, strings.Replace(roleDoc, "- apiGroups: [\"\"]\n  resources: [serviceaccounts/token]\n  verbs: [create]\n", "", 1), bindDoc, dsDoc), check: narrowed},
		{name: "the grant in a shared role cannot be narrowed", opts: controllers, in: docs(saDoc, roleDoc, bindDoc, toAll, dsDoc),
			wantErr: []string{"ClusterRole ccm: --token-scope=controllers: it lets ServiceAccount kube-system/ccm create tokens for every service account, and the renderer may not narrow it", "also bound to Group system:authenticated"}},
		{name: "a wildcard grant is not rewritten", opts: controllers,
			in:      docs(saDoc, strings.Replace(roleDoc, "resources: [serviceaccounts/token]", "resources: [\"*\"]", 1), bindDoc, dsDoc),
			wantErr: []string{"ClusterRole ccm: rules[1] lets its holders create tokens for every service account through a wildcard"}},
		{name: "a role that is not in the input: said", opts: controllers, in: docs(saDoc, bindDoc, dsDoc),
			check: func(t *testing.T, out []byte, objs []*yaml.RNode, warnings []string) {
				if find(objs, "Role", tokens) == nil || !slices.ContainsFunc(warnings, func(w string) bool {
					return strings.Contains(w, "--token-scope=controllers: ClusterRole ccm is not in the input, so the renderer cannot tell whether it lets ServiceAccount kube-system/ccm create tokens for other accounts")
				}) {
					t.Errorf("warnings %q; %q", warnings, ids(objs))
				}
			}},
		{name: "an unknown scope", opts: func(o *Options) { o.TokenScope = "namespace" }, in: docs(dsDoc),
			wantErr: []string{`--token-scope "namespace" is unknown: use one of cluster, controllers`}},
	})
	// Rendered again without the option, the narrowed output is what the
	// original gives: the rule comes back in its place, the Role goes.
	in := docs(saDoc, mixed, bindDoc, dsDoc)
	first, _, err := renderCase(t, in, controllers)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := renderCase(t, string(first), nil)
	if err != nil {
		t.Fatal(err)
	}
	direct, _, err := renderCase(t, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, direct) {
		t.Errorf("narrowed, then rendered without --token-scope:\n%s\nwant what the input renders to:\n%s", diffLines(direct, again), direct)
	}
}

// onlyRule reports whether a role has exactly one rule, want.
func onlyRule(t *testing.T, role *yaml.RNode, want rule) bool {
	t.Helper()
	rules, err := readRules(role.YNode())
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 {
		return false
	}
	r := rules[0]
	return slices.Equal(r.groups, want.groups) && slices.Equal(r.resources, want.resources) && slices.Equal(r.verbs, want.verbs) &&
		slices.Equal(r.names, want.names) && len(r.nonResourceURLs) == 0
}

// TestGeneratedInAnyKeyOrder: an object the renderer generated is its own
// whatever the order of its keys (kustomize writes them sorted). One that
// is exactly what a generator makes for other parameters (another user)
// is its own too, and replaced by what it makes now; one with its
// annotation and anything more is the user's.
func TestGeneratedInAnyKeyOrder(t *testing.T) {
	first, _, err := renderCase(t, docs(saDoc, roleDoc, bindDoc, dsDoc), migrate)
	if err != nil {
		t.Fatal(err)
	}
	rewrite := func(change func(n *yaml.RNode)) string {
		var out []string
		for _, d := range stream.Split([][]byte{first}) {
			n, err := yaml.Parse(string(d.Body()))
			if err != nil {
				t.Fatal(err)
			}
			if generatedMark(n) != "" {
				if err := n.PipeE(yaml.SetAnnotation("config.kubernetes.io/index", "3")); err != nil { // kustomize's bookkeeping
					t.Fatal(err)
				}
				sortKeys(n.YNode())
				if generatedMark(n) == markMigrationLease && n.GetKind() == "RoleBinding" {
					change(n)
				}
			}
			out = append(out, n.MustString())
		}
		return "---\n" + strings.Join(out, "---\n")
	}
	subjects := func(objs []*yaml.RNode) string {
		return field(t, find(objs, "RoleBinding", MigrationLeaseRBACName("ccm")), "subjects")
	}
	want := subjects(objects(t, first))

	out, _, err := renderCase(t, rewrite(func(*yaml.RNode) {}), migrate)
	if err != nil {
		t.Fatalf("the renderer's own objects, keys sorted: %v", err)
	}
	if objs := objects(t, out); len(objs) != len(objects(t, first)) || subjects(objs) != want {
		t.Errorf("rendered again: %q, subjects %s; want %q, %s", ids(objs), subjects(objs), ids(objects(t, first)), want)
	}

	other := rewrite(func(n *yaml.RNode) {
		mapSet(mapGet(n.YNode(), "subjects").Content[0], "name", strNode("system:authenticated"))
	})
	if !strings.Contains(other, "name: system:authenticated") {
		t.Fatalf("the rewrite did not change the subject:\n%s", other)
	}
	out, _, err = renderCase(t, other, migrate)
	if err != nil || subjects(objects(t, out)) != want {
		t.Errorf("the lease binding for another user, rendered again: %v, subjects %s; want it replaced by %s", err, subjects(objects(t, out)), want)
	}

	more := rewrite(func(n *yaml.RNode) {
		subs := mapGet(n.YNode(), "subjects")
		subs.Content = append(subs.Content, pairsNode("kind", "Group", "name", "system:authenticated"))
	})
	if _, _, err = renderCase(t, more, migrate); err == nil ||
		!strings.Contains(err.Error(), "RoleBinding kube-system/ccm-leader-migration: the renderer generates an object of this kind and name") {
		t.Errorf("a lease binding with the renderer's annotation and another subject: %v; want it taken as the user's, and so a collision", err)
	}
}

// sortKeys sorts the keys of every mapping of a tree, as kustomize writes
// them.
func sortKeys(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		type pair struct{ k, v *yaml.Node }
		pairs := make([]pair, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			pairs = append(pairs, pair{n.Content[i], n.Content[i+1]})
		}
		slices.SortFunc(pairs, func(a, b pair) int { return strings.Compare(a.k.Value, b.k.Value) })
		n.Content = n.Content[:0]
		for _, p := range pairs {
			n.Content = append(n.Content, p.k, p.v)
		}
	}
	for _, c := range n.Content {
		sortKeys(c)
	}
}
