package awsccm_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/awsccm"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	checkpkg "github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	rel "github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestTodayPlans replays the node steps of the plans of clusters at 1.27
// and later with the real AWS CCM on moto, nodes registered as each path
// leaves them:
//   - new (plan --from new): nodes registered by kubelets on the external
//     provider, tainted uninitialized: the CCM initialises them;
//   - none (--from none, kubeadm without a cloud provider): a node without
//     providerID or taint is left alone until the plan's
//     during.initialise-nodes taints it, then initialised in place;
//   - builtin (--from builtin, RKE2's own cloud controller): a node on an
//     rke2:// providerID keeps it; tainting it does not make the CCM take
//     it (from 1.30 the CCM reads the providerID only), so the plan's
//     during.reregister-nodes deletes the Node and the kubelet registers
//     it anew, which the CCM initialises.
//
// The CCM releases of 1.27 and later run it (the plans are for those
// minors; v1.26.0 exits on a providerID it cannot map, calBadProviderID).
func TestTodayPlans(t *testing.T) {
	ran := 0
	for _, r := range releases {
		if r.Minor() <= rel.LastInTreeMinor {
			continue
		}
		ran++
		t.Run(r.Version, func(t *testing.T) { replayToday(t, r) })
	}
	if ran == 0 {
		t.Fatal("no AWS CCM release of 1.27 or later to replay the plans with")
	}
}

// planStep builds a plan of the options and returns one step of it.
func planStep(t *testing.T, distro distros.Distro, from, kubeVersion, id string) plan.Step {
	t.Helper()
	o := plan.DefaultOptions()
	o.Distro, o.From, o.KubeVersion = distro, from, kubeVersion
	p, err := plan.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	return stepOf(t, p, id)
}

// stepOf returns a step of a plan.
func stepOf(t *testing.T, p *plan.Plan, id string) plan.Step {
	t.Helper()
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			if s.ID == id {
				return s
			}
		}
	}
	t.Fatalf("the %s --from=%s plan has no step %s", p.Distro, p.From, id)
	return plan.Step{}
}

// mainShell is the shell of a step's main command.
func mainShell(t *testing.T, s plan.Step) string {
	t.Helper()
	for _, c := range s.Commands {
		if c.Main {
			return c.Shell
		}
	}
	t.Fatalf("step %s has no main command", s.ID)
	return ""
}

// plainNode registers a node on an instance as a kubelet without a cloud
// provider does (no taint, no providerID), or with the providerID another
// cloud controller gave it and without the taint it removed.
func plainNode(t *testing.T, name string, providerID string) *corev1.Node {
	t.Helper()
	n := nodeOn(t, extraInstance(t, name), providerID)
	n.Spec.Taints = nil
	register(t, *n)
	return n
}

