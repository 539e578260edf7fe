package leadermigration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/awsccm"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/moto"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The two sides' identities in AWS: each signs with an access key of its
// own IAM user, so moto's records say who called what.
const (
	kcmIAMUser = "in-tree-kube-controller-manager"
	ccmIAMUser = "aws-cloud-controller-manager"
)

// The load balancer the runbook carries over: a Service of type
// LoadBalancer, one port at first; the switch adds the second.
const (
	lbService   = "web"
	lbNamespace = "default"
)

// replay is the state of TestRunbook: the AWS side, the plan, the
// processes, and the timeline of the steps for the table of AWS calls.
type replay struct {
	t         *testing.T
	aws       *moto.Server
	cluster   moto.Cluster
	network   moto.Network
	trap      *awsccm.Trap
	kcmCreds  moto.Credentials
	ccmCreds  moto.Credentials
	cloudConf string // the in-tree provider's cloud config, and the CCM's after before.cloud-config
	plan      *plan.Plan
	ccm       awsccm.Release
	values    string // before.preflight's values file, which every CCM command names
	start     time.Time
	steps     []stepWindow
	handover  handover

	// migrateRelease are the objects of the CCM's release in migrate mode.
	migrateRelease []*unstructured.Unstructured
}

// stepWindow is one step of the replay, for the table of AWS calls.
type stepWindow struct {
	name     string
	from, to time.Time
}

// TestRunbook replays the runbook `aws-ccm-renderer plan --distro kubeadm`
// prints for the control plane's version, on the 1.26 control plane, with
// the real programs of both sides against moto:
//
//  1. in-tree only: kube-controller-manager 1.26.5 with --cloud-provider=aws
//     (its in-tree provider, aws-sdk-go v1, pointed at moto by the cloud
//     config's [ServiceOverride] sections) creates the load balancer of a
//     Service of type LoadBalancer;
//  2. the plan's grant of the migration lease and its
//     LeaderMigrationConfiguration for the controller manager, which then
//     holds the lease and keeps the load balancer;
//  3. the CCM v1.26.0 installed in migrate mode by the plan's helm command
//     (Helm 3 with the renderer as post-renderer) and run as a process with
//     the installed DaemonSet's args and ConfigMaps: it waits, and calls no
//     load balancer API;
//  4. the switch: the controller manager restarted with
//     --cloud-provider=external and no leader migration; the CCM takes the
//     lease once the controller manager's record expires, and a port added to
//     the Service while neither ran is reconciled once, by the CCM;
//  5. the plan's --mode=install upgrade and clean-up: no migration lease, the
//     same load balancer, nothing created or deleted.
//
// Each side signs with its own access key; the table of AWS calls by
// identity and step that moto recorded is written to the test's log.
func TestRunbook(t *testing.T) {
	r := newReplay(t)
	ctx := context.Background()

	// The plan for this control plane, as an operator prints it, with the
	// CCM release under test.
	sv, err := cp.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	opt := plan.DefaultOptions()
	opt.Distro, opt.KubeVersion, opt.CCMVersion, opt.ChartVersion = distros.Kubeadm, sv.GitVersion, r.ccm.Version, testtools.LatestChartVersion
	opt.CloudConfig = true // the in-tree provider's config points at moto: the CCM needs it too
	// The chart as a local package, which the plan's commands then name
	// (no repository to reach from here).
	opt.Chart = testtools.UpstreamChart(t, testtools.LatestChartVersion)
	if r.plan, err = plan.Build(opt); err != nil {
		t.Fatal(err)
	}
	if r.plan.LeaderMigration == nil || r.plan.LeaderMigration.Name != renderer.DefaultLeaderName || r.plan.LeaderMigration.KCMUser != kcmUser {
		t.Fatalf("the plan for kubeadm at %s is not a leader migration of Lease %s by %s: %+v", sv.GitVersion, renderer.DefaultLeaderName, kcmUser, r.plan.LeaderMigration)
	}
	t.Logf("plan: kubeadm at %s (API server %s), CCM %s, chart %s", r.plan.KubernetesVersion, sv.GitVersion, r.plan.CCM.Image, r.plan.CCM.ChartVersion)

	svcUID, lbName, lbDNS, lbCreated := r.stepInTree(ctx)
	kcm, kcmID := r.stepKCMLeaderMigration(ctx)
	ccm, ccmID := r.stepInstallMigrate(ctx, kcmID)
	kcm = r.stepSwitch(ctx, kcm, ccm, kcmID, ccmID, lbName)
	r.stepInstallMode(ctx, ccm, lbName, lbDNS, lbCreated)
	kcm.Stop()
	t.Logf("Service %s/%s (uid %s) kept load balancer %s (%s) throughout", lbNamespace, lbService, svcUID, lbName, lbDNS)
	r.table()
}

