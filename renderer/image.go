package renderer

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Image references are read by one parser, go-containerregistry's name
// package (the reference grammar of the registries: lower-case
// repositories, tags of [A-Za-z0-9_.-], digests an algorithm's full hex),
// with three checks of our own that the package leaves out: a reference is
// printable ASCII (the package takes any byte above 0x7f in a registry's
// name, U+2028 and no-break spaces included), and the registry is a host
// name or an IP address with an optional port (the package takes any RFC
// 3986 authority, "$(id).io" included), and each part of the repository's
// path starts and ends with a letter or digit ("-ccm" is not one).

// Image is an image reference, parsed.
type Image struct {
	// Registry is the registry as written ("" when the reference names
	// none, which means Docker Hub), Repository the path under it.
	Registry, Repository string
	// Tag and Digest are "" when the reference has none.
	Tag, Digest string
}

// ParseImage reads an image reference as a pod's container takes it: the
// registry may be left out (Docker Hub) and so may the tag; a tag and a
// digest may both be given. It is how the renderer, check and the guard
// read the images of the manifests and pods they look at.
func ParseImage(s string) (Image, error) { return parseImage(s, false) }

// ParseDigestPinned reads an image reference that must name its registry
// and be pinned by digest (REGISTRY/REPOSITORY[:TAG]@sha256:HEX), as the
// guard's image (--guard-image) is: name.StrictValidation, and the digest
// a sha256 one.
func ParseDigestPinned(s string) (Image, error) {
	img, err := parseImage(s, true)
	if err != nil {
		return Image{}, err
	}
	if img.Digest == "" {
		return Image{}, fmt.Errorf("%s is not pinned by digest", strconv.Quote(s))
	}
	if !strings.HasPrefix(img.Digest, "sha256:") {
		return Image{}, fmt.Errorf("%s: the digest is not a sha256 one", strconv.Quote(s))
	}
	return img, nil
}

// registryHost is a host name or an IPv4 address, or an IPv6 one in
// brackets, with an optional port.
var registryHost = regexp.MustCompile(`^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$`)

// pathComponent is one part of a repository's path, as the registries'
// reference grammar has it (the name package checks only its characters).
var pathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)

func parseImage(s string, strict bool) (img Image, err error) {
	q := strconv.Quote(s)
	defer func() {
		if err != nil {
			err = fmt.Errorf("%s is not an image reference: %w", q, err)
		}
	}()
	if s == "" {
		return Image{}, errors.New("it is empty")
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return Image{}, fmt.Errorf("it holds %s at byte %d (references are printable ASCII without spaces)", strconv.QuoteRune(rune(s[i])), i)
		}
	}
	opt := name.WeakValidation
	if strict {
		opt = name.StrictValidation
	}
	base, _, pinned := strings.Cut(s, "@")
	if pinned {
		d, err := name.NewDigest(s, opt)
		if err != nil {
			return Image{}, err
		}
		img.Digest = d.DigestStr()
	}
	repo, tagged := base, false
	if i := strings.LastIndexByte(base, ':'); i > strings.LastIndexByte(base, '/') {
		repo, img.Tag, tagged = base[:i], base[i+1:], true
	}
	switch {
	case tagged:
		if _, err := name.NewTag(base, opt); err != nil {
			return Image{}, err
		}
	case strict && !pinned:
		return Image{}, errors.New("it has neither a tag nor a digest")
	}
	if _, err := name.NewRepository(repo, opt); err != nil {
		return Image{}, err
	}
	// The registry as the name package tells it from the repository's
	// first element.
	img.Repository = repo
	if reg, path, ok := strings.Cut(repo, "/"); ok && (reg == "localhost" || strings.ContainsAny(reg, ".:")) {
		if !registryHost.MatchString(reg) {
			return Image{}, fmt.Errorf("the registry %s is not a host name or an address, with an optional port", strconv.Quote(reg))
		}
		img.Registry, img.Repository = reg, path
	}
	for _, c := range strings.Split(img.Repository, "/") {
		if !pathComponent.MatchString(c) {
			return Image{}, fmt.Errorf("the repository's part %s does not start and end with a letter or digit, or has separators side by side", strconv.Quote(c))
		}
	}
	return img, nil
}

// Name is the reference without tag and digest: REGISTRY/REPOSITORY.
func (i Image) Name() string {
	if i.Registry == "" {
		return i.Repository
	}
	return i.Registry + "/" + i.Repository
}
