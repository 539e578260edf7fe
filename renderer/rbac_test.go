package renderer

import "testing"

func TestRBAC(t *testing.T) {
	role := func(kind, rules string) string {
		return "apiVersion: rbac.authorization.k8s.io/v1\nkind: " + kind + "\nmetadata:\n  name: ccm\nrules:\n" + rules
	}
	f := RBAC{Permissions: CCMServiceAccountPermissions}
	runFilterCases(t, []filterCase{
		{
			name:   "get added to the dedicated rule in place",
			filter: f,
			input:  role("ClusterRole", "- apiGroups: [\"\"]\n  resources: [nodes]\n  verbs: [\"*\"]\n- apiGroups: [\"\"]\n  resources: [serviceaccounts]\n  verbs: [create]\n- apiGroups: [\"\"]\n  resources: [serviceaccounts/token]\n  verbs: [create]\n"),
			want:   role("ClusterRole", "- apiGroups: [\"\"]\n  resources: [nodes]\n  verbs: [\"*\"]\n- apiGroups: [\"\"]\n  resources: [serviceaccounts]\n  verbs: [create, get]\n- apiGroups: [\"\"]\n  resources: [serviceaccounts/token]\n  verbs: [create]\n"),
		},
		{
			name:   "a shared rule is not widened: new rules instead",
			filter: f,
			input:  role("ClusterRole", "- apiGroups: [\"\"]\n  resources: [serviceaccounts, secrets]\n  verbs: [create]\n"),
			want: role("ClusterRole", "- apiGroups: [\"\"]\n  resources: [serviceaccounts, secrets]\n  verbs: [create]\n"+
				"- apiGroups:\n  - \"\"\n  resources:\n  - serviceaccounts\n  verbs:\n  - get\n"+
				"- apiGroups:\n  - \"\"\n  resources:\n  - serviceaccounts/token\n  verbs:\n  - create\n"),
		},
		{
			name:   "a wildcard already grants everything",
			filter: f,
			input:  role("ClusterRole", "- apiGroups: [\"*\"]\n  resources: [\"*\"]\n  verbs: [\"*\"]\n"),
			want:   role("ClusterRole", "- apiGroups: [\"*\"]\n  resources: [\"*\"]\n  verbs: [\"*\"]\n"),
		},
		{
			name:   "rules split over two bound roles count together",
			filter: f,
			input: role("ClusterRole", "- apiGroups: [\"\"]\n  resources: [serviceaccounts]\n  verbs: [get, create]\n") + "\n---\n" +
				role("Role", "- apiGroups: [\"\"]\n  resources: [serviceaccounts/token]\n  verbs: [create]\n"),
			want: role("ClusterRole", "- apiGroups: [\"\"]\n  resources: [serviceaccounts]\n  verbs: [get, create]\n") + "---\n" +
				role("Role", "- apiGroups: [\"\"]\n  resources: [serviceaccounts/token]\n  verbs: [create]\n"),
		},
		{
			name:    "rules that are not a list",
			filter:  f,
			input:   role("ClusterRole", "  a: b\n"),
			wantErr: "ClusterRole ccm: rules is a map, not a list",
		},
		{
			name:    "verbs that are not strings",
			filter:  f,
			input:   role("ClusterRole", "- apiGroups: [\"\"]\n  resources: [serviceaccounts]\n  verbs: [[get]]\n"),
			wantErr: "rules[0].verbs holds a list, not a string",
		},
		{
			name:    "not a role",
			filter:  f,
			input:   "kind: ClusterRoleBinding\nmetadata:\n  name: b\n",
			wantErr: "ClusterRoleBinding b: not a Role or ClusterRole",
		},
	})
}
