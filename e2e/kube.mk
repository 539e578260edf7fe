# The control plane for the real-cluster tests, built from the e2e module
# (k8s.io/kubernetes v1.34.4 with its staging modules pinned by replace
# lines, etcd v3.6.16). Included by tools.mk.

E2E := $(CURDIR)/e2e
KUBE_VERSION := v1.34.4

ETCD                    := $(BIN)/etcd
KUBE_APISERVER          := $(BIN)/kube-apiserver
KUBE_CONTROLLER_MANAGER := $(BIN)/kube-controller-manager

KUBE_LDFLAGS := -s -w -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34 \
	-X k8s.io/component-base/version.gitTreeState=clean

.PHONY: tools-kube e2e

tools-kube: $(ETCD) $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) ## etcd, kube-apiserver, kube-controller-manager

$(ETCD): $(E2E)/go.mod $(E2E)/go.sum $(E2E)/cmd/etcd/main.go
	cd $(E2E) && $(TOOL_BUILD) -ldflags "-s -w" -o $@ ./cmd/etcd

$(KUBE_APISERVER): $(E2E)/go.mod $(E2E)/go.sum
	cd $(E2E) && $(TOOL_BUILD) -ldflags "$(KUBE_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(KUBE_CONTROLLER_MANAGER): $(E2E)/go.mod $(E2E)/go.sum
	cd $(E2E) && $(TOOL_BUILD) -ldflags "$(KUBE_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/kube-controller-manager

E2E_ENV = $(TEST_ENV) ETCD=$(ETCD) KUBE_APISERVER=$(KUBE_APISERVER) KUBE_CONTROLLER_MANAGER=$(KUBE_CONTROLLER_MANAGER) FAKE_CCM=$(FAKE_CCM)

e2e: build tools-helm tools-kube ## the real-cluster tests
	cd $(E2E) && $(E2E_ENV) $(GO) test -count=1 -timeout 20m ./...

FAKE_CCM := $(BIN)/fake-ccm

tools-kube: $(FAKE_CCM)

$(FAKE_CCM): $(E2E)/go.mod $(E2E)/go.sum $(E2E)/cmd/fake-ccm/main.go
	cd $(E2E) && $(TOOL_BUILD) -ldflags "$(KUBE_LDFLAGS)" -o $@ ./cmd/fake-ccm
