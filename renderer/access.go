package renderer

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The RBAC decision: how the CCM's service account gets the permissions it
// lacks in the input, without widening what anybody else may do.
//
// A role is patched in place only when every subject of every binding of it
// in the input is the CCM's service account, and its bindings make it hold
// where the CCM needs it (bindings count wherever Kubernetes' clients find
// them, items of lists included: see classify). Otherwise (a role shared
// with a group or another account, a ClusterRole aggregated into others or
// with an aggregationRule of its own, a role the input does not hold or
// holds as an item of a list, a Role of another namespace) the renderer
// generates Roles and RoleBindings of the CCM's own where it needs them
// (AccountRBAC) and says so. With tokenScope: controllers the decision also
// picks the roles of its own whose token grant NarrowTokens narrows. Bindings
// and roles outside the input are not known to the renderer.

// access is the decision.
type access struct {
	missing   []Permission // what the service account lacks in the input
	patch     *object      // the role to add them to
	dedicated bool         // else Roles and RoleBindings of its own (AccountRBAC)
	narrow    []*object    // roles of its own whose token grant NarrowTokens narrows or restores
	warnings  []error      // spelled by the front end
}

// accountNamespaces are where the permissions must hold: the CCM creates
// its controllers' service accounts and their tokens in kube-system
// (k8s.io/cloud-provider's client builder), and the CCM's own namespace.
func accountNamespaces(sa serviceAccount) []string {
	ns := []string{"kube-system"}
	if sa.namespace != "" && sa.namespace != "kube-system" {
		ns = append(ns, sa.namespace)
	}
	return ns
}

type roleKey struct{ kind, namespace, name string } // namespace only for a Role

func (k roleKey) String() string {
	if k.namespace != "" {
		return k.kind + " " + k.namespace + "/" + k.name
	}
	return k.kind + " " + k.name
}

type subject struct{ kind, namespace, name string }

func (s subject) String() string {
	if s.namespace != "" {
		return s.kind + " " + s.namespace + "/" + s.name
	}
	return s.kind + " " + s.name
}

func (s subject) is(sa serviceAccount) bool {
	return s.kind == "ServiceAccount" && s.name == sa.name && (s.namespace == sa.namespace || sa.namespace == "")
}

// binding is a RoleBinding or ClusterRoleBinding of the input.
type binding struct {
	obj      *object
	role     roleKey
	scope    string // the namespace it grants in, "" for all (a ClusterRoleBinding)
	subjects []subject
}

func readBinding(obj *object) (binding, error) {
	b := binding{obj: obj}
	rn, err := obj.parse()
	if err != nil {
		return b, err
	}
	if obj.kind == "RoleBinding" {
		b.scope = obj.id.namespace
	}
	subjects, err := listField(rn.YNode(), "subjects", "subjects")
	if err != nil {
		return b, obj.errorf("%w", err)
	}
	if subjects != nil {
		for i, s := range subjects.Content {
			s = deref(s)
			if s.Kind != yaml.MappingNode {
				return b, obj.errorf("subjects holds a %s, not a subject", KindName(s))
			}
			var sub subject
			if sub.kind, sub.namespace, sub.name, err = identityFields3(s, fmt.Sprintf("subjects[%d].", i), obj.lineOffset(), "kind", "namespace", "name"); err != nil {
				return b, obj.errorf("%w", err)
			}
			if sub.kind == "ServiceAccount" && sub.namespace == "" {
				sub.namespace = b.scope
			}
			b.subjects = append(b.subjects, sub)
		}
	}
	ref := mapGet(rn.YNode(), "roleRef")
	if ref == nil || ref.Kind != yaml.MappingNode {
		return b, obj.errorf("has no roleRef")
	}
	if b.role.kind, _, b.role.name, err = identityFields3(ref, "roleRef.", obj.lineOffset(), "kind", "", "name"); err != nil {
		return b, obj.errorf("%w", err)
	}
	if b.role.kind == "Role" {
		b.role.namespace = b.scope
	}
	return b, nil
}

// identityFields3 reads up to three string fields of a mapping (a subject,
// a roleRef) as both readings agree on them; a field named "" is skipped.
func identityFields3(m *yaml.Node, prefix string, offset int, keys ...string) (a, b, c string, err error) {
	var out [3]string
	for i, k := range keys {
		if k == "" {
			continue
		}
		if out[i], err = identityString(m, k, prefix, offset); err != nil {
			return "", "", "", err
		}
	}
	return out[0], out[1], out[2], nil
}

