package renderer

import (
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MigrationLeaseRBAC generates a Role and RoleBinding in the migration
// lease's namespace that let the in-tree kube-controller-manager's identity
// hold the migration lease: get and update on that one Lease, and create on
// Leases (RBAC cannot restrict create by name; the controller manager's
// bootstrap ClusterRole grants it anyway). Kubernetes up to 1.26, the
// versions that migrate, grant the controller manager no Lease but its own
// ("kube-controller-manager"): without this it never holds the migration
// lock. Want false removes them. It is a generator (see generate).
type MigrationLeaseRBAC struct {
	Want       bool
	Workload   ObjectRef // the CCM's workload: the objects are named after it
	Namespace  string    // the lease's namespace
	LeaderName string    // the lease's name
	User       string    // the controller manager's identity
}

var _ kio.Filter = MigrationLeaseRBAC{}

func (f MigrationLeaseRBAC) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	var want []*yaml.RNode
	if f.Want {
		name := MigrationLeaseRBACName(f.Workload.Name)
		role := newObject("rbac.authorization.k8s.io/v1", "Role", f.Namespace, name)
		leases := func() *yaml.Node {
			return &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: []*yaml.Node{
				strNode("apiGroups"), seqNode(strNode("coordination.k8s.io")),
				strNode("resources"), seqNode(strNode("leases")),
			}}
		}
		named := leases()
		mapSet(named, "resourceNames", seqNode(strNode(f.LeaderName)))
		mapSet(named, "verbs", seqNode(strNode("get"), strNode("update")))
		create := leases()
		mapSet(create, "verbs", seqNode(strNode("create")))
		mapSet(role.YNode(), "rules", seqNode(named, create))
		bind := newObject("rbac.authorization.k8s.io/v1", "RoleBinding", f.Namespace, name)
		mapSet(bind.YNode(), "roleRef", pairsNode("apiGroup", "rbac.authorization.k8s.io", "kind", "Role", "name", name))
		mapSet(bind.YNode(), "subjects", seqNode(pairsNode("apiGroup", "rbac.authorization.k8s.io", "kind", "User", "name", f.User)))
		want = append(want, role, bind)
	}
	return generate(nodes, markMigrationLease, want), nil
}

// MigrationLeaseRBACName names the Role and RoleBinding after the CCM's
// workload.
func MigrationLeaseRBACName(workload string) string { return workload + "-leader-migration" }
