package renderer

import (
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// AccountRBAC generates a ClusterRole and ClusterRoleBinding that grant the
// CCM's service account, and nobody else, the Permissions it lacks, for
// when no role in the input is its alone (see decideAccess). Want false
// removes them. It is a generator (see generate).
type AccountRBAC struct {
	Want        bool
	Account     ObjectRef // the CCM's ServiceAccount
	Permissions []Permission
}

var _ kio.Filter = AccountRBAC{}

func (f AccountRBAC) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	var want []*yaml.RNode
	if f.Want {
		name := accountRBACName(serviceAccount{namespace: f.Account.Namespace, name: f.Account.Name})
		role := newObject("rbac.authorization.k8s.io/v1", "ClusterRole", "", name)
		var rules []*yaml.Node
		for _, p := range f.Permissions {
			i := slices.IndexFunc(rules, func(r *yaml.Node) bool {
				return sameNode(mapGet(r, "resources"), seqNode(strNode(p.Resource)))
			})
			if i < 0 {
				rules = append(rules, &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: []*yaml.Node{
					strNode("apiGroups"), seqNode(strNode("")),
					strNode("resources"), seqNode(strNode(p.Resource)),
					strNode("verbs"), seqNode(),
				}})
				i = len(rules) - 1
			}
			verbs := mapGet(rules[i], "verbs")
			verbs.Content = append(verbs.Content, strNode(p.Verb))
		}
		mapSet(role.YNode(), "rules", seqNode(rules...))
		bind := newObject("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", name)
		mapSet(bind.YNode(), "roleRef", pairsNode("apiGroup", "rbac.authorization.k8s.io", "kind", "ClusterRole", "name", name))
		mapSet(bind.YNode(), "subjects", seqNode(pairsNode("kind", "ServiceAccount", "name", f.Account.Name, "namespace", f.Account.Namespace)))
		want = append(want, role, bind)
	}
	return generate(nodes, markAccountRBAC, want), nil
}

// accountRBACName names the generated ClusterRole and ClusterRoleBinding
// after the service account: cluster-wide names, unique per account.
func accountRBACName(sa serviceAccount) string {
	return "aws-ccm-renderer:" + sa.namespace + ":" + sa.name
}

// regenerateAccountRBAC returns what AccountRBAC makes for the account and
// permissions rn names.
func regenerateAccountRBAC(rn *yaml.RNode) []*yaml.RNode {
	parts := strings.SplitN(rn.GetName(), ":", 3)
	if len(parts) != 3 || parts[0] != "aws-ccm-renderer" {
		return nil
	}
	f := AccountRBAC{Want: true, Account: ObjectRef{Kind: "ServiceAccount", Namespace: parts[1], Name: parts[2]}}
	rules, _ := readRules(rn.YNode())
	for _, r := range rules {
		for _, res := range r.resources {
			for _, v := range r.verbs {
				f.Permissions = append(f.Permissions, Permission{Resource: res, Verb: v})
			}
		}
	}
	if rn.GetKind() == "ClusterRoleBinding" {
		f.Permissions = CCMServiceAccountPermissions // the binding does not say; any set gives the same binding
	}
	out, _ := f.Filter(nil)
	return out
}
