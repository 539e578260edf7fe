package benchdata

import (
	"bytes"
	"fmt"
	"strings"
)

// The inputs of the cost benchmarks: streams someone who writes the input
// can make to slow the renderer down or make it run out of memory.

// ccmRole is the name of the CCM's ClusterRole in CCM.
const ccmRole = "system:cloud-controller-manager"

// ManyRoles returns the CCM's release with n more ClusterRoles, each bound
// to the CCM's service account by a ClusterRoleBinding of its own (about
// 360 bytes a pair): an RBAC analysis that compares every role with every
// binding takes n² steps.
func ManyRoles(n int) []byte {
	var b bytes.Buffer
	b.Grow(n*370 + len(CCM))
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: extra-%[1]d
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: extra-%[1]d
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: extra-%[1]d
subjects:
- kind: ServiceAccount
  name: cloud-controller-manager
  namespace: kube-system
`, i)
	}
	b.WriteString(CCM)
	return b.Bytes()
}

// AliasBindings returns the CCM's release with n ClusterRoleBindings of its
// account whose anchors and aliases expand each to about 200,000 nodes
// (6.7 kB written), under the YAML library's limit on aliasing (at most 99%
// of a document's nodes may come from aliases): 100 of them are 653 KiB
// that expand to 20 million nodes. A renderer that expands the aliases of
// every binding it reads, and keeps the trees, needs gigabytes.
func AliasBindings(n int) []byte {
	leaf := "&l [" + strings.TrimSuffix(strings.Repeat("a, ", 2000), ", ") + "]"
	refs := "[" + strings.TrimSuffix(strings.Repeat("*l, ", 99), ", ") + "]"
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: aliased-%d
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %s
subjects:
- kind: ServiceAccount
  name: cloud-controller-manager
  namespace: kube-system
x: {leaf: %s, refs: %s}
`, i, ccmRole, leaf, refs)
	}
	b.WriteString(CCM)
	return b.Bytes()
}