// manyRoles is how many roles of the account the renderer looks for by
// name in the bytes of each document (a cheap test); beyond it, it parses
// every role and binding once instead, so the analysis stays linear.
const manyRoles = 8

// decideAccess makes the decision for the service account's permissions,
// over the objects Kubernetes' clients apply (items of lists included).
// Objects an earlier render generated do not count: the decision is the same
// on the original input and on the renderer's output. It reads each binding
// and role at most once and keeps none of their trees but the role it
// patches: linear in the input, whatever the number of roles.
func decideAccess(objs []*object, sa serviceAccount, generated []*object, narrow bool) (access, error) {
	var a access
	perms := CCMServiceAccountPermissions
	if narrow {
		perms = slices.DeleteFunc(slices.Clone(perms), func(p Permission) bool { return p.Resource == tokenResource })
	}
	ours := make(map[*object]bool, len(generated))
	for _, g := range generated {
		ours[g] = true
	}
	isBinding := func(o *object) bool { return (o.kind == "RoleBinding" || o.kind == "ClusterRoleBinding") && !ours[o] }
	read := map[*object]bool{}
	var all []binding
	readAll := func(may func(*object) bool) error {
		for _, o := range objs {
			if !isBinding(o) || read[o] || !may(o) {
				continue
			}
			read[o] = true
			b, err := readBinding(o)
			if err != nil {
				return err
			}
			o.forget()
			all = append(all, b)
		}
		return nil
	}

	// The bindings of the service account, and the roles they grant.
	if err := readAll(func(o *object) bool { return o.mentions(sa.name) }); err != nil {
		return a, err
	}
	type role struct {
		key    roleKey
		obj    *object
		rules  []rule
		labels map[string]string
		scopes []string // where the service account holds it; "" for everywhere
		shared []string // other subjects of its bindings, with the binding
		// why a rule added to it would not stay its own: aggregated
		// into other roles, or its rules the aggregation controller's
		aggregated string
		narrowed   bool // an earlier render narrowed its token grant (NarrowTokens)
		broad      bool // it grants create serviceaccounts/token for every account
	}
	var roles []*role
	byKey := map[roleKey]*role{}
	for _, b := range all {
		if !slices.ContainsFunc(b.subjects, func(s subject) bool { return s.is(sa) }) {
			continue
		}
		r := byKey[b.role]
		if r == nil {
			r = &role{key: b.role}
			byKey[b.role] = r
			roles = append(roles, r)
		}
		if !slices.Contains(r.scopes, b.scope) {
			r.scopes = append(r.scopes, b.scope)
		}
	}
	if len(roles) == 0 {
		a.warnings = append(a.warnings, errorf("no Role or ClusterRole is bound to %s in the input: RBAC not patched; "+
			"make sure it may get and create serviceaccounts and create serviceaccounts/token", sa))
		return a, nil
	}
	// may tells, by a byte test while the roles are few, whether an object
	// may name one of them.
	may := func(o *object) bool {
		return len(roles) > manyRoles || slices.ContainsFunc(roles, func(r *role) bool { return o.mentions(r.key.name) })
	}
	var selectors []aggregator
	for _, obj := range objs {
		if obj.kind != "Role" && obj.kind != "ClusterRole" || ours[obj] {
			continue
		}
		aggregating := obj.kind == "ClusterRole" && obj.mentions("aggregationRule")
		if !aggregating && !may(obj) {
			continue
		}
		rn, err := obj.parse()
		if err != nil {
			return a, err
		}
		if aggregating {
			sel, err := readAggregator(obj, rn)
			if err != nil {
				return a, err
			}
			selectors = append(selectors, sel...)
		}
		key := roleKey{kind: obj.kind, name: obj.id.name}
		if obj.kind == "Role" {
			key.namespace = obj.id.namespace
		}
		r := byKey[key]
		if r == nil || r.obj != nil {
			obj.forget()
			continue
		}
		if r.rules, err = readRules(rn.YNode()); err != nil {
			return a, obj.errorf("%w", err)
		}
		for i := range r.rules {
			r.rules[i].node = nil // the decision reads rules; the RBAC filter edits its own
		}
		r.obj = obj
		r.narrowed = narrowedRules(rn) != ""
		r.broad = slices.ContainsFunc(r.rules, broadTokenRule)
		if obj.kind == "ClusterRole" {
			r.labels = labelsOf(rn.YNode())
			if mapGet(rn.YNode(), "aggregationRule") != nil {
				r.aggregated = "has an aggregationRule: the aggregation controller rewrites its rules"
			}
		}
		if len(roles) > manyRoles {
			obj.forget() // many roles: read again the one the decision patches
		}
	}
	index := indexAggregators(selectors)
	for _, r := range roles {
		if r.obj != nil && r.obj.kind == "ClusterRole" && r.aggregated == "" {
			r.aggregated = index.aggregates(r.labels, r.obj)
		}
	}
	// Every binding of those roles: who else holds them.
	if err := readAll(may); err != nil {
		return a, err
	}
	for _, b := range all {
		r := byKey[b.role]
		if r == nil {
			continue
		}
		for _, s := range b.subjects {
			if !s.is(sa) {
				r.shared = append(r.shared, s.String()+" ("+b.obj.ref().String()+")")
			}
		}
	}

	// Why a role is not the account's own to edit, "" when it is.
	notOwn := func(r *role) string {
		switch {
		case r.obj == nil:
			return r.key.String() + " is not in the input"
		case r.obj.in != nil:
			return r.key.String() + " is an item of the " + r.obj.in.kind + " (" + r.obj.loc().String() + "), which the renderer does not patch"
		case len(r.shared) > 0:
			return r.key.String() + " is also bound to " + strings.Join(r.shared, ", ")
		case r.aggregated != "":
			return r.key.String() + " " + r.aggregated
		}
		return ""
	}
	// The token grant: narrowed (narrow), or given back where an earlier
	// render narrowed it; the decision reads the roles as they will be.
	for _, r := range roles {
		if !r.broad && !r.narrowed && (r.obj != nil || !narrow) {
			continue
		}
		why := notOwn(r)
		switch {
		case why != "" && r.obj == nil:
			a.warnings = append(a.warnings, errorf("%s: %s, so the renderer cannot tell whether it lets %s create tokens for other accounts",
				OptValue{OptTokenScope, string(TokenScopeControllers)}, why, sa))
			continue
		case why != "" && narrow && r.broad:
			return a, r.obj.errorf("%s: it lets %s create tokens for every service account, and the renderer may not narrow it: %s; "+
				"give the CCM a role of its own", OptValue{OptTokenScope, string(TokenScopeControllers)}, sa, why)
		case why != "" || !narrow && !r.narrowed:
			continue // (a narrowed role no longer its own stays as it is)
		}
		rn, err := r.obj.parse()
		if err != nil {
			return a, err
		}
		view := rn.Copy()
		if _, err := (NarrowTokens{Narrow: narrow}).Filter([]*yaml.RNode{view}); err != nil {
			return a, r.obj.errorf("%w", patchErrorText(err))
		}
		if r.rules, err = readRules(view.YNode()); err != nil {
			return a, r.obj.errorf("%w", err)
		}
		r.obj.forget()
		a.narrow = append(a.narrow, r.obj)
	}

	holds := func(r *role, ns string) bool { return slices.Contains(r.scopes, "") || slices.Contains(r.scopes, ns) }
	needed := accountNamespaces(sa)
	for _, p := range perms {
		for _, ns := range needed {
			if !slices.ContainsFunc(roles, func(r *role) bool { return r.obj != nil && holds(r, ns) && granted([][]rule{r.rules}, p) }) {
				a.missing = append(a.missing, p)
				break
			}
		}
	}
	if len(a.missing) == 0 {
		return a, a.reparse()
	}
	var why []string
	var candidates []*role
	for _, r := range roles {
		switch w := notOwn(r); {
		case w != "":
			why = append(why, w)
		case slices.ContainsFunc(needed, func(ns string) bool { return !holds(r, ns) }):
			why = append(why, r.key.String()+" does not hold in namespace "+strings.Join(needed, " and "))
		default:
			candidates = append(candidates, r)
		}
	}
	if len(candidates) > 0 {
		pick := candidates[0]
		for _, r := range candidates {
			if slices.ContainsFunc(r.rules, func(x rule) bool { return slices.Contains(x.resources, "serviceaccounts") }) {
				pick = r
				break
			}
		}
		a.patch = pick.obj
		return a, a.reparse()
	}
	a.dedicated = true
	a.warnings = append(a.warnings, errorf("%s lacks %s, and no role of its own can take it: %s; not widened: "+
		"a Role and RoleBinding %s in %s grant it to %s alone",
		sa, permissionList(a.missing), strings.Join(why, "; "), accountRBACName(sa), strings.Join(needed, " and "), sa))
	return a, a.reparse()
}

