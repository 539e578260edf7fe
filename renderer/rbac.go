package renderer

import (
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Permission is one verb on one core-group resource.
type Permission struct {
	Resource string
	Verb     string
}

// CCMServiceAccountPermissions are what the CCM needs on service accounts
// when it runs with --use-service-account-credentials=true: it reads each
// controller's service account, creates it when missing, and requests tokens.
var CCMServiceAccountPermissions = []Permission{
	{Resource: "serviceaccounts", Verb: "get"},
	{Resource: "serviceaccounts", Verb: "create"},
	{Resource: "serviceaccounts/token", Verb: "create"},
}

// RBAC grants Permissions through the (Cluster)Roles it is given: the roles
// bound to the CCM's service account and to nobody else (the renderer's
// access decision picks them; see decideAccess). A permission some rule
// already grants is left alone. A missing verb is added in place to the rule
// dedicated to that resource (core group, that one resource, no
// resourceNames); when there is none, a new rule for just that resource and
// verb is appended to the role that holds the service account rules (else
// the first ClusterRole, else the first role). No other rule is touched and
// "*" is never added.
type RBAC struct {
	Permissions []Permission
}

var _ kio.Filter = RBAC{}

type rule struct {
	node                            *yaml.Node
	groups, resources, verbs, names []string
	nonResourceURLs                 []string
}

func (f RBAC) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if len(nodes) == 0 {
		return nodes, nil
	}
	rules := make([][]rule, len(nodes))
	for i, rn := range nodes {
		if k := rn.GetKind(); k != "Role" && k != "ClusterRole" {
			return nil, &patchError{Object: refOf(rn), Err: fmt.Errorf("not a Role or ClusterRole")}
		}
		r, err := readRules(rn.YNode())
		if err != nil {
			return nil, &patchError{Object: refOf(rn), Err: err}
		}
		rules[i] = r
	}
	target := f.targetRole(nodes, rules)
	for _, p := range f.Permissions {
		if granted(rules, p) {
			continue
		}
		if r := dedicatedRule(rules, p.Resource); r != nil {
			verbs := mapGet(r.node, "verbs")
			if verbs == nil || verbs.Kind != yaml.SequenceNode {
				verbs = seqNode()
				mapSet(r.node, "verbs", verbs)
			}
			verbs.Content = append(verbs.Content, strNode(p.Verb))
			r.verbs = append(r.verbs, p.Verb)
			continue
		}
		role := nodes[target].YNode()
		list := mapGet(role, "rules")
		if list == nil || list.Kind != yaml.SequenceNode {
			list = seqNode()
			mapSet(role, "rules", list)
		}
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: []*yaml.Node{
			strNode("apiGroups"), seqNode(strNode("")),
			strNode("resources"), seqNode(strNode(p.Resource)),
			strNode("verbs"), seqNode(strNode(p.Verb)),
		}}
		list.Content = append(list.Content, n)
		rules[target] = append(rules[target], rule{node: n, groups: []string{""}, resources: []string{p.Resource}, verbs: []string{p.Verb}})
	}
	return nodes, nil
}

// targetRole picks the role that receives new rules.
func (f RBAC) targetRole(nodes []*yaml.RNode, rules [][]rule) int {
	for i := range nodes {
		for _, r := range rules[i] {
			if slices.Contains(r.resources, "serviceaccounts") || slices.Contains(r.resources, "serviceaccounts/token") {
				return i
			}
		}
	}
	for i, rn := range nodes {
		if rn.GetKind() == "ClusterRole" {
			return i
		}
	}
	return 0
}

func readRules(role *yaml.Node) ([]rule, error) {
	list, err := listField(role, "rules", "rules")
	if err != nil || list == nil {
		return nil, err
	}
	out := make([]rule, 0, len(list.Content))
	for i, n := range list.Content {
		n = deref(n)
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("rules[%d] is a %s, not a rule", i, KindName(n))
		}
		r := rule{node: n}
		for _, field := range []struct {
			name string
			dst  *[]string
		}{{"apiGroups", &r.groups}, {"resources", &r.resources}, {"verbs", &r.verbs},
			{"resourceNames", &r.names}, {"nonResourceURLs", &r.nonResourceURLs}} {
			path := fmt.Sprintf("rules[%d].%s", i, field.name)
			seq, err := listField(n, field.name, path)
			if err != nil {
				return nil, err
			}
			if *field.dst, err = scalarStrings(seq, path); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// granted reports whether some rule allows p on every object of the resource.
func granted(rules [][]rule, p Permission) bool {
	for _, rs := range rules {
		for _, r := range rs {
			if len(r.names) == 0 &&
				(slices.Contains(r.groups, "") || slices.Contains(r.groups, "*")) &&
				(slices.Contains(r.resources, p.Resource) || slices.Contains(r.resources, "*")) &&
				(slices.Contains(r.verbs, p.Verb) || slices.Contains(r.verbs, "*")) {
				return true
			}
		}
	}
	return false
}

// dedicatedRule finds a rule for exactly the core-group resource, where
// adding a verb grants nothing beyond that resource.
func dedicatedRule(rules [][]rule, resource string) *rule {
	for i := range rules {
		for j := range rules[i] {
			r := &rules[i][j]
			if slices.Equal(r.groups, []string{""}) && slices.Equal(r.resources, []string{resource}) &&
				len(r.names) == 0 && len(r.nonResourceURLs) == 0 {
				return r
			}
		}
	}
	return nil
}
