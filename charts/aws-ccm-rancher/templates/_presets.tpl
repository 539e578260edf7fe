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
{{- /* The CCM image tag to pin per Kubernetes minor (the latest cloud-controller-manager image of the minor promoted to registry.k8s.io (kubernetes/k8s.io, registry.k8s.io/images/k8s-staging-provider-aws/images.yaml)). */ -}}
{{- define "aws-ccm-rancher.ccmReleases" -}}
"22": v1.22.8
"23": v1.23.20
"24": v1.24.19
"25": v1.25.15
"26": v1.26.14
"27": v1.27.10
"28": v1.28.11
"29": v1.29.10
"30": v1.30.10
"31": v1.31.9
"32": v1.32.8
"33": v1.33.4
"34": v1.34.3
"35": v1.35.2
"36": v1.36.2
"37": v1.37.1
{{- end -}}
{{- /* The last Kubernetes minor with the in-tree AWS provider: the clusters that migrate run it or an older one. */ -}}
{{- define "aws-ccm-rancher.lastInTreeMinor" -}}26{{- end -}}
{{- /* The distributions the chart serves. */ -}}
{{- define "aws-ccm-rancher.distros" -}}["rke", "rke2", "k3s", "kubeadm"]{{- end -}}
{{- define "aws-ccm-rancher.distroChoice" -}}rke, rke2, k3s or kubeadm{{- end -}}
{{- /* The distributions without migrate mode: built without the in-tree cloud providers. */ -}}
{{- define "aws-ccm-rancher.noMigrate" -}}["k3s"]{{- end -}}
{{- /* The reasons of the renderer's verdicts, which the chart's refusals and warnings give in the same words. */ -}}
{{- define "aws-ccm-rancher.verdict.skew-install" -}}the AWS CCM is released per Kubernetes minor and meant to run at the cluster's{{- end -}}
{{- define "aws-ccm-rancher.verdict.skew-migrate" -}}a migration runs the CCM of the cluster's minor{{- end -}}
{{- define "aws-ccm-rancher.verdict.no-in-tree" -}}has no in-tree AWS provider to migrate from{{- end -}}
{{- define "aws-ccm-rancher.verdict.cluster-unknown" -}}newer than any cluster that can migrate{{- end -}}
{{- define "aws-ccm-rancher.verdict.no-migrate-mode" -}}has no migrate mode: it is built without the in-tree cloud providers, so no in-tree controller manager hands over to the CCM{{- end -}}
