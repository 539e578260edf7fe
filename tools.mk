# The real tools the tests run, built from pinned Go modules under e2e/tools
# into $(BIN). The tools of the current Kubernetes minor share one module
# (e2e/tools/kube), whose versions of the libraries they share are also
# the root and e2e modules' (go run ./hack/toolsalign -check, in make vet):
# Go's build cache then compiles each shared package once for the programs,
# their tests and these tools. The other tools have a module each (their
# k8s.io/* versions differ):
#
#   e2e/tools/kube       bin/kube-apiserver           k8s.io/kubernetes, with its
#                        bin/kube-controller-manager  staging modules pinned by
#                        bin/cloud-controller-manager-fake  replace lines
#                        bin/kubeadm                  (kubeadm: validates the
#                                                     plans' kubeadm files)
#                        bin/kubectl                  (kubectl: the peer of
#                                                     make bench-scale)
#                        bin/aws-cloud-controller-manager  the AWS CCM, current
#                                                     release (1.37)
#                        bin/helm, bin/helm4          Helm 3 and Helm 4
#                        bin/kustomize                kustomize
#   e2e/tools/helmfile   bin/helmfile                 helmfile (its replace
#                                                     lines copied)
#   e2e/tools/etcd       bin/etcd                     etcd server
#   e2e/tools/kube126    bin/kube-apiserver-1.26      k8s.io/kubernetes 1.26, the
#                        bin/kube-controller-manager-1.26  in-tree AWS
#                                                     provider's last release,
#                                                     the same way
#                        bin/aws-cloud-controller-manager-1.26  the AWS CCM
#                                                     of 1.26
#   e2e/tools/aws-ccm-1.35  bin/aws-cloud-controller-manager-1.35  the AWS CCM
#                                                     of 1.35
#   e2e/tools/fleet      bin/fleet                    the Fleet CLI (apply, target,
#                                                     deploy: the agent's Helm
#                                                     deployer), its pkg/apis at
#                                                     the same release
#                        bin/fleetcontroller          the Fleet controller (its
#                                                     bundle controller's rollout)
#   e2e/tools/argocd     bin/argocd-cmp-server        Argo CD's config management
#                        bin/argocd-cmp-client        plugin server, the repo
#                        bin/argocd-appset-generate   server's side of it, the
#                        bin/argocd-track             application controller's
#                                                     resource tracking, and the
#                                                     ApplicationSet controller's
#                                                     generation (its replace
#                                                     lines copied)
#   e2e/tools/lmreader   bin/lmreader-1.21 ...        a LeaderMigrationConfiguration
#                        bin/lmreader-1.27            reader per Kubernetes minor:
#                                                     one source, one module file
#                                                     per minor (go.1.<minor>.mod,
#                                                     built with -modfile) pinning
#                                                     k8s.io/controller-manager
#
# A reader, bin/lmreader-1.<minor> FILE, loads and validates a
# LeaderMigrationConfiguration as the controller managers of its minor do
# (ReadLeaderMigrationConfiguration, ValidateLeaderMigrationConfiguration)
# and prints it as JSON, with what a strict decode finds (exit 0), or the
# reader's error: exit 3 when it does not load, 4 when it is invalid;
# -default prints the minor's built-in configuration. integration/lmreader
# finds them through $LMREADERS.
#
# A module's go.mod is the only place a version is written: the version
# stamps below are read from it when a binary is built. The control plane
# and the fake-cloud CCM are one Kubernetes release (e2e/tools/kube), and
# the e2e module's client libraries are pinned to the same release; the
# leader migration tests run on the 1.26 control plane (e2e/tools/kube126),
# which shares etcd with it. Each module's binaries are one target, built by
# one go build (their shared packages compile once), and the modules are
# built side by side by make -j. A binary is rebuilt
# only when its module (go.mod, go.sum, sources) or this file is newer than
# it; the Go build cache makes a rebuild after a small change quick.

GO  ?= go
BIN ?= $(CURDIR)/bin

