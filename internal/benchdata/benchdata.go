// Package benchdata generates the manifest streams the benchmarks use: an
// umbrella chart's output of many applications with the CCM inside.
package benchdata

import (
	"bytes"
	"fmt"
)

// CCM is a CCM release as `helm template` prints it, shaped like the
// upstream chart's output.
const CCM = `---
# Source: aws-cloud-controller-manager/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: cloud-controller-manager
  namespace: kube-system
---
# Source: aws-cloud-controller-manager/templates/clusterrole.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:cloud-controller-manager
rules:
- apiGroups:
  - ""
  resources:
  - serviceaccounts
  verbs:
  - create
- apiGroups:
  - ""
  resources:
  - serviceaccounts/token
  verbs:
  - create
---
# Source: aws-cloud-controller-manager/templates/cluserrolebinding.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:cloud-controller-manager
roleRef:
  kind: ClusterRole
  name: system:cloud-controller-manager
  apiGroup: rbac.authorization.k8s.io
subjects:
- apiGroup: ""
  kind: ServiceAccount
  name: cloud-controller-manager
  namespace: kube-system
---
# Source: aws-cloud-controller-manager/templates/daemonset.yaml
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: aws-cloud-controller-manager
  namespace: kube-system
spec:
  selector:
    matchLabels:
      k8s-app: aws-cloud-controller-manager
  template:
    metadata:
      labels:
        k8s-app: aws-cloud-controller-manager
    spec:
      tolerations:
        - effect: NoSchedule
          key: node.cloudprovider.kubernetes.io/uninitialized
          value: "true"
        - effect: NoSchedule
          key: node-role.kubernetes.io/control-plane
      nodeSelector:
        node-role.kubernetes.io/control-plane: ""
      serviceAccountName: cloud-controller-manager
      containers:
        - name: aws-cloud-controller-manager
          image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0"
          args:
            - --v=2
            - --cloud-provider=aws
`

