# Container images, built without a container engine by hack/images
# (go-containerregistry; docs/dev/images.md): the Argo CD plugin's sidecar, the
# KRM function and the guard, each an OCI layout under dist/images/ holding
# an image index for linux/amd64 and linux/arm64.
#
#   make images                       dist/images/aws-ccm-renderer-argocd-cmp, -fn, -guard
#   make push REGISTRY=ghcr.io/you    push them, tagged with the version, and print REF@DIGEST;
#                                     with them the referrers make dist attached (hack/sign)
#   make pin-images                   write the images' digests into the examples (a release step)
#
# A build is reproducible: every timestamp is the commit's
# (SOURCE_DATE_EPOCH), and the same commit gives the same digests.

IMAGES_DIR      := $(DIST)/images
IMAGES_BIN      := $(IMAGES_DIR)/bin
IMAGES_TOOL     := $(BIN)/aws-ccm-images
IMAGE_ARCHES    := amd64 arm64
IMAGE_BINARIES  := $(foreach a,$(IMAGE_ARCHES),$(IMAGES_BIN)/linux_$(a)/aws-ccm-renderer $(IMAGES_BIN)/linux_$(a)/aws-ccm-renderer-helm)
# The files that name the images by digest, which pin-images rewrites; the
# guard's digest has its home in internal/images/pinned.go, from which make
# generate writes it into the Fleet example's components.
IMAGE_EXAMPLES  := examples/argocd/repo-server-patch.yaml examples/krm/container/aws-ccm.yaml internal/images/pinned.go
IMAGE_SOURCE    ?= https://github.com/aws-ccm-renderer/aws-ccm-renderer
# The licence label: an SPDX expression, the repository's licence (LICENSE).
IMAGE_LICENSES  ?= Apache-2.0
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
REVISION        ?= $(shell git rev-parse HEAD 2>/dev/null)
# Read once: the images, their labels and make dist's provenance name the
# same commit even when one is made while HEAD moves.
SOURCE_DATE_EPOCH := $(SOURCE_DATE_EPOCH)
REVISION          := $(REVISION)
REGISTRY        ?=

.PHONY: images image-binaries push pin-images

image-binaries: $(IMAGE_BINARIES) ## cross-compile the images' programs (dist/images/bin)

images: $(IMAGE_BINARIES) $(IMAGES_TOOL) examples/argocd/plugin.yaml ## the Argo CD sidecar, KRM function and guard images (linux/amd64, linux/arm64) as OCI layouts in dist/images/, without Docker
	$(IMAGES_TOOL) build -bin $(IMAGES_BIN) -out $(IMAGES_DIR) -plugin examples/argocd/plugin.yaml \
		-version '$(VERSION)' -revision '$(REVISION)' -created '$(SOURCE_DATE_EPOCH)' \
		-source '$(IMAGE_SOURCE)' -licenses '$(IMAGE_LICENSES)'

# REGISTRY is checked before anything is built.
push: ## push the images to REGISTRY (make push REGISTRY=ghcr.io/you), tagged with the version, with the signatures and attestations make dist attached (OCI 1.1 referrers)
	@test -n '$(REGISTRY)' || { echo 'make push needs REGISTRY, e.g. make push REGISTRY=ghcr.io/you'; exit 2; }
	$(MAKE) --no-print-directory images
	$(IMAGES_TOOL) push -out $(IMAGES_DIR) -registry '$(REGISTRY)'

pin-images: images ## write the digests of the images just built into the examples that use them (a release step: docs/dev/images.md)
	$(IMAGES_TOOL) pin -out $(IMAGES_DIR) $(IMAGE_EXAMPLES)
	$(MAKE) --no-print-directory generate

# The binaries are stamped with the version: they are built again when it
# changes, as when the sources do.
$(IMAGES_BIN)/VERSION: FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = '$(VERSION)' ] || echo '$(VERSION)' > $@

$(IMAGES_BIN)/linux_%/aws-ccm-renderer: $(SOURCES) $(IMAGES_BIN)/VERSION
	CGO_ENABLED=0 GOOS=linux GOARCH=$* $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $@ ./cmd/aws-ccm-renderer

$(IMAGES_BIN)/linux_%/aws-ccm-renderer-helm: $(SOURCES) $(IMAGES_BIN)/VERSION
	CGO_ENABLED=0 GOOS=linux GOARCH=$* $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $@ ./cmd/aws-ccm-renderer-helm

$(IMAGES_TOOL): $(shell find hack/images internal/images internal/dist -name '*.go' -not -name '*_test.go') go.mod go.sum
	$(GO) build -trimpath -o $@ ./hack/images

.PHONY: FORCE
FORCE:
