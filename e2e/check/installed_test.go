package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

const release = "aws-ccm"

// TestInstalled installs the CCM with aws-ccm-renderer install (the Helm
// SDK) on the healthy RKE2 cluster, lets the DaemonSet controller create
// its pods and plays scheduler and kubelet for them, and checks it three
// ways: what runs in the cluster, the release, and the rendered manifests.
// Then it breaks the CCM's RBAC, and checks several contexts at once.
func TestInstalled(t *testing.T) {
	ctx := context.Background()
	state(t, "rke2")
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	flags := []string{"--distro=rke2", "--set", "image.tag=" + clusterCCMTag}
	r := renderer(t, nil, nil, append([]string{"install", release, chart, "--namespace", "kube-system", "--kubeconfig", cp.Kubeconfig}, flags...)...)
	if r.code != 0 {
		t.Fatalf("install: exit %d\n%s", r.code, r.errOut)
	}
	t.Cleanup(func() {
		testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "uninstall", release, "--namespace", "kube-system", "--kubeconfig", cp.Kubeconfig)
		// No kubelet confirms the deletion of a bound pod.
		pods, _ := cp.Client.CoreV1().Pods("kube-system").List(context.Background(), metav1.ListOptions{LabelSelector: "k8s-app=aws-cloud-controller-manager"})
		for _, p := range pods.Items {
			_ = cp.Client.CoreV1().Pods("kube-system").Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}
	})
	waitPods(t, 3)
	waitReleaseRBAC(t, release)
	// The leader, as one of the CCM's host-network pods names itself: its
	// node's host name and a UUID.
	createLease(t, coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "cloud-controller-manager", Namespace: "kube-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("ip-10-0-1-12_0c6f2d8e-1a4b-4f7e-9b3d-6e5a4c3b2a10")}})
	if n := podsRunning(t, "kube-system"); n != 3 {
		t.Fatalf("%d CCM pods, want one per control-plane node (3)", n)
	}

	before := requests(t)
	r = check(t, nil)
	if r.code != 0 || r.errOut != "" {
		t.Errorf("the cluster: exit %d, want 0\n%s%s", r.code, r.out, r.errOut)
	}
	// One list per kind, no request per node: what the API server counted
	// (the controller manager's watches count nothing here).
	made := requests(t)
	var counts []string
	for k, n := range made {
		if d := n - before[k]; d > 0 {
			counts = append(counts, fmt.Sprintf("%s %.0f", k, d))
		}
	}
	sort.Strings(counts)
	t.Logf("requests of one check of the cluster: %s", strings.Join(counts, ", "))
	// Two lists of pods (the CCM's, and the control plane's mirror pods in
	// kube-system) and two of events (Services' and Nodes' warnings); the
	// pods of every namespace only when a node's hostname label is not
	// its name, which it is here.
	for k, want := range map[string]float64{"LIST nodes": 1, "LIST daemonsets": 1, "LIST deployments": 1, "LIST pods": 2, "LIST leases": 1,
		"LIST persistentvolumes": 1, "LIST events": 2} {
		if d := made[k] - before[k]; d != want {
			t.Errorf("%s: %.0f requests, want %.0f", k, d, want)
		}
	}
	if d := made["GET nodes"] - before["GET nodes"]; d != 0 {
		t.Errorf("GET nodes: %.0f requests, want none", d)
	}
	if strings.Count(r.out, "running and ready") != 3 {
		t.Errorf("want 3 CCM pods running and ready:\n%s", r.out)
	}
	golden(t, "rke2", "check.txt", r.out)

	r = check(t, nil, "--release", release, "-o", "json")
	if r.code != 0 || r.errOut != "" {
		t.Errorf("--release -o json: exit %d\n%s", r.code, r.errOut)
	}
	var res struct {
		Kind     string `json:"kind"`
		Clusters []struct {
			Workload struct {
				Source, Release, Chart string
				Installed              bool
			} `json:"workload"`
			Summary struct{ ControlPlaneNodes, CCMOnControlPlane, Errors int } `json:"summary"`
		} `json:"clusters"`
	}
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || len(res.Clusters) != 1 {
		t.Fatalf("-o json: %v\n%s", err, r.out)
	}
	c := res.Clusters[0]
	if res.Kind != "CheckResult" || c.Workload.Source != "release" || c.Workload.Release != "aws-ccm revision 1" ||
		c.Workload.Chart != "aws-cloud-controller-manager-0.0.11" || !c.Workload.Installed || c.Summary.ControlPlaneNodes != 3 || c.Summary.CCMOnControlPlane != 3 || c.Summary.Errors != 0 {
		t.Errorf("-o json: %+v", res)
	}
	golden(t, "rke2", "check.json", r.out)

	manifests := template(t, flags...)
	if r = check(t, manifests, "-f", "-"); r.code != 0 || !strings.Contains(r.out, "from the manifests, installed") {
		t.Errorf("-f of the same manifests: exit %d\n%s%s", r.code, r.out, r.errOut)
	}

	t.Run("fleet", func(t *testing.T) { fleet(t) })

	t.Run("missing-rbac", func(t *testing.T) {
		// What a plain helm upgrade without the renderer leaves: no get on
		// serviceaccounts; and a ClusterRole edited by hand: no events.
		roles := cp.Client.RbacV1().ClusterRoles()
		role, err := roles.Get(ctx, "system:cloud-controller-manager", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		saved := role.DeepCopy().Rules
		var rules []rbacv1.PolicyRule
		for _, rule := range role.Rules {
			switch {
			case contains(rule.Resources, "events"):
				continue
			case contains(rule.Resources, "serviceaccounts"):
				rule.Verbs = []string{"create"}
			}
			rules = append(rules, rule)
		}
		role.Rules = rules
		if _, err := roles.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		defer func() {
			role, err := roles.Get(context.Background(), "system:cloud-controller-manager", metav1.GetOptions{})
			if err == nil {
				role.Rules = saved
				_, err = roles.Update(context.Background(), role, metav1.UpdateOptions{})
			}
			if err != nil {
				t.Error(err)
			}
		}()
		// The edited ClusterRole in the authorizer's view: what it still
		// grants, and neither get on serviceaccounts nor events.
		user, groups := harness.ServiceAccountUser("kube-system", ccmAccount)
		want := harness.RuleGrants(user, groups, "", rules)
		for _, e := range []harness.AccessExpectation{
			{Verb: "get", Resource: "serviceaccounts", Namespace: "kube-system"},
			{Verb: "create", Resource: "events"}, {Verb: "update", Resource: "events"}, {Verb: "patch", Resource: "events"},
		} {
			e.User, e.Groups = user, groups
			want = append(want, e)
		}
		harness.WaitAccess(t, cp.Client, 30*time.Second, want)
		r := check(t, nil)
		says(t, r.out,
			"✗ rbac          ServiceAccount kube-system/cloud-controller-manager: may not get serviceaccounts in namespace kube-system",
			"✗ rbac          ServiceAccount kube-system/cloud-controller-manager: may not create, update and patch events cluster-wide",
		)
		if r.code != 1 {
			t.Errorf("exit %d, want 1", r.code)
		}
		golden(t, "missing-rbac", "check.txt", r.out)
	})
}

// The upstream chart's service account and DaemonSet, in kube-system.
const (
	ccmAccount   = "cloud-controller-manager"
	ccmDaemonSet = "aws-cloud-controller-manager"
)

// waitReleaseRBAC waits until the authorizer answers for the CCM's service
// account as the RBAC objects of an installed release grant (Helm's record
// of them: helm get manifest); check asks the authorizer, which serves RBAC
// from informer caches that take each object a moment after Helm wrote it.
func waitReleaseRBAC(t *testing.T, release string) {
	t.Helper()
	manifest := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "get", "manifest", release, "--namespace", "kube-system", "--kubeconfig", cp.Kubeconfig)
	objs, err := harness.Decode(manifest)
	if err != nil {
		t.Fatal(err)
	}
	user, groups := harness.ServiceAccountUser("kube-system", ccmAccount)
	want, err := harness.Grants(objs, user, groups)
	if err != nil {
		t.Fatal(err)
	}
	harness.WaitAccess(t, cp.Client, 30*time.Second, want)
}

