package leadermigration

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

const (
	// kcmUser is the in-tree controller manager's identity: the common name
	// of its client certificate, as kubeadm, RKE and RKE2 issue it.
	kcmUser = "system:kube-controller-manager"
	// kcmLease and ccmLease are the managers' own leader leases.
	kcmLease = "kube-controller-manager"
	ccmLease = "cloud-controller-manager"
)

var kcmGroups = []string{"system:authenticated"}

// kcmControllers are the controllers startKCM runs, by the names
// kube-controller-manager 1.26 registers them (k8s.io/kubernetes v1.26.5,
// cmd/kube-controller-manager/app/controllermanager.go,
// NewControllerInitializers): the service account token controller, whose
// start leader migration waits for before it tries the migration lease (the
// same file, Run: <-leaderMigrator.MigrationReady), and the cloud controllers,
// registered only when the provider is not external ("service", "route",
// "cloud-node-lifecycle"; IncludeCloudLoops). No node lifecycle controller:
// no kubelet posts the nodes' status here, and it would take them out of
// the load balancers.
var kcmControllers = []string{"serviceaccount-token", "service", "route", "cloud-node-lifecycle"}

// bootstrapGap checks by SubjectAccessReview what the 1.26 API server's own
// bootstrap RBAC lets the in-tree controller manager do: take its own lease,
// create Leases, and not get or update the migration lease
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go at v1.26.5:
// ClusterRole system:kube-controller-manager grants create on leases and
// get/update on the Lease kube-controller-manager only; namespace_policy.go:
// the kube-system Role system::leader-locking-kube-controller-manager grants
// no Leases). It waits for that answer: a test before may have just removed
// a grant of the migration lease, which the authorizer drops a moment later.
func bootstrapGap(t *testing.T) {
	t.Helper()
	want := leaseAccess(kcmUser, kcmGroups, kcmLease, true, leaseVerbs...)
	want = append(want, leaseAccess(kcmUser, kcmGroups, renderer.DefaultLeaderName, true, "create")...)
	want = append(want, leaseAccess(kcmUser, kcmGroups, renderer.DefaultLeaderName, false, "get", "update")...)
	harness.WaitAccess(t, cp.Client, 30*time.Second, want)
	t.Logf("%s bootstrap policy for %s: get, update and create on Lease %s; on Lease %s create only", bin.Release, kcmUser, kcmLease, renderer.DefaultLeaderName)
}

// startKCM runs the real kube-controller-manager of the control plane's
// release as kcmUser, with leader election, the kcmControllers and the
// given flags (the cloud provider, leader migration). It is stopped when
// the test ends.
func startKCM(t *testing.T, name string, env []string, flags ...string) *harness.Process {
	t.Helper()
	kubeconfig, err := cp.UserKubeconfig(kcmUser)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(freePort(t)),
		"--controllers=" + strings.Join(kcmControllers, ","),
		"--v=2"}
	args = append(append(args, leaderElectionFlags()...), flags...)
	p, err := cp.RunEnv(name, bin.ControllerManager, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-controller-manager %s args: %q", bin.Release, args)
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s log tail:\n%s", name, tail(p.Log(), 4000))
		}
	})
	return p
}

// running fails the test if a process has exited.
func running(t *testing.T, p *harness.Process, what string) {
	t.Helper()
	select {
	case <-p.Done():
		t.Fatalf("%s exited (its log tail follows)", what)
	default:
	}
}

// serviceAccountKubeconfig returns a kubeconfig with a token of a service
// account, as a pod of that account gets it.
func serviceAccountKubeconfig(t *testing.T, ns, name string) string {
	t.Helper()
	path, err := cp.ServiceAccountKubeconfig(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// daemonSet returns the CCM's DaemonSet of a rendered output.
func daemonSet(t *testing.T, objs []*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "DaemonSet" {
			return o
		}
	}
	t.Fatalf("no DaemonSet among %v", ids(objs))
	return nil
}

// without drops the objects of some kinds.
func without(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if !slices.Contains(kinds, o.GetKind()) {
			out = append(out, o)
		}
	}
	return out
}

