package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	ccmrenderer "github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// TestDistributions: on a healthy cluster of each distribution,
// template --distro=detect reads the nodes and renders for the right one,
// and check of those manifests (not installed yet) finds nothing wrong.
func TestDistributions(t *testing.T) {
	for _, d := range []string{"rke", "rke2", "k3s", "kubeadm"} {
		t.Run(d, func(t *testing.T) {
			state(t, d)
			manifests := template(t, "--distro=detect")
			r := check(t, manifests, "-f", "-")
			if r.code != 0 {
				t.Errorf("exit %d, want 0\n%s%s", r.code, r.out, r.errOut)
			}
			if !strings.Contains(r.out, "rendered for "+d) && !(d == "k3s" && strings.Contains(r.out, "rendered for rke2/k3s")) {
				t.Errorf("--distro=detect did not render for %s:\n%s", d, r.out)
			}
			golden(t, d, "check-manifests.txt", r.out)
		})
	}
}

// TestFailures: each failure state is found, named, and given its fix;
// check exits 1.
func TestFailures(t *testing.T) {
	install := template(t, "--distro=rke2")
	cases := []struct {
		dir  string
		want []string // in the output, beside the golden file
	}{
		{"unlabelled-control-plane", []string{"✗ placement     ip-10-0-1-12.us-west-2.compute.internal: control-plane node without a control-plane label",
			"kubectl label node ip-10-0-1-12.us-west-2.compute.internal node-role.kubernetes.io/control-plane=true"}},
		{"untolerated-taint", []string{"taint dedicated=infra:NoSchedule is not tolerated", "kubectl taint node ip-10-0-1-12.us-west-2.compute.internal dedicated:NoSchedule-"}},
		{"hostname-override", []string{"✗ node          2 nodes: rke2-agent-1 and rke2-server-1:", "not an EC2 private DNS name",
			"→ RKE2: name each node its EC2 private DNS name (rke2-agent-1 → ip-10-0-2-21.us-west-2.compute.internal and rke2-server-1 → ip-10-0-1-11.us-west-2.compute.internal)"}},
		{"missing-provider-id", []string{"✗ node          ip-10-0-2-21.us-west-2.compute.internal: no providerID and no node.cloudprovider.kubernetes.io/uninitialized taint", "kubelet-arg cloud-provider=external"}},
		{"wrong-lease-holder", []string{"✗ lease         Lease kube-system/cloud-provider-extraction-migration: held by ip-10-0-1-11_5b0e7a3c-9d1f-4c2e-8a77-2f1b6d0c9e41"}},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			state(t, c.dir)
			r := check(t, install, "-f", "-")
			if r.code != 1 || r.errOut != "" {
				t.Errorf("exit %d, want 1; stderr %q", r.code, r.errOut)
			}
			says(t, r.out, c.want...)
			golden(t, c.dir, "check.txt", r.out)
		})
	}
}