// waitPods waits until the DaemonSet controller has created n CCM pods.
func waitPods(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		pods, err := cp.Client.CoreV1().Pods("kube-system").List(context.Background(), metav1.ListOptions{LabelSelector: "k8s-app=aws-cloud-controller-manager"})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d CCM pods after 60s, want %d", len(pods.Items), n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// fleet checks four contexts at once: the admin, a service account with
// the permissions docs/check.md lists, one with none, and a cluster that
// is not there.
func fleet(t *testing.T) {
	ctx := context.Background()
	ns := "check-fleet"
	if _, err := cp.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The ClusterRole docs/check.md shows, from the file it is copied from.
	role := readClusterRole(t)
	if _, err := cp.Client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ignoreNotFound(t, cp.Client.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{}))
	}()
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "reader", Namespace: ns}}}
	if _, err := cp.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ignoreNotFound(t, cp.Client.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{}))
	}()
	// The ClusterRole's grants to the reader in the authorizer's view, and
	// not yet list on secrets, which a Role grants further down.
	readerUser, readerGroups := harness.ServiceAccountUser(ns, "reader")
	secretsAccess := harness.AccessExpectation{User: readerUser, Groups: readerGroups, Verb: "list", Resource: "secrets", Namespace: "kube-system"}
	harness.WaitAccess(t, cp.Client, 30*time.Second, append(harness.RuleGrants(readerUser, readerGroups, "", role.Rules), secretsAccess))

	admin, err := clientcmd.LoadFromFile(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = admin.Clusters["e2e"]
	cfg.Clusters["gone"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", InsecureSkipTLSVerify: true}
	cfg.AuthInfos["admin"] = admin.AuthInfos[admin.Contexts[admin.CurrentContext].AuthInfo]
	cfg.AuthInfos["reader"] = &clientcmdapi.AuthInfo{Token: token(t, ns, "reader")}
	cfg.AuthInfos["nobody"] = &clientcmdapi.AuthInfo{Token: token(t, ns, "nobody")}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "admin"}
	cfg.Contexts["least-privilege"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "reader"}
	cfg.Contexts["no-permissions"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "nobody"}
	cfg.Contexts["unreachable"] = &clientcmdapi.Context{Cluster: "gone", AuthInfo: "admin"}
	cfg.CurrentContext = "e2e"
	kubeconfig := filepath.Join(t.TempDir(), "fleet.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) result {
		r := renderer(t, nil, []string{"KUBECONFIG=" + kubeconfig}, append([]string{"check"}, args...)...)
		t.Logf("check %s: exit %d in %s", strings.Join(args, " "), r.code, r.took.Round(time.Millisecond))
		return r
	}

	r := run("--all-contexts")
	if r.code != 3 {
		t.Errorf("--all-contexts: exit %d, want 3 (two clusters cannot be read)", r.code)
	}
	for _, want := range []string{
		`aws-ccm-renderer: context no-permissions: forbidden: check needs "list" on nodes at cluster scope (kubectl auth can-i list nodes)`,
		"aws-ccm-renderer: context unreachable: cannot reach the cluster:",
	} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("--all-contexts: stderr lacks %q:\n%s", want, r.errOut)
		}
	}
	if n := strings.Count(r.errOut, "\n"); n != 2 {
		t.Errorf("--all-contexts: %d lines on stderr, want 2", n)
	}
	golden(t, "fleet", "check.txt", r.out)

	// The least privilege docs/check.md lists is enough for every way of
	// checking, and --release needs list on secrets in the release's
	// namespace besides.
	// It sees what the admin sees: the same report but for the heading.
	if r := run("--kube-context", "least-privilege", "--kube-context", "e2e"); r.code != 0 || !sameReports(r.out) {
		t.Errorf("least privilege: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	r = run("--kube-context", "least-privilege", "--release", release, "--namespace", "kube-system")
	if want := `forbidden: check needs "list" on secrets in namespace kube-system`; r.code != 3 || r.out != "" || !strings.Contains(r.errOut, want) {
		t.Errorf("--release without list on secrets: exit %d, want 3 and %q\n%s", r.code, want, r.errOut)
	}
	secrets := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "check-releases", Namespace: "kube-system"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}}}
	if _, err := cp.Client.RbacV1().Roles("kube-system").Create(ctx, secrets, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ignoreNotFound(t, cp.Client.RbacV1().Roles("kube-system").Delete(context.Background(), secrets.Name, metav1.DeleteOptions{}))
	}()
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "check-releases", Namespace: "kube-system"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: secrets.Name},
		Subjects: binding.Subjects}
	if _, err := cp.Client.RbacV1().RoleBindings("kube-system").Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ignoreNotFound(t, cp.Client.RbacV1().RoleBindings("kube-system").Delete(context.Background(), rb.Name, metav1.DeleteOptions{}))
	}()
	secretsAccess.Allowed = true
	harness.WaitAccess(t, cp.Client, 30*time.Second, []harness.AccessExpectation{secretsAccess})
	if r := run("--kube-context", "least-privilege", "--release", release, "--namespace", "kube-system"); r.code != 0 {
		t.Errorf("--release with list on secrets: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	// HELM_KUBECONTEXT picks the context when no flag does, as for Helm.
	r = renderer(t, nil, []string{"KUBECONFIG=" + kubeconfig, "HELM_KUBECONTEXT=no-permissions"}, "check")
	if r.code != 3 || r.out != "" || !strings.Contains(r.errOut, "context no-permissions: forbidden") {
		t.Errorf("HELM_KUBECONTEXT: exit %d, %q", r.code, r.errOut)
	}
}

// token returns a token of a service account it creates.
func token(t *testing.T, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := cp.Client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cp.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// readClusterRole reads testdata/check/clusterrole.yaml, and checks that
// docs/check.md shows the same.
func readClusterRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(testdata("clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(testtools.Root(), "docs", "check.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, data) {
		t.Error("docs/check.md does not show testdata/check/clusterrole.yaml as it is")
	}
	var role rbacv1.ClusterRole
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&role); err != nil {
		t.Fatal(err)
	}
	return &role
}

// requests reads the API server's request counters, by verb and resource.
func requests(t *testing.T) map[string]float64 {
	t.Helper()
	body, err := cp.Client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	label := regexp.MustCompile(`(\w+)="([^"]*)"`)
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		labels := map[string]string{}
		for _, m := range label.FindAllStringSubmatch(line[:end], -1) {
			labels[m[1]] = m[2]
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			t.Fatal(err)
		}
		key := labels["verb"] + " " + labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		out[key] += n
	}
	return out
}

