package renderer

import (
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// AccountRBAC generates a Role and a RoleBinding in each namespace where the
// CCM needs the permissions (accountNamespaces: kube-system and its own)
// that grant the CCM's service account, and nobody else, the Permissions it
// lacks, for when no role in the input is its alone (see decideAccess): no
// more than the decision needs, nowhere else. Want false removes them. It
// is a generator (see generate).
type AccountRBAC struct {
	Want        bool
	Account     ObjectRef // the CCM's ServiceAccount
	Permissions []Permission
}

var _ kio.Filter = AccountRBAC{}

func (f AccountRBAC) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	var want []*yaml.RNode
	if f.Want {
		want = f.objects(false)
	}
	return generate(nodes, markAccountRBAC, want), nil
}

// objects returns the Roles and RoleBindings; clusterWide, the ClusterRole
// and ClusterRoleBinding that the renderer generated instead before it
// granted per namespace (recognised, so that rendering an output of those
// versions again replaces them).
func (f AccountRBAC) objects(clusterWide bool) []*yaml.RNode {
	sa := serviceAccount{namespace: f.Account.Namespace, name: f.Account.Name}
	name := accountRBACName(sa)
	var rules []*yaml.Node
	for _, p := range f.Permissions {
		i := slices.IndexFunc(rules, func(r *yaml.Node) bool {
			return sameNode(mapGet(r, "resources"), seqNode(strNode(p.Resource)))
		})
		if i < 0 {
			rules = append(rules, ruleNode(p.Resource))
			i = len(rules) - 1
		}
		verbs := mapGet(rules[i], "verbs")
		verbs.Content = append(verbs.Content, strNode(p.Verb))
	}
	if clusterWide {
		return roleAndBinding("ClusterRole", "", name, rules, sa)
	}
	var out []*yaml.RNode
	for _, ns := range accountNamespaces(sa) {
		out = append(out, roleAndBinding("Role", ns, name, cloneNodes(rules), sa)...)
	}
	return out
}

// TokenRBAC generates, for --token-scope=controllers, a Role and a
// RoleBinding in kube-system that let the CCM's service account create
// tokens for its controllers' service accounts there (ControllerAccounts),
// by name, and for no other account: what the chart grants cluster-wide,
// narrowed to what the CCM uses. Want false removes them. It is a generator
// (see generate).
type TokenRBAC struct {
	Want    bool
	Account ObjectRef // the CCM's ServiceAccount
}

var _ kio.Filter = TokenRBAC{}

func (f TokenRBAC) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	var want []*yaml.RNode
	if f.Want {
		sa := serviceAccount{namespace: f.Account.Namespace, name: f.Account.Name}
		rule := ruleNode(tokenResource, tokenVerb)
		names := make([]*yaml.Node, len(ControllerAccounts))
		for i, n := range ControllerAccounts {
			names[i] = strNode(n)
		}
		mapSet(rule, "resourceNames", seqNode(names...))
		want = roleAndBinding("Role", controllerNamespace, tokenRBACName(sa), []*yaml.Node{rule}, sa)
	}
	return generate(nodes, markTokenRBAC, want), nil
}

// ControllerAccounts are the service accounts in kube-system that the AWS
// CCM requests tokens for when it runs with
// --use-service-account-credentials=true: its controllers' (the client
// names of k8s.io/cloud-provider app/controllermanager.go's controllers:
// node-controller for cloud-node and cloud-node-lifecycle,
// service-controller, route-controller; the same at v0.26.0, v0.26.5 and
// v0.35.0), the AWS tagging controller's (cloud-provider-aws
// pkg/controllers/tagging, v1.26.0 and v1.35.3) and the AWS cloud
// provider's own client (pkg/providers/v1/aws.go Initialize:
// "aws-cloud-provider"). k8s.io/controller-manager's
// DynamicControllerClientBuilder gets or creates each in kube-system and
// requests its tokens there.
var ControllerAccounts = []string{"aws-cloud-provider", "node-controller", "route-controller", "service-controller", "tagging-controller"}

