package main

import (
	"fmt"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// ccmImage is the promotion list's name of the CCM's image.
const ccmImage = "cloud-controller-manager"

var (
	// releaseTag is a release, no pre-release.
	releaseTag = regexp.MustCompile(`^v1\.\d+\.\d+$`)
	digest     = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// promotedImages reads the promotion list (a list of images, each a name
// and a dmap of digest: [tags]) and returns the CCM image's release tags
// of the minors the release data covers, with their digests.
func promotedImages(list []byte) (map[string]string, error) {
	var images []struct {
		Name string              `json:"name"`
		DMap map[string][]string `json:"dmap"`
	}
	if err := yaml.UnmarshalStrict(list, &images); err != nil {
		return nil, fmt.Errorf("not a promotion list (a list of name and dmap): %w", err)
	}
	i := slices.IndexFunc(images, func(im struct {
		Name string              `json:"name"`
		DMap map[string][]string `json:"dmap"`
	}) bool {
		return im.Name == ccmImage
	})
	if i < 0 {
		return nil, fmt.Errorf("no image named %s", ccmImage)
	}
	tags := map[string]string{}
	for d, ts := range images[i].DMap {
		if !digest.MatchString(d) {
			return nil, fmt.Errorf("%s: %q is not a sha256 digest", ccmImage, d)
		}
		for _, t := range ts {
			if !releaseTag.MatchString(t) || int(version.MustParseGeneric(t).Minor()) < releases.FirstMinor() {
				continue
			}
			if other, ok := tags[t]; ok && other != d {
				return nil, fmt.Errorf("%s: tag %s has two digests, %s and %s", ccmImage, t, other, d)
			}
			tags[t] = d
		}
	}
	return tags, nil
}

// newlyPromoted compares the list's tags with the release data's
// (releases.Promoted): the tags it lacks (tag@digest) and those it records
// with another digest (tag: recorded, listed), each in version order.
func newlyPromoted(listed map[string]string) (added, changed []string) {
	tags := make([]string, 0, len(listed))
	for t := range listed {
		tags = append(tags, t)
	}
	slices.SortFunc(tags, func(a, b string) int {
		va, vb := version.MustParseGeneric(a), version.MustParseGeneric(b)
		switch {
		case va.LessThan(vb):
			return -1
		case vb.LessThan(va):
			return 1
		}
		return 0
	})
	for _, t := range tags {
		recorded, ok := releases.Digest(t)
		switch {
		case !ok:
			added = append(added, t+"@"+listed[t])
		case recorded != listed[t]:
			changed = append(changed, fmt.Sprintf("%s: %s, listed %s", t, recorded, listed[t]))
		}
	}
	return added, changed
}
