// Package leadermigration proves on a real Kubernetes 1.26 control plane
// (the last release with the in-tree AWS provider: its own bootstrap RBAC,
// its own kube-controller-manager) that the renderer's
// LeaderMigrationConfiguration keeps a cloud-controller-manager's service
// controller under the migration lock, where the built-in default does not.
//
// A CCM built from k8s.io/cloud-provider (as the AWS CCM is, with the
// library's fake cloud, from the 1.34 libraries: the names of a CCM
// built on 1.28 or later) runs with the flags and the config file taken
// from the rendered output, while a stand-in for the in-tree
// kube-controller-manager holds the cloud-provider-extraction-migration
// Lease. Whether the service controller runs is read through the API: it
// puts the service.kubernetes.io/load-balancer-cleanup finalizer on every
// Service of type LoadBalancer it handles.
//
// The handover itself runs the real 1.26 kube-controller-manager as the
// in-tree side (kcm_test.go): authenticated as system:kube-controller-manager
// under the API server's own bootstrap RBAC, with and without the Role the
// renderer generates for the migration lease.
package leadermigration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

const (
	cleanupFinalizer = "service.kubernetes.io/load-balancer-cleanup"
	standIn          = "in-tree-kube-controller-manager"
)

var (
	cp  *harness.ControlPlane
	bin harness.Binaries
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if bin, err = harness.LocateRelease(testtools.Root(), harness.Kube126); err != nil {
		fmt.Fprintln(os.Stderr, "leadermigration:", err)
		return 1
	}
	// Its own control plane, at 1.26, without nodes or a controller
	// manager: the controller managers under test are the only ones.
	if cp, err = harness.Start(context.Background(), bin, nil); err != nil {
		fmt.Fprintln(os.Stderr, "leadermigration: starting the control plane:", err)
		return 1
	}
	defer cp.Stop()
	return m.Run()
}

// pinned is the chart value that pins the CCM a migration of this 1.26
// cluster runs (the renderer refuses the chart's 1.35 in migrate mode; the
// CCM these tests run is built from the 1.34 libraries whatever the image
// says, and the configuration of both is v1).
var pinned = "image.tag=" + releases.Tag(releases.LastInTreeMinor)

// rendered returns the CCM's args and, in migrate mode with the rendered
// config, the LeaderMigrationConfiguration, from the renderer's output for
// the latest upstream chart.
func rendered(t *testing.T, flags ...string) (args []string, config string) {
	t.Helper()
	objs, err := manifest.Split(render(t, testtools.LatestChartVersion, []string{pinned}, flags...))
	if err != nil {
		t.Fatal(err)
	}
	ccm, err := manifest.CCM(objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.Kind == "ConfigMap" && o.Name == renderer.LeaderMigrationConfigMapName(ccm.Name) {
			config, _ = manifest.Get(o.Doc, "data", renderer.LeaderMigrationFile).(string)
		}
	}
	return manifest.Args(ccm), config
}

// holdLease makes the stand-in hold the migration lease, renewing it until
// the returned release function is called, which gives it up.
func holdLease(t *testing.T, name string) (release func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	leases := cp.Client.CoordinationV1().Leases("kube-system")
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(standIn), LeaseDurationSeconds: ptr.To[int32](5),
			AcquireTime: &now, RenewTime: &now,
		},
	}
	if err := leases.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if _, err := leases.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			l, err := leases.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != standIn {
				t.Errorf("the stand-in lost the lease to %v while holding it", l.Spec.HolderIdentity)
				return
			}
			renew := metav1.NewMicroTime(time.Now())
			l.Spec.RenewTime = &renew
			_, _ = leases.Update(ctx, l, metav1.UpdateOptions{})
		}
	}()
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		cancel()
		<-done
		_ = leases.Delete(context.Background(), name, metav1.DeleteOptions{})
	}
	t.Cleanup(release)
	return release
}

