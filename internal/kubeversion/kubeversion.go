// Package kubeversion is the one reading of a Kubernetes version in this
// program: the renderer's --kube-version and --ccm-version, KUBE_VERSION as
// Argo CD sends it, plan's --kube-version, the chart wrapper's, check's and
// the guard's reading of the API server's and the kubelets' versions, and
// the CCM's release tags. Every command refuses the same spellings, with the
// same reason.
//
// A version is 1.MINOR, or 1.MINOR.PATCH with a semver pre-release and build
// metadata (v1.34.2, 1.34, v1.30.14+rke2r1, v1.26.15-eks-ab12cd3,
// v1.35.0-alpha.0), with or without a leading v. Refused: anything else,
// among it leading zeros (1.034), parts that are not numbers (v1.34.x),
// trailing text (v1.35.2;id), numbers past 2^31-1, white space and the empty
// string. The value read is k8s.io/apimachinery's version.Version, which
// the rest of the program compares with.
package kubeversion

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// MaxLen is the longest version read: the longest image tag (128
// characters) is more than any Kubernetes version needs.
const MaxLen = 128

// Example is how the errors spell a version.
const Example = "v1.34.2 or 1.34"

// Error says why a string is not a Kubernetes version.
type Error struct {
	Input  string // the input, cut to MaxLen characters
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%q is not a Kubernetes version such as %s: %s", e.Input, Example, e.Reason)
}

func fail(s, format string, args ...any) (*version.Version, error) {
	if len(s) > MaxLen {
		s = s[:MaxLen] + "..."
	}
	return nil, &Error{Input: s, Reason: fmt.Sprintf(format, args...)}
}

// cut shortens a part of the input an error quotes.
func cut(s string) string {
	if len(s) > 24 {
		return s[:24] + "..."
	}
	return s
}

// Parse reads a Kubernetes version.
func Parse(s string) (*version.Version, error) {
	switch {
	case s == "":
		return fail(s, "it is empty")
	case len(s) > MaxLen:
		return fail(s, "it is %d characters long, more than any version (%d)", len(s), MaxLen)
	}
	rest := strings.TrimPrefix(s, "v")
	major, rest, err := number(s, rest, "major")
	if err != nil {
		return nil, err
	}
	if major != 1 {
		return fail(s, "Kubernetes versions are 1.x, not %d.x", major)
	}
	if !strings.HasPrefix(rest, ".") {
		return fail(s, "give 1.MINOR or 1.MINOR.PATCH")
	}
	minor, rest, err := number(s, rest[1:], "minor")
	if err != nil {
		return nil, err
	}
	if rest == "" {
		return version.MajorMinor(1, minor), nil
	}
	if rest[0] != '.' {
		return fail(s, "%q after the minor: give 1.MINOR or 1.MINOR.PATCH", cut(rest))
	}
	patch, rest, err := number(s, rest[1:], "patch")
	if err != nil {
		return nil, err
	}
	var pre, build string
	if after, ok := strings.CutPrefix(rest, "-"); ok {
		pre, rest = after, ""
		if i := strings.IndexByte(after, '+'); i >= 0 {
			pre, rest = after[:i], after[i:]
		}
		if err := identifiers(pre, true); err != "" {
			return fail(s, "pre-release %q: %s", cut(pre), err)
		}
	}
	if after, ok := strings.CutPrefix(rest, "+"); ok {
		build, rest = after, ""
		if err := identifiers(build, false); err != "" {
			return fail(s, "build metadata %q: %s", cut(build), err)
		}
	}
	if rest != "" {
		return fail(s, "%q after the patch: a pre-release starts with -, build metadata with +", cut(rest))
	}
	text := fmt.Sprintf("%d.%d.%d", 1, minor, patch)
	if pre != "" {
		text += "-" + pre
	}
	if build != "" {
		text += "+" + build
	}
	return version.MustParseSemantic(text), nil
}

// number reads the decimal number that starts s: no sign, no leading zero,
// at most 2^31-1.
func number(in, s, what string) (uint, string, error) {
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	digits := s[:end]
	switch {
	case digits == "":
		next := s
		if next == "" {
			_, err := fail(in, "no %s", what)
			return 0, "", err
		}
		if i := strings.IndexAny(next, ".-+"); i > 0 {
			next = next[:i]
		}
		_, err := fail(in, "%s %q is not a number", what, cut(next))
		return 0, "", err
	case len(digits) > 1 && digits[0] == '0':
		_, err := fail(in, "%s %q has a leading zero", what, digits)
		return 0, "", err
	}
	n, err := strconv.ParseUint(digits, 10, 31)
	if err != nil {
		_, err := fail(in, "%s %s is out of range", what, cut(digits))
		return 0, "", err
	}
	return uint(n), s[end:], nil
}

// identifiers checks semver's dot-separated identifiers: [0-9A-Za-z-]+,
// and in a pre-release no number with a leading zero. It returns why not,
// or "".
func identifiers(s string, pre bool) string {
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return "an empty part"
		}
		numeric := true
		for _, r := range id {
			switch {
			case r >= '0' && r <= '9':
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '-':
				numeric = false
			default:
				return fmt.Sprintf("%q is not a letter, digit or -", r)
			}
		}
		if pre && numeric && len(id) > 1 && id[0] == '0' {
			return fmt.Sprintf("%q has a leading zero", cut(id))
		}
	}
	return ""
}

// Minor returns the minor of a Kubernetes version.
func Minor(s string) (int, error) {
	v, err := Parse(s)
	if err != nil {
		return 0, err
	}
	return int(v.Minor()), nil
}

// Normalize returns a version as the renderer and the chart wrapper take
// it: with a leading v.
func Normalize(s string) (string, error) {
	if _, err := Parse(s); err != nil {
		return "", err
	}
	return "v" + strings.TrimPrefix(s, "v"), nil
}

// IsRelease says whether s is spelled as a release's tag: a leading v,
// a patch, maybe a pre-release, no build metadata (v1.34.3,
// v1.35.0-alpha.0).
func IsRelease(s string) bool {
	v, err := Parse(s)
	return err == nil && strings.HasPrefix(s, "v") && len(v.Components()) == 3 && v.BuildMetadata() == ""
}
