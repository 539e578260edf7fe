package renderer

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// filterCase is one table test of a filter: input YAML (one object or
// several separated by "---"), the expected YAML or an error substring.
type filterCase struct {
	name    string
	filter  kio.Filter
	input   string
	want    string
	wantErr string
}

func runFilterCases(t *testing.T, cases []filterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []*yaml.RNode
			for _, doc := range strings.Split(tc.input, "\n---\n") {
				rn, err := yaml.Parse(doc)
				if err != nil {
					t.Fatalf("bad test input: %v", err)
				}
				nodes = append(nodes, rn)
			}
			out, err := tc.filter.Filter(nodes)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			var got []string
			for _, rn := range out {
				got = append(got, rn.MustString())
			}
			if g, w := strings.Join(got, "---\n"), strings.TrimLeft(tc.want, "\n"); g != w {
				t.Fatalf("got:\n%s\nwant:\n%s", g, w)
			}
			// Every filter is idempotent.
			again, err := tc.filter.Filter(out)
			if err != nil {
				t.Fatalf("second run: %v", err)
			}
			for i, rn := range again {
				if rn.MustString() != got[i] {
					t.Fatalf("second run changed the output:\n%s", rn.MustString())
				}
			}
		})
	}
}

const dsHead = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ccm
  namespace: kube-system
spec:
  template:
    spec:
`

func ds(podSpec string) string { return dsHead + podSpec }

func mustProfile(d Distro) Profile {
	p, ok := ProfileFor(d)
	if !ok {
		panic(d)
	}
	return p
}

func TestPlacement(t *testing.T) {
	runFilterCases(t, []filterCase{
		{
			name:   "rke2 replaces the kubeadm selector and keeps other keys",
			filter: Placement{Profile: mustProfile(DistroRKE2)},
			input: ds(`      nodeSelector:
        node-role.kubernetes.io/control-plane: ""
        kubernetes.io/os: linux
      containers: []
`),
			want: ds(`      nodeSelector:
        node-role.kubernetes.io/control-plane: "true"
        kubernetes.io/os: linux
      containers: []
`),
		},
		{
			name:   "rke drops the master selector of old charts",
			filter: Placement{Profile: mustProfile(DistroRKE)},
			input:  ds("      nodeSelector:\n        node-role.kubernetes.io/master: \"\"\n"),
			want:   ds("      nodeSelector:\n        node-role.kubernetes.io/controlplane: \"true\"\n"),
		},
		{
			name:   "kubeadm keeps an empty value",
			filter: Placement{Profile: mustProfile(DistroKubeadm)},
			input:  ds("      containers: []\n"),
			want:   ds("      containers: []\n      nodeSelector:\n        node-role.kubernetes.io/control-plane: \"\"\n"),
		},
		{
			name:   "auto removes the selector and writes an affinity",
			filter: Placement{Profile: mustProfile(DistroAuto)},
			input:  ds("      nodeSelector:\n        node-role.kubernetes.io/control-plane: \"\"\n"),
			want: ds(`      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: node-role.kubernetes.io/control-plane
                operator: Exists
            - matchExpressions:
              - key: node-role.kubernetes.io/controlplane
                operator: Exists
            - matchExpressions:
              - key: node-role.kubernetes.io/master
                operator: Exists
`),
		},
		{
			name:   "auto combines each user term with each control-plane label",
			filter: Placement{Profile: Profile{AffinityLabels: []string{LabelControlPlane, LabelControlplane}}},
			input: ds(`      nodeSelector:
        zone: a
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: arch
                operator: In
                values: [amd64]
`),
			want: ds(`      nodeSelector:
        zone: a
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: arch
                operator: In
                values: [amd64]
              - key: node-role.kubernetes.io/control-plane
                operator: Exists
            - matchExpressions:
              - key: arch
                operator: In
                values: [amd64]
              - key: node-role.kubernetes.io/controlplane
                operator: Exists
`),
		},
		{
			name:   "a named distro removes the auto affinity again",
			filter: Placement{Profile: mustProfile(DistroK3s)},
			input: ds(`      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: node-role.kubernetes.io/control-plane
                operator: Exists
            - matchExpressions:
              - key: node-role.kubernetes.io/master
                operator: Exists
