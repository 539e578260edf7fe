package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// rendererEnv runs aws-ccm-renderer with extra environment variables and
// no --kubeconfig of its own.
func rendererEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	out, errOut, err := testtools.Run(t, append(testtools.HelmEnv(t), env...), testtools.Renderer(t), args...)
	return string(out), string(errOut), testtools.ExitCode(err)
}

// wrapValues are the chart values that give a release its own names.
func wrapValues(release, ns string) string {
	return "namespace=" + ns + ",nameOverride=" + release + ",clusterRoleName=" + release + ",serviceAccountName=" + release + "-sa"
}

type jsonEntry struct {
	Kind, Name, Change string
	Fields             []struct{ Path, Op string }
}

// TestWrapperLiveDrift: after a kubectl-edit-like change of the
// DaemonSet (another field manager changes an arg, adds a nodeSelector key
// and an annotation) and a deleted ServiceAccount, diff --deployed still
// shows no change between the release and the upgrade but says which
// objects differ in the cluster and how; diff --live shows what the
// upgrade does to the cluster's objects: it puts the arg back and
// recreates the ServiceAccount, and keeps the added key and annotation,
// because Helm's three-way merge leaves fields it never set alone. The real
// upgrade then does exactly that: diff --live shows nothing afterwards,
// and the kept fields are still drift.
func TestWrapperLiveDrift(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	release := "wrap-drift"
	ns := namespace(t, release)
	flags := []string{release, chart, "--namespace", ns, "--set", wrapValues(release, ns), "--distro=rke2"}
	if _, errOut, err := rendererCmd(t, append([]string{"install"}, flags...)...); err != nil {
		t.Fatalf("install: %v\n%s", err, errOut)
	}
	diff := func(extra ...string) (string, string, int) {
		out, errOut, err := rendererCmd(t, append(append([]string{"diff"}, flags...), extra...)...)
		return out, errOut, testtools.ExitCode(err)
	}
	for _, mode := range []string{"--deployed", "--live"} {
		if out, errOut, code := diff(mode, "--detailed-exitcode"); code != 0 || out != "" {
			t.Errorf("diff %s right after the install: exit %d, %q, %s", mode, code, out, errOut)
		}
	}

	// kubectl edit, as another field manager would.
	ctx := context.Background()
	ds, err := cp.Client.AppsV1().DaemonSets(ns).Get(ctx, release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &ds.Spec.Template.Spec.Containers[0]
	c.Args[slices.Index(c.Args, "--v=2")] = "--v=5"
	ds.Spec.Template.Spec.NodeSelector["pool.example.com/edge"] = "true"
	ds.Annotations["edited-by"] = "hand"
	if _, err := cp.Client.AppsV1().DaemonSets(ns).Update(ctx, ds, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if err := cp.Client.CoreV1().ServiceAccounts(ns).Delete(ctx, release+"-sa", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := diff("--deployed", "--detailed-exitcode")
	for _, want := range []string{
		"wrap-drift, wrap-drift-sa, ServiceAccount (v1) differs in the cluster from the release:\n@@ (deleted from the cluster) @@\n- apiVersion: v1\n",
		"\nwrap-drift, wrap-drift, DaemonSet (apps) differs in the cluster from the release:\n",
		"\n+     edited-by: hand\n",
		"\n-             - --v=2\n+             - --v=5\n",
		"\n+         pool.example.com/edge: \"true\"\n",
		"\nSummary: 0 changed, 0 added, 0 removed, 5 unchanged; 2 differ in the cluster from the release (release wrap-drift revision 1 → upgrade)\n",
	} {
		if code != exitChanges || !strings.Contains(out, want) {
			t.Errorf("diff --deployed after the edit: exit %d, %s; lacks %q:\n%s", code, errOut, want, out)
		}
	}
	js, _, _ := diff("--deployed", "-o", "json")
	var entries []jsonEntry
	if err := json.Unmarshal([]byte(js), &entries); err != nil || len(entries) != 2 || entries[1].Change != "drifted" || entries[1].Kind != "DaemonSet" {
		t.Errorf("-o json: %v %+v\n%s", err, entries, js)
	}

	out, errOut, code = diff("--live", "--detailed-exitcode")
	for _, want := range []string{
		"wrap-drift, wrap-drift, DaemonSet (apps) has changed:\n",
		"\n-             - --v=5\n+             - --v=2\n",
		"wrap-drift, wrap-drift-sa, ServiceAccount (v1) has been added:\n",
		"; 2 differ in the cluster from the release (the cluster's objects → after upgrading wrap-drift (revision 1))\n",
	} {
		if code != exitChanges || !strings.Contains(out, want) {
			t.Errorf("diff --live: exit %d, %s; lacks %q:\n%s", code, errOut, want, out)
		}
	}
	// The API server's warnings, if any, are this program's lines, not
	// client-go's log.
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if l != "" && !strings.HasPrefix(l, "aws-ccm-renderer: ") {
			t.Errorf("diff --live: a line on stderr not the program's: %q", l)
		}
	}
	for _, kept := range []string{"pool.example.com/edge", "edited-by", "differs in the cluster"} {
		if strings.Contains(out, kept) {
			t.Errorf("diff --live shows %q, which the upgrade leaves alone:\n%s", kept, out)
		}
	}

	if _, errOut, err := rendererCmd(t, append([]string{"upgrade"}, flags...)...); err != nil {
		t.Fatalf("upgrade: %v\n%s", err, errOut)
	}
	ds, err = cp.Client.AppsV1().DaemonSets(ns).Get(ctx, release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if args := ds.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--v=2") || ds.Spec.Template.Spec.NodeSelector["pool.example.com/edge"] != "true" || ds.Annotations["edited-by"] != "hand" {
		t.Errorf("after the upgrade: args %q, nodeSelector %v, annotations %v", args, ds.Spec.Template.Spec.NodeSelector, ds.Annotations)
	}
	if _, err := cp.Client.CoreV1().ServiceAccounts(ns).Get(ctx, release+"-sa", metav1.GetOptions{}); err != nil {
		t.Errorf("the upgrade did not recreate the ServiceAccount: %v", err)
	}
	if out, errOut, code := diff("--live", "--detailed-exitcode"); code != 0 || out != "" {
		// Nothing left for the upgrade to do.
		t.Errorf("diff --live after the upgrade: exit %d, %s\n%s", code, errOut, out)
	}
	out, _, code = diff("--deployed", "--detailed-exitcode")
	if code != exitChanges || !strings.Contains(out, "+     edited-by: hand\n") || strings.Contains(out, "--v=5") || strings.Contains(out, "ServiceAccount") {
		t.Errorf("diff --deployed after the upgrade: exit %d\n%s", code, out)
	}
}

// TestWrapperDriftReadOnly: a user who may read everything but change
// nothing gets the upgrade's diff, and a warning that the cluster's
// objects could not be compared (that needs a dry-run update).
func TestWrapperDriftReadOnly(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	release := "wrap-readonly"
	ns := namespace(t, release)
	// Every renderer option given and a CCM of the cluster's minor: the
	// warning is the only line on stderr.
	flags := []string{release, chart, "--namespace", ns, "--set", wrapValues(release, ns) + ",image.tag=v" + clusterMinor(t) + ".0", "--distro=k3s", "--mode=install"}
	if _, errOut, err := rendererCmd(t, append([]string{"install"}, flags...)...); err != nil {
		t.Fatalf("install: %v\n%s", err, errOut)
	}
	ctx := context.Background()
	reader := "reader-" + release
	_, err := cp.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: reader},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cp.Client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: reader},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: reader},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: reader}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := cp.UserKubeconfig(reader)
	if err != nil {
		t.Fatal(err)
	}
	// The grant in the authorizer's view, which takes each object a moment
	// after it is written: the user reads the release (its Secrets) and
	// the DaemonSet, and changes nothing.
	as := func(verb, group, resource string, allowed bool) harness.AccessExpectation {
		return harness.AccessExpectation{User: reader, Groups: []string{"system:authenticated"}, Verb: verb, Group: group, Resource: resource,
			Namespace: ns, Allowed: allowed}
	}
	harness.WaitAccess(t, cp.Client, 30*time.Second, []harness.AccessExpectation{
		as("list", "", "secrets", true), as("get", "apps", "daemonsets", true),
		as("update", "apps", "daemonsets", false), as("patch", "apps", "daemonsets", false), as("create", "", "secrets", false),
	})
	out, errOut, code := rendererEnv(t, nil, append([]string{"diff"}, append(flags, "--kubeconfig", kubeconfig, "--set-arg=v=4", "--detailed-exitcode")...)...)
	// --kubeconfig chose the comparison, which diff says first.
	said, warning, _ := strings.Cut(errOut, "\n")
	if code != exitChanges || !strings.Contains(out, "DaemonSet (apps) has changed:") ||
		!strings.HasPrefix(said, "aws-ccm-renderer: comparing with release "+release+" in namespace "+ns+" in the cluster of --kubeconfig") ||
		!strings.HasPrefix(warning, "aws-ccm-renderer: warning: cannot tell whether the cluster's objects differ from the release: ") ||
		strings.Count(errOut, "\n") != 2 || !strings.Contains(errOut, "forbidden") {
		t.Errorf("read-only diff: exit %d, stderr %q\n%s", code, errOut, out)
	}
	// What the cluster refuses this user is the cluster's error (3), as
	// for diff, not one of the chart or values (1).
	out, errOut, code = rendererEnv(t, nil, append(append([]string{"upgrade"}, flags...), "--kubeconfig", kubeconfig)...)
	if code != 3 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "forbidden") {
		t.Errorf("read-only upgrade: exit %d, stderr %q\n%s", code, errOut, out)
	}
}