// newReplay starts moto, seeds the cluster's network and one instance per
// kubeadm node fixture, creates the nodes as the in-tree provider's kubelets
// registered them, and gives each side its IAM user.
func newReplay(t *testing.T) *replay {
	t.Helper()
	ctx := context.Background()
	r := &replay{t: t, start: time.Now(), cluster: moto.Cluster{ID: "e2e-migration", Zone: "us-west-2a"}}
	ccms, err := awsccm.Releases(testtools.Root())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ccms {
		if c.Minor() == bin.Release.Minor {
			r.ccm = c
		}
	}
	if r.ccm.Binary == "" {
		t.Fatalf("no AWS CCM of Kubernetes %s among %+v", bin.Release, ccms)
	}
	if r.aws, err = moto.Start(ctx, testtools.Root(), moto.Options{Dir: t.TempDir(), Region: r.cluster.Region()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("moto log tail:\n%s", tail(r.aws.Log(), 3000))
		}
		r.aws.Stop()
	})
	if r.trap, err = awsccm.StartTrap(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.trap.Close()
		if seen := r.trap.Seen(); len(seen) > 0 {
			t.Errorf("requests that would have left the machine: %q", seen)
		}
	})
	if r.network, err = r.aws.SeedNetwork(ctx, r.cluster); err != nil {
		t.Fatal(err)
	}
	// Each side may do anything: who calls what is under test here, not
	// the policies (IAM is not enforced).
	allowAll := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`)
	if r.kcmCreds, err = r.aws.CreateUser(ctx, kcmIAMUser, allowAll); err != nil {
		t.Fatal(err)
	}
	if r.ccmCreds, err = r.aws.CreateUser(ctx, ccmIAMUser, allowAll); err != nil {
		t.Fatal(err)
	}
	r.cloudConf = awsccm.CloudConfig{Cluster: r.cluster, Network: r.network, URL: r.aws.URL}.String()

	fixtures, err := harness.LoadNodes(filepath.Join(testtools.Root(), "testdata", "nodes", "kubeadm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(fixtures))
	for i, n := range fixtures {
		names[i] = n.Name
	}
	instances, err := r.aws.RunInstances(ctx, r.cluster, r.network, names...)
	if err != nil {
		t.Fatal(err)
	}
	// A kubelet with the in-tree provider registers its node under the
	// instance's private DNS name with its provider ID, and without the
	// uninitialized taint, which only an external provider's kubelet adds.
	nodes := make([]corev1.Node, len(fixtures))
	for i, n := range fixtures {
		n.Name = instances[i].PrivateDNSName
		n.Labels["kubernetes.io/hostname"] = n.Name
		n.Spec.ProviderID = instances[i].ProviderID()
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(tn corev1.Taint) bool {
			return tn.Key == "node.cloudprovider.kubernetes.io/uninitialized"
		})
		nodes[i] = n
	}
	if err := cp.CreateNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = cp.Client.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{})
		}
	})
	// No lease left by the tests before.
	for _, l := range []string{renderer.DefaultLeaderName, kcmLease, ccmLease} {
		if err := cp.Client.CoordinationV1().Leases("kube-system").Delete(ctx, l, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	t.Logf("moto %s at %s: VPC %s, subnet %s, instances %v; CCM %s; IAM users %s (%s) and %s (%s)",
		r.aws.Version, r.aws.URL, r.network.VPC, r.network.Subnet, names, r.ccm.Version,
		kcmIAMUser, r.kcmCreds.AccessKeyID, ccmIAMUser, r.ccmCreds.AccessKeyID)
	return r
}

// begin starts a step of the timeline, ending the one before.
func (r *replay) begin(name string) time.Time {
	now := time.Now()
	if n := len(r.steps); n > 0 {
		r.steps[n-1].to = now
	}
	r.steps = append(r.steps, stepWindow{name: name, from: now})
	r.t.Logf("%s: step %q", since(r.start), name)
	return now
}

// kcmEnv is the in-tree controller manager's environment: its access key,
// no instance metadata, nothing through a proxy but into the trap.
func (r *replay) kcmEnv() []string { return awsccm.Env(r.kcmCreds, r.trap) }

// startInTreeKCM runs kube-controller-manager with the in-tree provider and
// the cloud config, as kubeadm runs it (--use-service-account-credentials:
// each controller as its service account), and the extra flags. The 1.26
// flags: --cloud-provider and --cloud-config in k8s.io/cloud-provider
// v0.26.5 options/cloudprovider.go, --use-service-account-credentials in
// options/kubecloudshared.go. The in-tree provider (k8s.io/legacy-cloud-providers
// v0.26.5, aws/aws.go) needs no instance metadata with [Global] Zone, VPC,
// SubnetID and KubernetesClusterID set (newAWSCloud: "Master is configured
// to run on a different AWS account, different cloud provider or
// on-premises"), and its [ServiceOverride] sections match aws-sdk-go v1's
// endpoint IDs, ec2 and elasticloadbalancing (getResolver).
func (r *replay) startInTreeKCM(name string, flags ...string) *harness.Process {
	conf := filepath.Join(r.t.TempDir(), "cloud.conf")
	if err := os.WriteFile(conf, []byte(r.cloudConf), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return startKCM(r.t, name, r.kcmEnv(), append([]string{"--cloud-provider=aws", "--cloud-config=" + conf,
		"--use-service-account-credentials=true"}, flags...)...)
}

// stepInTree: the controller manager's service controller creates the load
// balancer; nothing else calls AWS.
func (r *replay) stepInTree(ctx context.Context) (uid, name, dns, created string) {
	t := r.t
	from := r.begin("1. in-tree only")
	kcm := r.startInTreeKCM("kcm-in-tree")
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: lbService, Namespace: lbNamespace},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": lbService},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	services := cp.Client.CoreV1().Services(lbNamespace)
	s, err := services.Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s, err := services.Get(context.Background(), lbService, metav1.GetOptions{}); err == nil {
			s.Finalizers = nil
			_, _ = services.Update(context.Background(), s, metav1.UpdateOptions{})
		}
		_ = services.Delete(context.Background(), lbService, metav1.DeleteOptions{})
	})
	host := r.waitIngress(ctx, kcm, "the in-tree service controller")
	lb := r.loadBalancer(ctx, host)
	t.Logf("%s: in-tree: load balancer %s (%s), listeners %v, instances %d", since(r.start), lb.LoadBalancerName, lb.DNSName, listeners(lb), len(lb.Instances))
	if len(lb.Instances) != 3 {
		t.Errorf("load balancer %s has %d instances, want the 3 nodes", lb.LoadBalancerName, len(lb.Instances))
	}
	reqs := r.since(ctx, from)
	if n := count(reqs, r.kcmCreds, "elasticloadbalancing", "CreateLoadBalancer"); n != 1 {
		t.Errorf("CreateLoadBalancer calls by %s: %d, want 1", kcmIAMUser, n)
	}
	if by := moto.By(reqs, r.ccmCreds.AccessKeyID); len(by) > 0 {
		t.Errorf("%d AWS calls by %s before it was installed", len(by), ccmIAMUser)
	}
	kcm.Stop()
	return string(s.UID), lb.LoadBalancerName, lb.DNSName, lb.CreatedTime
}

// stepKCMLeaderMigration: the plan's before.grant-kcm-lease and
// before.kcm-leader-migration; the controller manager, restarted with
// leader migration, holds the migration lease and keeps the load balancer.
func (r *replay) stepKCMLeaderMigration(ctx context.Context) (*harness.Process, string) {
	t := r.t
	from := r.begin("2. KCM with leader migration")
	// Without the grant the 1.26 bootstrap policy keeps the controller
	// manager from the lease.
	bootstrapGap(t)
	grant := r.step("before.grant-kcm-lease")
	for _, c := range grant.Commands {
		r.kubectl(ctx, c.Argv)
	}
	t.Cleanup(func() {
		_ = cp.Client.RbacV1().RoleBindings("kube-system").Delete(context.Background(), "kcm-leader-migration", metav1.DeleteOptions{})
		_ = cp.Client.RbacV1().Roles("kube-system").Delete(context.Background(), "kcm-leader-migration", metav1.DeleteOptions{})
	})
	// The plan's grant in the authorizer's view before the controller
	// manager starts.
	harness.WaitAccess(t, cp.Client, 30*time.Second, leaseAccess(kcmUser, kcmGroups, renderer.DefaultLeaderName, true, leaseVerbs...))
	// The controller manager's LeaderMigrationConfiguration, as the plan
	// writes it on the control-plane nodes.
	lm := r.step("before.kcm-leader-migration")
	config := snippet(t, lm, "/etc/kubernetes/kcm-leader-migration.yaml").Content
	path := filepath.Join(t.TempDir(), "kcm-leader-migration.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	started, synced := time.Now(), r.ensured(ctx)
	kcm := r.startInTreeKCM("kcm-leader-migration", "--enable-leader-migration=true", "--leader-migration-config="+path)
	var id string
	harness.WaitFor(t, 60*time.Second, "the KCM to hold the migration lease", func() bool {
		running(t, kcm, "kube-controller-manager")
		id = leaseHolder(t, kcmLease)
		return id != "" && leaseHolder(t, renderer.DefaultLeaderName) == id
	})
	r.handover.kcm = time.Since(started)
	t.Logf("%s: the KCM holds Lease %s and %s as %q, %s after it started (%s may get, update and create %s)", since(r.start), kcmLease,
		renderer.DefaultLeaderName, id, since(started), kcmUser, renderer.DefaultLeaderName)
	harness.WaitFor(t, 30*time.Second, "the KCM to start its migrated controllers", func() bool {
		return strings.Contains(kcm.Log(), "leader migration: starting migrated controllers")
	})
	// Its service controller, started under the migration lease, syncs the
	// Service again: a look at the load balancer, no change.
	r.waitEnsured(ctx, kcm, "the KCM", synced)
	if n := count(r.since(ctx, from), r.kcmCreds, "elasticloadbalancing", "DescribeLoadBalancers"); n == 0 {
		t.Errorf("the KCM synced the load balancer without looking at it (no DescribeLoadBalancers)")
	}
	r.noChurn(ctx, from)
	return kcm, id
}

// stepInstallMigrate: the plan's before.cloud-config and before.install-ccm
// with Helm 3; the CCM runs with the installed DaemonSet's args and
// ConfigMaps as its service account, holds its own lease and waits.
func (r *replay) stepInstallMigrate(ctx context.Context, kcmID string) (*harness.Process, string) {
	t := r.t
	from := r.begin("3. CCM installed, migrate mode")
	r.cloudConfigStep(ctx)
	r.ccmCommand(ctx, r.step("before.install-ccm"))
	// The release's grants to the CCM's account, the migration lease among
	// them, in the authorizer's view before the CCM runs.
	ds := r.daemonSet(ctx)
	user, groups := serviceAccountUser(ds.Namespace, ds.Spec.Template.Spec.ServiceAccountName)
	r.migrateRelease = r.releaseObjects()
	want, err := harness.Grants(r.migrateRelease, user, groups)
	if err != nil {
		t.Fatal(err)
	}
	harness.WaitAccess(t, cp.Client, 30*time.Second, append(want, leaseAccess(user, groups, renderer.DefaultLeaderName, true, leaseVerbs...)...))
	ccm := r.runCCM(ctx, "ccm-migrate")
	id := leaseHolder(t, ccmLease)
	if id == kcmID {
		t.Fatalf("the CCM and the KCM hold their leases as the same %q", id)
	}
	// It waits: the KCM keeps the migration lease, the CCM's service
	// controller makes no load balancer call, for two lease durations.
	for deadline := time.Now().Add(2 * leaseDuration); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		running(t, ccm, "the CCM")
		if h := leaseHolder(t, renderer.DefaultLeaderName); h != kcmID {
			t.Fatalf("Lease %s is held by %q while the KCM runs, want the KCM %q", renderer.DefaultLeaderName, h, kcmID)
		}
	}
	reqs := r.since(ctx, from)
	if elb := service(moto.By(reqs, r.ccmCreds.AccessKeyID), "elasticloadbalancing"); len(elb) > 0 {
		t.Errorf("the CCM called the load balancer API while the KCM held the migration lease: %v", actions(elb))
	}
	r.noChurn(ctx, from)
	t.Logf("%s: for %s the KCM kept Lease %s; the CCM (%q) made %d EC2 and no ELB calls", since(r.start), 2*leaseDuration,
		renderer.DefaultLeaderName, id, len(service(moto.By(reqs, r.ccmCreds.AccessKeyID), "ec2")))
	return ccm, id
}

// stepSwitch: the controller manager restarts with the external provider
// and without leader migration (during.switch); while no controller manager
// runs the cloud controllers the Service gets a second port; the CCM takes
// the lease once the controller manager's record has expired and adds the
// listener, once.
func (r *replay) stepSwitch(ctx context.Context, kcm, ccm *harness.Process, kcmID, ccmID, lbName string) *harness.Process {
	t := r.t
	switchStep := r.step("during.switch")
	if !strings.Contains(snippet(t, switchStep, "ClusterConfiguration (ConfigMap kube-system/kubeadm-config)").Content, "cloud-provider: external") {
		t.Fatalf("the plan's switch does not set cloud-provider: external for the controller manager")
	}
	from := r.begin("4. switch")
	kcm.Stop()
	stopped := time.Now()
	last := lease(t, renderer.DefaultLeaderName)
	if last.Spec.HolderIdentity == nil || *last.Spec.HolderIdentity != kcmID || last.Spec.RenewTime == nil {
		t.Fatalf("Lease %s right after the KCM stopped: %+v, want the KCM's record", renderer.DefaultLeaderName, last.Spec)
	}
	services := cp.Client.CoreV1().Services(lbNamespace)
	s, err := services.Get(ctx, lbService, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443)})
	if _, err := services.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	changed, synced := time.Now(), r.ensured(ctx)
	external := startKCM(t, "kcm-external", r.kcmEnv(), "--cloud-provider=external")
	harness.WaitFor(t, 60*time.Second, "the CCM to take the migration lease", func() bool {
		running(t, ccm, "the CCM")
		running(t, external, "kube-controller-manager")
		return leaseHolder(t, renderer.DefaultLeaderName) == ccmID
	})
	taken := lease(t, renderer.DefaultLeaderName)
	var lb moto.LoadBalancer
	harness.WaitFor(t, 60*time.Second, "the CCM to add the listener", func() bool {
		lb = r.loadBalancerNamed(ctx, lbName)
		return len(lb.ListenerDescriptions) == 2
	})
	added := time.Now()
	r.waitEnsured(ctx, ccm, "the CCM", synced)
	// A lease duration more for a second reconciliation to show.
	time.Sleep(leaseDuration)
	gap := taken.Spec.AcquireTime.Sub(last.Spec.RenewTime.Time)
	took := taken.Spec.AcquireTime.Sub(stopped)
	t.Logf("%s: switch: the CCM took Lease %s %s after the KCM's last renewal (%s after it stopped, %s after the Service changed); listener added %s after the KCM stopped; listeners now %v",
		since(r.start), renderer.DefaultLeaderName, gap.Round(10*time.Millisecond), took.Round(10*time.Millisecond),
		taken.Spec.AcquireTime.Sub(changed).Round(10*time.Millisecond), added.Sub(stopped).Round(10*time.Millisecond), listeners(lb))
	// The KCM's record holds for a lease duration after the CCM saw it
	// renewed; the CCM looks again every retry period, stretched by up to
	// JitterFactor (k8s.io/client-go v0.26.0, the CCM v1.26.0's, and v0.26.5
	// alike, tools/leaderelection/leaderelection.go: acquire,
	// wait.JitterUntil(..., RetryPeriod, JitterFactor=1.2, ...);
	// tryAcquireOrRenew: observedTime + LeaseDuration).
	// It sees the last renewal at most one such interval late and takes the
	// lease at most one interval after it expired. The KCM stamps
	// RenewTime before the API server has it: one retry period of slack
	// below.
	interval := time.Duration(2.2 * float64(retryPeriod))
	if lo, hi := leaseDuration-retryPeriod, leaseDuration+2*interval; gap < lo || gap > hi {
		t.Errorf("the CCM took Lease %s %s after the KCM's last renewal, want between %s and %s (lease duration %s, retry period %s)",
			renderer.DefaultLeaderName, gap, lo, hi, leaseDuration, retryPeriod)
	}
	r.handover.gap, r.handover.fromStop, r.handover.listener = gap, took, added.Sub(stopped)
	reqs := r.since(ctx, from)
	if by := moto.By(reqs, r.kcmCreds.AccessKeyID); len(by) > 0 {
		t.Errorf("AWS calls by %s after it switched to the external provider: %v", kcmIAMUser, actions(by))
	}
	if n := count(reqs, r.ccmCreds, "elasticloadbalancing", "CreateLoadBalancerListeners"); n != 1 || len(calls(reqs, "CreateLoadBalancerListeners")) != 1 {
		t.Errorf("CreateLoadBalancerListeners calls during the switch: %d by %s, %d in all; want the port added once, by the CCM",
			n, ccmIAMUser, len(calls(reqs, "CreateLoadBalancerListeners")))
	}
	for _, a := range []string{"DeleteLoadBalancerListeners", "CreateLoadBalancer", "DeleteLoadBalancer"} {
		if n := len(calls(reqs, a)); n > 0 {
			t.Errorf("%s calls during the switch: %d, want none", a, n)
		}
	}
	return external
}

// stepInstallMode: the plan's after.ccm-install-mode and after.cleanup; the
// CCM restarts with the new DaemonSet's args (as its pods would be
// replaced), runs its service controller without leader migration, and the
// load balancer stays as it is.
func (r *replay) stepInstallMode(ctx context.Context, ccm *harness.Process, lbName, lbDNS, lbCreated string) {
	t := r.t
	from := r.begin("5. --mode=install")
	r.ccmCommand(ctx, r.step("after.ccm-install-mode"))
	ccm.Stop()
	for _, c := range r.step("after.cleanup").Commands {
		if len(c.Argv) > 0 {
			r.kubectl(ctx, c.Argv)
		}
	}
	ds := r.daemonSet(ctx)
	for _, a := range ds.Spec.Template.Spec.Containers[0].Args {
		if strings.Contains(a, "leader-migration") {
			t.Errorf("the DaemonSet after --mode=install has %s", a)
		}
	}
	// Helm deleted what the migrate render had and the install render has
	// not: the CCM's LeaderMigrationConfiguration and the renderer's Role.
	var left []string
	cms, err := cp.Client.CoreV1().ConfigMaps("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range cms.Items {
		if g := o.Annotations[renderer.GeneratedAnnotation]; g == generatedConfig {
			left = append(left, "ConfigMap "+o.Name)
		}
	}
	roles, err := cp.Client.RbacV1().Roles("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range roles.Items {
		if g := o.Annotations[renderer.GeneratedAnnotation]; g == generatedRBAC {
			left = append(left, "Role "+o.Name)
		}
	}
	if len(left) > 0 {
		t.Errorf("after --mode=install the cluster still has %v, generated for the migration", left)
	}
	// The state after the clean-up in the authorizer's view before the CCM
	// runs again: the controller manager's grant of the migration lease
	// gone (the plan's Role and the renderer's), the install release's
	// grants to the CCM's account present and those of the migrate release
	// it lacks gone.
	user, groups := serviceAccountUser(ds.Namespace, ds.Spec.Template.Spec.ServiceAccountName)
	installRelease := r.releaseObjects()
	want, err := harness.Grants(installRelease, user, groups)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := harness.Revoked(r.migrateRelease, installRelease, user, groups)
	if err != nil {
		t.Fatal(err)
	}
	want = append(append(want, gone...), leaseAccess(kcmUser, kcmGroups, renderer.DefaultLeaderName, false, "get", "update")...)
	harness.WaitAccess(t, cp.Client, 30*time.Second, want)
	started, synced := time.Now(), r.ensured(ctx)
	installed := r.runCCM(ctx, "ccm-install")
	r.waitEnsured(ctx, installed, "the CCM", synced)
	r.handover.install = time.Since(started)
	if n := count(r.since(ctx, started), r.ccmCreds, "elasticloadbalancing", "DescribeLoadBalancers"); n == 0 {
		t.Errorf("the CCM synced the load balancer without looking at it (no DescribeLoadBalancers)")
	}
	t.Logf("%s: --mode=install: the CCM's service controller synced the load balancer %s after it started", since(r.start), since(started))
	// A lease duration more for anything to take the migration lease.
	time.Sleep(leaseDuration)
	if _, err := cp.Client.CoordinationV1().Leases("kube-system").Get(ctx, renderer.DefaultLeaderName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Lease %s after --mode=install: %v (holder %q), want none", renderer.DefaultLeaderName, err, leaseHolder(t, renderer.DefaultLeaderName))
	}
	lb := r.loadBalancerNamed(ctx, lbName)
	if lb.DNSName != lbDNS || lb.CreatedTime != lbCreated {
		t.Errorf("load balancer %s after --mode=install: DNS %s created %s, want %s created %s", lbName, lb.DNSName, lb.CreatedTime, lbDNS, lbCreated)
	}
	if lbs, err := r.aws.LoadBalancers(ctx); err != nil || len(lbs) != 1 {
		t.Errorf("load balancers in moto: %d (%v), want 1", len(lbs), err)
	}
	reqs := r.since(ctx, from)
	if by := moto.By(reqs, r.kcmCreds.AccessKeyID); len(by) > 0 {
		t.Errorf("AWS calls by %s after the switch: %v", kcmIAMUser, actions(by))
	}
	r.noChurn(ctx, from)
	r.begin("end")
}

// handover are the switch's times.
type handover struct {
	kcm                     time.Duration // KCM start to migration lease held, step 2
	gap, fromStop, listener time.Duration // step 4
	install                 time.Duration // CCM start to its sync of the load balancer, step 5
}

// step returns a step of the plan by its ID.
func (r *replay) step(id string) plan.Step {
	for _, ph := range r.plan.Phases {
		for _, s := range ph.Steps {
			if s.ID == id {
				return s
			}
		}
	}
	r.t.Fatalf("the plan has no step %s", id)
	return plan.Step{}
}

// snippet returns a step's snippet for a file.
func snippet(t *testing.T, s plan.Step, file string) plan.Snippet {
	t.Helper()
	for _, sn := range s.Snippets {
		if sn.File == file {
			return sn
		}
	}
	t.Fatalf("step %s has no snippet for %s", s.ID, file)
	return plan.Snippet{}
}

// kubectl carries out the plan's kubectl commands that change RBAC objects
// and leases, through the API (no kubectl is built here): `create role`,
// `create rolebinding` and `delete` of the plan's forms; any other form
// fails the test.
func (r *replay) kubectl(ctx context.Context, argv []string) {
	t := r.t
	if len(argv) < 5 || argv[0] != "kubectl" || argv[1] != "-n" {
		t.Fatalf("not a namespaced kubectl command of the plan: %q", argv)
	}
	ns, verb, kind, name, flags := argv[2], argv[3], argv[4], "", map[string][]string{}
	for _, a := range argv[5:] {
		if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
			flags[k] = append(flags[k], strings.Split(v, ",")...)
		} else if name == "" {
			name = a
		} else {
			t.Fatalf("kubectl %q: unexpected %q", argv, a)
		}
	}
	var err error
	switch {
	case verb == "create" && kind == "role":
		rule := rbacv1.PolicyRule{Verbs: flags["--verb"], ResourceNames: flags["--resource-name"]}
		for _, res := range flags["--resource"] {
			resource, group, _ := strings.Cut(res, ".")
			rule.Resources, rule.APIGroups = append(rule.Resources, resource), append(rule.APIGroups, group)
		}
		_, err = cp.Client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{})
	case verb == "create" && kind == "rolebinding" && len(flags["--role"]) == 1:
		b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: flags["--role"][0]}}
		for _, u := range flags["--user"] {
			b.Subjects = append(b.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: u})
		}
		_, err = cp.Client.RbacV1().RoleBindings(ns).Create(ctx, b, metav1.CreateOptions{})
	case verb == "delete" && len(flags) == 0:
		for _, k := range strings.Split(kind, ",") {
			switch k {
			case "role":
				err = cp.Client.RbacV1().Roles(ns).Delete(ctx, name, metav1.DeleteOptions{})
			case "rolebinding":
				err = cp.Client.RbacV1().RoleBindings(ns).Delete(ctx, name, metav1.DeleteOptions{})
			case "lease":
				err = cp.Client.CoordinationV1().Leases(ns).Delete(ctx, name, metav1.DeleteOptions{})
			default:
				t.Fatalf("kubectl %q: cannot delete %s here", argv, k)
			}
			if err != nil {
				break
			}
		}
	default:
		t.Fatalf("kubectl %q: not a form the replay carries out", argv)
	}
	if err != nil {
		t.Fatalf("kubectl %q: %v", argv, err)
	}
	t.Logf("%s: kubectl %s", since(r.start), strings.Join(argv[1:], " "))
}

// cloudConfigStep carries out before.cloud-config: the in-tree provider's
// cloud config into the ConfigMap of the plan's snippet, and the values
// (before.preflight's snippet) that mount it into the CCM, for every helm
// command after.
func (r *replay) cloudConfigStep(ctx context.Context) {
	t := r.t
	s := r.step("before.cloud-config")
	objs := decode(t, []byte(snippet(t, s, "aws-cloud-config.yaml").Content))
	if len(objs) != 1 || objs[0].GetKind() != "ConfigMap" {
		t.Fatalf("before.cloud-config's aws-cloud-config.yaml is not one ConfigMap: %v", ids(objs))
	}
	if err := unstructured.SetNestedField(objs[0].Object, r.cloudConf, "data", "cloud.conf"); err != nil {
		t.Fatal(err)
	}
	apply(t, objs)
	r.values = filepath.Join(t.TempDir(), "ccm-cloud-config-values.yaml")
	// The values are the snippet of the first step that passes them, the
	// preflight (its check renders the CCM with them).
	if err := os.WriteFile(r.values, []byte(snippet(t, r.step("before.preflight"), "ccm-cloud-config-values.yaml").Content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ccmCommand carries out a step's CCM command as the plan prints it: the
// chart wrapper's upgrade --install (the plan's default), with the renderer
// built here, against the control plane, without --wait (no kubelet runs the
// pods), and with before.cloud-config's values file where the command names
// it.
func (r *replay) ccmCommand(ctx context.Context, s plan.Step) {
	t := r.t
	var argv []string
	for _, c := range s.Commands {
		if c.Main {
			argv = c.Argv
		}
	}
	if len(argv) < 5 || argv[0] != "aws-ccm-renderer" || argv[1] != "upgrade" || argv[2] != "--install" || argv[4] != r.plan.CCM.Chart {
		t.Fatalf("step %s's main command is not the chart wrapper's upgrade --install of %s: %q", s.ID, r.plan.CCM.Chart, argv)
	}
	var args []string
	for i := 1; i < len(argv); i++ {
		switch a := argv[i]; a {
		case "--wait":
		case "-f":
			i++
			if argv[i] != "ccm-cloud-config-values.yaml" {
				t.Fatalf("step %s: -f %s is not before.cloud-config's values file", s.ID, argv[i])
			}
			args = append(args, a, r.values)
		default:
			args = append(args, a)
		}
	}
	if r.values == "" || !slices.Contains(args, r.values) {
		t.Fatalf("step %s: the CCM command does not mount before.cloud-config's values: %q", s.ID, argv)
	}
	args = append(args, "--kubeconfig", cp.Kubeconfig)
	out := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Renderer(t), args...)
	t.Logf("%s: aws-ccm-renderer %s\n%s", since(r.start), strings.Join(args, " "), tail(string(out), 600))
}

// releaseObjects returns the objects of the CCM's release as Helm
// recorded them (helm get manifest).
func (r *replay) releaseObjects() []*unstructured.Unstructured {
	out := testtools.MustRun(r.t, testtools.HelmEnv(r.t), testtools.Helm3(r.t), "get", "manifest", r.plan.CCM.Release,
		"--namespace", r.plan.CCM.Namespace, "--kubeconfig", cp.Kubeconfig)
	return decode(r.t, out)
}

// daemonSet reads the installed CCM DaemonSet.
func (r *replay) daemonSet(ctx context.Context) *appsv1.DaemonSet {
	ds, err := cp.Client.AppsV1().DaemonSets(r.plan.CCM.Namespace).Get(ctx, r.plan.CCM.DaemonSet, metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	return ds
}

// runCCM runs the CCM as the installed DaemonSet's pod would: its
// container's args, the ConfigMaps its volumes mount at their paths, its
// service account's token, and the CCM's access key; with the test's leader
// election timings. It returns once the CCM holds its own lease.
func (r *replay) runCCM(ctx context.Context, name string) *harness.Process {
	t := r.t
	ds := r.daemonSet(ctx)
	pod := ds.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("DaemonSet %s has %d containers, want the CCM alone", ds.Name, len(pod.Containers))
	}
	c := pod.Containers[0]
	if want := r.plan.CCM.Image; c.Image != want {
		t.Fatalf("DaemonSet %s runs %s, want the plan's %s", ds.Name, c.Image, want)
	}
	files := map[string]string{}
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			cm, err := cp.Client.CoreV1().ConfigMaps(ds.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("ConfigMap %s of volume %s: %v", v.ConfigMap.Name, v.Name, err)
			}
			for k, data := range cm.Data {
				files[m.MountPath+"/"+k] = data
			}
		}
	}
	cloudConf := ""
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--cloud-config="); ok {
			cloudConf = files[v]
		}
	}
	if cloudConf == "" {
		t.Fatalf("the CCM's args %q name no mounted cloud config (mounted: %v)", c.Args, keys(files))
	}
	if err := cp.Client.CoordinationV1().Leases("kube-system").Delete(ctx, ccmLease, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	p, err := awsccm.Run(cp, awsccm.Options{
		Name: name, Binary: r.ccm.Binary, Args: c.Args, Files: files,
		Kubeconfig:  serviceAccountKubeconfig(t, ds.Namespace, pod.ServiceAccountName),
		CloudConfig: cloudConf, Env: awsccm.Env(r.ccmCreds, r.trap), Extra: leaderElectionFlags(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: CCM %s %s args %q", since(r.start), name, r.ccm.Version, c.Args)
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s log tail:\n%s", name, tail(p.Log(), 4000))
		}
	})
	harness.WaitFor(t, 60*time.Second, "the CCM to hold its own lease", func() bool {
		running(t, p, "the CCM")
		return leaseHolder(t, ccmLease) != ""
	})
	return p
}

// waitIngress waits until the Service has a load balancer hostname.
func (r *replay) waitIngress(ctx context.Context, p *harness.Process, who string) string {
	var host string
	harness.WaitFor(r.t, 90*time.Second, who+" to give the Service a load balancer", func() bool {
		running(r.t, p, who)
		s, err := cp.Client.CoreV1().Services(lbNamespace).Get(ctx, lbService, metav1.GetOptions{})
		if err != nil {
			r.t.Fatal(err)
		}
		if ing := s.Status.LoadBalancer.Ingress; len(ing) > 0 {
			host = ing[0].Hostname
		}
		return host != ""
	})
	return host
}

// ensured counts the service controller's EnsuredLoadBalancer events on the
// Service (it records one when a sync of the load balancer is complete,
// k8s.io/cloud-provider v0.26.5 controllers/service/controller.go), whichever
// controller manager sent them.
func (r *replay) ensured(ctx context.Context) int32 {
	evs, err := cp.Client.CoreV1().Events(lbNamespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + lbService + ",reason=EnsuredLoadBalancer"})
	if err != nil {
		r.t.Fatal(err)
	}
	var n int32
	for _, e := range evs.Items {
		n += max(e.Count, 1)
	}
	return n
}

// waitEnsured waits until the service controller has completed a sync of
// the load balancer after the count n.
func (r *replay) waitEnsured(ctx context.Context, p *harness.Process, who string, n int32) {
	harness.WaitFor(r.t, 60*time.Second, who+" to sync the load balancer", func() bool {
		running(r.t, p, who)
		return r.ensured(ctx) > n
	})
}

// loadBalancer returns the one load balancer in moto, which has the DNS
// name the Service shows.
func (r *replay) loadBalancer(ctx context.Context, dns string) moto.LoadBalancer {
	lbs, err := r.aws.LoadBalancers(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	if len(lbs) != 1 || lbs[0].DNSName != dns {
		r.t.Fatalf("load balancers in moto: %+v, want one with DNS name %s", lbs, dns)
	}
	return lbs[0]
}

func (r *replay) loadBalancerNamed(ctx context.Context, name string) moto.LoadBalancer {
	lbs, err := r.aws.LoadBalancers(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, lb := range lbs {
		if lb.LoadBalancerName == name {
			return lb
		}
	}
	r.t.Fatalf("no load balancer %s in moto: %+v", name, lbs)
	return moto.LoadBalancer{}
}

func listeners(lb moto.LoadBalancer) []string {
	var out []string
	for _, l := range lb.ListenerDescriptions {
		out = append(out, fmt.Sprintf("%s:%d->%d", l.Listener.Protocol, l.Listener.LoadBalancerPort, l.Listener.InstancePort))
	}
	return out
}

// since returns the AWS requests moto answered from a time on, the test's
// own (Call's) left out.
func (r *replay) since(ctx context.Context, from time.Time) []moto.Request {
	reqs, err := r.aws.Requests(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	return where(reqs, func(q moto.Request) bool { return !q.Admin && unix(q.Time).After(from) })
}

// noChurn fails the test if anything created or deleted an AWS resource
// since a time.
func (r *replay) noChurn(ctx context.Context, from time.Time) {
	for _, q := range r.since(ctx, from) {
		if strings.HasPrefix(q.Action, "Create") || strings.HasPrefix(q.Action, "Delete") {
			r.t.Errorf("%s:%s by %s at %s: want no resource created or deleted in this step", q.Service, q.Action, r.who(q), unix(q.Time).Sub(r.start).Round(10*time.Millisecond))
		}
	}
}

func unix(sec float64) time.Time {
	return time.Unix(0, int64(sec*float64(time.Second)))
}

// where returns the requests a predicate keeps.
func where(reqs []moto.Request, keep func(moto.Request) bool) []moto.Request {
	var out []moto.Request
	for _, q := range reqs {
		if keep(q) {
			out = append(out, q)
		}
	}
	return out
}

// count counts an identity's calls of an action.
func count(reqs []moto.Request, who moto.Credentials, svc, action string) int {
	return len(where(moto.By(reqs, who.AccessKeyID), func(q moto.Request) bool { return q.Service == svc && q.Action == action }))
}

// calls returns the calls of an action, by anyone.
func calls(reqs []moto.Request, action string) []moto.Request {
	return where(reqs, func(q moto.Request) bool { return q.Action == action })
}

// service returns the calls of a service's API.
func service(reqs []moto.Request, svc string) []moto.Request {
	return where(reqs, func(q moto.Request) bool { return q.Service == svc })
}

func actions(reqs []moto.Request) []string {
	var out []string
	for _, q := range reqs {
		out = append(out, q.Service+":"+q.Action)
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// who names the identity of a request.
func (r *replay) who(q moto.Request) string {
	switch q.AccessKey {
	case r.kcmCreds.AccessKeyID:
		return "KCM (" + kcmIAMUser + ")"
	case r.ccmCreds.AccessKeyID:
		return "CCM (" + ccmIAMUser + ")"
	}
	return "unknown key " + q.AccessKey
}

// table writes the AWS calls moto recorded, per step and identity, with the
// count and the time of the first, as a Markdown table.
func (r *replay) table() {
	t := r.t
	reqs := r.since(context.Background(), r.start)
	type key struct{ step, who, call string }
	type agg struct {
		n     int
		first time.Duration
	}
	var order []key
	rows := map[key]*agg{}
	for _, q := range reqs {
		at := unix(q.Time)
		step := ""
		for _, s := range r.steps {
			if !at.Before(s.from) && (s.to.IsZero() || at.Before(s.to)) {
				step = s.name
			}
		}
		k := key{step, r.who(q), q.Service + ":" + q.Action}
		if q.Error != "" {
			k.call += " (" + q.Error + ")"
		}
		if rows[k] == nil {
			rows[k] = &agg{first: at.Sub(r.start)}
			order = append(order, k)
		}
		rows[k].n++
	}
	var b strings.Builder
	b.WriteString("AWS calls moto recorded, by step and identity (t: seconds since the replay started, of the first call)\n\n")
	b.WriteString("| step | identity | call | count | first at |\n|---|---|---|---|---|\n")
	for _, k := range order {
		a := rows[k]
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %.1f s |\n", k.step, k.who, k.call, a.n, a.first.Seconds())
	}
	b.WriteString("\nSteps (t: seconds since the replay started)\n\n| step | from | to |\n|---|---|---|\n")
	for _, s := range r.steps {
		if s.to.IsZero() {
			continue
		}
		fmt.Fprintf(&b, "| %s | %.1f s | %.1f s |\n", s.name, s.from.Sub(r.start).Seconds(), s.to.Sub(r.start).Seconds())
	}
	h, ms := r.handover, 10*time.Millisecond
	fmt.Fprintf(&b, "\nHandovers (lease duration %s, renew deadline %s, retry period %s):\n\n", leaseDuration, renewDeadline, retryPeriod)
	fmt.Fprintf(&b, "- step 2: the KCM, restarted with leader migration, held Lease %s %s after it started\n", renderer.DefaultLeaderName, h.kcm.Round(ms))
	fmt.Fprintf(&b, "- step 4: the CCM took it %s after the KCM's last renewal (lease duration + retry period: %s), %s after the KCM stopped; the added port's listener was in place %s after the KCM stopped\n",
		h.gap.Round(ms), leaseDuration+retryPeriod, h.fromStop.Round(ms), h.listener.Round(ms))
	fmt.Fprintf(&b, "- step 5: the CCM, restarted without leader migration, had synced the load balancer %s after it started\n", h.install.Round(ms))
	t.Log(b.String())
}