// lease reads a Lease in kube-system.
func lease(t *testing.T, name string) *coordinationv1.Lease {
	t.Helper()
	l, err := cp.Client.CoordinationV1().Leases("kube-system").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// since formats a duration for the timeline in the test's log.
func since(t0 time.Time) string { return time.Since(t0).Round(10 * time.Millisecond).String() }

// TestRealKCMHandover runs the real 1.26 kube-controller-manager,
// authenticated as system:kube-controller-manager under the API server's own
// 1.26 bootstrap RBAC, with leader migration on, beside the fake-cloud CCM
// (controller names of 1.28+ libraries) running as its service account with
// the renderer's output, and reads the leases through the API:
//
//   - without the renderer's Role the KCM never holds the migration lease,
//     and the CCM, once started, takes it at once;
//   - with it the KCM takes the lease, and the CCM's migrating controllers
//     wait while it holds it.
//
// The switch and --mode=install that follow are TestRunbook's, with the real
// CCM and AWS (moto).
func TestRealKCMHandover(t *testing.T) {
	start := time.Now()
	bootstrapGap(t)
	// A cluster before the migration: no migration lease.
	if err := cp.Client.CoordinationV1().Leases("kube-system").Delete(context.Background(), renderer.DefaultLeaderName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}

	version := testtools.LatestChartVersion
	migrate := decode(t, render(t, version, []string{pinned}, "--distro=rke2", "--mode=migrate"))
	kcmRBAC, ccmObjs := split(migrate, generatedRBAC)
	ds := daemonSet(t, migrate)
	sa, _, _ := unstructured.NestedString(ds.Object, "spec", "template", "spec", "serviceAccountName")
	if sa == "" {
		t.Fatalf("the DaemonSet names no service account")
	}
	migrateArgs, migrateConfig := rendered(t, "--distro=rke2", "--mode=migrate")
	// The CCM's objects, without the Role and RoleBinding for the KCM; the
	// DaemonSet stays out too, as no kubelet would run it: the CCM runs
	// here as a process, as its service account.
	apply(t, without(ccmObjs, "DaemonSet"))
	// TestRunbook installs the chart with Helm, which adopts no object it
	// did not create.
	t.Cleanup(func() { remove(t, without(ccmObjs, "DaemonSet")) })
	ccmKubeconfig := serviceAccountKubeconfig(t, "kube-system", sa)
	ccmUser, ccmGroups := serviceAccountUser("kube-system", sa)
	// Everything the CCM's objects grant its account, the migration lease
	// among it, in the authorizer's view before the CCM runs.
	ccmAccess, err := harness.Grants(without(ccmObjs, "DaemonSet"), ccmUser, ccmGroups)
	if err != nil {
		t.Fatal(err)
	}
	harness.WaitAccess(t, cp.Client, 30*time.Second, append(ccmAccess, leaseAccess(ccmUser, ccmGroups, renderer.DefaultLeaderName, true, leaseVerbs...)...))

	// Step 1 of the migration: the in-tree KCM runs with leader migration.
	// Leader migration with its built-in configuration, as a controller
	// manager of RKE or RKE2 gets it from the plan: the 1.26 names of the
	// cloud controllers (k8s.io/controller-manager v0.26.5,
	// pkg/leadermigration/config/default.go: route, service,
	// cloud-node-lifecycle, component "*"). No cloud provider: the cloud
	// controllers start and stop at once for want of a cloud; what is under
	// test is the leases.
	kcm := startKCM(t, "kube-controller-manager", nil, "--enable-leader-migration=true")
	var kcmID string
	ok := t.Run("without the rendered Role", func(t *testing.T) {
		harness.WaitFor(t, 60*time.Second, "the KCM to hold its own lease", func() bool {
			running(t, kcm, "kube-controller-manager")
			kcmID = leaseHolder(t, kcmLease)
			return kcmID != ""
		})
		t.Logf("%s: the KCM holds Lease %s as %q", since(start), kcmLease, kcmID)
		// It tries the migration lease once its main controllers started
		// (leader election's first step is a get) and is refused.
		refusal := ""
		harness.WaitFor(t, 60*time.Second, "the KCM to try the migration lease", func() bool {
			running(t, kcm, "kube-controller-manager")
			for _, line := range strings.Split(kcm.Log(), "\n") {
				if strings.Contains(line, "kube-system/"+renderer.DefaultLeaderName) && strings.Contains(line, "forbidden") {
					refusal = line
					return true
				}
			}
			return false
		})
		t.Logf("%s: KCM log: %s", since(start), strings.TrimSpace(refusal))
		// Give it a lease duration more: it never creates or holds the lease.
		for deadline := time.Now().Add(leaseDuration); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			_, err := cp.Client.CoordinationV1().Leases("kube-system").Get(context.Background(), renderer.DefaultLeaderName, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				t.Fatalf("Lease %s: %v (holder %q), want none: the KCM was refused", renderer.DefaultLeaderName, err, leaseHolder(t, renderer.DefaultLeaderName))
			}
		}
		if strings.Contains(kcm.Log(), "leader migration: starting migrated controllers") {
			t.Fatal("the KCM started its migrated controllers without the migration lease")
		}
		t.Logf("%s: no Lease %s after %s: the KCM runs, holding only its own lease, and its cloud controllers are stopped", since(start), renderer.DefaultLeaderName, leaseDuration)

		// The CCM, installed as the guide says, takes the lease the KCM
		// cannot and runs its cloud controllers while the KCM still runs.
		finalized := loadBalancer(t, "kcm-without-role")
		t0 := time.Now()
		ccm := startCCMAs(t, "ccm-without-role", ccmKubeconfig, migrateArgs, migrateConfig)
		ccmID := leaseHolder(t, ccmLease)
		harness.WaitFor(t, 60*time.Second, "the CCM to take the migration lease", func() bool {
			running(t, ccm, "the CCM")
			return leaseHolder(t, renderer.DefaultLeaderName) == ccmID
		})
		t.Logf("%s: the CCM holds Lease %s, %s after it started", since(start), renderer.DefaultLeaderName, since(t0))
		harness.WaitFor(t, 60*time.Second, "the CCM's service controller to handle the Service", finalized)
		running(t, kcm, "kube-controller-manager")
		if h := leaseHolder(t, kcmLease); h != kcmID {
			t.Fatalf("Lease %s is held by %q, not the KCM %q", kcmLease, h, kcmID)
		}
		t.Logf("%s: the CCM's service controller ran (%s, %s after the CCM started) while the KCM was running", since(start), cleanupFinalizer, since(t0))
		ccm.Stop()
	})
	if !ok {
		return
	}

	ok = t.Run("with the rendered Role", func(t *testing.T) {
		if len(kcmRBAC) != 2 || !slices.Equal(ids(kcmRBAC), []string{
			"Role kube-system/" + ds.GetName() + "-leader-migration", "RoleBinding kube-system/" + ds.GetName() + "-leader-migration"}) {
			t.Fatalf("the renderer's --mode=migrate output has %v annotated %s: %s, want the Role and RoleBinding %s-leader-migration in kube-system; objects: %v",
				ids(kcmRBAC), renderer.GeneratedAnnotation, generatedRBAC, ds.GetName(), ids(migrate))
		}
		apply(t, kcmRBAC)
		// Whatever the steps below do, the grant does not outlive the test.
		t.Cleanup(func() { remove(t, kcmRBAC) })
		t0 := time.Now()
		// The Role in the authorizer's view: the migration lease granted,
		// the CCM's own lease still not.
		harness.WaitAccess(t, cp.Client, 30*time.Second, append(
			leaseAccess(kcmUser, kcmGroups, renderer.DefaultLeaderName, true, leaseVerbs...),
			leaseAccess(kcmUser, kcmGroups, ccmLease, false, "get", "update")...))
		t.Logf("%s: Role applied; %s may get, update and create Lease %s, and not get or update Lease %s", since(start), kcmUser, renderer.DefaultLeaderName, ccmLease)

		// The KCM, still running, takes the lease once the stopped CCM's
		// record has expired.
		harness.WaitFor(t, 60*time.Second, "the KCM to take the migration lease", func() bool {
			running(t, kcm, "kube-controller-manager")
			return leaseHolder(t, renderer.DefaultLeaderName) == kcmID
		})
		t.Logf("%s: the KCM holds Lease %s, %s after the Role was applied", since(start), renderer.DefaultLeaderName, since(t0))
		harness.WaitFor(t, 30*time.Second, "the KCM to start its migrated controllers", func() bool {
			return strings.Contains(kcm.Log(), "leader migration: starting migrated controllers")
		})

		// The CCM starts and holds its own lease; its migrating controllers
		// wait while the KCM holds the migration lease.
		finalized := loadBalancer(t, "kcm-with-role")
		ccm := startCCMAs(t, "ccm-with-role", ccmKubeconfig, migrateArgs, migrateConfig)
		if h := leaseHolder(t, ccmLease); h == kcmID {
			t.Fatalf("the CCM and the KCM hold their leases as the same %q", h)
		}
		for deadline := time.Now().Add(2 * leaseDuration); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			running(t, ccm, "the CCM")
			if h := leaseHolder(t, renderer.DefaultLeaderName); h != kcmID {
				t.Fatalf("Lease %s is held by %q while the KCM runs, want the KCM %q", renderer.DefaultLeaderName, h, kcmID)
			}
			if finalized() {
				t.Fatal("the CCM's service controller ran while the KCM held the migration lease")
			}
		}
		t.Logf("%s: for %s the KCM kept Lease %s and the CCM's service controller waited", since(start), 2*leaseDuration, renderer.DefaultLeaderName)

		ccm.Stop()
	})
}

