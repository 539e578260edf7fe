# aws-ccm-renderer. Everything but Go is built here from pinned Go modules
# (see tools.mk and e2e/tools), into bin/.

GO      ?= go
BIN     ?= $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
export GOTOOLCHAIN ?= local
# Static programs, as the release archives and the images hold them: make
# build, make images, make dist and the tools then share one build of each
# package for the host instead of a cgo one and a static one.
export CGO_ENABLED ?= 0
# -trimpath for every go command (build, vet, test, the tools, and what the
# tests build): the flag is part of the build cache's key, so with it
# everywhere one compile of each package serves them all. The same holds for
# -gcflags=all=-dwarf=false: every binary here is stripped (-s -w) or a test,
# so the compiler's debug information is never read, and not writing it
# saves about a tenth of a cold build's CPU (docs/dev/testing.md).
GOFLAGS_HERE := -trimpath -gcflags=all=-dwarf=false
export GOFLAGS := $(strip $(filter-out $(GOFLAGS_HERE),$(GOFLAGS)) $(GOFLAGS_HERE))

include tools.mk

RENDERER := $(BIN)/aws-ccm-renderer
PKG      := github.com/aws-ccm-renderer/aws-ccm-renderer
SOURCES  := $(shell find cmd renderer internal -name '*.go' -not -name '*_test.go') go.mod go.sum

# The e2e tests' AWS is moto's server (Python), run by e2e/moto/server.py,
# which pins the moto release it patches.
PYTHON ?= python3

# What the tests need, as environment variables: the helpers in
# internal/testtools use them, and build what is missing when they are unset.
# LMREADERS is the directory of the LeaderMigrationConfiguration readers,
# lmreader-1.<minor>.
TEST_ENV := AWS_CCM_RENDERER=$(RENDERER) HELM3=$(HELM3) HELM4=$(HELM4) KUSTOMIZE=$(KUSTOMIZE) HELMFILE=$(HELMFILE) \
	LMREADERS=$(BIN) CRANE=$(CRANE)
# The real-cluster tests (e2e/) also run the control plane (1.37, and 1.26
# for the leader migration), the fake-cloud CCM, the real AWS CCM, moto and
# the Fleet CLI, Argo CD's CMP server with the repo server's client of it, kubectl;
# e2e/harness, e2e/awsccm, e2e/moto, e2e/fleet and e2e's Argo CD test read
# where they are from these.
E2E_ENV  := $(TEST_ENV) ETCD=$(ETCD) KUBE_APISERVER=$(KUBE_APISERVER) \
	KUBE_CONTROLLER_MANAGER=$(KUBE_CONTROLLER_MANAGER) FAKE_CCM=$(FAKE_CCM) KUBEADM=$(KUBEADM) KUBECTL=$(KUBECTL) \
	KUBE_APISERVER_126=$(KUBE_APISERVER_126) KUBE_CONTROLLER_MANAGER_126=$(KUBE_CONTROLLER_MANAGER_126) \
	AWS_CCM=$(AWS_CCM) AWS_CCM_135=$(AWS_CCM_135) AWS_CCM_126=$(AWS_CCM_126) PYTHON=$(PYTHON) FLEET=$(FLEET) FLEET_CONTROLLER=$(FLEET_CONTROLLER) \
	ARGOCD_CMP_SERVER=$(ARGOCD_CMP_SERVER) ARGOCD_CMP_CLIENT=$(ARGOCD_CMP_CLIENT) ARGOCD_APPSET=$(ARGOCD_APPSET) ARGOCD_TRACK=$(ARGOCD_TRACK)

.PHONY: releases-check calls all build test unit vet e2e moto-check stress stress-integration bench bench-scale bench-fleet demo clean help helm-plugin overlays

all: build

help: ## list the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | sort

HELM_RENDERER := $(BIN)/aws-ccm-renderer-helm
LDFLAGS := -s -w -X $(PKG)/cmd/cli.version=$(VERSION)

build: $(RENDERER) $(HELM_RENDERER) ## build bin/aws-ccm-renderer and bin/aws-ccm-renderer-helm (the chart wrapper commands and check)

# Both programs in one go build, which compiles the packages they share
# once (two builds side by side would each compile them). The second,
# aws-ccm-renderer-helm, has the Helm SDK and the Kubernetes client:
# aws-ccm-renderer execs it for template, install, upgrade, diff and check,
# and stays lean for the post-render path (cmd/aws-ccm-renderer's
# TestLeanDependencies).
$(RENDERER) $(HELM_RENDERER) &: $(SOURCES)
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/aws-ccm-renderer ./cmd/aws-ccm-renderer-helm
	@touch $(RENDERER) $(HELM_RENDERER)

PLUGIN_DIR := $(CURDIR)/dist/helm-plugin/aws-ccm

helm-plugin: $(PLUGIN_DIR)/aws-ccm-renderer $(PLUGIN_DIR)/plugin.yaml ## the Helm 4 post-renderer plugin in dist/helm-plugin/aws-ccm

