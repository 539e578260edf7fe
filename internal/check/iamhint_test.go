package check

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestIAMPolicyHintPrintsTheStep: the plan command check's IAM hint names
// prints the step it says, for every distribution and minor: the same
// flags given to the plan builder build a plan with before.iam.
func TestIAMPolicyHintPrintsTheStep(t *testing.T) {
	n := 0
	for _, d := range plan.Distros {
		for minor := 22; minor <= releases.LastMinor(); minor++ {
			if d == distros.RKE && minor > releases.RKELastMinor {
				break
			}
			version := fmt.Sprintf("v1.%d.3", minor)
			v := &View{Snapshot: &Snapshot{KubernetesVersion: version}, Distribution: Distribution{Detected: string(d)}}
			hint := v.IAMPolicyHint()
			_, cmd, ok := strings.Cut(hint, ", which aws-ccm-renderer plan ")
			if !ok {
				t.Fatalf("%s %s: the hint names no plan command: %q", d, version, hint)
			}
			cmd = strings.TrimSuffix(cmd, " prints")
			o := plan.DefaultOptions()
			words := strings.Fields(cmd)
			for i := 0; i+1 < len(words); i += 2 {
				switch val := words[i+1]; words[i] {
				case "--distro":
					o.Distro = distros.Distro(val)
				case "--kube-version":
					o.KubeVersion = val
				case "--from":
					o.From = val
				case "--ccm-version":
					o.CCMVersion = val
				case "--step":
					o.Step = val
				default:
					t.Fatalf("%s %s: the hint's command has a flag this test does not know: %q", d, version, cmd)
				}
			}
			if o.Step != "before.iam" {
				t.Fatalf("%s %s: the hint prints no --step before.iam: %q", d, version, cmd)
			}
			p, err := plan.Build(o)
			if err != nil {
				t.Errorf("%s %s: aws-ccm-renderer plan %s: %v", d, version, cmd, err)
				continue
			}
			if len(p.Phases) != 1 || len(p.Phases[0].Steps) != 1 || p.Phases[0].Steps[0].ID != "before.iam" {
				t.Errorf("%s %s: aws-ccm-renderer plan %s prints no before.iam", d, version, cmd)
			}
			n++
		}
	}
	t.Logf("%d hints print their step", n)
}
