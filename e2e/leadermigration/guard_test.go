package leadermigration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/moto"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// guardAccount creates a service account granted renderer.GuardReads and the
// Events it writes on its pod, nothing else, and returns its kubeconfig
// once the authorizer allows what it was granted.
func guardAccount(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	ns := metav1.NamespaceSystem
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}
	if _, err := cp.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}}}}
	cluster := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}
	user, groups := serviceAccountUser(ns, name)
	var want []harness.AccessExpectation
	for _, r := range renderer.GuardReads {
		rule := rbacv1.PolicyRule{APIGroups: []string{r.Group}, Resources: []string{r.Resource}, Verbs: []string{r.Verb}}
		if r.Namespace == "" {
			cluster.Rules = append(cluster.Rules, rule)
		} else {
			role.Rules = append(role.Rules, rule)
		}
		want = append(want, harness.AccessExpectation{User: user, Groups: groups, Verb: r.Verb, Group: r.Group, Resource: r.Resource, Namespace: r.Namespace, Allowed: true})
	}
	// What it was not granted stays refused: the pods of other namespaces,
	// reading Secrets.
	want = append(want, harness.AccessExpectation{User: user, Groups: groups, Verb: "list", Resource: "pods", Namespace: "default", Allowed: false},
		harness.AccessExpectation{User: user, Groups: groups, Verb: "get", Resource: "secrets", Namespace: ns, Allowed: false})
	rbac := cp.Client.RbacV1()
	if _, err := rbac.Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoles().Create(ctx, cluster, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = rbac.ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
		_ = rbac.RoleBindings(ns).Delete(ctx, name, metav1.DeleteOptions{})
		_ = rbac.Roles(ns).Delete(ctx, name, metav1.DeleteOptions{})
		_ = cp.Client.CoreV1().ServiceAccounts(ns).Delete(ctx, name, metav1.DeleteOptions{})
	})
	harness.WaitAccess(t, cp.Client, 30*time.Second, want)
	return serviceAccountKubeconfig(t, ns, name)
}

// mirrorPod shows a controller manager's flags as the kubelet's mirror pod
// of its static pod does (component=kube-controller-manager,
// kubernetes.io/config.mirror): the KCM here runs as a process, and no
// kubelet mirrors it.
func mirrorPod(t *testing.T, node string, flags []string) {
	t.Helper()
	ctx := context.Background()
	pods := cp.Client.CoreV1().Pods(metav1.NamespaceSystem)
	name := "kube-controller-manager-" + node
	_ = pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	harness.WaitFor(t, 30*time.Second, "the old mirror pod to go", func() bool {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		return err != nil
	})
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem,
		Labels: map[string]string{"component": "kube-controller-manager", "tier": "control-plane"}, Annotations: map[string]string{"kubernetes.io/config.mirror": "e2e"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "kube-controller-manager",
			Image: "registry.k8s.io/kube-controller-manager:" + bin.Release.String(), Command: append([]string{"kube-controller-manager"}, flags...)}}}}
	if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = pods.Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	})
}