// reparse parses again the roles the decision patches: it read them and let
// their trees go.
func (a access) reparse() error {
	for _, o := range append([]*object{a.patch}, a.narrow...) {
		if o == nil {
			continue
		}
		if _, err := o.parse(); err != nil {
			return err
		}
	}
	return nil
}

// aggregationLabel is the label prefix of Kubernetes' aggregated roles: a
// ClusterRole labelled rbac.authorization.k8s.io/aggregate-to-edit (admin,
// view, or a custom role's) has its rules copied into that role.
const aggregationLabel = "rbac.authorization.k8s.io/aggregate-to-"

// An aggregator is one of the clusterRoleSelectors of a ClusterRole's
// aggregationRule: the aggregation controller copies into that role the
// rules of every ClusterRole the selector selects.
type aggregator struct {
	role        *object           // the aggregating ClusterRole
	matchLabels map[string]string // nil: the selector may select any role
}

// readAggregator reads the selectors of a ClusterRole's aggregationRule.
// A selector with matchExpressions, or an empty one (which selects every
// role), is taken to select any role: never guess in favour of widening.
func readAggregator(obj *object, rn *yaml.RNode) ([]aggregator, error) {
	rule := mapGet(rn.YNode(), "aggregationRule")
	if rule == nil || rule.Kind != yaml.MappingNode {
		return nil, nil
	}
	sels := mapGet(rule, "clusterRoleSelectors")
	if sels == nil || sels.Kind != yaml.SequenceNode {
		return nil, nil
	}
	var out []aggregator
	for _, sel := range sels.Content {
		sel = deref(sel)
		if sel.Kind != yaml.MappingNode {
			continue
		}
		agg := aggregator{role: obj}
		if ml := mapGet(sel, "matchLabels"); ml != nil && ml.Kind == yaml.MappingNode && len(ml.Content) > 0 && mapGet(sel, "matchExpressions") == nil {
			agg.matchLabels = stringMap(ml)
		}
		out = append(out, agg)
	}
	return out, nil
}

