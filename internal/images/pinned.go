package images

// PinnedGuard is the guard's image (Guard) as the shipped examples run it:
// from the repository the images are published to, pinned by digest. It is
// the one home of that digest: make pin-images rewrites it at each release
// and then make generate writes it into the Fleet example's components,
// which run the guard by default.
const PinnedGuard = "ghcr.io/aws-ccm-renderer/aws-ccm-renderer-guard@sha256:045c600c8e2603f46b689bf267bc3a2cbc998171526676b4b7617e7b82a7ebee"