const (
	controllerNamespace = "kube-system"
	tokenResource       = "serviceaccounts/token"
	tokenVerb           = "create"
)

// accountRBACName names the generated roles and bindings after the service
// account: unique per account in every namespace.
func accountRBACName(sa serviceAccount) string {
	return "aws-ccm-renderer:" + sa.namespace + ":" + sa.name
}

// tokenRBACName names TokenRBAC's Role and RoleBinding.
func tokenRBACName(sa serviceAccount) string { return accountRBACName(sa) + ":tokens" }

// ruleNode returns a rule for a core-group resource with these verbs.
func ruleNode(resource string, verbs ...string) *yaml.Node {
	v := make([]*yaml.Node, len(verbs))
	for i, verb := range verbs {
		v[i] = strNode(verb)
	}
	return &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: []*yaml.Node{
		strNode("apiGroups"), seqNode(strNode("")),
		strNode("resources"), seqNode(strNode(resource)),
		strNode("verbs"), seqNode(v...),
	}}
}

// roleAndBinding returns a role of the kind (Role or ClusterRole) with
// these rules, and a binding of it to the service account alone.
func roleAndBinding(kind, namespace, name string, rules []*yaml.Node, sa serviceAccount) []*yaml.RNode {
	role := newObject("rbac.authorization.k8s.io/v1", kind, namespace, name)
	mapSet(role.YNode(), "rules", seqNode(rules...))
	bind := newObject("rbac.authorization.k8s.io/v1", kind+"Binding", namespace, name)
	mapSet(bind.YNode(), "roleRef", pairsNode("apiGroup", "rbac.authorization.k8s.io", "kind", kind, "name", name))
	mapSet(bind.YNode(), "subjects", seqNode(pairsNode("kind", "ServiceAccount", "name", sa.name, "namespace", sa.namespace)))
	return []*yaml.RNode{role, bind}
}

func cloneNodes(ns []*yaml.Node) []*yaml.Node {
	out := make([]*yaml.Node, len(ns))
	for i, n := range ns {
		out[i] = cloneNode(n)
	}
	return out
}

// regenerateAccountRBAC returns what AccountRBAC makes, and made before in
// ClusterRoles, for the account and permissions rn names.
func regenerateAccountRBAC(rn *yaml.RNode) []*yaml.RNode {
	account, ok := accountOf(rn.GetName(), "")
	if !ok {
		return nil
	}
	f := AccountRBAC{Want: true, Account: account}
	rules, _ := readRules(rn.YNode())
	for _, r := range rules {
		for _, res := range r.resources {
			for _, v := range r.verbs {
				f.Permissions = append(f.Permissions, Permission{Resource: res, Verb: v})
			}
		}
	}
	if strings.HasSuffix(rn.GetKind(), "Binding") {
		f.Permissions = CCMServiceAccountPermissions // a binding does not say; any gives the same binding
	}
	return append(f.objects(false), f.objects(true)...)
}

// regenerateTokenRBAC returns what TokenRBAC makes for the account rn
// names.
func regenerateTokenRBAC(rn *yaml.RNode) []*yaml.RNode {
	account, ok := accountOf(rn.GetName(), ":tokens")
	if !ok {
		return nil
	}
	out, _ := TokenRBAC{Want: true, Account: account}.Filter(nil)
	return out
}

// accountOf reads the service account from a name accountRBACName made,
// with suffix after it.
func accountOf(name, suffix string) (ObjectRef, bool) {
	rest, ok := strings.CutPrefix(name, "aws-ccm-renderer:")
	if ok {
		rest, ok = strings.CutSuffix(rest, suffix)
	}
	if !ok {
		return ObjectRef{}, false
	}
	ns, sa, ok := strings.Cut(rest, ":")
	if !ok || strings.Contains(sa, ":") {
		return ObjectRef{}, false
	}
	return ObjectRef{Kind: "ServiceAccount", Namespace: ns, Name: sa}, true
}
