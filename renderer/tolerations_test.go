package renderer

import (
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

func TestTolerations(t *testing.T) {
	rke2 := mustProfile(distros.RKE2).Tolerations
	runFilterCases(t, []filterCase{
		{
			name:   "the chart's tolerations of managed keys become the profile's block, others kept in order",
			filter: Tolerations{Tolerations: rke2},
			input: ds(`      tolerations:
      - key: dedicated
        operator: Equal
        value: ccm
      - key: node.cloudprovider.kubernetes.io/uninitialized
        value: "true"
        effect: NoSchedule
      - key: other
        operator: Exists
      - key: node-role.kubernetes.io/master
        effect: NoSchedule
      - key: node-role.kubernetes.io/control-plane
        effect: NoSchedule
`),
			want: ds(`      tolerations:
      - key: dedicated
        operator: Equal
        value: ccm
      - key: node.cloudprovider.kubernetes.io/uninitialized
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/control-plane
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/etcd
        operator: Exists
        effect: NoExecute
      - key: CriticalAddonsOnly
        operator: Exists
      - key: other
        operator: Exists
`),
		},
		{
			name:   "another distribution's tolerations go: rke over auto's output",
			filter: Tolerations{Tolerations: mustProfile(distros.RKE).Tolerations},
			input: ds(`      tolerations:
      - key: a
        operator: Exists
      - key: node.cloudprovider.kubernetes.io/uninitialized
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/control-plane
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/controlplane
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/master
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/etcd
        operator: Exists
        effect: NoExecute
      - key: CriticalAddonsOnly
        operator: Exists
`),
			want: ds(`      tolerations:
      - key: a
        operator: Exists
      - key: node.cloudprovider.kubernetes.io/uninitialized
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/controlplane
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
			name:   "duplicates of a managed key collapse into the block",
			filter: Tolerations{Tolerations: []distros.Toleration{{Key: distros.LabelRKE1ControlPlane, Operator: "Exists", Effect: "NoSchedule"}}},
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
			name:   "a key-less catch-all is the user's: kept, and none is added",
			filter: Tolerations{Tolerations: []distros.Toleration{{Key: distros.TaintCriticalAddon, Operator: "Exists"}}},
			input:  ds("      tolerations:\n      - operator: Exists\n"),
			want:   ds("      tolerations:\n      - operator: Exists\n      - key: CriticalAddonsOnly\n        operator: Exists\n"),
		},
		{
			name:   "no tolerations yet",
			filter: Tolerations{Tolerations: []distros.Toleration{{Key: distros.TaintUninitialized, Operator: "Exists", Effect: "NoSchedule"}}},
			input:  ds("      containers: []\n"),
			want:   ds("      containers: []\n      tolerations:\n      - key: node.cloudprovider.kubernetes.io/uninitialized\n        operator: Exists\n        effect: NoSchedule\n"),
		},
		{
			name:    "a toleration that is a string",
			filter:  Tolerations{Tolerations: rke2},
			input:   ds("      tolerations:\n      - everything\n"),
			wantErr: "DaemonSet kube-system/ccm: spec.template.spec.tolerations holds a scalar, not a toleration",
		},
	})
}
