package check

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	ccmrenderer "github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// gateFlags are the flags of the check the kubeadm plan runs as step id's
// gate, but for what names the manifests (-f -, --release, --namespace):
// the test feeds the rendered manifests itself.
func gateFlags(t *testing.T, p *plan.Plan, id string) []string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			if s.ID != id {
				continue
			}
			for _, c := range s.Checks {
				if c.Command == nil || c.Command.Kind != plan.KindCheck {
					continue
				}
				for _, seg := range strings.Split(strings.ReplaceAll(c.Command.Shell, "\\\n", " "), " | ") {
					words := testtools.ShellWords(t, sh, seg)
					if len(words) < 2 || words[1] != "check" {
						continue
					}
					var flags []string
					for i := 2; i < len(words); i++ {
						switch words[i] {
						case "-f", "--release", "--namespace":
							i++
						default:
							flags = append(flags, words[i])
						}
					}
					return flags
				}
			}
		}
	}
	t.Fatalf("step %s runs no check", id)
	return nil
}

// TestPlanGates: the gates the kubeadm plan prints fail where their step
// failed, on the real API server: after before.kcm-leader-migration a
// missing migration lease is an error (exit 1), the lease held by the
// in-tree controller manager passes; at during.verify that holder is an
// error, the CCM's leader passes.
func TestPlanGates(t *testing.T) {
	state(t, "kubeadm")
	o := plan.DefaultOptions()
	o.Distro = distros.Kubeadm
	p, err := plan.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	afterKCM, verify := gateFlags(t, p, "before.kcm-leader-migration"), gateFlags(t, p, "during.verify")
	if !slices.Contains(afterKCM, "--migration-lease-holder=kube-controller-manager") || !slices.Contains(verify, "--migration-lease-holder=ccm") {
		t.Fatalf("the gates' flags: %q and %q", afterKCM, verify)
	}
	manifests := template(t, "--distro=kubeadm", "--mode=migrate", "--allow-version-skew")
	const subject = "✗ lease         Lease kube-system/cloud-provider-extraction-migration: "
	gate := func(flags []string, code int, wants ...string) {
		t.Helper()
		r := check(t, manifests, append([]string{"-f", "-"}, flags...)...)
		if r.code != code {
			t.Errorf("check %q: exit %d, want %d\n%s%s", flags, r.code, code, r.out, r.errOut)
		}
		says(t, r.out, wants...)
	}

	// The controller manager did not take the lease.
	gate(afterKCM, 1, subject+"the migration lease is missing", "at this step the in-tree kube-controller-manager should hold it (--migration-lease-holder=kube-controller-manager)")

	// It did: it leads its own lease and the migration lease as one
	// identity.
	const kcmID, ccmID = "ip-10-0-1-71_0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d", "ip-10-0-1-71_7e6d5c4b-3a29-4817-9605-f4e3d2c1b0a9"
	lease := func(name, holder string) coordinationv1.Lease {
		return coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder)}}
	}
	createLease(t, lease("kube-controller-manager", kcmID))
	createLease(t, lease(ccmrenderer.DefaultLeaderName, kcmID))
	gate(afterKCM, 0, "✓ lease         Lease kube-system/cloud-provider-extraction-migration: held by "+kcmID)

	// At during.verify the in-tree controller manager still holds it.
	gate(verify, 1, subject+"held by "+kcmID, "at this step the CCM's leader should hold it (--migration-lease-holder=ccm)")

	// The CCM's leader took it over.
	ctx := t.Context()
	leases := cp.Client.CoordinationV1().Leases("kube-system")
	l, err := leases.Get(ctx, ccmrenderer.DefaultLeaderName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.Spec.HolderIdentity = ptr.To(ccmID)
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	createLease(t, lease("cloud-controller-manager", ccmID))
	gate(verify, 0, "✓ lease         Lease kube-system/cloud-provider-extraction-migration: held by "+ccmID)
	// And the gate of before.kcm-leader-migration no longer passes.
	gate(afterKCM, 1, subject+"held by "+ccmID)
}
