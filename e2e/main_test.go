// Package e2e runs the renderer's output on a real control plane (etcd,
// kube-apiserver, the DaemonSet controller): placement on every distribution's
// fixture nodes, RBAC by SubjectAccessReview, the release lifecycle with real
// Helm, the wrapper commands and chart, cordoned control-plane nodes, and
// the Argo CD plugin in Argo CD's own CMP server and repo server code.
package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// cp is the control plane every test of this package shares. Tests keep out
// of each other's way with their own namespaces and release names.
var cp *harness.ControlPlane

// fixtureDistros are the distributions with node fixtures in testdata/nodes.
var fixtureDistros = []string{"rke", "rke2", "k3s", "kubeadm"}

// fixtures holds every fixture node by distribution; all of them are in the
// cluster at once, and tests judge each distribution's nodes separately.
var fixtures map[string][]corev1.Node

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bin, err := harness.Locate(testtools.Root())
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	ctx := context.Background()
	start := time.Now()
	cp, err = harness.Start(ctx, bin, []string{"daemonset", "garbagecollector"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting the control plane:", err)
		return 1
	}
	defer cp.Stop()
	if fixtures, err = cp.CreateFixtures(ctx, testtools.Root(), fixtureDistros); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: control plane up with %d nodes in %s (%s)\n", countNodes(), time.Since(start).Round(time.Millisecond), cp.Dir)
	code := m.Run()
	if code != 0 {
		fmt.Fprintln(os.Stderr, "e2e: kube-controller-manager log tail:\n"+cp.Log("kube-controller-manager", 2000))
	}
	return code
}

func countNodes() int {
	n := 0
	for _, nodes := range fixtures {
		n += len(nodes)
	}
	return n
}

// helm runs the Helm 3 CLI against the test cluster.
func helm(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := helmRun(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return string(out)
}

func helmRun(t *testing.T, args ...string) ([]byte, []byte, error) {
	t.Helper()
	args = append(args, "--kubeconfig", cp.Kubeconfig)
	return testtools.Run(t, testtools.HelmEnv(t), testtools.Helm3(t), args...)
}

// rendererArgs are the Helm flags that run aws-ccm-renderer as the
// post-renderer with the given renderer flags.
func rendererArgs(t *testing.T, flags ...string) []string {
	args := []string{"--post-renderer", testtools.Renderer(t)}
	for _, f := range flags {
		args = append(args, "--post-renderer-args="+f)
	}
	return args
}

// namespace creates a namespace for a test and deletes it afterwards.
func namespace(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	_, err := cp.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return name
}