// TestWrapperHelmParity: install and upgrade as the Helm CLI does them:
// --dry-run=server changes nothing, --reuse-values / --reset-values /
// --reset-then-reuse-values, --history-max (10 by default,
// $HELM_MAX_HISTORY), $HELM_NAMESPACE, $HELM_KUBECONTEXT, --debug, and
// progress lines in CI while waiting.
func TestWrapperHelmParity(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	release := "wrap-parity"
	ns := namespace(t, release)
	set := wrapValues(release, ns)
	ctx := context.Background()
	image := func() string {
		t.Helper()
		ds, err := cp.Client.AppsV1().DaemonSets(ns).Get(ctx, release, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ds.Spec.Template.Spec.Containers[0].Image
	}
	revisions := func() int {
		t.Helper()
		return strings.Count(strings.TrimSpace(helm(t, "history", release, "--namespace", ns, "--max", "100")), "\n")
	}

	// A server-side dry run prints the manifests and creates nothing.
	out, errOut, err := rendererCmd(t, "install", release, chart, "--namespace", ns, "--set", set, "--distro=rke", "--dry-run=server")
	if err != nil || !strings.Contains(out, "kind: DaemonSet") || !strings.Contains(out, "node-role.kubernetes.io/controlplane: \"true\"") {
		t.Fatalf("install --dry-run=server: %v, %s\n%s", err, errOut, out)
	}
	if list := helm(t, "list", "--namespace", ns, "--all"); strings.Contains(list, release) {
		t.Errorf("--dry-run=server made a release:\n%s", list)
	}

	// $HELM_NAMESPACE is the release's namespace; --debug prints the
	// SDK's log.
	_, errOut, code := rendererEnv(t, []string{"HELM_NAMESPACE=" + ns}, "install", release, chart, "--kubeconfig", cp.Kubeconfig,
		"--set", set+",image.tag=v1.33.2", "--distro=rke", "--debug")
	if code != 0 || !strings.Contains(errOut, "aws-ccm-renderer: helm: ") {
		t.Fatalf("install with $HELM_NAMESPACE and --debug: exit %d\n%s", code, errOut)
	}
	if got := image(); !strings.HasSuffix(got, ":v1.33.2") {
		t.Errorf("image %s", got)
	}
	upgrade := func(extra ...string) {
		t.Helper()
		if _, errOut, err := rendererCmd(t, append([]string{"upgrade", release, chart, "--namespace", ns, "--distro=rke"}, extra...)...); err != nil {
			t.Fatalf("upgrade %v: %v\n%s", extra, err, errOut)
		}
	}
	upgrade("--reuse-values")
	if got := image(); !strings.HasSuffix(got, ":v1.33.2") {
		t.Errorf("--reuse-values: image %s", got)
	}
	upgrade("--reset-then-reuse-values")
	if got := image(); !strings.HasSuffix(got, ":v1.33.2") {
		t.Errorf("--reset-then-reuse-values: image %s", got)
	}
	upgrade("--reset-values", "--set", set)
	if got := image(); !strings.HasSuffix(got, ":v1.35.0") {
		t.Errorf("--reset-values: image %s", got)
	}
	// A server-side dry run of the upgrade: no new revision. (Migrate
	// mode takes a CCM of the cluster's minor, and on the test cluster,
	// 1.37, which has no in-tree provider, --allow-version-skew.)
	cluster := set + ",image.tag=v" + clusterMinor(t) + ".0"
	before := revisions()
	if out, errOut, err := rendererCmd(t, "upgrade", release, chart, "--namespace", ns, "--set", cluster, "--distro=rke", "--mode=migrate", "--allow-version-skew", "--dry-run=server"); err != nil || !strings.Contains(out, "--enable-leader-migration=true") {
		t.Errorf("upgrade --dry-run=server: %v, %s", err, errOut)
	}
	if revisions() != before {
		t.Errorf("upgrade --dry-run=server made a revision")
	}

	upgrade("--set", set, "--history-max", "2")
	if n := revisions(); n != 2 {
		t.Errorf("--history-max 2: %d revisions", n)
	}
	for range 10 {
		upgrade("--set", set)
	}
	if n := revisions(); n != 10 {
		t.Errorf("the default history: %d revisions, want 10", n)
	}
	_, errOut, code = rendererEnv(t, []string{"HELM_MAX_HISTORY=3"}, "upgrade", release, chart, "--kubeconfig", cp.Kubeconfig, "--namespace", ns, "--set", set, "--distro=rke")
	if n := revisions(); code != 0 || n != 3 {
		t.Errorf("$HELM_MAX_HISTORY=3: exit %d, %d revisions, %s", code, n, errOut)
	}

	// $HELM_KUBECONTEXT picks the context of a kubeconfig whose current
	// context cannot be reached.
	cfg, err := clientcmd.LoadFromFile(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var good string
	for name := range cfg.Contexts {
		good = name
	}
	broken := cfg.Contexts[good].DeepCopy()
	broken.Cluster = "nowhere"
	cfg.Clusters["nowhere"] = cfg.Clusters[cfg.Contexts[good].Cluster].DeepCopy()
	cfg.Clusters["nowhere"].Server = "https://127.0.0.1:1"
	cfg.Contexts["broken"], cfg.CurrentContext = broken, "broken"
	two := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, two); err != nil {
		t.Fatal(err)
	}
	diffArgs := []string{"diff", release, chart, "--namespace", ns, "--set", set, "--distro=rke", "--deployed", "--detailed-exitcode"}
	if out, errOut, code := rendererEnv(t, []string{"KUBECONFIG=" + two, "HELM_KUBECONTEXT=" + good}, diffArgs...); code != 0 {
		t.Errorf("$HELM_KUBECONTEXT=%s: exit %d, %s\n%s", good, code, errOut, out)
	}
	if _, errOut, code := rendererEnv(t, []string{"KUBECONFIG=" + two}, diffArgs...); code != 3 {
		t.Errorf("the broken current context: exit %d, %s", code, errOut)
	}
	if _, errOut, code := rendererEnv(t, []string{"KUBECONFIG=" + two}, append(diffArgs, "--kube-context", good)...); code != 0 {
		t.Errorf("--kube-context %s: exit %d, %s", good, code, errOut)
	}

	// Waiting in CI: plain progress lines, then the one error line (every
	// option given, a CCM of the cluster's minor: nothing else to say).
	_, errOut, code = rendererEnv(t, []string{"CI=true"}, "upgrade", release, chart, "--kubeconfig", cp.Kubeconfig, "--namespace", ns, "--set", cluster,
		"--distro=rke", "--mode=install", "--wait", "--timeout=2s")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code != 3 || len(lines) != 2 || lines[0] != "aws-ccm-renderer: upgrading "+release+" and waiting for it to be ready (timeout 2s) ..." ||
		!strings.HasPrefix(lines[1], "aws-ccm-renderer: ") || strings.Contains(lines[1], "done") {
		t.Errorf("--wait in CI: exit %d, stderr:\n%s", code, errOut)
	}
	// That upgrade failed (another image): diff --deployed compares with
	// the deployed revision, which an upgrade patches from, as Helm's
	// does, not with the failed one.
	status := helm(t, "history", release, "--namespace", ns, "--max", "1")
	if !strings.Contains(status, "failed") {
		t.Fatalf("the last revision did not fail:\n%s", status)
	}
	// The release's objects are the same; the cluster has what the failed
	// upgrade left.
	out, errOut, err = rendererCmd(t, "diff", release, chart, "--namespace", ns, "--set", set, "--distro=rke", "--mode=install", "--deployed", "--detailed-exitcode")
	if testtools.ExitCode(err) != exitChanges || !strings.Contains(out, "; 1 differs in the cluster from the release (release "+release+" revision ") ||
		!strings.Contains(out, ", the deployed one; revision ") || !strings.Contains(out, "Summary: 0 changed,") ||
		!strings.Contains(out, "-           image: registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0\n+           image: registry.k8s.io/provider-aws/cloud-controller-manager:v"+clusterMinor(t)+".0\n") {
		t.Errorf("diff after a failed upgrade: exit %d, %s\n%s", testtools.ExitCode(err), errOut, out)
	}
	_ = os.Remove(two)
}

// TestWrapperAPIWarnings: the API server's warnings (here: a deprecated
// seccomp annotation on the pod template) reach the user as the program's
// own warning lines, once each, not as client-go's log.
func TestWrapperAPIWarnings(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	release := "wrap-warn"
	ns := namespace(t, release)
	set := wrapValues(release, ns) + ",image.tag=v" + clusterMinor(t) + ".0"
	flags := []string{release, chart, "--namespace", ns, "--set", set, "--set", `podAnnotations.seccomp\.security\.alpha\.kubernetes\.io/pod=runtime/default`, "--distro=rke2", "--mode=install"}
	for _, args := range [][]string{append([]string{"install"}, flags...), append([]string{"diff", "--live"}, flags...)} {
		_, errOut, err := rendererCmd(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, errOut)
		}
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		warned := 0
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "aws-ccm-renderer: warning: the API server: ") && strings.Contains(l, "seccomp"):
				warned++
			case l != "" && !strings.HasPrefix(l, "aws-ccm-renderer: "):
				t.Errorf("%s: a line on stderr not the program's: %q", args[0], l)
			}
		}
		// The install creates the DaemonSet; the live diff's server-side
		// dry run may repeat the warning, once.
		if warned != 1 && (args[0] == "install" || warned > 1) {
			t.Errorf("%s: %d seccomp warnings:\n%s", args[0], warned, errOut)
		}
	}
}
