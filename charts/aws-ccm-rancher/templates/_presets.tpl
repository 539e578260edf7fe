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
"22": "v1.22.8@sha256:6f372c1908118a7205795cfb281a9b0a28795190a808477359f86b073e5a8fa6"
"23": "v1.23.20@sha256:b4caba8314fe5b6395397730e7fb3164ccb25a04228a0fad003d43329607dcfc"
"24": "v1.24.19@sha256:3a8daf576a7c624ad4512daff51f0a34f9c0257566c92c44eee4a029bca86ff1"
"25": "v1.25.15@sha256:825136d4377b4132ee9c024f8db3f77da5f641523377ad66b7e1b29b057c13e1"
"26": "v1.26.14@sha256:bfdfbfe6ddee363786d27a3f47cdaaf7de06edb38352e825038847c5d0935064"
"27": "v1.27.10@sha256:f2f12f9a87a79ab83b7bce17b416eee33a44f24a9103ffe54e8f861073b41f3b"
"28": "v1.28.11@sha256:6deb87f623dab9d2f1391bbd1d3be34d949175bc58cbca6cdb2830dc2c6171f3"
"29": "v1.29.10@sha256:84737d544b6c07c16be9a1493557c6ae93138e0d48c63656d370be8b2230c398"
"30": "v1.30.10@sha256:d24df67308f35fe2c71aa48047170f2eeb3b39d23ede4b79351143f58c7a380e"
"31": "v1.31.9@sha256:4dc7e514e03ad28fa475153831c1d2bb40f19c65c1afc9caa83fa6025c018bb0"
"32": "v1.32.8@sha256:1bb79227d3f631d686ee1dfaa36ffcd6780f4d54918b0e54aa5d635a987b3fe5"
"33": "v1.33.4@sha256:b54bc094711e9d7ace6c9bab3d6f02a598e7570ac1fedd6341940e1de79ea476"
"34": "v1.34.3@sha256:ab45cec4a1ee68a556d09a362746db8fd66b258101aefcf0542f51e960248810"
"35": "v1.35.2@sha256:5a5d4e5942ad078a184c12bf5435f8226ccb157ee15e9e1f87c183a4bf4b8f1a"
"36": "v1.36.2@<its digest: crane digest registry.k8s.io/provider-aws/cloud-controller-manager:v1.36.2>"
"37": "v1.37.1@<its digest: crane digest registry.k8s.io/provider-aws/cloud-controller-manager:v1.37.1>"
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