// TestMigrationLeasePermissions asks the real authorizer, for every chart
// version's --mode=migrate output applied to the API server, whether the
// CCM's service account and (under the 1.26 bootstrap policy) the in-tree
// kube-controller-manager may get, update and create the migration lease.
// Each version gets its own names and its own --leader-name, so that one
// version's grants cannot stand in for another's.
func TestMigrationLeasePermissions(t *testing.T) {
	bootstrapGap(t)
	for _, version := range testtools.ChartVersions {
		t.Run(version, func(t *testing.T) {
			name := "lm-" + strings.ReplaceAll(version, ".", "-")
			leader := name + "-migration"
			set := "nameOverride=" + name + ",clusterRoleName=" + name + ",serviceAccountName=" + name + ",roleBindingName=" + name
			if version == "0.0.2" {
				// Its default CCM (v1.20) has no leader migration, and the
				// renderer refuses it; the chart's RBAC is checked with a
				// CCM that has.
				set += ",image.tag=v1.21.0"
			}
			if tag, _ := releases.DefaultImageTag(version); kversion.MustParseGeneric(tag).Minor() > releases.LastInTreeMinor {
				// Its default CCM is newer than any cluster that migrates,
				// which the renderer refuses in migrate mode.
				set += "," + pinned
			}
			objs := decode(t, render(t, version,
				[]string{set},
				"--distro=rke2", "--mode=migrate", "--leader-name="+leader))
			user, groups := serviceAccountUser("kube-system", name)
			// Nothing before the output is applied (with -count, once the
			// authorizer has dropped what the last run's cleanup removed).
			harness.WaitAccess(t, cp.Client, 30*time.Second, leaseAccess(user, groups, leader, false, leaseVerbs...))
			apply(t, without(objs, "DaemonSet"))
			t.Cleanup(func() { remove(t, without(objs, "DaemonSet")) })

			t.Run("ccm", func(t *testing.T) {
				harness.WaitAccess(t, cp.Client, 30*time.Second, leaseAccess(user, groups, leader, true, leaseVerbs...))
				t.Logf("chart %s: %s may get, update and create Lease kube-system/%s", version, user, leader)
			})
			t.Run("kcm", func(t *testing.T) {
				rbac, _ := split(objs, generatedRBAC)
				wait := 30 * time.Second
				if len(rbac) == 0 {
					t.Errorf("chart %s: the --mode=migrate output has no object annotated %s: %s", version, renderer.GeneratedAnnotation, generatedRBAC)
					wait = 0 // nothing to wait for: ask once
				}
				harness.WaitAccess(t, cp.Client, wait, append(
					leaseAccess(kcmUser, kcmGroups, leader, true, leaseVerbs...),
					leaseAccess(kcmUser, kcmGroups, ccmLease, false, "get", "update")...))
				t.Logf("chart %s: %s may get, update and create Lease kube-system/%s, and not get or update Lease %s", version, kcmUser, leader, ccmLease)
			})
		})
	}
}