# The plugin's version is the renderer's for a release build (vX.Y.Z), else
# plugin.yaml's with the build (git describe) as semver build metadata.
$(PLUGIN_DIR)/plugin.yaml: plugin/aws-ccm/plugin.yaml $(RENDERER)
	@mkdir -p $(@D)
	v=$$(echo '$(VERSION)' | sed -n 's/^v\{0,1\}\([0-9]*\.[0-9]*\.[0-9]*\)$$/\1/p'); \
	[ -n "$$v" ] || v=$$(sed -n 's/^version: *//p' $<)+$$(printf %s '$(VERSION)' | tr -c '0-9A-Za-z-' '-'); \
	sed "s/^version: .*/version: $$v/" $< > $@

# Replaced, not overwritten: an installed plugin is a link to this directory
# and may be running.
$(PLUGIN_DIR)/aws-ccm-renderer: $(RENDERER)
	@mkdir -p $(@D)
	cp $< $@.tmp && mv -f $@.tmp $@

generate: ## rewrite every generated file and section (go run ./hack/generate; -list names them: the overlays, the Fleet and Flux examples, the wrapper chart, docs/troubleshooting.md, the marked distribution lists, pins and area enum, the transcripts in README.md and docs/check.md, the generated sections of docs/compatibility.md, docs/migration.md, docs/new-cluster.md and docs/dev/runbooks.md), then the plan's golden files (go test ./internal/plan -update)
	$(GO) run ./hack/generate
	$(GO) test ./internal/plan -run '^TestGolden$$' -count=1 -update

# After the build: vet then finds the packages the programs link compiled,
# where beside it (make -j) both would compile them.
vet: build ## go vet and gofmt
	$(GO) vet ./...
	$(GO) vet -tags syntheticdistro ./renderer/distros ./internal/plan ./internal/generated
	cd e2e && $(GO) vet ./...
	cd hack/sign && $(GO) vet ./...
	$(GO) run ./hack/toolsalign -check
	$(GO) run ./hack/generate -check
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: the files above are not formatted"; exit 1; }

unit: ## unit tests only (no external tools)
	$(GO) test ./renderer/... ./internal/benchdata/... ./internal/nodefit/... ./internal/check/...

# The tools are built side by side (JOBS at a time, each go build using
# every core as well): their module downloads, compiles and links overlap.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# The first step also cross-compiles the images' programs (linux/amd64 and
# arm64): integration/dist and integration/images, which run side by side,
# then only link them, where each would compile the arm64 packages.
test: moto-check ## all tests: unit, real Helm/kustomize, and the real-cluster e2e tests
	GOGC=$(BUILD_GOGC) $(MAKE) --no-print-directory -j$(JOBS) --output-sync=target vet build tools image-binaries
	$(TEST_ENV) $(GO) test -count=1 ./...
	cd hack/sign && $(GO) test -count=1 ./...
	$(GO) test -tags syntheticdistro -count=1 -run '^TestSyntheticDistro$$' ./internal/generated
	$(MAKE) --no-print-directory e2e

e2e: moto-check build tools-helm tools-kube tools-kube126 tools-aws-ccm tools-fleet tools-argocd ## the real-cluster tests: e2e/ against control planes built from e2e/tools, the AWS CCM, moto, Fleet and Argo CD's CMP server
	cd e2e && $(E2E_ENV) $(GO) test -count=1 -timeout 20m ./...

moto-check: ## check that moto with its server is installed at the release e2e/moto/server.py supports, else say how to install it
	@$(PYTHON) e2e/moto/server.py --check >/dev/null || { echo "the e2e tests need moto's server (Python): pip install 'moto[server]'"; exit 1; }

stress: moto-check build tools-helm tools-kube tools-kube126 tools-aws-ccm tools-fleet tools-argocd ## run each e2e package STRESS_RUNS times (default 5) beside a busy loop on every core; the runs and failures per package (hack/stress.sh)
	$(E2E_ENV) BIN=$(BIN) ./hack/stress.sh

stress-integration: build tools-helm tools-helmfile tools-lmreaders tools-crane ## as stress, for the root module's packages that run real tools: integration/... and the conformance table
	$(TEST_ENV) BIN=$(BIN) STRESS_MODULE=. ./hack/stress.sh

FUZZTIME ?= 10m