// TestMigrationRBAC: in migrate mode check asks whether the in-tree
// controller manager may use the migration lease. Kubernetes 1.37's
// bootstrap Role grants it every lease in kube-system; with the 1.26 rules
// restored it may not, until a Role and RoleBinding grant it.
func TestMigrationRBAC(t *testing.T) {
	ctx := context.Background()
	state(t, "rke2")
	// The test cluster (1.37) has no in-tree provider to migrate from: the
	// renderer renders migrate mode for it only when told to.
	migrate := template(t, "--distro=rke2", "--mode=migrate", "--allow-version-skew")
	// check asks the authorizer, which serves RBAC from informer caches:
	// before each check the test waits until it answers as the state
	// under test says.
	kcmLease := func(allowed bool, verbs ...string) []harness.AccessExpectation {
		var out []harness.AccessExpectation
		for _, v := range verbs {
			e := harness.AccessExpectation{User: "system:kube-controller-manager", Groups: []string{"system:authenticated"},
				Verb: v, Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system", Name: ccmrenderer.DefaultLeaderName, Allowed: allowed}
			if v == "create" {
				e.Name = "" // a create request carries no name for RBAC
			}
			out = append(out, e)
		}
		return out
	}
	harness.WaitAccess(t, cp.Client, 30*time.Second, kcmLease(true, "get", "update", "create"))
	r := check(t, migrate, "-f", "-")
	if strings.Contains(r.out, "User system:kube-controller-manager: may not") {
		t.Errorf("on 1.37 the controller manager may not use the lease:\n%s", r.out)
	}
	// The 1.26 rules: the kube-system Role grants no leases.
	roles := cp.Client.RbacV1().Roles("kube-system")
	role, err := roles.Get(ctx, "system::leader-locking-kube-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	saved := role.Rules
	var kept []rbacv1.PolicyRule
	for _, rule := range role.Rules {
		if !contains(rule.Resources, "leases") {
			kept = append(kept, rule)
		}
	}
	role.Rules = kept
	if _, err := roles.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		role, err := roles.Get(context.Background(), role.Name, metav1.GetOptions{})
		if err == nil {
			role.Rules = saved
			_, err = roles.Update(context.Background(), role, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Error(err)
			return
		}
		// The tests after this one check with the bootstrap Role in the
		// authorizer's view again.
		harness.WaitAccess(t, cp.Client, 30*time.Second, kcmLease(true, "get", "update", "create"))
	})
	// The 1.26 rules in the authorizer's view: create through the
	// ClusterRole, no get or update.
	harness.WaitAccess(t, cp.Client, 30*time.Second, append(kcmLease(true, "create"), kcmLease(false, "get", "update")...))
	// Without the renderer's grant in the manifests: an error.
	var plain, grant []string
	for _, doc := range strings.Split(string(migrate), "\n---") {
		if strings.Contains(doc, "aws-ccm-renderer.io/generated: leader-migration-rbac") {
			grant = append(grant, doc)
		} else {
			plain = append(plain, doc)
		}
	}
	if len(grant) != 2 {
		t.Fatalf("the migrate output has %d documents annotated leader-migration-rbac, want the Role and RoleBinding", len(grant))
	}
	r = check(t, []byte(strings.Join(plain, "\n---")), "-f", "-")
	want := "✗ rbac          User system:kube-controller-manager: may not get and update leases.coordination.k8s.io cloud-provider-extraction-migration in namespace kube-system"
	if r.code != 1 || !strings.Contains(r.out, want) {
		t.Errorf("with the 1.26 rules: exit %d, want 1 and %q\n%s", r.code, want, r.out)
	}
	golden(t, "migration-rbac", "check.txt", r.out)
	// With it in the manifests, not yet installed: a warning that says so.
	r = check(t, migrate, "-f", "-")
	if want := "! rbac          User system:kube-controller-manager: may not get and update"; r.code != 0 || !strings.Contains(r.out, want) ||
		!strings.Contains(r.out, "RoleBinding kube-system/aws-cloud-controller-manager-leader-migration grants it") {
		t.Errorf("with the grant in the manifests: exit %d, want 0 and %q\n%s", r.code, want, r.out)
	}

	// The grant the renderer makes in migrate mode, applied.
	for _, doc := range grant {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		gvr := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: strings.ToLower(u.GetKind()) + "s"}
		res := dynamic.NewForConfigOrDie(cp.Config).Resource(gvr).Namespace(u.GetNamespace())
		if _, err := res.Create(ctx, &u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer func() { ignoreNotFound(t, res.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{})) }()
	}
	harness.WaitAccess(t, cp.Client, 30*time.Second, kcmLease(true, "get", "update", "create"))
	r = check(t, migrate, "-f", "-")
	if want := "✓ rbac          User system:kube-controller-manager: allowed all 3 requests it needs"; !strings.Contains(r.out, want) {
		t.Errorf("with the grant: want %q\n%s", want, r.out)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestWorkloadChoice: manifests without a CCM are an input error; two CCM
// workloads are a usage error that names both, and --target picks one.
func TestWorkloadChoice(t *testing.T) {
	state(t, "rke2")
	r := check(t, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), "-f", "-")
	if r.code != 1 || r.out != "" || !strings.Contains(r.errOut, "no AWS CCM DaemonSet or Deployment in the manifests") || strings.Count(r.errOut, "\n") != 1 {
		t.Errorf("no CCM: exit %d, stdout %q, stderr %q", r.code, r.out, r.errOut)
	}
	two := append(template(t, "--distro=rke2"), []byte("---\n"+strings.ReplaceAll(string(template(t, "--distro=rke2")), "name: aws-cloud-controller-manager\n", "name: second-ccm\n"))...)
	r = check(t, two, "-f", "-")
	if r.code != 2 || r.out != "" || !strings.Contains(r.errOut, "DaemonSet/kube-system/aws-cloud-controller-manager, DaemonSet/kube-system/second-ccm; pick one with --target") {
		t.Errorf("two CCMs: exit %d, stdout %q, stderr %q", r.code, r.out, r.errOut)
	}
	r = check(t, two, "-f", "-", "--target", "DaemonSet/kube-system/second-ccm")
	if r.code != 0 || !strings.Contains(r.out, "DaemonSet kube-system/second-ccm: from the manifests") {
		t.Errorf("--target: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	// Nothing in the cluster.
	r = check(t, nil)
	if r.code != 1 || !strings.Contains(r.out, "✗ workload      no AWS CCM DaemonSet or Deployment in the cluster") ||
		!strings.Contains(r.out, "aws-ccm-renderer install --distro=rke2") {
		t.Errorf("empty cluster: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	// A file, and a file that is not there.
	file := filepath.Join(t.TempDir(), "ccm.yaml")
	if err := os.WriteFile(file, template(t, "--distro=rke2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r = check(t, nil, "-f", file); r.code != 0 {
		t.Errorf("-f FILE: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	if r = check(t, nil, "-f", file+".missing"); r.code != 2 || r.out != "" {
		t.Errorf("-f of a missing file: exit %d, %q", r.code, r.errOut)
	}
	if r = check(t, nil, "--kube-context", "nope"); r.code != 2 || !strings.Contains(r.errOut, `--kube-context "nope" is not a context of the kubeconfig`) {
		t.Errorf("unknown context: exit %d, %q", r.code, r.errOut)
	}
}

// podsRunning does what the scheduler and the kubelets would: binds each of
// the DaemonSet's pods to its node and reports it running and ready.
func podsRunning(t *testing.T, ns string) int {
	t.Helper()
	ctx := context.Background()
	pods, err := cp.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=aws-cloud-controller-manager"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		node := pinnedNode(p)
		if p.Spec.NodeName == "" {
			b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
			if err := cp.Client.CoreV1().Pods(ns).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := cp.Client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		now := metav1.Now()
		got.Status.Phase = corev1.PodRunning
		got.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
		got.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: got.Spec.Containers[0].Name, Ready: true, Image: got.Spec.Containers[0].Image,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
		if _, err := cp.Client.CoreV1().Pods(ns).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return len(pods.Items)
}

func pinnedNode(p corev1.Pod) string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// TestDetect: --distro=detect refuses a cluster whose nodes disagree, and
// a cluster with no sign of its distribution.
func TestDetect(t *testing.T) {
	state(t, "rke")
	state(t, "kubeadm")
	r := renderer(t, nil, []string{"KUBECONFIG=" + cp.Kubeconfig}, "template", "--distro=detect", "--repo", "http://127.0.0.1:1")
	if r.code != 2 || r.out != "" || !strings.Contains(r.errOut, "--distro=detect: the nodes disagree (kubeadm: annotation kubeadm.alpha.kubernetes.io/cri-socket on 3 of 7 nodes; rke: annotation rke.cattle.io/external-ip on 4 of 7 nodes); pass --distro") {
		t.Errorf("mixed: exit %d, %q", r.code, r.errOut)
	}
}

// TestHandOver: the lean aws-ccm-renderer hands check over to its Helm
// build, for its help and its completion as for running it.
func TestHandOver(t *testing.T) {
	r := renderer(t, nil, nil, "check", "--help")
	if r.code != 0 || !strings.Contains(r.out, "check reads a cluster and tells whether the AWS cloud controller manager will") || !strings.Contains(r.out, "--all-contexts") {
		t.Errorf("check --help: exit %d\n%s", r.code, r.out)
	}
	r = renderer(t, nil, nil, "help", "check")
	if !strings.Contains(r.out, "--kube-context stringArray") {
		t.Errorf("help check:\n%s", r.out)
	}
	r = renderer(t, nil, nil, "__complete", "check", "--output", "")
	if !strings.HasPrefix(r.out, "table\njson\n:4") {
		t.Errorf("completion: %q", r.out)
	}
}