# The modules are found next to this file, wherever make runs from.
TOOLS_MK := $(abspath $(lastword $(MAKEFILE_LIST)))
TOOLS    := $(patsubst %/,%,$(dir $(TOOLS_MK)))/e2e/tools

# Static binaries without local paths or this repository's VCS state in
# them; each recipe adds -ldflags "-s -w ..." (stripped) and ends with a
# touch, which marks the binary up to date when go build found nothing to
# do and left it as it was. BUILD_GOGC is the garbage collector's target
# (GOGC) for their compiles and links, and for make test's build step: the
# compiler's heaps are short-lived, and collecting less often saves about a
# sixth of a cold build's CPU for some more memory (docs/dev/testing.md).
# Tests run with Go's default.
BUILD_GOGC ?= 800
TOOL_BUILD := GOGC=$(BUILD_GOGC) CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false

HELM3                   := $(BIN)/helm
HELM4                   := $(BIN)/helm4
KUSTOMIZE               := $(BIN)/kustomize
HELMFILE                := $(BIN)/helmfile
ETCD                    := $(BIN)/etcd
KUBE_APISERVER          := $(BIN)/kube-apiserver
KUBE_CONTROLLER_MANAGER := $(BIN)/kube-controller-manager
KUBECTL                 := $(BIN)/kubectl
FAKE_CCM                := $(BIN)/cloud-controller-manager-fake
KUBEADM                 := $(BIN)/kubeadm
KUBE_APISERVER_126      := $(BIN)/kube-apiserver-1.26
KUBE_CONTROLLER_MANAGER_126 := $(BIN)/kube-controller-manager-1.26
AWS_CCM                 := $(BIN)/aws-cloud-controller-manager
AWS_CCM_135             := $(BIN)/aws-cloud-controller-manager-1.35
AWS_CCM_126             := $(BIN)/aws-cloud-controller-manager-1.26
FLEET                   := $(BIN)/fleet
FLEET_CONTROLLER        := $(BIN)/fleetcontroller
ARGOCD_CMP_SERVER       := $(BIN)/argocd-cmp-server
ARGOCD_CMP_CLIENT       := $(BIN)/argocd-cmp-client
ARGOCD_APPSET           := $(BIN)/argocd-appset-generate
ARGOCD_TRACK            := $(BIN)/argocd-track
CRANE                   := $(BIN)/crane

# One reader per module file go.1.<minor>.mod in e2e/tools/lmreader: adding
# a minor is adding its module file (and go.sum).
LMREADER_DIR    := $(TOOLS)/lmreader
LMREADER_MINORS := $(patsubst $(LMREADER_DIR)/go.%.mod,%,$(wildcard $(LMREADER_DIR)/go.1.*.mod))
LMREADERS       := $(LMREADER_MINORS:%=$(BIN)/lmreader-%)

# The 1.37 tool module's files: the control plane, kubeadm, kubectl, the AWS
# CCM, Helm 3 and 4 and kustomize are built from it.
KUBE_MODULE := $(TOOLS)/kube/go.mod $(TOOLS)/kube/go.sum $(TOOLS_MK)

# The 1.26 tool module's: the control plane the leader migration runs on and
# the AWS CCM of 1.26.
KUBE126_MODULE := $(TOOLS)/kube126/go.mod $(TOOLS)/kube126/go.sum $(TOOLS_MK)

# $(call tool-version,MODULE): the version of MODULE in the current
# directory's module graph, as a shell expression for a recipe.
tool-version = $$($(GO) list -m -f '{{.Version}}' $(1))

.PHONY: tools tools-crane tools-helm tools-kube tools-kube126 tools-helmfile tools-lmreaders tools-aws-ccm tools-kubectl tools-fleet tools-argocd

# The longest builds first, so that make -j starts them first; the AWS CCM
# and Helm after the control plane of their module, whose packages they
# then find compiled.
tools: tools-kube126 tools-kube tools-helmfile tools-argocd tools-fleet tools-aws-ccm tools-helm tools-lmreaders tools-crane ## build every tool the tests run (bin/; make -j builds them side by side)

