// Package check runs `aws-ccm-renderer check` against a real API server and
// DaemonSet controller, one cluster state at a time (testdata/check): the
// nodes of each distribution, each failure check must find, a release
// installed by the Helm SDK, and several kubeconfig contexts at once.
package check

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/check")

// cp is the control plane the tests share; they run one after another,
// each with the cluster state it builds and removes.
var cp *harness.ControlPlane

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bin, err := harness.Locate(testtools.Root())
	if err != nil {
		fmt.Fprintln(os.Stderr, "check:", err)
		return 1
	}
	start := time.Now()
	if cp, err = harness.Start(context.Background(), bin, []string{"daemonset", "garbagecollector"}); err != nil {
		fmt.Fprintln(os.Stderr, "check: starting the control plane:", err)
		return 1
	}
	defer cp.Stop()
	fmt.Fprintf(os.Stderr, "check: control plane up in %s (%s)\n", time.Since(start).Round(time.Millisecond), cp.Dir)
	return m.Run()
}

func testdata(parts ...string) string {
	return filepath.Join(append([]string{testtools.Root(), "testdata", "check"}, parts...)...)
}

// state builds a cluster state from testdata/check/<dir>: its nodes, with
// the status the fixture gives and Ready, and its leases, renewed now. The
// test's cleanup removes them.
func state(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	nodes, err := harness.LoadNodes(testdata(dir, "nodes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		created, err := cp.Client.CoreV1().Nodes().Create(ctx, n.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("node %s: %v", n.Name, err)
		}
		t.Cleanup(func() { _ = cp.Client.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{}) })
		now := metav1.Now()
		created.Status = *n.Status.DeepCopy()
		created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
		if created, err = cp.Client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("node %s status: %v", n.Name, err)
		}
		// Exactly the fixture's taints: admission adds not-ready to a node
		// created without a Ready condition.
		if len(created.Spec.Taints) != len(n.Spec.Taints) {
			created.Spec.Taints = n.Spec.Taints
			if _, err := cp.Client.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("node %s taints: %v", n.Name, err)
			}
		}
	}
	leases, err := loadLeases(testdata(dir, "leases.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases {
		createLease(t, l)
	}
}

// createLease creates a lease acquired an hour ago and renewed now.
func createLease(t *testing.T, l coordinationv1.Lease) {
	t.Helper()
	now := metav1.NewMicroTime(time.Now())
	acquired := metav1.NewMicroTime(now.Add(-time.Hour))
	l.Spec.AcquireTime, l.Spec.RenewTime = &acquired, &now
	if l.Spec.LeaseDurationSeconds == nil {
		l.Spec.LeaseDurationSeconds = ptr.To[int32](3600)
	}
	if _, err := cp.Client.CoordinationV1().Leases(l.Namespace).Create(context.Background(), &l, metav1.CreateOptions{}); err != nil {
		t.Fatalf("lease %s/%s: %v", l.Namespace, l.Name, err)
	}
	t.Cleanup(func() {
		_ = cp.Client.CoordinationV1().Leases(l.Namespace).Delete(context.Background(), l.Name, metav1.DeleteOptions{})
	})
}

func loadLeases(path string) ([]coordinationv1.Lease, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []coordinationv1.Lease
	for {
		var l coordinationv1.Lease
		err := dec.Decode(&l)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if l.Name != "" {
			out = append(out, l)
		}
	}
}

// result is one run of the renderer.
type result struct {
	out, errOut string
	code        int
	took        time.Duration
}

// renderer runs aws-ccm-renderer with stdin, in an environment of the
// test's own (Helm's directories, no colour settings from outside).
func renderer(t *testing.T, stdin []byte, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(testtools.Renderer(t), args...)
	cmd.Env = append(testtools.HelmEnv(t), env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	r := result{out: o.String(), errOut: e.String(), code: testtools.ExitCode(err), took: time.Since(start)}
	if r.code < 0 {
		t.Fatalf("aws-ccm-renderer %v: %v", args, err)
	}
	return r
}

// check runs aws-ccm-renderer check against the test cluster.
func check(t *testing.T, stdin []byte, args ...string) result {
	t.Helper()
	r := renderer(t, stdin, nil, append([]string{"check", "--kubeconfig", cp.Kubeconfig}, args...)...)
	t.Logf("check %s: exit %d in %s", strings.Join(args, " "), r.code, r.took.Round(time.Millisecond))
	return r
}

// clusterCCMTag is a CCM image of the control plane's minor: v1.37.0 (the
// chart's default, v1.35.0, is two minors older, which check reports).
var clusterCCMTag = "v" + harness.Current.String() + ".0"

// template renders the latest upstream chart for a distribution, with the
// CCM image of the control plane's minor.
func template(t *testing.T, flags ...string) []byte {
	t.Helper()
	args := append([]string{"template", "aws-ccm", testtools.UpstreamChart(t, testtools.LatestChartVersion),
		"--namespace", "kube-system", "--set", "image.tag=" + clusterCCMTag}, flags...)
	r := renderer(t, nil, []string{"KUBECONFIG=" + cp.Kubeconfig}, args...)
	if r.code != 0 {
		t.Fatalf("template %v: exit %d\n%s", flags, r.code, r.errOut)
	}
	return []byte(r.out)
}

// What changes from run to run, and what the golden files hold instead.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`https://127\.0\.0\.1:\d+`), "https://127.0.0.1:PORT"},
	{regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|m|h)(\d+(\.\d+)?(ms|s|m|h))*( ago)`), "T$6"},
	{regexp.MustCompile(`checked in \d+ms`), "checked in Tms"},
	{regexp.MustCompile(`"durationMs": \d+`), `"durationMs": 0`},
	{regexp.MustCompile(`"(acquired|renewed)": "[^"]+"`), `"$1": "2000-01-01T00:00:00Z"`},
	{regexp.MustCompile(`(aws-cloud-controller-manager)-[a-z0-9]{5}\b`), "$1-XXXXX"},
}

func normalise(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// golden compares output with testdata/check/<dir>/<file>, or writes it
// with -update.
func golden(t *testing.T, dir, file, got string) {
	t.Helper()
	path := testdata(dir, file)
	got = normalise(got)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./check/ -update in e2e/ to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./check/ -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// says fails the test for each of wants the output lacks.
func says(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("the output lacks %q", w)
		}
	}
}

// ignoreNotFound fails the test on errors other than NotFound.
func ignoreNotFound(t *testing.T, err error) {
	t.Helper()
	if err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
	}
}