// aggregatorIndex finds the selectors that select a role's labels without
// trying every selector on every role: by one label pair of each.
type aggregatorIndex struct {
	any    []aggregator
	byPair map[[2]string][]aggregator
}

func indexAggregators(sels []aggregator) aggregatorIndex {
	ix := aggregatorIndex{byPair: map[[2]string][]aggregator{}}
	for _, s := range sels {
		if s.matchLabels == nil {
			ix.any = append(ix.any, s)
			continue
		}
		for k, v := range s.matchLabels { // any one pair: the selector needs them all
			ix.byPair[[2]string{k, v}] = append(ix.byPair[[2]string{k, v}], s)
			break
		}
	}
	return ix
}

// aggregates says why rules added to a ClusterRole with these labels would
// reach other roles: "" when they would not. Its rules flow into other roles
// when it carries an aggregation label or a ClusterRole of the input
// selects it.
func (ix aggregatorIndex) aggregates(labels map[string]string, self *object) string {
	for k := range labels {
		if strings.HasPrefix(k, aggregationLabel) {
			return "is aggregated into other roles (label " + k + ")"
		}
	}
	selects := func(s aggregator) bool {
		if s.role == self {
			return false
		}
		for k, v := range s.matchLabels {
			if got, ok := labels[k]; !ok || got != v {
				return false
			}
		}
		return true
	}
	cands := slices.Clone(ix.any)
	for k, v := range labels {
		cands = append(cands, ix.byPair[[2]string{k, v}]...)
	}
	for _, s := range cands {
		if selects(s) {
			return "is aggregated into ClusterRole " + s.role.id.name + " (its aggregationRule selects it)"
		}
	}
	return ""
}

// labelsOf reads an object's labels.
func labelsOf(obj *yaml.Node) map[string]string {
	if meta := mapGet(obj, "metadata"); meta != nil && meta.Kind == yaml.MappingNode {
		return stringMap(mapGet(meta, "labels"))
	}
	return map[string]string{}
}

// stringMap reads a map of strings (labels, a selector's matchLabels).
func stringMap(m *yaml.Node) map[string]string {
	out := map[string]string{}
	if m == nil || m.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		out[m.Content[i].Value] = deref(m.Content[i+1]).Value
	}
	return out
}

func permissionList(perms []Permission) string {
	s := make([]string, len(perms))
	for i, p := range perms {
		s[i] = p.Verb + " " + p.Resource
	}
	return strings.Join(s, ", ")
}