tools-helm: $(HELM3) $(HELM4) $(KUSTOMIZE) ## build Helm 3, Helm 4 and kustomize (bin/)

tools-crane: $(CRANE) ## build crane (bin/), go-containerregistry's CLI, with which a plan reads the digest of a CCM image the promotion list does not give

tools-helmfile: $(HELMFILE) ## build helmfile (bin/), which runs Helm 3 for the helmfile recipe's tests

tools-lmreaders: $(LMREADERS) ## build the LeaderMigrationConfiguration reader of every Kubernetes minor 1.21-1.27 (bin/lmreader-1.<minor>)

tools-kube: $(ETCD) $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(FAKE_CCM) $(KUBEADM) $(KUBECTL) ## build etcd, kube-apiserver, kube-controller-manager, the fake-cloud CCM, kubeadm and kubectl (bin/)

tools-kubectl: $(KUBECTL) ## build kubectl (bin/) of the control plane's release, which the GitOps runbook's test runs and make bench-scale compares check with

tools-kube126: $(ETCD) $(KUBE_APISERVER_126) $(KUBE_CONTROLLER_MANAGER_126) ## build etcd and the 1.26 kube-apiserver and kube-controller-manager the leader migration runs on (bin/)

tools-aws-ccm: $(AWS_CCM) $(AWS_CCM_135) $(AWS_CCM_126) ## build the real AWS cloud controller manager, current release (1.37), 1.35 and 1.26 (bin/)

tools-fleet: $(FLEET) $(FLEET_CONTROLLER) ## build the Fleet CLI (bin/fleet), whose apply, target and deploy the Fleet tests run, and the Fleet controller (bin/fleetcontroller), whose bundle controller rolls a bundle out by partitions

tools-argocd: $(ARGOCD_CMP_SERVER) $(ARGOCD_CMP_CLIENT) $(ARGOCD_APPSET) $(ARGOCD_TRACK) ## build Argo CD's config management plugin server, the repo server's client of it, the ApplicationSet controller's generation and the application controller's resource tracking (bin/)

# crane from the go-containerregistry release this repository's module pins
# (go.mod), as the renderer's image parsing uses.
ROOT_MODULE := $(dir $(TOOLS_MK))go.mod $(dir $(TOOLS_MK))go.sum $(TOOLS_MK)

$(CRANE): $(ROOT_MODULE)
	cd $(dir $(TOOLS_MK)) && $(TOOL_BUILD) -ldflags "-s -w" -o $@ github.com/google/go-containerregistry/cmd/crane
	@touch $@

# Helm stamps its version, and the Kubernetes version `helm template` assumes
# without a cluster (.Capabilities.KubeVersion: 1.<client-go minor>, as in
# Helm's own Makefile; unstamped it would be v1.20.0), through ldflags.
# Helm 4 reads the latter from its build info.
$(HELM3): $(KUBE_MODULE)
	cd $(TOOLS)/kube && v=$(call tool-version,helm.sh/helm/v3) && \
	kminor=$$(echo $(call tool-version,k8s.io/client-go) | cut -d. -f2) && \
	$(TOOL_BUILD) -ldflags "-s -w \
		-X helm.sh/helm/v3/internal/version.version=$$v \
		-X helm.sh/helm/v3/internal/version.gitTreeState=clean \
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 \
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$$kminor \
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 \
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$$kminor" \
		-o $@ helm.sh/helm/v3/cmd/helm
	@touch $@

$(HELM4): $(KUBE_MODULE)
	cd $(TOOLS)/kube && v=$(call tool-version,helm.sh/helm/v4) && \
	$(TOOL_BUILD) -ldflags "-s -w \
		-X helm.sh/helm/v4/internal/version.version=$$v \
		-X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
		-o $@ helm.sh/helm/v4/cmd/helm
	@touch $@

$(KUSTOMIZE): $(KUBE_MODULE)
	cd $(TOOLS)/kube && v=$(call tool-version,sigs.k8s.io/kustomize/kustomize/v5) && \
	$(TOOL_BUILD) -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=$$v" \
		-o $@ sigs.k8s.io/kustomize/kustomize/v5
	@touch $@

