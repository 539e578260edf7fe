# The real tools the tests run, built from pinned Go modules under e2e/tools
# into $(BIN). Each binary is rebuilt only when its module changes; the Go
# build cache makes a rebuild quick.

BIN   ?= $(CURDIR)/bin
TOOLS := $(CURDIR)/e2e/tools
TOOL_BUILD := CGO_ENABLED=0 $(GO) build -trimpath

HELM3     := $(BIN)/helm
HELM4     := $(BIN)/helm4
KUSTOMIZE := $(BIN)/kustomize

HELM3_VERSION     := v3.22.0
HELM4_VERSION     := v4.3.1
KUSTOMIZE_VERSION := v5.8.2

.PHONY: tools tools-helm

tools-helm: $(HELM3) $(HELM4) $(KUSTOMIZE) ## Helm 3, Helm 4 and kustomize

tools: tools-helm tools-kube ## every tool the tests run

$(HELM3): $(TOOLS)/helm3/go.mod $(TOOLS)/helm3/go.sum
	cd $(TOOLS)/helm3 && $(TOOL_BUILD) -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$(HELM3_VERSION)" -o $@ helm.sh/helm/v3/cmd/helm

$(HELM4): $(TOOLS)/helm4/go.mod $(TOOLS)/helm4/go.sum
	cd $(TOOLS)/helm4 && $(TOOL_BUILD) -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$(HELM4_VERSION)" -o $@ helm.sh/helm/v4/cmd/helm

$(KUSTOMIZE): $(TOOLS)/kustomize/go.mod $(TOOLS)/kustomize/go.sum
	cd $(TOOLS)/kustomize && $(TOOL_BUILD) -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=$(KUSTOMIZE_VERSION)" -o $@ sigs.k8s.io/kustomize/kustomize/v5

# The control plane (etcd, kube-apiserver, kube-controller-manager) and the
# fake-cloud CCM come from the e2e module; e2e/kube.mk defines tools-kube.
-include $(CURDIR)/e2e/kube.mk