func replayToday(t *testing.T, r awsccm.Release) {
	ctx := context.Background()
	kube := fmt.Sprintf("v1.%d.0", r.Minor())
	renders(t)

	// new: the nodes of a cluster created on the external provider.
	ns := registerHealthy(t)
	// none: a kubeadm node registered without a cloud provider.
	none := plainNode(t, "today-none", "")
	// builtin: a node RKE2's own cloud controller initialised.
	builtin := plainNode(t, "today-builtin", "")
	builtin.Spec.ProviderID = "rke2://" + builtin.Name
	if _, err := cp.Client.CoreV1().Nodes().Update(ctx, builtin, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	stream := streamOf(t, r)
	installWorkload(t, stream)
	c := startCal(t, r)
	c.waitNodes(t, ns)
	t.Logf("new: the CCM %s initialised the %d nodes registered tainted", r.Version, len(ns))

	// Calibration: what check says of the two nodes the CCM leaves alone,
	// against what the CCM then does with them (below).
	out, _ := checkAWS(t, stream, "--aws-ccm-principal", userARN(c.name))
	bad := findings(out, "✗", checkpkg.AreaNode, builtin.Name, "rke2://")
	if len(bad) != 1 || !strings.Contains(bad[0], "Invalid format for AWS instance") {
		t.Errorf("check: want one ✗ node line naming %s's rke2:// providerID and the CCM's refusal:\n%s", builtin.Name, out)
	}
	if !strings.Contains(out, "kubectl taint node "+none.Name+" node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule") {
		t.Errorf("check: no fix that taints %s, the node without providerID or taint:\n%s", none.Name, out)
	}
	if hint := findings(out, "·", checkpkg.AreaPlan, "builtin"); len(hint) != 1 {
		t.Errorf("check: want one plan hint toward --from=builtin:\n%s", out)
	}
	t.Logf("calibration, CCM %s: check says %q; the CCM: below", r.Version, bad)

	// The CCM has synced its nodes: the untainted ones are as they were.
	if got := getNode(t, none.Name); got.Spec.ProviderID != "" {
		t.Fatalf("none: the CCM gave the untainted node %s the providerID %q", none.Name, got.Spec.ProviderID)
	}
	if got := getNode(t, builtin.Name); got.Spec.ProviderID != builtin.Spec.ProviderID {
		t.Fatalf("builtin: node %s has providerID %q", builtin.Name, got.Spec.ProviderID)
	}

	// none: the plan's during.initialise-nodes, as it says.
	step := planStep(t, distros.Kubeadm, plan.FromNone, kube, "during.initialise-nodes")
	asWritten(t, mainShell(t, step), none.Name)
	waitInitialisedNode(t, c, none.Name)
	t.Logf("none: %s initialised in place after %q", none.Name, mainShell(t, step))
	// The step's checks, as written: the node's provider ID and taints,
	// then every node still waiting, which lists the builtin node (on its
	// rke2:// provider ID) and not this one.
	if out := asWritten(t, step.Checks[0].Command.Shell, none.Name); !strings.HasPrefix(out, "aws:///") || strings.Contains(out, uninitializedTaint) {
		t.Errorf("none: the step's check says %q; want an aws:/// provider ID and no %s taint (%s)", out, uninitializedTaint, step.Checks[0].Expect)
	}
	waiting := asWritten(t, step.Checks[1].Command.Shell, none.Name)
	if !strings.Contains(waiting, builtin.Name+" "+builtin.Spec.ProviderID) || strings.Contains(waiting, none.Name) {
		t.Errorf("none: the step's check of every node lists:\n%s\nwant %s (rke2://) and not %s", waiting, builtin.Name, none.Name)
	}

	// builtin: tainting keeps the rke2:// providerID and, from 1.30, the
	// taint.
	asWritten(t, mainShell(t, step), builtin.Name)
	if r.Minor() > rel.ProviderIDFallbackUntil {
		reason := c.syncError(t, builtin.Name, "Invalid format for AWS instance")
		stillTainted(t, builtin.Name)
		t.Logf("builtin: tainted by hand, %s stays uninitialised: %s", builtin.Name, reason)
	}
	if got := getNode(t, builtin.Name); got.Spec.ProviderID != builtin.Spec.ProviderID {
		t.Errorf("builtin: node %s's providerID changed to %q", builtin.Name, got.Spec.ProviderID)
	}
	// The plan's during.reregister-nodes: the Node deleted, then
	// registered anew by its kubelet on the external provider.
	re := planStep(t, distros.RKE2, plan.FromBuiltin, kube, "during.reregister-nodes")
	if sh := mainShell(t, re); !strings.Contains(sh, `kubectl delete node "$NODE"`) {
		t.Fatalf("during.reregister-nodes does not delete the Node: %s", sh)
	}
	asWritten(t, mainShell(t, re), builtin.Name) // drain, then delete, as written
	harness.WaitFor(t, time.Minute, "node "+builtin.Name+" to be gone", func() bool {
		_, err := cp.Client.CoreV1().Nodes().Get(ctx, builtin.Name, metav1.GetOptions{})
		return err != nil
	})
	again := builtin.DeepCopy()
	again.ResourceVersion, again.UID, again.Spec.ProviderID = "", "", ""
	again.Spec.Taints = []corev1.Taint{{Key: uninitializedTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	if err := cp.CreateNodes(ctx, []corev1.Node{*again}); err != nil {
		t.Fatal(err)
	}
	waitInitialisedNode(t, c, builtin.Name)
	t.Logf("builtin: %s registered again, initialised with %s", builtin.Name, getNode(t, builtin.Name).Spec.ProviderID)
	if out := asWritten(t, re.Checks[0].Command.Shell, builtin.Name); !strings.HasPrefix(out, "aws:///") {
		t.Errorf("builtin: the step's check says %q; want an aws:/// provider ID (%s)", out, re.Checks[0].Expect)
	}
}

// asWritten runs a command of a plan as an operator does: sh, with the
// control plane's kubectl on the PATH and its kubeconfig, NODE the node it
// works on; it returns the command's output, failing the test when the
// command fails.
func asWritten(t *testing.T, shell, node string) string {
	t.Helper()
	env := []string{"PATH=" + filepath.Dir(testtools.Kubectl(t)) + ":/usr/bin:/bin", "KUBECONFIG=" + cp.Kubeconfig, "HOME=" + t.TempDir(), "NODE=" + node}
	out, errOut, err := testtools.Run(t, env, "sh", "-c", shell)
	if err != nil {
		t.Fatalf("%s (NODE=%s): %v\n%s%s", shell, node, err, out, errOut)
	}
	return strings.TrimSpace(string(out))
}

// waitInitialisedNode waits until the CCM has initialised a node: an
// aws:/// providerID, no uninitialized taint, an InternalDNS address.
func waitInitialisedNode(t *testing.T, c *ccm, name string) {
	t.Helper()
	harness.WaitForState(t, 2*time.Minute, "the CCM to initialise node "+name, func() (bool, string) {
		c.alive(t)
		n := getNode(t, name)
		ok := strings.HasPrefix(n.Spec.ProviderID, "aws:///") && initialised(n) &&
			slicesContainsType(n.Status.Addresses, corev1.NodeInternalDNS)
		return ok, fmt.Sprintf("providerID %q, taints %v", n.Spec.ProviderID, n.Spec.Taints)
	})
}

func slicesContainsType(as []corev1.NodeAddress, ty corev1.NodeAddressType) bool {
	for _, a := range as {
		if a.Type == ty {
			return true
		}
	}
	return false
}
