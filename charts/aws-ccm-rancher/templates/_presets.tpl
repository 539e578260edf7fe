{{- /* Generated from aws-ccm-renderer's output for the upstream chart (make generate): do not edit. */ -}}
{{- /* What each distro and mode needs in the upstream chart's values; templates/validate.yaml checks it. */ -}}
{{- define "aws-ccm-rancher.presets" -}}
k3s-install:
  args:
  - --cloud-provider=aws
  - --use-service-account-credentials=true
  - --configure-cloud-routes=false
  nodeSelector:
    node-role.kubernetes.io/control-plane: "true"
  tolerations:
  - effect: NoSchedule
    key: node.cloudprovider.kubernetes.io/uninitialized
    operator: Exists
  - effect: NoSchedule
    key: node-role.kubernetes.io/control-plane
    operator: Exists
  - effect: NoExecute
    key: node-role.kubernetes.io/etcd
    operator: Exists
  - key: CriticalAddonsOnly
    operator: Exists
k3s-migrate:
  args:
  - --cloud-provider=aws
  - --use-service-account-credentials=true
  - --configure-cloud-routes=false
  - --enable-leader-migration=true
  - --leader-migration-config=/etc/kubernetes/aws-ccm-leader-migration/leader-migration.yaml
  nodeSelector:
    node-role.kubernetes.io/control-plane: "true"
  tolerations:
  - effect: NoSchedule
    key: node.cloudprovider.kubernetes.io/uninitialized
    operator: Exists
  - effect: NoSchedule
    key: node-role.kubernetes.io/control-plane
    operator: Exists
  - effect: NoExecute
    key: node-role.kubernetes.io/etcd
    operator: Exists
  - key: CriticalAddonsOnly
    operator: Exists
kubeadm-install:
  args:
  - --cloud-provider=aws
  - --use-service-account-credentials=true
  - --configure-cloud-routes=false
  nodeSelector:
    node-role.kubernetes.io/control-plane: ""
  tolerations:
  - effect: NoSchedule
    key: node.cloudprovider.kubernetes.io/uninitialized
    operator: Exists
  - effect: NoSchedule
    key: node-role.kubernetes.io/control-plane
    operator: Exists
  - effect: NoSchedule
    key: node-role.kubernetes.io/master
    operator: Exists
  - key: CriticalAddonsOnly
    operator: Exists
kubeadm-migrate:
  args:
  - --cloud-provider=aws
  - --use-service-account-credentials=true
  - --configure-cloud-routes=false
  - --enable-leader-migration=true
  - --leader-migration-config=/etc/kubernetes/aws-ccm-leader-migration/leader-migration.yaml
  nodeSelector:
    node-role.kubernetes.io/control-plane: ""
  tolerations:
  - effect: NoSchedule
    key: node.cloudprovider.kubernetes.io/uninitialized
    operator: Exists
  - effect: NoSchedule
    key: node-role.kubernetes.io/control-plane
    operator: Exists
  - effect: NoSchedule
    key: node-role.kubernetes.io/master
    operator: Exists
  - key: CriticalAddonsOnly
    operator: Exists
rke-install:
  args:
  - --cloud-provider=aws
  - --use-service-account-credentials=true
  - --configure-cloud-routes=false
  nodeSelector:
    node-role.kubernetes.io/control-plane: null
    node-role.kubernetes.io/controlplane: "true"
  tolerations:
  - effect: NoSchedule
    key: node.cloudprovider.kubernetes.io/uninitialized
    operator: Exists
  - effect: NoSchedule
    key: node-role.kubernetes.io/controlplane
    operator: Exists
  - effect: NoExecute
    key: node-role.kubernetes.io/etcd
    operator: Exists
  - key: CriticalAddonsOnly
    operator: Exists
rke-migrate:
  args:
  - --cloud-provider=aws
  - --use-service-account-credentials=true
  - --configure-cloud-routes=false
  - --enable-leader-migration=true
  - --leader-migration-config=/etc/kubernetes/aws-ccm-leader-migration/leader-migration.yaml
  nodeSelector:
    node-role.kubernetes.io/control-plane: null
    node-role.kubernetes.io/controlplane: "true"
  tolerations:
  - effect: NoSchedule
    key: node.cloudprovider.kubernetes.io/uninitialized
    operator: Exists
  - effect: NoSchedule
    key: node-role.kubernetes.io/controlplane
    operator: Exists
  - effect: NoExecute
    key: node-role.kubernetes.io/etcd
    operator: Exists
  - key: CriticalAddonsOnly
    operator: Exists
rke2-install:
  args:
  - --cloud-provider=aws
  - --use-service-account-credentials=true
  - --configure-cloud-routes=false
  nodeSelector:
    node-role.kubernetes.io/control-plane: "true"
  tolerations:
  - effect: NoSchedule
    key: node.cloudprovider.kubernetes.io/uninitialized
    operator: Exists
  - effect: NoSchedule
    key: node-role.kubernetes.io/control-plane
    operator: Exists
  - effect: NoExecute
    key: node-role.kubernetes.io/etcd
    operator: Exists
  - key: CriticalAddonsOnly
    operator: Exists
rke2-migrate:
  args:
  - --cloud-provider=aws
  - --use-service-account-credentials=true
  - --configure-cloud-routes=false
  - --enable-leader-migration=true
  - --leader-migration-config=/etc/kubernetes/aws-ccm-leader-migration/leader-migration.yaml
  nodeSelector:
    node-role.kubernetes.io/control-plane: "true"
  tolerations:
  - effect: NoSchedule
    key: node.cloudprovider.kubernetes.io/uninitialized
    operator: Exists
  - effect: NoSchedule
    key: node-role.kubernetes.io/control-plane
    operator: Exists
  - effect: NoExecute
    key: node-role.kubernetes.io/etcd
    operator: Exists
  - key: CriticalAddonsOnly
    operator: Exists
{{- end -}}
{{- /* The LeaderMigrationConfiguration API versions by the CCM's minor, oldest first. */ -}}
{{- define "aws-ccm-rancher.migrationAPIs" -}}
- since: "1.21"
  apiVersion: controllermanager.config.k8s.io/v1alpha1
  featureGate: true
- since: "1.22"
  apiVersion: controllermanager.config.k8s.io/v1beta1
  featureGate: false
- since: "1.24"
  apiVersion: controllermanager.config.k8s.io/v1
  featureGate: false
{{- end -}}
