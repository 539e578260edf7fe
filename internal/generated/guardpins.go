package generated

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
)

// GuardPinned are the hand-written examples that run the guard, naming its
// image as images.PinnedGuard does (the Fleet example's components are
// generated with it).
var GuardPinned = []string{"examples/argocd/applicationset.yaml"}

// GuardPins checks that each of GuardPinned names the guard's image by
// images.PinnedGuard's digest, at least once, or with write rewrites the
// digests there; it returns the problems.
func GuardPins(root string, write bool) ([]string, error) {
	name := images.Guard().Name
	_, digest, _ := strings.Cut(images.PinnedGuard, "@")
	h, err := v1.NewHash(digest)
	if err != nil {
		return nil, fmt.Errorf("images.PinnedGuard %q: %w", images.PinnedGuard, err)
	}
	var problems []string
	for _, f := range GuardPinned {
		path := filepath.Join(root, filepath.FromSlash(f))
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		refs := images.Pinned(string(b))[name]
		if len(refs) == 0 {
			return nil, fmt.Errorf("%s: names no %s pinned by digest", f, name)
		}
		pinned := images.Pin(string(b), map[string]v1.Hash{name: h})
		if pinned == string(b) {
			continue
		}
		problems = append(problems, fmt.Sprintf("%s: the guard's image %s is not %s (run make generate)", f, refs[0], images.PinnedGuard))
		if write {
			if err := os.WriteFile(path, []byte(pinned), 0o644); err != nil {
				return nil, err
			}
		}
	}
	if write {
		return nil, nil
	}
	return problems, nil
}
