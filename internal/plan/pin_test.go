package plan_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// imageTagArg is the value a command sets image.tag to.
var imageTagArg = regexp.MustCompile(`image\.tag=([^\s"'\\]+)`)

// TestDigestPins holds every command that sets image.tag to a pin by
// digest: the promotion list's digest for a tag it gives, else the
// digest the operator reads from the registry with crane, an input named
// at the plan's head, never the tag alone.
func TestDigestPins(t *testing.T) {
	for name, p := range plans(t) {
		t.Run(name, func(t *testing.T) {
			if d, ok := releases.Digest(p.CCM.ImageTag); ok && p.CCM.Image != releases.ImageRepository+":"+p.CCM.ImageTag+"@"+d {
				t.Errorf("the plan's image %s, want it pinned to the promotion list's digest %s", p.CCM.Image, d)
			}
			pins := 0
			for _, s := range allSteps(p) {
				for _, c := range append(stepCommands(s), s.Rollback.Commands...) {
					for _, m := range imageTagArg.FindAllStringSubmatch(c.Shell, -1) {
						pins++
						tag, digest, ok := strings.Cut(m[1], "@")
						if !ok {
							t.Errorf("%s: image.tag=%s is not pinned by digest: %s", s.ID, m[1], c.Shell)
							continue
						}
						if d, promoted := releases.Digest(tag); promoted {
							if digest != d {
								t.Errorf("%s: image.tag=%s, the promotion list gives %s", s.ID, m[1], d)
							}
							continue
						}
						v, isVar := strings.CutPrefix(digest, "$")
						if !isVar || len(c.Argv) > 0 {
							t.Errorf("%s: image.tag=%s (argv %d words): an unpromoted tag pins the digest read from the registry, in a shell", s.ID, m[1], len(c.Argv))
							continue
						}
						i := slices.IndexFunc(p.Inputs, func(in plan.Input) bool { return in.Name == v })
						if i < 0 {
							t.Errorf("%s: $%s is not among the plan's inputs", s.ID, v)
							continue
						}
						if want := v + "=$(crane digest " + releases.ImageRepository + ":" + tag + ")"; p.Inputs[i].Step != "" || !strings.Contains(strings.Join(strings.Fields(p.Inputs[i].Source), " "), want) {
							t.Errorf("input %s: %q, want the operator's, with %s", v, p.Inputs[i].Source, want)
						}
					}
				}
			}
			if pins == 0 {
				t.Error("no command sets image.tag")
			}
		})
	}
}