`),
			want: ds("      nodeSelector:\n        node-role.kubernetes.io/control-plane: \"true\"\n"),
		},
		{
			name:    "a nodeSelector that is a list",
			filter:  Placement{Profile: mustProfile(DistroRKE2)},
			input:   ds("      nodeSelector: [a]\n"),
			wantErr: "DaemonSet kube-system/ccm: spec.template.spec.nodeSelector is a list, not a map",
		},
		{
			name:    "not a workload",
			filter:  Placement{Profile: mustProfile(DistroRKE2)},
			input:   "kind: ConfigMap\nmetadata:\n  name: x\n",
			wantErr: "ConfigMap x is not a DaemonSet or Deployment",
		},
		{
			name:    "no pod template",
			filter:  Placement{Profile: mustProfile(DistroRKE2)},
			input:   "kind: Deployment\nmetadata:\n  name: x\nspec: {}\n",
			wantErr: "has no pod template",
		},
	})
}

func TestTolerations(t *testing.T) {
	rke2 := mustProfile(DistroRKE2).Tolerations
	runFilterCases(t, []filterCase{
		{
			name:   "chart tolerations replaced in place, others kept in order",
			filter: Tolerations{Tolerations: rke2},
			input: ds(`      tolerations:
      - key: node.cloudprovider.kubernetes.io/uninitialized
        value: "true"
        effect: NoSchedule
      - key: dedicated
        operator: Equal
        value: ccm
      - key: node-role.kubernetes.io/master
        effect: NoSchedule
      - key: node-role.kubernetes.io/control-plane
        effect: NoSchedule
`),
			want: ds(`      tolerations:
      - key: node.cloudprovider.kubernetes.io/uninitialized
        operator: Exists
        effect: NoSchedule
      - key: dedicated
        operator: Equal
        value: ccm
      - key: node-role.kubernetes.io/master
        effect: NoSchedule
      - key: node-role.kubernetes.io/control-plane
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/etcd
        operator: Exists
        effect: NoExecute
      - key: CriticalAddonsOnly
        operator: Exists
`),
		},
		{
			name:   "duplicates of a covered toleration collapse into one",
			filter: Tolerations{Tolerations: []Toleration{exists(LabelControlplane, "NoSchedule")}},
			input: ds(`      tolerations:
      - key: node-role.kubernetes.io/controlplane
        value: "true"
        effect: NoSchedule
      - key: node-role.kubernetes.io/controlplane
        operator: Exists
        effect: NoSchedule
`),
			want: ds(`      tolerations:
      - key: node-role.kubernetes.io/controlplane
        operator: Exists
        effect: NoSchedule