// TestChartDefaults: the failure operators meet most, a CCM that never
// lands. The upstream chart at its defaults, installed with the real Helm
// CLI on a new RKE2 cluster whose nodes all wait uninitialized: its node
// selector matches no RKE2 node, so no pod runs, nothing leads, and every
// node stays uninitialised.
func TestChartDefaults(t *testing.T) {
	state(t, "never-lands")
	helm := func(args ...string) {
		testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), append(args, "--namespace", "kube-system", "--kubeconfig", cp.Kubeconfig)...)
	}
	helm("install", release, testtools.UpstreamChart(t, testtools.LatestChartVersion))
	t.Cleanup(func() { helm("uninstall", release) })
	waitReleaseRBAC(t, release)
	// No CCM pod is the DaemonSet controller's answer once it has acted on
	// the DaemonSet, not before.
	harness.WaitForState(t, 60*time.Second, "the DaemonSet controller to act on DaemonSet kube-system/"+ccmDaemonSet, func() (bool, string) {
		ds, err := cp.Client.AppsV1().DaemonSets("kube-system").Get(context.Background(), ccmDaemonSet, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return ds.Status.ObservedGeneration == ds.Generation, fmt.Sprintf("observed generation %d of %d", ds.Status.ObservedGeneration, ds.Generation)
	})
	r := check(t, nil)
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
	says(t, r.out,
		`ip-10-0-1-11.us-west-2.compute.internal: control plane (label node-role.kubernetes.io/control-plane="true"), but no CCM pod: nodeSelector node-role.kubernetes.io/control-plane="": the node has "true"`,
		"4 nodes: ip-10-0-1-11.us-west-2.compute.internal, ip-10-0-1-12.us-west-2.compute.internal, ip-10-0-1-13.us-west-2.compute.internal and 1 more: uninitialised: tainted node.cloudprovider.kubernetes.io/uninitialized, no providerID",
		"Lease kube-system/cloud-controller-manager: no CCM instance has taken its leader-election lease",
		"CCM v1.35.0 is 2 minors older than the API server v1.37.2",
		"not rendered by aws-ccm-renderer",
	)
	golden(t, "never-lands", "check.txt", r.out)
}

// sameReports tells whether the two reports of a check of two contexts
// say the same (but for the heading, the time taken and the summary rows'
// context names).
func sameReports(out string) bool {
	reports := strings.SplitN(out, "\n\n", 3)
	if len(reports) < 2 {
		return false
	}
	body := func(r string) string {
		_, rest, _ := strings.Cut(normalise(r), "\n")
		return rest
	}
	return body(reports[0]) == body(reports[1]) && strings.Contains(reports[0], "(checked in")
}
