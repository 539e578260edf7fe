// The module root only. Each build names the module file of one Kubernetes
// minor, go build -modfile=go.1.<minor>.mod (tools.mk), which pins
// k8s.io/controller-manager at that minor; go.1.<minor>.sum goes with it.
module github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/tools/lmreader

go 1.26.0
