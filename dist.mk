# The release (docs/dev/release.md): make dist VERSION=vX.Y.Z writes into
# $(DIST) (dist/), by hack/dist, the command over internal/dist:
#
#   aws-ccm-renderer_<version>_<os>_<arch>.tar.gz (.zip for Windows)
#       both programs, static, -trimpath, the version stamped
#   aws-ccm-renderer_<version>_<os>_<arch>.sbom.cdx.json
#       the archive's CycloneDX SBOM, from the Go module graph
#   aws-ccm-<X.Y.Z>+<os>.<arch>.tgz (and .prov when signed)
#       the Helm 4 postrenderer/v1 plugin, packaged by helm plugin package
#   aws-ccm-<X.Y.Z>.tar.gz
#       the Helm 3 plugin, whose install hook fetches and checks an archive
#   checksums.txt
#       SHA-256 of the files above
#   charts/  the wrapper chart's repository: its package (and .prov when
#       signed) and index.yaml
#
# for every platform of PLATFORMS. SIGN_KEY (a user ID) and KEYRING (the
# secret keyring holding it) sign the plugin tarballs and the chart package;
# without them the build is unsigned and says so. Two builds of one commit
# write the same bytes (but .prov files and charts/).
#
# The SBOM generator, cyclonedx-gomod, is a tool built from a pinned module
# (e2e/tools/cyclonedx) into $(BIN), as tools.mk builds the others.
#
# COSIGN_KEY (a cosign.key, its password in COSIGN_PASSWORD) signs the rest
# with sigstore-go (hack/sign, a module of its own: bin/aws-ccm-sign), as
# sigstore bundles cosign 2.5+ verifies with --new-bundle-format:
#
#   checksums.txt.sigstore.json           the signature of checksums.txt
#   aws-ccm-renderer_<version>.provenance.sigstore.json
#       SLSA v1 provenance of every file of checksums.txt and the images
#   cosign.pub                            the public key
#
# and attaches to each image's index, in its layout (OCI 1.1 referrers,
# which make push pushes), its signature, an SBOM attestation a platform
# (CycloneDX, images/sbom/) and its provenance. Without COSIGN_KEY they are
# not written, and make dist says so.

CYCLONEDX := $(BIN)/cyclonedx-gomod
PLATFORMS ?= linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64
SIGN_KEY  ?=
KEYRING   ?=
COSIGN_KEY ?=
SIGN_TOOL := $(BIN)/aws-ccm-sign
# The provenance's builder: CI gives its workflow run's URL.
BUILDER_ID ?= $(IMAGE_SOURCE)/blob/main/dist.mk
# Where the wrapper chart's dependency is taken from before Helm downloads
# it: $(AWS_CCM_CHARTS), the upstream packages beside the repository, and
# the tests' download cache.
DIST_CHARTS ?= $(AWS_CCM_CHARTS):$(CURDIR)/../shared/charts:$(CURDIR)/.cache/charts

TEST_ENV += CYCLONEDX=$(CYCLONEDX)
E2E_ENV  += CYCLONEDX=$(CYCLONEDX)

.PHONY: dist dist-files tools-dist push-chart cosign-key-check

tools: tools-dist

tools-dist: $(CYCLONEDX) $(HELM3) $(HELM4) ## build what make dist runs: cyclonedx-gomod, Helm 3 and Helm 4 (bin/)

dist: $(if $(COSIGN_KEY),cosign-key-check) dist-files images $(if $(COSIGN_KEY),$(SIGN_TOOL)) ## the release in dist/ (VERSION=vX.Y.Z; SIGN_KEY=... KEYRING=... and COSIGN_KEY=... to sign; PLATFORMS=os/arch,... for fewer): archives, SBOMs, checksums.txt, the Helm 3 and 4 plugins, the wrapper chart's repository, the images, their signatures and attestations (docs/dev/release.md, docs/dev/images.md)
	@if [ -z '$(COSIGN_KEY)' ]; then echo "dist: no COSIGN_KEY: checksums.txt and the images are not signed and have no attestations" >&2; exit 0; fi; \
	$(IMAGES_TOOL) sboms -bin $(IMAGES_BIN) -out $(IMAGES_DIR) -cyclonedx $(CYCLONEDX) -version '$(VERSION)' >/dev/null && \
	$(SIGN_TOOL) release -key '$(COSIGN_KEY)' -dist '$(DIST)' -images '$(IMAGES_DIR)' -sboms '$(IMAGES_DIR)/sbom' \
		-version '$(VERSION)' -source '$(IMAGE_SOURCE)' -revision '$(REVISION)' -builder '$(BUILDER_ID)' -created '$(SOURCE_DATE_EPOCH)'

# The cosign key is read before anything is built (make dist without -j);
# without COSIGN_KEY, make dist builds no bin/aws-ccm-sign.
cosign-key-check: $(SIGN_TOOL)
	$(SIGN_TOOL) check-key -key '$(COSIGN_KEY)'

# Built in its module, hack/sign, whose modules the root module's packages
# share are kept at the root module's versions (docs/dev/release.md).
$(SIGN_TOOL): $(filter-out %_test.go,$(wildcard hack/sign/*.go)) hack/sign/go.mod hack/sign/go.sum
	cd hack/sign && $(GO) build -trimpath -ldflags "-s -w" -o $@ .

# Everything of make dist but the images (images.mk), which integration/dist
# builds while integration/images builds the images.
dist-files: tools-dist ## make dist without the images
	SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct)} GO=$(GO) $(GO) run ./hack/dist \
		-version '$(VERSION)' -out '$(DIST)' -platforms '$(PLATFORMS)' \
		-helm3 '$(HELM3)' -helm4 '$(HELM4)' -cyclonedx '$(CYCLONEDX)' \
		-sign-key '$(SIGN_KEY)' -keyring '$(KEYRING)' -charts '$(DIST_CHARTS)'

$(CYCLONEDX): $(TOOLS)/cyclonedx/go.mod $(TOOLS)/cyclonedx/go.sum $(TOOLS_MK)
	cd $(TOOLS)/cyclonedx && $(TOOL_BUILD) -ldflags "-s -w" -o $@ github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod
	@touch $@

# The wrapper chart as an OCI artifact: make push-chart REGISTRY=host/path
# pushes dist/charts' package (and its .prov, which helm install --verify
# checks) to oci://$(REGISTRY)/charts with Helm 3, logged in as helm
# registry login leaves it.
push-chart: ## push the wrapper chart of dist/charts to oci://$(REGISTRY)/charts (make dist first)
	@test -n '$(REGISTRY)' || { echo "push-chart: give REGISTRY=host[/path], e.g. make push-chart REGISTRY=ghcr.io/you"; exit 1; }
	@set -- '$(DIST)'/charts/aws-ccm-rancher-*.tgz; test -f "$$1" || { echo "push-chart: no chart package in $(DIST)/charts: run make dist VERSION=vX.Y.Z first"; exit 1; }; \
	for p; do $(HELM3) push "$$p" oci://$(REGISTRY)/charts; done
