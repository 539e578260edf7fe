// Package fleet runs examples/fleet through Fleet itself: the Fleet CLI
// (v0.12.0, e2e/tools/fleet) turns the bundle directory into its Bundle
// (`fleet apply`), picks a BundleDeployment for each Fleet cluster by its
// labels (`fleet target`, the controller's targeting code) and installs it
// with the agent's Helm deployer (`fleet deploy`) into a real API server,
// where the real DaemonSet controller places the CCM's pods on the node
// fixtures.
package fleet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// cp is the control plane the tests share. They deploy one release,
// kube-system/aws-cloud-controller-manager, the example's, in turn.
var cp *harness.ControlPlane

// fixtures holds every fixture node by distribution; all of them are in the
// cluster at once, and the tests judge each distribution's nodes apart.
var fixtures map[string][]corev1.Node

var fixtureDistros = []string{"rke", "rke2", "k3s", "kubeadm"}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bin, err := harness.Locate(testtools.Root())
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/fleet:", err)
		return 1
	}
	ctx := context.Background()
	start := time.Now()
	cp, err = harness.Start(ctx, bin, []string{"daemonset", "garbagecollector"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/fleet: starting the control plane:", err)
		return 1
	}
	defer cp.Stop()
	if fixtures, err = cp.CreateFixtures(ctx, testtools.Root(), fixtureDistros); err != nil {
		fmt.Fprintln(os.Stderr, "e2e/fleet:", err)
		return 1
	}
	if err := installFleetCRDs(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2e/fleet:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e/fleet: control plane up with Fleet's CRDs in %s (%s)\n", time.Since(start).Round(time.Millisecond), cp.Dir)
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, "e2e/fleet: kube-controller-manager log tail:\n"+cp.Log("kube-controller-manager", 2000))
	}
	return code
}

// fleetModuleDir is the Fleet module's directory in the Go module cache,
// the release e2e/tools/fleet pins (downloaded when missing).
func fleetModuleDir() (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/rancher/fleet")
	cmd.Dir = filepath.Join(testtools.Root(), "e2e", "tools", "fleet")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("finding the Fleet module of e2e/tools/fleet: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), `"Dir": `); ok {
			return strings.Trim(strings.TrimSuffix(v, ","), `"`), nil
		}
	}
	return "", fmt.Errorf("go mod download printed no directory for the Fleet module:\n%s", out)
}

// installFleetCRDs installs the CustomResourceDefinitions of the pinned
// Fleet release, as its fleet-crd chart ships them (plain YAML), and waits
// until the API server serves Clusters.
func installFleetCRDs(ctx context.Context) error {
	dir, err := fleetModuleDir()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, "charts", "fleet-crd", "templates", "crds.yaml"))
	if err != nil {
		return err
	}
	crds, err := harness.Decode(b)
	if err != nil {
		return err
	}
	if err := cp.Apply(ctx, crds); err != nil {
		return err
	}
	return cp.WaitServed(ctx, "fleet.cattle.io/v1alpha1", "clusters", 30*time.Second)
}