# helmfile reads its version from go.szostok.io/version, stamped as its
# release build does.
$(HELMFILE): $(TOOLS)/helmfile/go.mod $(TOOLS)/helmfile/go.sum $(TOOLS_MK)
	cd $(TOOLS)/helmfile && v=$(call tool-version,github.com/helmfile/helmfile) && \
	$(TOOL_BUILD) -ldflags "-s -w -X go.szostok.io/version.version=$$v -X go.szostok.io/version.dirtyBuild=false" \
		-o $@ github.com/helmfile/helmfile
	@touch $@

# etcd's version is a constant in go.etcd.io/etcd/api/v3/version.
$(ETCD): $(TOOLS)/etcd/go.mod $(TOOLS)/etcd/go.sum $(TOOLS_MK) $(wildcard $(TOOLS)/etcd/*.go)
	cd $(TOOLS)/etcd && $(TOOL_BUILD) -ldflags "-s -w" -o $@ .
	@touch $@

# The Kubernetes binaries stamp their version the way the release build does
# (hack/lib/version.sh): --version, /version and the version metric show
# it. $(call kube-stamp,DIR) is the shell prelude every Kubernetes binary's
# recipe shares: it enters e2e/tools/DIR and sets $$ldflags from the
# k8s.io/kubernetes version pinned there.
kube-stamp = cd $(TOOLS)/$(1) && v=$(call tool-version,k8s.io/kubernetes) && \
	minor=$$(echo $$v | cut -d. -f2) && \
	ldflags="-s -w" && for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do \
		ldflags="$$ldflags -X $$p.gitVersion=$$v -X $$p.gitMajor=1 -X $$p.gitMinor=$$minor -X $$p.gitTreeState=clean"; \
	done

# One go build for the three binaries of a release: the packages they share
# (most of Kubernetes) compile once; builds side by side would each compile
# them before the cache held them. A grouped target (&:), so that make runs
# the recipe once for the three.
$(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(FAKE_CCM) $(KUBEADM) $(KUBECTL) &: $(KUBE_MODULE) $(wildcard $(TOOLS)/kube/cmd/cloud-controller-manager-fake/*.go)
	$(call kube-stamp,kube) && $(TOOL_BUILD) -ldflags "$$ldflags" -o $(BIN)/ \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager ./cmd/cloud-controller-manager-fake \
		k8s.io/kubernetes/cmd/kubeadm k8s.io/kubernetes/cmd/kubectl
	@touch $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(FAKE_CCM) $(KUBEADM) $(KUBECTL)

# The control plane of the clusters that migrate (the last release with the
# in-tree AWS provider), from e2e/tools/kube126, stamped the same way.
# Built into a directory of their own, then given the -1.26 names.
$(KUBE_APISERVER_126) $(KUBE_CONTROLLER_MANAGER_126) &: $(KUBE126_MODULE)
	$(call kube-stamp,kube126) && $(TOOL_BUILD) -ldflags "$$ldflags" -o $(BIN)/.kube126/ \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
	mv -f $(BIN)/.kube126/kube-apiserver $(KUBE_APISERVER_126)
	mv -f $(BIN)/.kube126/kube-controller-manager $(KUBE_CONTROLLER_MANAGER_126)
	@rmdir $(BIN)/.kube126
	@touch $(KUBE_APISERVER_126) $(KUBE_CONTROLLER_MANAGER_126)

# A reader is built with its minor's module file and the build tag
# lmreader1.<minor>, which picks the file listing the API versions that
# minor has (apis_*.go). It prints the k8s.io/controller-manager version it
# was built with from its build info.
$(BIN)/lmreader-%: $(LMREADER_DIR)/go.%.mod $(LMREADER_DIR)/go.%.sum $(wildcard $(LMREADER_DIR)/*.go) $(TOOLS_MK)
	cd $(LMREADER_DIR) && $(TOOL_BUILD) -modfile=go.$*.mod -tags lmreader$* -ldflags "-s -w" -o $@ .
	@touch $@

# The AWS CCM stamps its version as its release build does (its Makefile's
# LDFLAGS; main.gitVersion exists in the newer releases only, and -X of a
# name a binary lacks does nothing).
AWS_CCM_BUILD = v=$(call tool-version,k8s.io/cloud-provider-aws) && \
	$(TOOL_BUILD) -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$$v -X main.gitVersion=$$v" \
		-o $@ k8s.io/cloud-provider-aws/cmd/aws-cloud-controller-manager

$(AWS_CCM): $(KUBE_MODULE)
	cd $(TOOLS)/kube && $(AWS_CCM_BUILD)
	@touch $@

$(AWS_CCM_135): $(TOOLS)/aws-ccm-1.35/go.mod $(TOOLS)/aws-ccm-1.35/go.sum $(TOOLS_MK)
	cd $(TOOLS)/aws-ccm-1.35 && $(AWS_CCM_BUILD)
	@touch $@

$(AWS_CCM_126): $(KUBE126_MODULE)
	cd $(TOOLS)/kube126 && $(AWS_CCM_BUILD)
	@touch $@

# The Fleet CLI stamps its version as Fleet's release build does
# (pkg/version: Version, GitCommit); the commit is the tag's, which the
# module proxy's .info file beside the module's go.mod records.
$(FLEET) $(FLEET_CONTROLLER) &: $(TOOLS)/fleet/go.mod $(TOOLS)/fleet/go.sum $(TOOLS_MK)
	cd $(TOOLS)/fleet && v=$(call tool-version,github.com/rancher/fleet) && \
	info=$$($(GO) list -m -f '{{.GoMod}}' github.com/rancher/fleet | sed 's/\.mod$$/.info/') && \
	c=$$(sed -n 's/.*"Hash":"\([0-9a-f]\{8\}\).*/\1/p' "$$info") && \
	ldflags="-s -w -X github.com/rancher/fleet/pkg/version.Version=$$v -X github.com/rancher/fleet/pkg/version.GitCommit=$${c:-unknown}" && \
	$(TOOL_BUILD) -ldflags "$$ldflags" -o $(FLEET) github.com/rancher/fleet/cmd/fleetcli && \
	$(TOOL_BUILD) -ldflags "$$ldflags" -o $(FLEET_CONTROLLER) github.com/rancher/fleet/cmd/fleetcontroller
	@touch $(FLEET) $(FLEET_CONTROLLER)
# Argo CD stamps its version as its release build does (its Makefile's
# LDFLAGS on github.com/argoproj/argo-cd/v2/common): the VERSION file's
# number, which is the module's version without the v, and the date of the
# release. The module carries no commit, so the server calls itself
# v2.14.21+unknown in its startup line, as an untagged build does. Both
# programs are one module: one go build links both, sharing the compile.
ARGOCD_MODULE := $(TOOLS)/argocd/go.mod $(TOOLS)/argocd/go.sum $(TOOLS_MK) \
	$(wildcard $(TOOLS)/argocd/cmd/*/*.go)

$(ARGOCD_CMP_SERVER) $(ARGOCD_CMP_CLIENT) $(ARGOCD_APPSET) $(ARGOCD_TRACK) &: $(ARGOCD_MODULE)
	cd $(TOOLS)/argocd && v=$(call tool-version,github.com/argoproj/argo-cd/v2) && \
	date=$$($(GO) list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' github.com/argoproj/argo-cd/v2) && \
	kubectl=$(call tool-version,k8s.io/kubectl) && p=github.com/argoproj/argo-cd/v2/common && \
	$(TOOL_BUILD) -ldflags "-s -w -X $$p.version=$${v#v} -X $$p.buildDate=$$date -X $$p.kubectlVersion=$$kubectl" \
		-o $(BIN)/ ./cmd/argocd-cmp-server ./cmd/argocd-cmp-client ./cmd/argocd-appset-generate ./cmd/argocd-track
	@touch $(ARGOCD_CMP_SERVER) $(ARGOCD_CMP_CLIENT) $(ARGOCD_APPSET) $(ARGOCD_TRACK)