// the documents of one application of the umbrella chart, about 1.1 kB each
// on average.
var app = []string{`---
# Source: umbrella/charts/app%[1]d/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%[1]d
  namespace: team-%[2]d
  annotations:
    meta.example.com/owner: "team-%[2]d@example.com"
    meta.example.com/runbook: "https://runbooks.example.com/team-%[2]d/app-%[1]d"
    meta.example.com/description: "Application %[1]d of the umbrella release, owned by team %[2]d"
    meta.example.com/cost-center: "cc-%[2]d-0042"
    meta.example.com/tier: backend
    meta.example.com/part-of: umbrella
    meta.example.com/component: app-%[1]d
    meta.example.com/version: "1.2.%[1]d"
    meta.example.com/environment: production
    meta.example.com/compliance: pci-scope-none
    meta.example.com/checksum: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
  labels:
    app.kubernetes.io/name: app-%[1]d
    app.kubernetes.io/instance: umbrella
    helm.sh/chart: "app-1.2.3"
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: app-%[1]d
  template:
    metadata:
      labels:
        app.kubernetes.io/name: app-%[1]d
    spec:
      serviceAccountName: app-%[1]d
      containers:
        - name: app
          image: "registry.example.com/team/app:v1.2.%[1]d"
          args:
            - --port=8080
            - --log-level=info
          ports:
            - containerPort: 8080
              name: http
          env:
            - name: FOO
              value: "bar"
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
          readinessProbe:
            httpGet:
              path: /healthz
              port: http
`, `---
# Source: umbrella/charts/app%[1]d/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: app-%[1]d
  namespace: team-%[2]d
  annotations:
    meta.example.com/owner: "team-%[2]d@example.com"
    meta.example.com/runbook: "https://runbooks.example.com/team-%[2]d/app-%[1]d"
    meta.example.com/description: "Application %[1]d of the umbrella release, owned by team %[2]d"
    meta.example.com/cost-center: "cc-%[2]d-0042"
    meta.example.com/tier: backend
    meta.example.com/part-of: umbrella
    meta.example.com/component: app-%[1]d
    meta.example.com/version: "1.2.%[1]d"
    meta.example.com/environment: production
    meta.example.com/compliance: pci-scope-none
    meta.example.com/checksum: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
  labels:
    app.kubernetes.io/name: app-%[1]d
spec:
  type: ClusterIP
  ports:
    - port: 80
      targetPort: http
      protocol: TCP
      name: http
  selector:
    app.kubernetes.io/name: app-%[1]d
`, `---
# Source: umbrella/charts/app%[1]d/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-%[1]d-config
  namespace: team-%[2]d
  annotations:
    meta.example.com/owner: "team-%[2]d@example.com"
    meta.example.com/runbook: "https://runbooks.example.com/team-%[2]d/app-%[1]d"
    meta.example.com/description: "Application %[1]d of the umbrella release, owned by team %[2]d"
    meta.example.com/cost-center: "cc-%[2]d-0042"
    meta.example.com/tier: backend
    meta.example.com/part-of: umbrella
    meta.example.com/component: app-%[1]d
    meta.example.com/version: "1.2.%[1]d"
    meta.example.com/environment: production
    meta.example.com/compliance: pci-scope-none
    meta.example.com/checksum: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
data:
  settings.yaml: |
    server:
      port: 8080
      timeout: 30s
    features:
      - alpha
      - beta
    database:
      url: "postgres://db.team-%[2]d.svc:5432/app"
      pool: 10
  log-level: info
  region: eu-west-1
  replicas: "2"
`, `---
# Source: umbrella/charts/app%[1]d/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: app-%[1]d
  namespace: team-%[2]d
  annotations:
    meta.example.com/owner: "team-%[2]d@example.com"
    meta.example.com/runbook: "https://runbooks.example.com/team-%[2]d/app-%[1]d"
    meta.example.com/description: "Application %[1]d of the umbrella release, owned by team %[2]d"
    meta.example.com/cost-center: "cc-%[2]d-0042"
    meta.example.com/tier: backend
    meta.example.com/part-of: umbrella
    meta.example.com/component: app-%[1]d
    meta.example.com/version: "1.2.%[1]d"
    meta.example.com/environment: production
    meta.example.com/compliance: pci-scope-none
    meta.example.com/checksum: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
  labels:
    app.kubernetes.io/name: app-%[1]d
`, `---
# Source: umbrella/charts/app%[1]d/templates/rbac.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: app-%[1]d
  namespace: team-%[2]d
  annotations:
    meta.example.com/owner: "team-%[2]d@example.com"
    meta.example.com/runbook: "https://runbooks.example.com/team-%[2]d/app-%[1]d"
    meta.example.com/description: "Application %[1]d of the umbrella release, owned by team %[2]d"
    meta.example.com/cost-center: "cc-%[2]d-0042"
    meta.example.com/tier: backend
    meta.example.com/part-of: umbrella
    meta.example.com/component: app-%[1]d
    meta.example.com/version: "1.2.%[1]d"
    meta.example.com/environment: production
    meta.example.com/compliance: pci-scope-none
    meta.example.com/checksum: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: app-%[1]d
subjects:
  - kind: ServiceAccount
    name: app-%[1]d
    namespace: team-%[2]d
`}

// Umbrella returns a stream of n documents: applications, with the CCM's
// documents in the middle.
func Umbrella(n int) []byte {
	var b bytes.Buffer
	b.Grow(n * 1150)
	docs, ccm := 0, false
	for i := 0; docs < n; i++ {
		if !ccm && docs >= n/2 {
			b.WriteString(CCM) // once: one CCM release in the umbrella
			docs += 4
			ccm = true
			continue
		}
		for _, tmpl := range app {
			if docs == n {
				break
			}
			fmt.Fprintf(&b, tmpl, i, i%40)
			docs++
		}
	}
	return b.Bytes()
}
