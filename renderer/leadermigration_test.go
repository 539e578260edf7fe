package renderer

import "testing"

func TestLeaderMigrationMount(t *testing.T) {
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
		{name: "mount", filter: LeaderMigrationMount{Workload: ccmContainer, Mount: true}, input: in, want: mounted},
		{name: "unmount restores the pod", filter: LeaderMigrationMount{Workload: ccmContainer}, input: mounted, want: in},
		{name: "volumes that are a map", filter: LeaderMigrationMount{Workload: ccmContainer, Mount: true}, input: ds("      volumes: {a: b}\n"),
			wantErr: "spec.template.spec.volumes is a map, not a list"},
	})
}