// TestGuard runs the guard (aws-ccm-renderer guard, as the CCM pod's init
// container would, as a service account granted renderer.GuardReads only)
// beside the real 1.26 kube-controller-manager with the in-tree AWS provider
// on moto. The kubelet starts a pod's containers once its init containers
// returned; here the CCM would start once the guard returns.
//
//   - The KCM without leader migration: the guard holds an install-mode
//     and a migrate-mode CCM alike, says why in one line and in an Event on
//     its pod, and keeps holding; the KCM alone calls AWS and holds the
//     controller manager lease; no CCM lease exists.
//   - The KCM again with leader migration: an install-mode CCM is still held
//     (it would ignore the migration lease), with the new reason; a
//     migrate-mode CCM's guard returns within seconds.
func TestGuard(t *testing.T) {
	r := newReplay(t)
	ctx := context.Background()
	kubeconfig := guardAccount(t, "ccm-guard")
	tag := releases.Tag(bin.Release.Minor)
	guard := func(name string, mode renderer.Mode, extra ...string) *harness.Process {
		args := append([]string{"guard", "--mode=" + string(mode), "--ccm-version=" + tag, "--kubeconfig=" + kubeconfig, "--interval=1s"}, extra...)
		p, err := cp.RunEnv(name, testtools.Renderer(t), []string{"POD_NAME=" + name, "POD_NAMESPACE=kube-system"}, args...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		return p
	}
	held := func(p *harness.Process, why string) {
		t.Helper()
		harness.WaitFor(t, 30*time.Second, "the guard to say it holds the CCM back", func() bool {
			return strings.Contains(p.Log(), "holding the CCM back: kube-controller-manager on cp-1: "+why)
		})
		time.Sleep(3 * time.Second) // three more readings
		select {
		case <-p.Done():
			t.Fatalf("the guard returned while it should hold:\n%s", p.Log())
		default:
		}
	}

	flags := []string{"--cloud-provider=aws", "--cloud-config=/etc/kubernetes/cloud.conf", "--use-service-account-credentials=true"}
	// Registered before the controller managers start, so run after they
	// stopped (cleanups run last first): no lease of theirs is left for
	// the package's other tests.
	var kcms []*harness.Process
	t.Cleanup(func() {
		for _, p := range kcms {
			p.Stop()
			<-p.Done()
		}
		_ = cp.Client.CoordinationV1().Leases("kube-system").Delete(context.Background(), kcmLease, metav1.DeleteOptions{})
	})
	start := time.Now()
	kcm := r.startInTreeKCM("kube-controller-manager")
	kcms = append(kcms, kcm)
	harness.WaitFor(t, 60*time.Second, "the in-tree KCM to hold its lease", func() bool {
		running(t, kcm, "kube-controller-manager")
		return leaseHolder(t, kcmLease) != ""
	})
	mirrorPod(t, "cp-1", flags)

	once, _, err := testtools.Run(t, nil, testtools.Renderer(t), "guard", "--mode=install", "--ccm-version="+tag, "--kubeconfig="+kubeconfig, "--once")
	if code := testtools.ExitCode(err); code != 1 || len(once) != 0 {
		t.Fatalf("guard --once beside the in-tree provider: exit %d, stdout %q; want 1 and nothing", code, once)
	}
	install := guard("ccm-install", renderer.ModeInstall)
	migrate := guard("ccm-migrate", renderer.ModeMigrate)
	held(install, "--cloud-provider=aws, no leader migration")
	held(migrate, "--cloud-provider=aws, no leader migration")
	events, err := cp.Client.CoreV1().Events("kube-system").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=ccm-install"})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) != 1 || events.Items[0].Reason != "CCMHeldBack" || !strings.Contains(events.Items[0].Message, "no leader migration") {
		t.Errorf("Events on the install-mode guard's pod: %+v; want one CCMHeldBack", events.Items)
	}
	reqs, err := r.aws.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The CCM's access key signed nothing: no second cloud controller.
	if q := moto.By(reqs, r.ccmCreds.AccessKeyID); len(q) != 0 {
		t.Errorf("%d AWS requests with the CCM's access key while the guard held: %+v", len(q), q)
	}
	if h := leaseHolder(t, ccmLease); h != "" {
		t.Errorf("Lease %s held by %q while the guard held", ccmLease, h)
	}
	t.Logf("%s: the in-tree KCM (lease holder %s) runs the cloud controllers alone: %d AWS requests with its key, none with the CCM's; both guards hold", since(start),
		leaseHolder(t, kcmLease), len(moto.By(reqs, r.kcmCreds.AccessKeyID)))

	// Step 1 of the migration: the KCM with leader migration.
	kcm.Stop()
	kcm = r.startInTreeKCM("kube-controller-manager-lm", "--enable-leader-migration=true")
	kcms = append(kcms, kcm)
	mirrorPod(t, "cp-1", append(flags, "--enable-leader-migration=true"))
	held(install, "--cloud-provider=aws, --enable-leader-migration: it runs the cloud controllers under the migration lease, which the CCM in install mode ignores")
	harness.WaitFor(t, 30*time.Second, "the migrate-mode guard to return", func() bool {
		select {
		case <-migrate.Done():
			return true
		default:
			return false
		}
	})
	if !strings.Contains(migrate.Log(), "the CCM ("+tag+", migrate mode) may start") {
		t.Errorf("the migrate-mode guard's log:\n%s", migrate.Log())
	}
	running(t, kcm, "kube-controller-manager")
	t.Logf("%s: with leader migration on, the migrate-mode guard returned; the install-mode one holds:\n%s", since(start), strings.TrimSpace(install.Log()))

	// --ccm-version auto (the overlays' unpinned components, Fleet's
	// per-cluster image): the guard reads the tag from its pod's CCM
	// container, with the same permissions.
	for _, c := range []struct {
		image string
		code  int
		want  string
	}{
		{"registry.k8s.io/provider-aws/cloud-controller-manager:" + tag, 0, "the CCM (" + tag + ", migrate mode) may start"},
		{"registry.k8s.io/provider-aws/cloud-controller-manager:" + releases.Tag(bin.Release.Minor+2), 1,
			"CCM " + releases.Tag(bin.Release.Minor+2) + ": it is newer than the API server " + fmt.Sprintf("v1.%d.", bin.Release.Minor)},
	} {
		pods := cp.Client.CoreV1().Pods(metav1.NamespaceSystem)
		// Under the guard's service account (the admission plugin wants
		// the pod's to exist, and no controller makes kube-system's default).
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ccm-auto", Namespace: metav1.NamespaceSystem},
			Spec: corev1.PodSpec{ServiceAccountName: "ccm-guard", AutomountServiceAccountToken: new(bool),
				Containers: []corev1.Container{{Name: "aws-cloud-controller-manager", Image: c.image}}}}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, stderr, err := testtools.Run(t, append(os.Environ(), "POD_NAME=ccm-auto", "POD_NAMESPACE=kube-system"), testtools.Renderer(t),
			"guard", "--mode=migrate", "--ccm-version=auto", "--kubeconfig="+kubeconfig, "--once")
		if code := testtools.ExitCode(err); code != c.code || !strings.Contains(string(stderr), c.want) {
			t.Errorf("guard --ccm-version=auto, its pod running %s: exit %d, stderr %q; want %d and %q", c.image, code, stderr, c.code, c.want)
		}
		if err := pods.Delete(ctx, "ccm-auto", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
		harness.WaitFor(t, 30*time.Second, "the pod ccm-auto to go", func() bool {
			_, err := pods.Get(ctx, "ccm-auto", metav1.GetOptions{})
			return err != nil
		})
	}
}