`),
		},
		{
			name:   "a broader user toleration makes ours unnecessary; no catch-all added",
			filter: Tolerations{Tolerations: []Toleration{tolCritical, tolEtcd}},
			input:  ds("      tolerations:\n      - key: node-role.kubernetes.io/etcd\n        operator: Exists\n"),
			want:   ds("      tolerations:\n      - key: node-role.kubernetes.io/etcd\n        operator: Exists\n      - key: CriticalAddonsOnly\n        operator: Exists\n"),
		},
		{
			name:   "no tolerations yet",
			filter: Tolerations{Tolerations: []Toleration{tolUninitialized}},
			input:  ds("      containers: []\n"),
			want:   ds("      containers: []\n      tolerations:\n      - key: node.cloudprovider.kubernetes.io/uninitialized\n        operator: Exists\n        effect: NoSchedule\n"),
		},
		{
			name:    "a toleration that is a string",
			filter:  Tolerations{Tolerations: rke2},
			input:   ds("      tolerations:\n      - everything\n"),
			wantErr: "spec.template.spec.tolerations holds a scalar, not a toleration",
		},
	})
}

func TestHostNetwork(t *testing.T) {
	runFilterCases(t, []filterCase{
		{name: "on", filter: HostNetwork{Enabled: true}, input: ds("      dnsPolicy: Default\n"),
			want: ds("      dnsPolicy: Default\n      hostNetwork: true\n")},
		{name: "off removes it", filter: HostNetwork{}, input: ds("      hostNetwork: true\n      dnsPolicy: Default\n"),
			want: ds("      dnsPolicy: Default\n")},
		{name: "not a workload", filter: HostNetwork{Enabled: true}, input: "kind: Service\nmetadata:\n  name: s\n",
			wantErr: "Service s is not a DaemonSet or Deployment"},
	})
}

func TestArgs(t *testing.T) {
	container := func(args string) string {
		return ds("      containers:\n      - name: ccm\n        image: registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0\n" + args)
	}
	runFilterCases(t, []filterCase{
		{
			name: "merge by name: changed flags keep their place, new ones are appended",
			filter: Args{Set: []Flag{{"cloud-provider", "aws"}, {"use-service-account-credentials", "true"}, {"v", "4"}},
				Remove: []string{"enable-leader-migration"}},
			input: container("        args:\n        - --v\n        - \"2\"\n        - --enable-leader-migration=true\n        - --cloud-provider=aws\n        - --cluster-name=prod\n"),
			want:  container("        args:\n        - --v=4\n        - --cloud-provider=aws\n        - --cluster-name=prod\n        - --use-service-account-credentials=true\n"),
		},
		{
			name:   "later duplicates of a set flag go",
			filter: Args{Set: []Flag{{"v", "2"}}},
			input:  container("        args: [--v=1, --x, --v=3]\n"),
			want:   container("        args: [--v=2, --x]\n"),
		},
		{
			name:   "only CCM containers are touched",
			filter: Args{Set: []Flag{{"cloud-provider", "aws"}}},
			input:  ds("      containers:\n      - name: sidecar\n        image: busybox\n        args: [sleep]\n      - name: ccm\n        image: example.com/ccm:1\n        args:\n        - --cloud-provider\n        - aws\n"),
			want:   ds("      containers:\n      - name: sidecar\n        image: busybox\n        args: [sleep]\n      - name: ccm\n        image: example.com/ccm:1\n        args:\n        - --cloud-provider=aws\n"),
		},
		{
			name:   "no args yet",
			filter: Args{Set: []Flag{{"cloud-provider", "aws"}}},
			input:  container(""),
			want:   container("        args:\n        - --cloud-provider=aws\n"),
		},
		{
			name:    "args that are a map",
			filter:  Args{Set: []Flag{{"v", "2"}}},
			input:   container("        args: {v: 2}\n"),
			wantErr: `container "ccm": args is a map, not a list`,
		},
	})
}

func TestArgsMerge(t *testing.T) {
	a := Args{Set: []Flag{{"a", "1"}, {"new", "x"}}, Remove: []string{"gone"}}
	got := a.Merge([]string{"pos", "-a", "0", "--gone", "--b", "--c=3", "--gone=1", "--"})
	want := []string{"pos", "-a=1", "--b", "--c=3", "--", "--new=x"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("Merge = %q, want %q", got, want)
	}
}

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
			wantErr: "ClusterRoleBinding b is not a Role or ClusterRole",
		},
	})
}

func TestLeaderMigration(t *testing.T) {
	in := ds(`      containers:
      - name: ccm
        image: registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0
        volumeMounts:
        - name: cloud-config
          mountPath: /etc/aws
      volumes:
      - name: cloud-config
        hostPath:
          path: /etc/aws
`)
	mounted := ds(`      containers:
      - name: ccm
        image: registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0
        volumeMounts:
        - name: cloud-config
          mountPath: /etc/aws
        - name: aws-ccm-leader-migration
          mountPath: /etc/kubernetes/aws-ccm-leader-migration
          readOnly: true
      volumes:
      - name: cloud-config
        hostPath:
          path: /etc/aws
      - name: aws-ccm-leader-migration
        configMap:
          name: ccm-leader-migration
`)
	runFilterCases(t, []filterCase{
		{name: "mount", filter: LeaderMigration{Mount: true}, input: in, want: mounted},
		{name: "unmount restores the pod", filter: LeaderMigration{}, input: mounted, want: in},
		{name: "volumes that are a map", filter: LeaderMigration{Mount: true}, input: ds("      volumes: {a: b}\n"),
			wantErr: "spec.template.spec.volumes is a map, not a list"},
	})
}
