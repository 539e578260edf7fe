package renderer

import (
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

func TestPlacement(t *testing.T) {
	runFilterCases(t, []filterCase{
		{
			name:   "rke2 replaces the kubeadm selector and keeps other keys",
			filter: Placement{Record: mustProfile(distros.RKE2)},
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
			filter: Placement{Record: mustProfile(distros.RKE)},
			input:  ds("      nodeSelector:\n        node-role.kubernetes.io/master: \"\"\n"),
			want:   ds("      nodeSelector:\n        node-role.kubernetes.io/controlplane: \"true\"\n"),
		},
		{
			name:   "kubeadm keeps an empty value",
			filter: Placement{Record: mustProfile(distros.Kubeadm)},
			input:  ds("      containers: []\n"),
			want:   ds("      containers: []\n      nodeSelector:\n        node-role.kubernetes.io/control-plane: \"\"\n"),
		},
		{
			name:   "auto empties the selector and writes an affinity",
			filter: Placement{Record: mustProfile(distros.Auto)},
			input:  ds("      nodeSelector:\n        node-role.kubernetes.io/control-plane: \"\"\n"),
			want: ds(`      nodeSelector: {}
      affinity:
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
			filter: Placement{Record: distros.Record{AffinityLabels: []string{distros.LabelControlPlane, distros.LabelRKE1ControlPlane}}},
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
			filter: Placement{Record: mustProfile(distros.K3s)},
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
			name:   "a new selector goes before the fields the renderer orders after it",
			filter: Placement{Record: mustProfile(distros.RKE2)},
			input:  ds("      containers: []\n      tolerations: []\n      hostNetwork: true\n"),
			want:   ds("      containers: []\n      nodeSelector:\n        node-role.kubernetes.io/control-plane: \"true\"\n      tolerations: []\n      hostNetwork: true\n"),
		},
		{
			name:    "a nodeSelector that is a list",
			filter:  Placement{Record: mustProfile(distros.RKE2)},
			input:   ds("      nodeSelector: [a]\n"),
			wantErr: "DaemonSet kube-system/ccm: spec.template.spec.nodeSelector is a list, not a map",
		},
		{
			name:    "not a workload",
			filter:  Placement{Record: mustProfile(distros.RKE2)},
			input:   "kind: ConfigMap\nmetadata:\n  name: x\n",
			wantErr: "ConfigMap x: no pod template",
		},
		{
			name:    "no pod template",
			filter:  Placement{Record: mustProfile(distros.RKE2)},
			input:   "kind: Deployment\nmetadata:\n  name: x\nspec: {}\n",
			wantErr: "Deployment x: no pod template",
		},
	})
}
