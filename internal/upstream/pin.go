package upstream

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Pinned returns what a front end sets image.tag to for a CCM release,
// TAG@DIGEST: the digest the promotion list gives the tag
// (releases.Pin), or the one given with it (TAG@sha256:HEX). A tag alone
// that the list does not give is an error that says how to read its
// digest: an image that cannot be pulled leaves every node uninitialised,
// so no front end pins such a tag without its digest.
func Pinned(ref string) (string, error) {
	img, err := renderer.ParseImage(releases.ImageRepository + ":" + ref)
	if err != nil || img.Tag == "" || img.Name() != releases.ImageRepository || !kubeversion.IsRelease(img.Tag) {
		return "", fmt.Errorf("%s is not a CCM release tag such as %s, alone or with its digest (%s@sha256:HEX)", strconv.Quote(ref), releases.Newest(), releases.Newest())
	}
	listed, promoted := releases.Digest(img.Tag)
	switch {
	case img.Digest != "" && !strings.HasPrefix(img.Digest, "sha256:"):
		return "", fmt.Errorf("%s: the digest is not a sha256 one", strconv.Quote(ref))
	case img.Digest != "" && promoted && img.Digest != listed:
		return "", fmt.Errorf("%s: registry.k8s.io's promotion list gives %s the digest %s", strconv.Quote(ref), img.Tag, listed)
	case img.Digest != "":
		return img.Tag + "@" + img.Digest, nil
	case promoted:
		return releases.Pin(img.Tag), nil
	}
	return "", &NotPromotedError{Tag: img.Tag}
}

// NotPromotedError is Pinned's error for a tag alone that the promotion
// list does not give.
type NotPromotedError struct{ Tag string }

func (e *NotPromotedError) Error() string {
	return fmt.Sprintf("%s is not in registry.k8s.io's promotion list yet, so its digest is not known here: read it with %s and give %s@<that digest>", e.Tag, releases.DigestCommand(e.Tag), e.Tag)
}
