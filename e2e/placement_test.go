package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// install installs the latest upstream chart as a release of its own: every
// name the chart takes from values is unique to the release, so that
// releases do not fight over cluster-scoped objects. It returns the
// DaemonSet's namespace and name.
func install(t *testing.T, release string, renderer []string, extra ...string) (string, string) {
	t.Helper()
	ns := namespace(t, release)
	args := []string{"install", release, testtools.UpstreamChart(t, testtools.LatestChartVersion),
		"--namespace", ns,
		"--set", "namespace=" + ns + ",nameOverride=" + release + ",clusterRoleName=" + release + ",serviceAccountName=" + release + "-sa"}
	if renderer != nil {
		args = append(args, rendererArgs(t, renderer...)...)
	}
	helm(t, append(args, extra...)...)
	return ns, release
}

// settle waits for the DaemonSet controller (harness.Settle) and returns
// the nodes the DaemonSet's pods are pinned to.
func settle(t *testing.T, ns, name string) []string {
	t.Helper()
	return harness.Settle(t, cp.Client, ns, name)
}

// podNodes returns, sorted, the nodes the DaemonSet's pods are pinned to.
func podNodes(t *testing.T, ds *appsv1.DaemonSet) []string {
	t.Helper()
	return harness.PodNodes(t, cp.Client, ds)
}

func ownedBy(p corev1.Pod, ds *appsv1.DaemonSet) bool { return harness.OwnedBy(p, ds) }

func pinnedNode(p corev1.Pod) string { return harness.PinnedNode(p) }

// controlPlaneNodes returns the names of a fixture's control-plane nodes.
func controlPlaneNodes(distro string) []string { return harness.ControlPlaneNodes(fixtures[distro]) }

// onFixture keeps the nodes that belong to a distribution's fixture.
func onFixture(nodes []string, distro string) []string {
	return harness.OnFixture(nodes, fixtures[distro])
}

// TestPlacement installs the upstream chart with the real Helm CLI into the
// real API server, once at its defaults and once per --distro through the
// renderer, and lets the real DaemonSet controller decide where pods go.
func TestPlacement(t *testing.T) {
	cases := []struct {
		name     string
		renderer []string // nil: the chart's defaults, no renderer
	}{
		{"defaults", nil},
		{"auto", []string{"--distro=auto"}},
		{"rke", []string{"--distro=rke"}},
		{"rke2", []string{"--distro=rke2"}},
		{"k3s", []string{"--distro=k3s"}},
		{"kubeadm", []string{"--distro=kubeadm"}},
	}
	var mu sync.Mutex
	placed := map[string][]string{} // case -> nodes with a pod
	t.Run("install", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				ns, name := install(t, "place-"+c.name, c.renderer)
				nodes := settle(t, ns, name)
				mu.Lock()
				placed[c.name] = nodes
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	// The failure users report, kept as a baseline: the chart's defaults
	// place no pod on RKE1, RKE2 or K3s.
	for _, d := range []string{"rke", "rke2", "k3s"} {
		if got := onFixture(placed["defaults"], d); len(got) != 0 {
			t.Errorf("chart defaults: pods on %s nodes %v; the baseline says none", d, got)
		}
	}
	for _, d := range fixtureDistros {
		want := controlPlaneNodes(d)
		if got := onFixture(placed[d], d); !slices.Equal(got, want) {
			t.Errorf("--distro=%s: pods on %v, want exactly the control-plane nodes %v", d, got, want)
		}
		if got := onFixture(placed["auto"], d); !slices.Equal(got, want) {
			t.Errorf("--distro=auto on the %s fixture: pods on %v, want %v", d, got, want)
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-8s %6s %13s %15s %13s %14s\n", "fixture", "nodes", "control-plane", "chart defaults", "--distro=own", "--distro=auto")
	for _, d := range fixtureDistros {
		fmt.Fprintf(&table, "%-8s %6d %13d %15d %13d %14d\n", d, len(fixtures[d]), len(controlPlaneNodes(d)),
			len(onFixture(placed["defaults"], d)), len(onFixture(placed[d], d)), len(onFixture(placed["auto"], d)))
	}
	t.Log("pods the DaemonSet controller created, per fixture:" + table.String())
}

// TestPlacementHelm4 installs through the Helm 4 CLI and the aws-ccm
// post-renderer plugin: a pod for exactly the control-plane nodes of every
// fixture.
func TestPlacementHelm4(t *testing.T) {
	root := testtools.Root()
	if out, err := exec.Command("make", "-s", "-C", root, "helm-plugin").CombinedOutput(); err != nil {
		t.Fatalf("make helm-plugin: %v\n%s", err, out)
	}
	helm4, env := testtools.Helm4(t), testtools.HelmEnv(t)
	testtools.MustRun(t, env, helm4, "plugin", "install", filepath.Join(root, "dist", "helm-plugin", "aws-ccm"))
	release := "place-helm4"
	ns := namespace(t, release)
	testtools.MustRun(t, env, helm4, "install", release, testtools.UpstreamChart(t, testtools.LatestChartVersion),
		"--kubeconfig", cp.Kubeconfig, "--namespace", ns,
		"--set", "namespace="+ns+",nameOverride="+release+",clusterRoleName="+release+",serviceAccountName="+release+"-sa",
		"--post-renderer", "aws-ccm", "--post-renderer-args=--distro=auto")
	nodes := settle(t, ns, release)
	for _, d := range fixtureDistros {
		if got, want := onFixture(nodes, d), controlPlaneNodes(d); !slices.Equal(got, want) {
			t.Errorf("Helm 4, --distro=auto on the %s fixture: pods on %v, want %v", d, got, want)
		}
	}
	list := testtools.MustRun(t, env, helm4, "list", "--kubeconfig", cp.Kubeconfig, "--namespace", ns)
	if !strings.Contains(string(list), release) {
		t.Errorf("helm list does not show the release:\n%s", list)
	}
}
