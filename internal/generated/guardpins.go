package generated

import (
	"regexp"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
)

// GuardPinned are the hand-written examples that run the guard, naming its
// image as images.PinnedGuard does (the Fleet example's components are
// generated with it).
var GuardPinned = []string{"examples/argocd/applicationset.yaml"}

// GuardPins checks that each of GuardPinned names the guard's image by
// images.PinnedGuard's digest, or with write rewrites the digest there; it
// returns the problems.
func GuardPins(root string, write bool) ([]string, error) {
	repo, digest, _ := strings.Cut(images.PinnedGuard, "@")
	line := generatedLine{"the guard's image digest", regexp.MustCompile(`(` + regexp.QuoteMeta(repo) + `@)(sha256:[0-9a-f]{64})`),
		digest, "names no " + images.Guard().Name + " pinned by digest (" + repo + "@sha256:...)"}
	var problems []string
	for _, f := range GuardPinned {
		p, err := rewriteFile(root, f, []generatedLine{line}, "images.PinnedGuard's", write)
		if err != nil {
			return nil, err
		}
		problems = append(problems, p...)
	}
	return problems, nil
}
