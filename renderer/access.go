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
// where the CCM needs it (bindings that are items of a List count).
// Otherwise (a role shared with a group or another account, a ClusterRole
// aggregated into others or with an aggregationRule of its own, a role the
// input does not hold, a Role of another namespace) the
// renderer generates a ClusterRole and ClusterRoleBinding of the CCM's own
// (AccountRBAC) and says so. Bindings and roles outside the input are not
// known to the renderer.

// access is the decision.
type access struct {
	missing   []Permission // what the service account lacks in the input
	patch     *object      // the role to add them to
	dedicated bool         // else a ClusterRole and ClusterRoleBinding of its own
	warnings  []string
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
	rn := obj.node
	if obj.kind == "RoleBinding" {
		b.scope = rn.GetNamespace()
	}
	subjects, err := listField(rn.YNode(), "subjects", "subjects")
	if err != nil {
		return b, obj.errorf("%w", err)
	}
	if subjects != nil {
		for _, s := range subjects.Content {
			if s.Kind != yaml.MappingNode {
				return b, obj.errorf("subjects holds a %s, not a subject", KindName(s))
			}
			sub := subject{kind: scalar(s, "kind"), namespace: scalar(s, "namespace"), name: scalar(s, "name")}
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
	b.role = roleKey{kind: scalar(ref, "kind"), name: scalar(ref, "name")}
	if b.role.kind == "Role" {
		b.role.namespace = b.scope
	}
	return b, nil
}

// decideAccess makes the decision for the service account's permissions.
// Objects an earlier render generated do not count: the decision is the same
// on the original input and on the renderer's output.
func decideAccess(objs []*object, sa serviceAccount, generated []*object, perms []Permission) (access, error) {
	var a access
	ours := func(o *object) bool { return slices.Contains(generated, o) }
	// bindings reads the input's bindings (not the renderer's own) that
	// may hold what the caller looks for, as may tells by a byte test.
	// Bindings in Lists count: kubectl and Helm apply a List's items.
	items, err := listItems(objs, "Binding")
	if err != nil {
		return a, err
	}
	bindings := func(may func(*object) bool) ([]binding, error) {
		var out []binding
		for _, obj := range append(slices.Clip(objs), items...) {
			if obj.kind != "RoleBinding" && obj.kind != "ClusterRoleBinding" || ours(obj) || !may(obj) {
				continue
			}
			if _, err := obj.parse(); err != nil {
				return nil, err
			}
			b, err := readBinding(obj)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		return out, nil
	}

	// The bindings of the service account, and the roles they grant.
	named, err := bindings(func(o *object) bool { return o.mentions(sa.name) })
	if err != nil {
		return a, err
	}
	var mine []binding
	for _, b := range named {
		if slices.ContainsFunc(b.subjects, func(s subject) bool { return s.is(sa) }) {
			mine = append(mine, b)
		}
	}
	if len(mine) == 0 {
		a.warnings = append(a.warnings, fmt.Sprintf("no Role or ClusterRole is bound to %s in the input: RBAC not patched; "+
			"make sure it may get and create serviceaccounts and create serviceaccounts/token", sa))
		return a, nil
	}
	type role struct {
		key    roleKey
		obj    *object
		rules  []rule
		scopes []string // where the service account holds it; "" for everywhere
		shared []string // other subjects of its bindings, with the binding
		// why a rule added to it would not stay its own: aggregated
		// into other roles, or its rules the aggregation controller's
		aggregated string
	}
	var roles []*role
	for _, b := range mine {
		i := slices.IndexFunc(roles, func(r *role) bool { return r.key == b.role })
		if i < 0 {
			roles = append(roles, &role{key: b.role})
			i = len(roles) - 1
		}
		if !slices.Contains(roles[i].scopes, b.scope) {
			roles[i].scopes = append(roles[i].scopes, b.scope)
		}
	}
	for _, obj := range objs {
		if obj.kind != "Role" && obj.kind != "ClusterRole" || ours(obj) {
			continue
		}
		for _, r := range roles {
			if r.obj != nil || r.key.kind != obj.kind || !obj.mentions(r.key.name) {
				continue
			}
			rn, err := obj.parse()
			if err != nil {
				return a, err
			}
			if rn.GetName() != r.key.name || (r.key.kind == "Role" && rn.GetNamespace() != r.key.namespace) {
				continue
			}
			if r.rules, err = readRules(rn.YNode()); err != nil {
				return a, obj.errorf("%w", err)
			}
			r.obj = obj
			if obj.kind == "ClusterRole" {
				r.aggregated = aggregation(rn, objs)
			}
		}
	}
	// Every binding of those roles: who else holds them.
	all, err := bindings(func(o *object) bool {
		return slices.ContainsFunc(roles, func(r *role) bool { return o.mentions(r.key.name) })
	})
	if err != nil {
		return a, err
	}
	for _, b := range all {
		for _, r := range roles {
			if r.key != b.role {
				continue
			}
			for _, s := range b.subjects {
				if !s.is(sa) {
					r.shared = append(r.shared, s.String()+" ("+b.obj.ref().String()+")")
				}
			}
		}
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
		return a, nil
	}
	var why []string
	var candidates []*role
	for _, r := range roles {
		switch {
		case r.obj == nil:
			why = append(why, r.key.String()+" is not in the input")
		case len(r.shared) > 0:
			why = append(why, r.key.String()+" is also bound to "+strings.Join(r.shared, ", "))
		case r.aggregated != "":
			why = append(why, r.key.String()+" "+r.aggregated)
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
		return a, nil
	}
	a.dedicated = true
	a.warnings = append(a.warnings, fmt.Sprintf("%s lacks %s, and no role of its own can take it: %s; not widened: "+
		"a ClusterRole and ClusterRoleBinding %s grant it to %s alone",
		sa, permissionList(a.missing), strings.Join(why, "; "), accountRBACName(sa), sa))
	return a, nil
}

// aggregationLabel is the label prefix of Kubernetes' aggregated roles: a
// ClusterRole labelled rbac.authorization.k8s.io/aggregate-to-edit (admin,
// view, or a custom role's) has its rules copied into that role.
const aggregationLabel = "rbac.authorization.k8s.io/aggregate-to-"

// aggregation says why rules added to a ClusterRole would reach others or
// not stay: "" when neither. Its rules flow into other roles when it carries
// an aggregation label or a ClusterRole of the input selects it (a selector
// with matchExpressions counts as selecting it: never guess in favour of
// widening); a role with an aggregationRule has rules the controller
// rewrites.
func aggregation(role *yaml.RNode, objs []*object) string {
	if mapGet(role.YNode(), "aggregationRule") != nil {
		return "has an aggregationRule: the aggregation controller rewrites its rules"
	}
	labels := role.GetLabels()
	for k := range labels {
		if strings.HasPrefix(k, aggregationLabel) {
			return "is aggregated into other roles (label " + k + ")"
		}
	}
	for _, obj := range objs {
		if obj.kind != "ClusterRole" || !obj.mentions("aggregationRule") {
			continue
		}
		rn, err := obj.parse()
		if err != nil || rn == role {
			continue
		}
		rule := mapGet(rn.YNode(), "aggregationRule")
		if rule == nil {
			continue
		}
		sels := mapGet(rule, "clusterRoleSelectors")
		if sels == nil || sels.Kind != yaml.SequenceNode {
			continue
		}
		for _, sel := range sels.Content {
			if selects(sel, labels) {
				return "is aggregated into ClusterRole " + rn.GetName() + " (its aggregationRule selects it)"
			}
		}
	}
	return ""
}

// selects tells whether a label selector may select labels: its
// matchLabels all present; a selector with matchExpressions, or an empty
// one (which selects every role), taken as selecting them.
func selects(sel *yaml.Node, labels map[string]string) bool {
	if sel.Kind != yaml.MappingNode {
		return false
	}
	if ml := mapGet(sel, "matchLabels"); ml != nil && ml.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(ml.Content); i += 2 {
			if v, ok := labels[ml.Content[i].Value]; !ok || v != ml.Content[i+1].Value {
				return false
			}
		}
	}
	return true
}

func permissionList(perms []Permission) string {
	s := make([]string, len(perms))
	for i, p := range perms {
		s[i] = p.Verb + " " + p.Resource
	}
	return strings.Join(s, ", ")
}