fuzz: ## fuzz the whole render (bytes, and parsed objects as the KRM function), the renderer's reading of YAML against Kubernetes' decoder, the fast YAML checker, and every input surface (the guard's pod and API answers, versions, images, overlays' flags, argocd generate, check's kubeconfig), FUZZTIME each (default 10m); findings land in testdata/fuzz as seeds
	$(GO) test ./renderer -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
	$(GO) test ./renderer -run '^$$' -fuzz '^FuzzRenderNodes$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
	$(GO) test ./renderer -run '^$$' -fuzz '^FuzzClassify$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
	$(GO) test ./renderer/stream -run '^$$' -fuzz '^FuzzFastCheck$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/check -run '^$$' -fuzz '^FuzzInstanceIDOf$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/check -run '^$$' -fuzz '^FuzzHold$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/check -run '^$$' -fuzz '^FuzzShellCommands$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/kubeversion -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/safetext -run '^$$' -fuzz '^FuzzEscape$$' -fuzztime $(FUZZTIME)
	$(GO) test ./renderer -run '^$$' -fuzz '^FuzzParseImage$$' -fuzztime $(FUZZTIME)
	$(GO) test ./cmd/cli -run '^$$' -fuzz '^FuzzOverlaysFlags$$' -fuzztime $(FUZZTIME)
	$(GO) test ./cmd/cli/helmcmd -run '^$$' -fuzz '^FuzzArgoGenerate$$' -fuzztime $(FUZZTIME)
	$(GO) test ./cmd/cli/helmcmd -run '^$$' -fuzz '^FuzzCheckKubeconfig$$' -fuzztime $(FUZZTIME)

bench: build tools-helm ## benchmarks: Go benchmarks, the per-process comparison and the scale and fleet benchmarks (bench-scale, bench-fleet)
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./renderer | tee $(BIN)/bench-go.txt
	$(GO) test -run '^$$' -bench '^(BenchmarkCheckPinned|BenchmarkCheckAWSCalls)$$' -benchmem -benchtime 3x -count 5 ./internal/check ./internal/check/awscheck | tee -a $(BIN)/bench-go.txt
	$(TEST_ENV) $(GO) run ./internal/bench
	$(MAKE) --no-print-directory bench-scale
	$(MAKE) --no-print-directory bench-fleet

# e2e/scale: check against kubectl get nodes -o json, whole processes in
# turn (peak memory by GNU time, /usr/bin/time), on control planes seeded
# with 2,000 nodes and 20,000 pods, then 5,000 and 50,000, one node's
# hostname label not its name (seeding takes a minute or two a size);
# SCALE_RUNS pairs a size. E2E_SCALE_SIZES=NODES/PODS[,...] picks other
# sizes. Not part of make test: go test runs no benchmark without -bench.
SCALE_RUNS ?= 5

bench-scale: build tools-kube tools-kubectl ## the scale benchmark: check against kubectl get nodes -o json on 2,000 and 5,000 nodes (e2e/scale; results in bin/bench-scale.txt)
	cd e2e && $(E2E_ENV) $(GO) test -run '^$$' -bench '^BenchmarkCheckScale$$' -benchtime $(SCALE_RUNS)x -timeout 90m ./scale | tee $(BIN)/bench-scale.txt

# e2e/scale: check --all-contexts against check of each context one after
# the other, and the render each cluster needs, whole processes measured
# as bench-scale's, over fleets of 1, 10 and 50 API servers sharing one
# etcd, each cluster 10 nodes and 300 pods, of the distributions in turn
# (starting and seeding 50 takes about five minutes, and 15 GiB of memory);
# FLEET_RUNS rounds a fleet. E2E_FLEET_SIZES=N[,...] picks other fleets.
FLEET_RUNS ?= 5

bench-fleet: build tools-kube ## the fleet benchmark: check --all-contexts against check one context at a time, and the renders, over 1, 10 and 50 clusters (e2e/scale; results in bin/bench-fleet.txt)
	cd e2e && $(E2E_ENV) $(GO) test -run '^$$' -bench '^BenchmarkFleetScale$$' -benchtime $(FLEET_RUNS)x -timeout 90m ./scale | tee $(BIN)/bench-fleet.txt

demo: build tools-helm ## render the sample chart for RKE2 and show what changed
	@./hack/demo.sh

clean: ## remove bin/ and dist/
	rm -rf $(BIN) dist

# Where make dist and make images write.
DIST ?= $(CURDIR)/dist

# The container images: images, push, pin-images (docs/dev/images.md).
include images.mk

# The release: dist, push-chart (docs/dev/release.md).
include dist.mk

# CCM_REPO: a git clone of kubernetes/cloud-provider-aws, for the releases
# the module proxy does not serve (their AWS calls are read from the source).
CCM_REPO ?=

releases-check: ## compare internal/releases with the k8s.io/cloud-provider-aws releases the Go module proxy serves: prints the new ones (exit 3), or that the data is current; then check the AWS calls read from each pinned release's source (internal/releases/calls_gen.go; CCM_REPO=a clone of kubernetes/cloud-provider-aws for the tags the proxy does not serve)
	$(GO) run ./internal/releases/newer
	$(GO) run ./internal/releases/ccmcalls -check -dir internal/releases $(if $(CCM_REPO),-repo $(CCM_REPO))

calls: ## rewrite internal/releases/calls_gen.go, the AWS calls of each pinned CCM release read from its source (CCM_REPO as for releases-check)
	$(GO) run ./internal/releases/ccmcalls -dir internal/releases $(if $(CCM_REPO),-repo $(CCM_REPO))