// The leader election timings both controller managers run with in these
// tests: short, so that a handover takes seconds.
const (
	leaseDuration = 5 * time.Second
	renewDeadline = 4 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

func leaderElectionFlags() []string {
	return []string{"--leader-elect=true",
		"--leader-elect-lease-duration=" + leaseDuration.String(),
		"--leader-elect-renew-deadline=" + renewDeadline.String(),
		"--leader-elect-retry-period=" + retryPeriod.String()}
}

// startCCM runs the fake-cloud CCM as an administrator with the rendered
// args; see startCCMAs.
func startCCM(t *testing.T, rendered []string, config string) *harness.Process {
	t.Helper()
	return startCCMAs(t, "ccm", cp.Kubeconfig, rendered, config)
}

// startCCMAs runs the fake-cloud CCM with the rendered args and the
// credentials of a kubeconfig; the cloud provider becomes the fake one and
// the config file's path is the test's copy. It waits until the CCM holds
// its own leader lease, and stops it when the test ends, on failure too,
// showing the tail of its log (NAME.log in the control plane's directory).
func startCCMAs(t *testing.T, name, kubeconfig string, rendered []string, config string) *harness.Process {
	t.Helper()
	dir := t.TempDir()
	var args []string
	for _, a := range rendered {
		switch {
		case a == "--cloud-provider=aws":
			a = "--cloud-provider=fake-aws"
		case strings.HasPrefix(a, "--leader-migration-config="):
			path := filepath.Join(dir, renderer.LeaderMigrationFile)
			if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
			a = "--leader-migration-config=" + path
		}
		args = append(args, a)
	}
	// What the DaemonSet's environment gives the CCM in a cluster: the API
	// server; and short leader election timings.
	args = append(args, "--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(freePort(t)))
	args = append(args, leaderElectionFlags()...)
	// A fresh start: no leader lease left by an earlier CCM.
	leases := cp.Client.CoordinationV1().Leases("kube-system")
	if err := leases.Delete(context.Background(), "cloud-controller-manager", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	p, err := cp.Run(name, bin.FakeCCM, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fake CCM %s args: %q", name, args)
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s log tail:\n%s", name, tail(p.Log(), 4000))
		}
	})
	// The CCM is up once it holds its own leader lease.
	harness.WaitFor(t, 60*time.Second, "the CCM to hold its leader lease", func() bool {
		select {
		case <-p.Done():
			t.Fatalf("the fake CCM exited:\n%s", tail(p.Log(), 4000))
		default:
		}
		return leaseHolder(t, "cloud-controller-manager") != ""
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// loadBalancer creates a Service of type LoadBalancer and returns a function
// that reports whether the service controller has put its finalizer on it.
func loadBalancer(t *testing.T, name string) func() bool {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	services := cp.Client.CoreV1().Services("default")
	if _, err := services.Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Drop the finalizer: no controller may be left to remove it.
		if s, err := services.Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			s.Finalizers = nil
			_, _ = services.Update(context.Background(), s, metav1.UpdateOptions{})
		}
		_ = services.Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return func() bool {
		s, err := services.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(s.Finalizers, cleanupFinalizer)
	}
}

func leaseHolder(t *testing.T, name string) string {
	t.Helper()
	l, err := cp.Client.CoordinationV1().Leases("kube-system").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// TestDefaultConfigLetsTheServiceControllerRun is the baseline, kept as a
// test: with only --enable-leader-migration=true (the CCM's built-in default
// config) the service controller starts while the in-tree side holds the
// migration lease — two controllers for the same load balancers.
func TestDefaultConfigLetsTheServiceControllerRun(t *testing.T) {
	args, config := rendered(t, "--distro=rke2", "--mode=migrate", "--leader-migration-config=default")
	if config != "" || !slices.Contains(args, "--enable-leader-migration=true") || slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "--leader-migration-config")
	}) {
		t.Fatalf("rendered args %q, config %q: want the flag alone", args, config)
	}
	holdLease(t, renderer.DefaultLeaderName)
	startCCM(t, args, "")
	finalized := loadBalancer(t, "baseline")
	harness.WaitFor(t, 60*time.Second, "the service controller to handle the Service", finalized)
	if h := leaseHolder(t, renderer.DefaultLeaderName); h != standIn {
		t.Fatalf("the migration lease is held by %q, not the stand-in: the baseline proves nothing", h)
	}
	t.Logf("default config: the service controller put %s on the Service while %q held the migration lease", cleanupFinalizer, standIn)
}

// TestRenderedConfigKeepsTheServiceControllerWaiting: with the rendered
// config the service controller waits while the in-tree side holds the
// migration lease, and starts once the lease is free.
func TestRenderedConfigKeepsTheServiceControllerWaiting(t *testing.T) {
	args, config := rendered(t, "--distro=rke2", "--mode=migrate")
	if !strings.Contains(config, "service-lb-controller") {
		t.Fatalf("no rendered config naming service-lb-controller: %q", config)
	}
	release := holdLease(t, renderer.DefaultLeaderName)
	startCCM(t, args, config)
	finalized := loadBalancer(t, "gated")
	// The CCM is up (it holds its own lease) and its ungated controllers run;
	// give the service controller ample time to show itself, as it did in
	// the baseline within seconds.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if finalized() {
			t.Fatalf("the service controller ran while %q held the migration lease", standIn)
		}
		time.Sleep(500 * time.Millisecond)
	}
	release()
	harness.WaitFor(t, 60*time.Second, "the CCM to take the migration lease", func() bool {
		h := leaseHolder(t, renderer.DefaultLeaderName)
		return h != "" && h != standIn
	})
	harness.WaitFor(t, 60*time.Second, "the service controller to handle the Service after the lease was freed", finalized)
	t.Logf("rendered config: no %s while %q held the migration lease (15 s); after its release the CCM took the lease and the finalizer appeared", cleanupFinalizer, standIn)
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
