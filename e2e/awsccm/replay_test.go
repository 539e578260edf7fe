package awsccm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/awsccm"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/moto"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestPlanReplay runs whole plans of the control plane's minor as an
// operator does, top to bottom: every step's commands and checks in order,
// as written, in one shell session whose variables carry from command to
// command, in one working directory where the snippets the plan names as
// files are saved. The AWS CLI runs against moto as an operator allowed
// everything, kubectl and aws-ccm-renderer against the control plane, and
// the chart comes from a loopback repository serving the same version
// (the only change to a command). What runs on the nodes is done as the
// node would do it (registration, a kubelet's restart), and the
// DaemonSet's pods run as a kubelet runs them: the real DaemonSet
// controller makes the pods, the real AWS CCM of the minor runs with the
// DaemonSet's args and service account and the policy the plan put on the
// control-plane role, and the test marks the pods ready.
//
// Each plan's table (step, command, how it ran) is logged; a command that
// fails, a check whose result is not its Expect, or a node command the
// test cannot do fails the test.
func TestPlanReplay(t *testing.T) {
	r, kube := controlPlaneRelease(t)
	bin, err := harness.Locate(testtools.Root())
	if err != nil {
		t.Fatal(err)
	}
	// The control plane is shared: what other tests left of the CCM's
	// objects (their RBAC stays from test to test) goes, for the plans'
	// Helm installs to own.
	renders(t)
	leftovers, err := harness.Decode(rendered)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Remove(context.Background(), leftovers); err != nil {
		t.Fatal(err)
	}
	appliedRBAC = nil
	addonCRD(t)
	imds = serveIMDS(t)
	kcm, err := cp.StartControllerManager(bin, []string{"daemonset"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kcm.Stop)
	for _, c := range []struct {
		distro distros.Distro
		from   string
	}{
		{distros.Kubeadm, plan.FromNew},
		{distros.Kubeadm, plan.FromNone},
		{distros.RKE2, plan.FromNew},
		{distros.K3s, plan.FromNew},
		{distros.RKE2, plan.FromBuiltin},
		{distros.RKE2, plan.FromNone},
		{distros.K3s, plan.FromBuiltin},
		{distros.K3s, plan.FromNone},
	} {
		t.Run(string(c.distro)+"-"+c.from, func(t *testing.T) {
			rp := newReplay(t, r, c.distro, c.from, kube)
			rp.run()
		})
	}
}

// replay is one plan being run.
type replay struct {
	t      *testing.T
	r      awsccm.Release
	p      *plan.Plan
	distro string
	work   string            // the operator's working directory
	env    []string          // the operator's environment
	vars   map[string]string // what the plan's commands set, for the next
	repo   string            // the loopback chart repository
	nodes  []node            // the cluster's nodes, control-plane nodes first
	role   string            // the control-plane instances' role
	ccm    *ccm
	rows   [][3]string // step, command, how it ran
	// The nodes' file systems: what the node commands and snippets write
	// under /etc and /var/lib goes under each node's root.
	roots map[string]string
	shims string // sudo, systemctl and k3s as the nodes run them
	// manifested: before.cluster-manifest put the CCM in the servers'
	// manifests folder.
	manifested bool
	kubelets   bool     // the pods of the CCM's DaemonSet are being run
	args       []string // the running CCM's
}

func newReplay(t *testing.T, r awsccm.Release, distro distros.Distro, from, kube string) *replay {
	o := plan.DefaultOptions()
	o.Distro, o.From, o.KubeVersion = distro, from, kube
	p, err := plan.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	rp := &replay{t: t, r: r, p: p, distro: string(distro), work: t.TempDir(), vars: map[string]string{},
		repo: testtools.LoopbackChartRepoOf(t, p.CCM.ChartVersion), roots: map[string]string{}}
	for _, n := range ec2Named() {
		if n.distro == rp.distro {
			rp.nodes = append(rp.nodes, n)
		}
	}
	sort.SliceStable(rp.nodes, func(i, j int) bool { return controlPlane(rp.nodes[i]) && !controlPlane(rp.nodes[j]) })
	if len(rp.nodes) == 0 || !controlPlane(rp.nodes[0]) {
		t.Fatalf("no %s control-plane fixture node", distro)
	}
	rp.role = rp.controlPlaneRole()
	t.Cleanup(rp.uninstall)
	operator, err := aws.CreateUser(context.Background(), fmt.Sprintf("operator-%s-%s", distro, from), []byte(
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Dir(testtools.Renderer(t)), filepath.Dir(testtools.Kubectl(t)), filepath.Dir(testtools.Crane(t)), filepath.Dir(awsCLI(t))}
	if k := os.Getenv("KUBEADM"); k != "" {
		dirs = append(dirs, filepath.Dir(k)) // kubeadm config validate
	}
	path := strings.Join(append(dirs, "/usr/local/bin", "/usr/bin", "/bin"), string(filepath.ListSeparator))
	env := slices.DeleteFunc(testtools.HelmEnv(t), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "PATH" || strings.HasPrefix(name, "AWS_") || strings.HasSuffix(strings.ToLower(name), "_proxy")
	})
	// The AWS CLI reads AWS_PROFILE= as a profile named "".
	creds := slices.DeleteFunc(awsccm.Env(operator, trap), func(kv string) bool { return kv == "AWS_PROFILE=" })
	rp.env = append(append(env, creds...), "PATH="+path, "KUBECONFIG="+cp.Kubeconfig,
		"AWS_ENDPOINT_URL="+aws.URL, "AWS_DEFAULT_REGION="+cluster.Region(), "AWS_PAGER=")
	return rp
}

// uninstall removes what the plan installed: the release, and the pods no
// kubelet and no garbage collector remove here.
func (rp *replay) uninstall() {
	t, ctx := rp.t, context.Background()
	if _, err := rp.try("helm uninstall "+rp.p.CCM.Release+" --namespace "+rp.p.CCM.Namespace+" --ignore-not-found",
		[]string{"PATH=" + filepath.Dir(testtools.Helm3(t)) + ":/usr/bin:/bin"}); err != nil {
		t.Errorf("removing the release: %v", err)
	}
	pods, err := cp.Client.CoreV1().Pods(rp.p.CCM.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Error(err)
		return
	}
	zero := int64(0)
	for _, p := range pods.Items {
		if !slices.ContainsFunc(p.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "DaemonSet" && o.Name == rp.p.CCM.DaemonSet }) {
			continue
		}
		if err := cp.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	}
}

// awsCLI is the AWS CLI the plans' AWS commands are written for: aws on
// the PATH, or the Python module of moto's Python (awscli, beside boto3)
// run as aws.
func awsCLI(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("aws"); err == nil {
		return p
	}
	python := os.Getenv("PYTHON")
	if python == "" {
		python = "python3"
	}
	if err := exec.Command(python, "-c", "import awscli").Run(); err != nil {
		t.Fatalf("the plan replay runs the plans' AWS commands with the AWS CLI: no aws on the PATH and no awscli module in %s (pip install awscli)", python)
	}
	p := filepath.Join(t.TempDir(), "aws")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexec "+python+" -m awscli \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func controlPlane(n node) bool {
	roles := n.node.Annotations["fixture.aws-ccm-renderer.io/roles"]
	return strings.Contains(roles, "controlplane")
}

// controlPlaneRole gives the control-plane instances an instance profile
// with a role, as a cluster's control plane has, without the CCM's policy
// (the plan's before.iam puts it); the cleanup removes them.
func (rp *replay) controlPlaneRole() string {
	t, ctx := rp.t, context.Background()
	name := "control-plane-" + rp.distro + "-" + rp.p.From
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	var role struct{ Role struct{ Arn string } }
	calls := []struct {
		service, action string
		params          map[string]any
		out             any
	}{
		{"iam", "CreateRole", map[string]any{"RoleName": name, "AssumeRolePolicyDocument": trust}, &role},
		{"iam", "CreateInstanceProfile", map[string]any{"InstanceProfileName": name}, nil},
		{"iam", "AddRoleToInstanceProfile", map[string]any{"InstanceProfileName": name, "RoleName": name}, nil},
	}
	for _, c := range calls {
		if err := aws.Call(ctx, c.service, c.action, c.params, c.out); err != nil {
			t.Fatal(err)
		}
	}
	var assocs []string
	for _, n := range rp.nodes {
		if !controlPlane(n) {
			continue
		}
		var out struct {
			IamInstanceProfileAssociation struct{ AssociationId string }
		}
		if err := aws.Call(ctx, "ec2", "AssociateIamInstanceProfile", map[string]any{
			"InstanceId": n.instance.ID, "IamInstanceProfile": map[string]any{"Name": name}}, &out); err != nil {
			t.Fatal(err)
		}
		assocs = append(assocs, out.IamInstanceProfileAssociation.AssociationId)
	}
	t.Cleanup(func() {
		for _, a := range assocs {
			if err := aws.Call(ctx, "ec2", "DisassociateIamInstanceProfile", map[string]any{"AssociationId": a}, nil); err != nil {
				t.Errorf("restoring the account: %v", err)
			}
		}
		var policies struct{ PolicyNames []string }
		_ = aws.Call(ctx, "iam", "ListRolePolicies", map[string]any{"RoleName": name}, &policies)
		for _, p := range policies.PolicyNames {
			_ = aws.Call(ctx, "iam", "DeleteRolePolicy", map[string]any{"RoleName": name, "PolicyName": p}, nil)
		}
		_ = aws.Call(ctx, "iam", "RemoveRoleFromInstanceProfile", map[string]any{"InstanceProfileName": name, "RoleName": name}, nil)
		_ = aws.Call(ctx, "iam", "DeleteInstanceProfile", map[string]any{"InstanceProfileName": name}, nil)
		_ = aws.Call(ctx, "iam", "DeleteRole", map[string]any{"RoleName": name}, nil)
	})
	return role.Role.Arn
}

// run replays the plan.
func (rp *replay) run() {
	t := rp.t
	defer rp.table()
	rp.inputs()
	if rp.p.From != plan.FromNew {
		// A running cluster: its nodes as they are before the plan, on
		// no cloud provider or on the distribution's own.
		rp.registerNodes(false)
	}
	for _, ph := range rp.p.Phases {
		for _, s := range ph.Steps {
			rp.step(s)
			if t.Failed() {
				t.FailNow()
			}
		}
	}
	if rp.ccm == nil {
		t.Fatal("the plan ran to its end without installing the CCM")
	}
	for _, n := range rp.nodes {
		checkInitialised(t, rp.r, n)
	}
}

func (rp *replay) table() {
	var b strings.Builder
	fmt.Fprintf(&b, "the %s plan --from=%s at %s, top to bottom:\n", rp.p.Distro, rp.p.From, rp.p.KubernetesVersion)
	for _, row := range rp.rows {
		fmt.Fprintf(&b, "  %-26s %-60s %s\n", row[0], row[1], row[2])
	}
	rp.t.Log(b.String())
}

func (rp *replay) row(step, what, how string) {
	what = strings.Join(strings.Fields(what), " ")
	if len(what) > 60 {
		what = what[:57] + "..."
	}
	rp.rows = append(rp.rows, [3]string{step, what, how})
}

// inputs sets the plan's inputs the operator supplies, as each input's
// source says, and fails on one the test does not know.
func (rp *replay) inputs() {
	t := rp.t
	for _, in := range rp.p.Inputs {
		if in.Step != "" {
			continue // a step makes it
		}
		switch {
		case in.Name == "INSTANCE_ID":
			rp.vars[in.Name] = rp.nodes[0].instance.ID // a control-plane instance's
		case in.Name == "CLUSTER_ID":
			rp.vars[in.Name] = cluster.ID
		case in.Name == "ECR_IMAGE":
			rp.row("inputs", in.Name, "not set: the replayed cluster pulls no image from ECR (before.ecr-credentials lists none)")
			continue
		case in.Name == "CLUSTER_NAME":
			rp.row("inputs", in.Name, "not set: only the commands for Rancher's local cluster read it")
			continue
		case in.Name == "NODE":
			continue // set per node by the steps that work one node at a time
		case strings.HasPrefix(in.Name, "CCM_DIGEST_"):
			line, image := digestInput(t, rp.p)
			rp.shell("inputs", line, nil)
			rp.row("inputs", in.Name, "as its source says, crane against a loopback registry: "+image)
			continue
		default:
			t.Fatalf("input %s (%s): the replay has no value for it", in.Name, in.Source)
		}
		rp.row("inputs", in.Name, "yours: "+rp.vars[in.Name])
	}
}

// step replays one step: its snippets saved, its commands, then its checks.
func (rp *replay) step(s plan.Step) {
	for _, sn := range s.Snippets {
		file := strings.Fields(sn.File)[0]
		if filepath.IsAbs(file) {
			rp.nodeSnippet(s, sn, file)
			continue
		}
		if strings.ContainsAny(file, "/:") || !strings.Contains(file, ".") {
			continue // an object, or a kubelet file the node command checks
		}
		if err := os.WriteFile(filepath.Join(rp.work, file), []byte(sn.Content), 0o600); err != nil {
			rp.t.Fatal(err)
		}
		rp.row(s.ID, file, "snippet saved")
	}
	if s.ID == "during.create" {
		rp.create(s)
	}
	if slices.ContainsFunc(s.Commands, func(c plan.Command) bool { return c.Where == "that agent, once its Node is deleted" }) {
		rp.reregister(s)
		return
	}
	if slices.ContainsFunc(s.Checks, func(c plan.Check) bool { return strings.Contains(c.Expect, "No ECR images listed: nothing to do") }) && len(s.Commands) > 0 {
		c := s.Commands[0]
		if out := rp.shell(s.ID, c.Shell, nil); strings.TrimSpace(out) == "" {
			rp.row(s.ID, c.Shell, "as written: no ECR image listed")
			rp.row(s.ID, "the rest of the step", "not taken: no ECR images listed, nothing to do, as its check's Expect says")
			return
		}
		t := rp.t
		t.Fatalf("%s: the replayed cluster pulls from ECR", s.ID)
	}
	skip := rp.manifested && slices.ContainsFunc(s.Notes, func(n string) bool { return strings.HasPrefix(n, "With before.cluster-manifest") })
	for _, c := range s.Commands {
		if skip && c.Kind == plan.KindRenderer {
			rp.row(s.ID, c.Shell, "skipped, as the step's note says: the cluster runs the CCM from its manifests")
			continue
		}
		rp.command(s, c)
	}
	for _, c := range s.Checks {
		switch {
		case c.Command == nil:
		case c.Command.Kind == plan.KindCluster && strings.Contains(c.Command.Where, "Rancher"):
			rp.row(s.ID, c.Command.Shell, "not taken: a check of Rancher's local cluster (the replayed cluster is standalone)")
		case c.Command.Kind == plan.KindNode:
			rp.nodeCheck(s, c)
		default:
			rp.check(s, c)
		}
	}
}

// create makes the cluster, as during.create says with the configuration
// before.cluster-config saved: its nodes register on the external
// provider, tainted uninitialized.
func (rp *replay) create(s plan.Step) {
	t := rp.t
	if rp.distro == "kubeadm" {
		b, err := os.ReadFile(filepath.Join(rp.work, "kubeadm-config.yaml"))
		if err != nil {
			t.Fatalf("during.create: the cluster is made with kubeadm-config.yaml, which no step saved: %v", err)
		}
		if !strings.Contains(string(b), "value: external") {
			t.Fatalf("kubeadm-config.yaml does not start the kubelets with cloud-provider external:\n%s", b)
		}
	}
	if rp.distro == "rke2" || rp.distro == "k3s" {
		for _, n := range rp.nodes {
			// RKE2 gives its kubelet cloud-provider=external for
			// cloud-provider-name external; K3s takes the kubelet flag.
			want := map[string]string{"rke2": "cloud-provider-name: external", "k3s": "- cloud-provider=external"}[rp.distro]
			b, err := os.ReadFile(filepath.Join(rp.root(n), "etc/rancher", rp.distro, "config.yaml"))
			if err != nil || !strings.Contains(string(b), want) {
				t.Fatalf("during.create: node %s starts without a config.yaml that puts its kubelet on cloud-provider=external (%v):\n%s", n.node.Name, err, b)
			}
		}
	}
	rp.registerNodes(true)
	rp.row(s.ID, "the cluster created", fmt.Sprintf("done as the nodes do: %d nodes registered tainted uninitialized", len(rp.nodes)))
	if rp.manifested {
		rp.serverStart(s)
	}
}

// serverStart starts the first server as its distribution does: its own
// kubectl and kubeconfig in place, and its deploy controller applying the
// manifests folder; then the DaemonSet's pods run (runPods).
func (rp *replay) serverStart(s plan.Step) {
	t := rp.t
	first := rp.nodes[0]
	root := rp.root(first)
	kubeconfig := filepath.Join(root, "etc/rancher", rp.distro, rp.distro+".yaml")
	b, err := os.ReadFile(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, kubeconfig, b)
	if rp.distro == "rke2" {
		bin := filepath.Join(root, "var/lib/rancher/rke2/bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(testtools.Kubectl(t), filepath.Join(bin, "kubectl")); err != nil {
			t.Fatal(err)
		}
	}
	manifests := "/var/lib/rancher/" + rp.distro + "/server/manifests"
	d := newDeployer(t, root, manifests)
	t.Cleanup(func() { d.remove(t) })
	applied := d.listFiles(t, true)
	if len(applied) == 0 {
		t.Fatalf("the first server's manifests folder %s holds nothing to apply", manifests)
	}
	rp.row(s.ID, "the first server starts", fmt.Sprintf("done as the server does: its deploy controller applied %v", applied))
	pods := rp.runPods()
	rp.row(s.ID, "the CCM's pods", fmt.Sprintf("%d pods run the CCM %s", len(pods), rp.r.Version))
}

// root is a node's file system root.
func (rp *replay) root(n node) string {
	if r, ok := rp.roots[n.node.Name]; ok {
		return r
	}
	r := rp.t.TempDir()
	rp.roots[n.node.Name] = r
	return r
}

// server: a node of the distribution's servers (etcd or control plane).
func server(n node) bool {
	roles := n.node.Annotations["fixture.aws-ccm-renderer.io/roles"]
	return strings.Contains(roles, "controlplane") || strings.Contains(roles, "etcd")
}

// nodeSnippet puts a snippet for the nodes' files on the nodes it is for:
// (servers), (agents), or every node.
func (rp *replay) nodeSnippet(s plan.Step, sn plan.Snippet, file string) {
	if strings.HasPrefix(sn.Note, "Per node, with its own values") {
		rp.row(s.ID, sn.File, "per node, from the step's command (below)")
		return
	}
	n := 0
	for _, x := range rp.nodes {
		if strings.Contains(sn.File, "(servers)") && !server(x) || strings.Contains(sn.File, "(agents)") && server(x) {
			continue
		}
		rp.putOnNode(x, file, sn.Content)
		n++
	}
	rp.row(s.ID, sn.File, fmt.Sprintf("snippet put on %d nodes (merged into the file: lists keep their items)", n))
}

// putOnNode puts YAML on a node's file as an operator does: into the file
// when it exists, each key the content gives replacing the file's, a list
// keeping the file's items beside the content's.
func (rp *replay) putOnNode(n node, file, content string) {
	t := rp.t
	path := filepath.Join(rp.root(n), file)
	if ext := filepath.Ext(file); ext != ".yaml" && ext != ".yml" {
		// Not YAML (a kubelet's flags file): the content is the file.
		testtools.WriteFile(t, path, []byte(content))
		return
	}
	merged := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := yaml.Unmarshal(b, &merged); err != nil {
			t.Fatalf("%s on %s: %v", file, n.node.Name, err)
		}
	}
	var add map[string]any
	if err := yaml.Unmarshal([]byte(content), &add); err != nil {
		t.Fatalf("the snippet for %s is not YAML: %v\n%s", file, err, content)
	}
	for k, v := range add {
		old, isList := merged[k].([]any)
		if items, ok := v.([]any); ok && isList {
			for _, it := range items {
				if !slices.ContainsFunc(old, func(o any) bool { return fmt.Sprint(o) == fmt.Sprint(it) }) {
					old = append(old, it)
				}
			}
			v = old
		}
		merged[k] = v
	}
	b, err := yaml.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, path, b)
}

// targets are the nodes a node command or check runs on, by its Where.
func (rp *replay) targets(where string) []node {
	var out []node
	for _, n := range rp.nodes {
		switch where {
		case "each control-plane node, one at a time":
			if controlPlane(n) {
				out = append(out, n)
			}
		case "every node, control-plane nodes first, one at a time":
			out = append(out, n)
		case "the first server":
			return rp.nodes[:1]
		default:
			rp.t.Fatalf("the replay does not know which nodes %q are", where)
		}
	}
	return out
}

// absolute are the absolute paths of the nodes' own files in node commands.
var absolute = regexp.MustCompile(`(^|[\s"'=])(/etc/|/var/lib/)`)

// onNode runs a node command as written on a node: its /etc and /var/lib
// under the node's root, sudo, systemctl and k3s the node's (sudo runs the
// command; systemctl records what it is asked; k3s kubectl is the node's
// kubectl).
func (rp *replay) onNode(n node, shell string) (string, error) {
	root := rp.root(n)
	shell = absolute.ReplaceAllString(shell, "${1}"+root+"${2}")
	// The instance metadata of the node's instance, on loopback.
	shell = strings.ReplaceAll(shell, "http://169.254.169.254", imds.URL+"/"+n.instance.ID)
	return rp.try(shell, []string{"PATH=" + rp.shimDir() + ":" + rp.pathOf(), "NODE_ROOT=" + root, "NODE=" + n.node.Name, "NODE_UNITS=" + rp.units(n)})
}

func (rp *replay) pathOf() string {
	for _, kv := range rp.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return "/usr/bin:/bin"
}

// shimDir holds the nodes' sudo, systemctl and k3s.
func (rp *replay) shimDir() string {
	if rp.shims != "" {
		return rp.shims
	}
	dir := rp.t.TempDir()
	for name, body := range map[string]string{
		"sudo": `exec "$@"`,
		"systemctl": `for u in $NODE_UNITS; do [ "$2" = "$u" ] && { echo "$*" >> "$NODE_ROOT/systemctl.log"; exit 0; }; done
echo "Failed to $1 $2.service: Unit $2.service not found." >&2; exit 5`,
		"k3s": `if [ "$1" = kubectl ]; then shift; exec kubectl --kubeconfig "$NODE_ROOT/etc/rancher/k3s/k3s.yaml" "$@"; fi
if [ "$1 $2 $3" = "etcd-snapshot save --name" ] && [ $# = 4 ]; then
  d="$NODE_ROOT/var/lib/rancher/k3s/server/db/snapshots"; f="$4-$NODE-$(date +%s)"
  mkdir -p "$d" && : > "$d/$f" && echo "Snapshot $f saved."; exit
fi
echo "k3s $*: not a command the replay runs" >&2; exit 1`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			rp.t.Fatal(err)
		}
	}
	rp.shims = dir
	return dir
}

// nodeCheck runs a check on the nodes its Where names, as written on
// each: the first server's view of a cluster it provisions waits until it
// shows what its Expect says (the CCM initialises nodes in its own time);
// the others must print something.
func (rp *replay) nodeCheck(s plan.Step, c plan.Check) {
	t := rp.t
	for _, n := range rp.targets(c.Command.Where) {
		var out string
		var err error
		if strings.Contains(c.Command.Shell, "addons.k3s.cattle.io") {
			harness.WaitForState(t, 2*time.Minute, s.ID+"'s check on the first server to show the Addon and every node initialised", func() (bool, string) {
				out, err = rp.onNode(n, c.Command.Shell)
				problem := provisioned(out, rp.nodes)
				return err == nil && problem == "", fmt.Sprintf("%v %s:\n%s", err, problem, out)
			})
		} else if out, err = rp.onNode(n, c.Command.Shell); err != nil || strings.TrimSpace(out) == "" {
			t.Errorf("%s: the check %s on %s: %v, output %q", s.ID, c.Command.Shell, n.node.Name, err, out)
		}
		rp.row(s.ID, c.Command.Shell, "check as written on node "+n.node.Name+"'s root")
		t.Logf("%s on %s: %s\n%s", s.ID, n.node.Name, c.Command.Shell, out)
	}
}

// provisioned says what the first server's check of a provisioning
// cluster lacks: the Addon of the servers' file, and every node with an
// aws:/// provider ID and no uninitialized taint.
func provisioned(out string, nodes []node) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "aws-cloud-controller-manager ") }) {
		return "no Addon aws-cloud-controller-manager"
	}
	for _, x := range nodes {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, x.node.Name+" ") })
		if f := strings.Fields(lines[max(i, 0)]); i < 0 || len(f) != 3 || !strings.HasPrefix(f[1], "aws:///") || strings.Contains(f[2], uninitializedTaint) {
			return "node " + x.node.Name + " without its aws:/// provider ID, or still tainted " + uninitializedTaint
		}
	}
	return ""
}

// registerNodes registers the distribution's nodes: tainted uninitialized
// as kubelets on the external provider do, or (a running cluster on no
// cloud provider) without taint or provider ID.
func (rp *replay) registerNodes(external bool) {
	for _, n := range rp.nodes {
		x := n.node.DeepCopy()
		if !external {
			x.Spec.Taints = slices.DeleteFunc(x.Spec.Taints, func(t corev1.Taint) bool { return t.Key == uninitializedTaint })
			if rp.p.From == plan.FromBuiltin {
				// The distribution's own cloud controller initialised it.
				x.Spec.ProviderID = rp.distro + "://" + x.Name
			}
		}
		register(rp.t, *x)
	}
}

// command runs a step's command as written, or does what it does on a
// node.
func (rp *replay) command(s plan.Step, c plan.Command) {
	t := rp.t
	switch {
	case strings.HasPrefix(c.Description, "Or,"):
		rp.row(s.ID, c.Shell, "not taken: "+c.Description)
	case c.Kind == plan.KindCluster && strings.Contains(c.Where, "Rancher"):
		rp.row(s.ID, c.Shell, "not taken: for clusters Rancher provisions (the replayed cluster is standalone)")
	case c.Kind == plan.KindCluster:
		t.Errorf("%s: no way to run %q (%s) here", s.ID, c.Shell, c.Where)
	case c.Kind == plan.KindNode:
		rp.node(s, c)
	case strings.Contains(c.Shell, `"$NODE"`):
		for _, n := range rp.nodesOf(c.Description) {
			rp.shell(s.ID, c.Shell, []string{"NODE=" + n.node.Name})
			rp.row(s.ID, c.Shell, "as written, NODE="+n.node.Name)
		}
	case c.Kind == plan.KindRenderer && strings.Contains(c.Shell, "upgrade --install") && strings.Contains(c.Shell, "--wait"):
		rp.install(s, c)
	default:
		out := rp.shell(s.ID, c.Shell, nil)
		rp.row(s.ID, c.Shell, fmt.Sprintf("as written (%d lines out)", strings.Count(out, "\n")))
	}
}

// node does what a node command does on each node it names.
func (rp *replay) node(s plan.Step, c plan.Command) {
	t := rp.t
	switch {
	case rp.distro == "kubeadm" && strings.TrimSpace(c.Shell) == "sudo systemctl restart kubelet":
		// The kubelet restarts with the flags the step's snippet gives; a
		// registered Node keeps its spec (the kubelet taints a node at
		// registration only).
		i := slices.IndexFunc(s.Snippets, func(sn plan.Snippet) bool { return sn.File == "/var/lib/kubelet/kubeadm-flags.env" })
		if i < 0 || !strings.Contains(s.Snippets[i].Content, "--cloud-provider=external") {
			t.Fatalf("%s: the kubelets restart without --cloud-provider=external in kubeadm-flags.env", s.ID)
		}
		for _, n := range rp.nodes {
			if got := getNode(t, n.node.Name); got.Spec.ProviderID != "" || slices.ContainsFunc(got.Spec.Taints, func(t corev1.Taint) bool { return t.Key == uninitializedTaint }) {
				t.Fatalf("%s: node %s is not as a restarted kubelet leaves it: providerID %q, taints %v", s.ID, n.node.Name, got.Spec.ProviderID, got.Spec.Taints)
			}
		}
		rp.row(s.ID, c.Shell, fmt.Sprintf("done as the nodes do: %d kubelets on --cloud-provider=external, Nodes unchanged", len(rp.nodes)))
	case strings.Contains(c.Shell, "http://169.254.169.254/latest/"):
		for _, n := range rp.targets(c.Where) {
			out, err := rp.onNode(n, c.Shell)
			if err != nil {
				t.Fatalf("%s on %s: %s: %v\n%s", s.ID, n.node.Name, c.Shell, err, out)
			}
			want := fmt.Sprintf("local-hostname: %s\ninstance-id: %s\nplacement/availability-zone: %s", n.instance.PrivateDNSName, n.instance.ID, n.instance.Zone)
			if strings.TrimSpace(out) != want {
				t.Fatalf("%s on %s: %s printed\n%s\nwant\n%s", s.ID, n.node.Name, c.Shell, out, want)
			}
			how := "its name is its local-hostname: nothing to put"
			if n.instance.PrivateDNSName != n.node.Name {
				rp.putOnNode(n, "etc/rancher/"+rp.distro+"/config.yaml", "node-name: "+n.instance.PrivateDNSName)
				how = "node-name put in its config.yaml"
			}
			rp.row(s.ID, c.Shell, "as written on node "+n.node.Name+"'s root, instance metadata on loopback; "+how)
		}
	case strings.HasPrefix(c.Shell, "sudo k3s etcd-snapshot save "):
		for _, n := range rp.targets(c.Where) {
			out, err := rp.onNode(n, c.Shell)
			if err != nil || !strings.Contains(out, "saved") {
				t.Fatalf("%s on %s: %s: %v\n%s", s.ID, n.node.Name, c.Shell, err, out)
			}
			rp.row(s.ID, c.Shell, "as written on node "+n.node.Name+"'s root (k3s: a snapshot file written): "+strings.TrimSpace(out))
		}
	case strings.Contains(c.Shell, "sudo systemctl restart "):
		for _, n := range rp.targets(c.Where) {
			rp.restart(s, c, n)
		}
	case strings.HasPrefix(c.Shell, "sudo install ") && strings.Contains(c.Shell, "/server/manifests/"):
		for _, n := range rp.targets(c.Where) {
			if out, err := rp.onNode(n, c.Shell); err != nil {
				t.Fatalf("%s on %s: %s: %v\n%s", s.ID, n.node.Name, c.Shell, err, out)
			}
			rp.row(s.ID, c.Shell, "as written on node "+n.node.Name+"'s root")
		}
		rp.manifested = true
	default:
		t.Errorf("%s: the replay cannot do the node command %q (%s)", s.ID, c.Shell, c.Where)
	}
}

// install runs the step's install as written while the test is the
// cluster's kubelets: once the DaemonSet controller has made the CCM's
// pods, the real CCM runs with the DaemonSet's args and service account,
// and as the policy the plan put on the control-plane role, and the pods
// are marked ready, which the install waits for.
func (rp *replay) install(s plan.Step, c plan.Command) {
	t := rp.t
	cmd, out := rp.start(c.Shell, nil)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	finished := false
	t.Cleanup(func() {
		if !finished {
			_ = cmd.Process.Kill()
			<-done
		}
	})
	pods := rp.runPodsUnless(func() {
		select {
		case err := <-done:
			finished = true
			t.Fatalf("%s: %v before the CCM's pods ran\n%s", c.Shell, err, out)
		default:
		}
	})
	select {
	case err := <-done:
		finished = true
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.Shell, err, out)
		}
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("%s: still waiting after 3 minutes\n%s", c.Shell, out)
	}
	rp.row(s.ID, c.Shell, fmt.Sprintf("as written; %d CCM pods ready, the CCM %s running", len(pods), rp.r.Version))
}

// runPods is the cluster's kubelets: once the DaemonSet controller has
// made the CCM's pods, the real CCM runs with the DaemonSet's args and
// service account, as the policy the plan put on the control-plane role,
// and the pods are marked ready.
func (rp *replay) runPods() []corev1.Pod { return rp.runPodsUnless(func() {}) }

// runPodsUnless is runPods, calling stop while it waits for the pods.
func (rp *replay) runPodsUnless(stop func()) []corev1.Pod {
	t, ctx := rp.t, context.Background()
	var pods []corev1.Pod
	harness.WaitForState(t, 2*time.Minute, "the DaemonSet controller to make the CCM's pods", func() (bool, string) {
		stop()
		var err error
		var desired int32
		pods, desired, err = rp.ccmPods()
		if err != nil {
			t.Fatal(err)
		}
		return len(pods) > 0 && int32(len(pods)) == desired, fmt.Sprintf("%d pods of %d", len(pods), desired)
	})
	switch {
	case rp.ccm == nil:
		rp.ccm, rp.args = rp.runCCM(pods[0]), pods[0].Spec.Containers[0].Args
	case !slices.Equal(rp.args, pods[0].Spec.Containers[0].Args):
		// An upgrade changed what the CCM runs with: its pods restart.
		rp.ccm.proc.Stop()
		if err := cp.Client.CoordinationV1().Leases("kube-system").Delete(ctx, "cloud-controller-manager", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		rp.ccm, rp.args = rp.runCCM(pods[0]), pods[0].Spec.Containers[0].Args
	}
	for _, p := range pods {
		if err := podReady(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if !rp.kubelets {
		// The pods the DaemonSet controller makes later (a new server's)
		// run too: the CCM already runs for them.
		rp.kubelets = true
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				case <-time.After(500 * time.Millisecond):
				}
				ps, _, _ := rp.ccmPods()
				for _, p := range ps {
					if p.Status.Phase != corev1.PodRunning {
						_ = podReady(ctx, p) // the next round retries
					}
				}
			}
		}()
		t.Cleanup(func() { close(stop); <-done })
	}
	return pods
}

// podReady marks a pod running and ready, as its kubelet does.
func podReady(ctx context.Context, p corev1.Pod) error {
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name, Ready: true, Image: p.Spec.Containers[0].Image,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
	_, err := cp.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, &p, metav1.UpdateOptions{})
	return err
}

// ccmPods are the pods of the CCM's DaemonSet, and the number the
// DaemonSet controller wants for its current generation (-1 before it has
// seen that generation).
func (rp *replay) ccmPods() ([]corev1.Pod, int32, error) {
	ctx := context.Background()
	ds, err := cp.Client.AppsV1().DaemonSets(rp.p.CCM.Namespace).Get(ctx, rp.p.CCM.DaemonSet, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, -1, nil
	}
	if err != nil {
		return nil, -1, err
	}
	desired := ds.Status.DesiredNumberScheduled
	if ds.Status.ObservedGeneration != ds.Generation {
		desired = -1
	}
	l, err := cp.Client.CoreV1().Pods(rp.p.CCM.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, -1, err
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		// The pods of the DaemonSet's current template (a rolling update
		// replaces the others one node at a time).
		if harness.OwnedBy(p, ds) && p.DeletionTimestamp == nil && p.Labels["pod-template-generation"] == strconv.FormatInt(ds.Generation, 10) {
			out = append(out, p)
		}
	}
	return out, desired, nil
}

// runCCM runs the CCM as its pod would: the DaemonSet's args and service
// account, once the authorizer answers for it, and the control-plane
// role's policy, which the plan put.
func (rp *replay) runCCM(pod corev1.Pod) *ccm {
	t, ctx := rp.t, context.Background()
	var doc struct{ PolicyDocument json.RawMessage }
	name := rp.role[strings.LastIndex(rp.role, "/")+1:]
	if err := aws.Call(ctx, "iam", "GetRolePolicy", map[string]any{"RoleName": name, "PolicyName": "aws-cloud-controller-manager"}, &doc); err != nil {
		t.Fatalf("the CCM runs as the control-plane role, which has no policy aws-cloud-controller-manager: %v", err)
	}
	policy := []byte(doc.PolicyDocument)
	var text string
	if json.Unmarshal(policy, &text) == nil {
		policy = []byte(text) // a document given as a string
	}
	account := pod.Spec.ServiceAccountName
	var manifest string
	if rp.manifested {
		b, err := os.ReadFile(filepath.Join(rp.work, "aws-ccm.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		manifest = string(b)
	} else {
		manifest = rp.shell("during.install-ccm", "helm get manifest "+rp.p.CCM.Release+" --namespace "+pod.Namespace, []string{"PATH=" + filepath.Dir(testtools.Helm3(t)) + ":/usr/bin:/bin"})
	}
	user, groups := harness.ServiceAccountUser(pod.Namespace, account)
	want, err := harness.Grants(rbac(t, []byte(manifest)), user, groups)
	if err != nil {
		t.Fatal(err)
	}
	harness.WaitAccess(t, cp.Client, 30*time.Second, want)
	return runCCM(t, rp.r, "the control-plane role's, as the plan put it", policy, account, pod.Spec.Containers[0].Args,
		awsccm.CloudConfig{Cluster: cluster, Network: network, URL: aws.URL}, trap)
}

// check runs a step's check as written: one that expects no output waits
// for it (the CCM acts in its own time), one that expects exit 0 waits for
// that; others must run.
func (rp *replay) check(s plan.Step, c plan.Check, only ...node) {
	t := rp.t
	nodes := []string{""}
	if strings.Contains(c.Command.Shell, `"$NODE"`) {
		if only == nil {
			only = rp.nodes
		}
		nodes = nil
		for _, n := range only {
			nodes = append(nodes, n.node.Name)
		}
	}
	for _, n := range nodes {
		var env []string
		if n != "" {
			env = []string{"NODE=" + n}
		}
		var out string
		var err error
		switch {
		case strings.HasPrefix(c.Expect, "No output"):
			harness.WaitForState(t, 2*time.Minute, s.ID+"'s check to print nothing", func() (bool, string) {
				out, err = rp.try(c.Command.Shell, env)
				return err == nil && strings.TrimSpace(out) == "", fmt.Sprintf("%v: %s", err, out)
			})
		case strings.HasPrefix(c.Expect, "Exit 0"):
			harness.WaitForState(t, 2*time.Minute, s.ID+"'s check to exit 0", func() (bool, string) {
				out, err = rp.try(c.Command.Shell, env)
				return err == nil, fmt.Sprintf("%v: %s", err, out)
			})
		case strings.HasPrefix(c.Expect, "aws:///"):
			harness.WaitForState(t, 2*time.Minute, s.ID+"'s check to show an aws:/// provider ID and no uninitialized taint", func() (bool, string) {
				out, err = rp.try(c.Command.Shell, env)
				return err == nil && strings.HasPrefix(out, "aws:///") && !strings.Contains(out, uninitializedTaint), fmt.Sprintf("%v: %s", err, out)
			})
		default:
			out, err = rp.try(c.Command.Shell, env)
			if err != nil && !strings.Contains(c.Command.Shell, "aws-ccm-renderer check") {
				t.Errorf("%s: the check %s: %v\n%s", s.ID, c.Command.Shell, err, out)
			}
			if bad := crossedIn(c.Expect, out); len(bad) > 0 {
				t.Errorf("%s: the check's Expect is %q; it printed:\n%s", s.ID, c.Expect, strings.Join(bad, "\n"))
			}
		}
		how := "check as written"
		if n != "" {
			how += ", NODE=" + n
		}
		if err != nil {
			how += fmt.Sprintf(" (%v)", err)
		}
		rp.row(s.ID, c.Command.Shell, how)
		t.Logf("%s: %s\n%s", s.ID, c.Command.Shell, out)
	}
}

// shell runs a command as written and fails the test when it fails.
func (rp *replay) shell(step, shell string, env []string) string {
	out, err := rp.try(shell, env)
	if err != nil {
		rp.t.Fatalf("%s: %s: %v\n%s", step, shell, err, out)
	}
	return out
}

// try runs a command as written in the operator's shell session: bash with
// every variable the plan's commands set so far, errexit, and the chart
// from the loopback repository; what the command sets is kept for the next.
func (rp *replay) try(shell string, env []string) (string, error) {
	cmd, out := rp.start(shell, env)
	err := cmd.Wait()
	rp.keep(cmd)
	return out.String(), err
}

var replayStates atomic.Int64

// start starts a command as try runs it; its combined output goes to the
// buffer.
func (rp *replay) start(shell string, env []string) (*exec.Cmd, *bytes.Buffer) {
	t := rp.t
	shell = strings.ReplaceAll(shell, "--repo "+rp.p.CCM.Repository, "--repo "+rp.repo)
	state := filepath.Join(rp.work, fmt.Sprintf(".state-%d", replayStates.Add(1)))
	script := "set -ea\ntrap 'env -0 > \"$REPLAY_STATE\"' EXIT\n" + shell + "\n"
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = rp.work
	cmd.Env = append(slices.Clone(rp.env), "REPLAY_STATE="+state, "HOME="+rp.work)
	for k, v := range rp.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// keep takes the variables a finished command set or changed.
func (rp *replay) keep(cmd *exec.Cmd) {
	var state string
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, "REPLAY_STATE="); ok {
			state = v
		}
	}
	b, err := os.ReadFile(state)
	if err != nil {
		return
	}
	_ = os.Remove(state)
	before := map[string]string{}
	for _, kv := range cmd.Env {
		k, v, _ := strings.Cut(kv, "=")
		before[k] = v
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "_" || k == "PWD" || k == "OLDPWD" || k == "SHLVL" || k == "REPLAY_STATE" || k == "NODE" {
			continue
		}
		if old, had := before[k]; !had || old != v {
			rp.vars[k] = v
		}
	}
}

// nodesOf are the nodes a command with $NODE runs for, as its description
// says: agents, or every node.
func (rp *replay) nodesOf(description string) []node {
	if !strings.HasPrefix(description, "Agents") {
		return rp.nodes
	}
	var out []node
	for _, n := range rp.nodes {
		if !server(n) {
			out = append(out, n)
		}
	}
	return out
}

// units are the services a node of the distribution runs.
func (rp *replay) units(n node) string {
	switch {
	case rp.distro == "kubeadm":
		return "kubelet"
	case server(n) && rp.distro == "k3s":
		return "k3s"
	case server(n):
		return rp.distro + "-server"
	default:
		return rp.distro + "-agent"
	}
}

// restart runs a restart command as written on a node, then does what the
// restarted service does: with the step's configuration on the node (its
// kubelet on the external provider), a node whose Node object is gone
// registers again, tainted uninitialized; a registered one keeps its
// provider ID and taints (a kubelet sets both at registration only).
func (rp *replay) restart(s plan.Step, c plan.Command, n node) {
	t := rp.t
	out, err := rp.onNode(n, c.Shell)
	if err != nil {
		t.Fatalf("%s on %s: %s: %v\n%s", s.ID, n.node.Name, c.Shell, err, out)
	}
	log, _ := os.ReadFile(filepath.Join(rp.root(n), "systemctl.log"))
	if !strings.Contains(string(log), "restart "+rp.units(n)) {
		t.Fatalf("%s on %s: %s did not restart %s (systemctl was asked: %q)", s.ID, n.node.Name, c.Shell, rp.units(n), log)
	}
	_ = os.Remove(filepath.Join(rp.root(n), "systemctl.log"))
	if rp.distro == "rke2" || rp.distro == "k3s" {
		want := map[string]string{"rke2": "cloud-provider-name: external", "k3s": "- cloud-provider=external"}[rp.distro]
		if b, err := os.ReadFile(filepath.Join(rp.root(n), "etc/rancher", rp.distro, "config.yaml")); err != nil || !strings.Contains(string(b), want) {
			t.Fatalf("%s: %s restarts without %q in its config.yaml (%v)", s.ID, n.node.Name, want, err)
		}
	}
	how := "Node unchanged"
	if _, err := cp.Client.CoreV1().Nodes().Get(context.Background(), n.node.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		register(t, n.node) // tainted uninitialized, no provider ID
		how = "registered again, tainted uninitialized"
	} else if err != nil {
		t.Fatal(err)
	}
	rp.row(s.ID, c.Shell, fmt.Sprintf("as written on node %s's root (%s restarted); done as it does: %s", n.node.Name, rp.units(n), how))
}

// reregister replays a step that registers agents again one at a time:
// for each agent its commands in order (the workstation's with NODE, then
// the agent's own), then the checks for NODE; then the servers, replaced
// as the step's note says, by new machines that join with the step's
// configuration, the old ones removed; then the other checks.
func (rp *replay) reregister(s plan.Step) {
	t := rp.t
	for _, n := range rp.nodesOf("Agents") {
		env := []string{"NODE=" + n.node.Name}
		for _, c := range s.Commands {
			if c.Where == "that agent, once its Node is deleted" {
				rp.restart(s, c, n)
				continue
			}
			rp.shell(s.ID, c.Shell, env)
			rp.row(s.ID, c.Shell, "as written, NODE="+n.node.Name)
		}
	}
	for _, c := range s.Checks {
		if c.Command != nil && strings.Contains(c.Command.Shell, `"$NODE"`) {
			rp.check(s, c, rp.nodesOf("Agents")...)
		}
	}
	if !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "Replace servers one at a time") }) {
		t.Fatalf("%s: the step registers agents again and says nothing of the servers", s.ID)
	}
	for i, n := range rp.nodes {
		if server(n) {
			rp.nodes[i] = rp.replaceServer(s, n)
		}
	}
	for _, c := range s.Checks {
		if c.Command != nil && !strings.Contains(c.Command.Shell, `"$NODE"`) {
			rp.check(s, c)
		}
	}
}

// replaceServer replaces a server by a new machine: an instance of the
// cluster whose node joins with the server configuration the plan put on
// the old one, registering tainted uninitialized under its instance's
// name; then the old server is removed (its Node deleted, its instance
// terminated), as the distribution documents.
func (rp *replay) replaceServer(s plan.Step, old node) node {
	t, ctx := rp.t, context.Background()
	in := extraInstance(t, old.instance.Name+"-new")
	n := old
	n.instance = in
	n.node = *old.node.DeepCopy()
	n.node.Name = in.PrivateDNSName
	n.node.Labels["kubernetes.io/hostname"] = n.node.Name
	n.node.Spec.ProviderID = ""
	registered(rp.distro, &n.node, in)
	config := filepath.Join("etc/rancher", rp.distro, "config.yaml")
	b, err := os.ReadFile(filepath.Join(rp.root(old), config))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(rp.root(n), config)
	testtools.WriteFile(t, path, b)
	register(t, n.node)
	if err := cp.Client.CoreV1().Nodes().Delete(ctx, old.node.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitInitialisedNode(t, rp.ccm, n.node.Name)
	rp.row(s.ID, "server "+old.node.Name, "replaced as the note says: "+n.node.Name+" joined with its config.yaml, initialised by the CCM; the old Node deleted")
	return n
}

// noCross is how an Expect names the areas of check's table that must have
// no ✗ line: "No ✗ line in the iam area", "No ✗ in the options area",
// "No ✗ line in the instance, cluster-id, security-group and subnet areas".
var noCross = regexp.MustCompile(`^No ✗(?: line)? in the ([a-z, -]+?) areas?\b`)

// onlyScheme is how an Expect allows ✗ instance lines of nodes on another
// provider's IDs.
var onlyScheme = regexp.MustCompile(`in the instance area only the nodes on their (\S+) provider IDs`)

// crossedIn returns check's ✗ lines in the areas the Expect says must have
// none.
func crossedIn(expect, out string) []string {
	m := noCross.FindStringSubmatch(expect)
	if m == nil {
		return nil
	}
	areas := strings.FieldsFunc(strings.ReplaceAll(m[1], " and ", ","), func(r rune) bool { return r == ',' || r == ' ' })
	// "..., and in the instance area only the nodes on their rke2://
	// provider IDs": an instance line must name such a provider ID.
	scheme := ""
	if o := onlyScheme.FindStringSubmatch(strings.Join(strings.Fields(expect), " ")); o != nil {
		scheme = o[1]
		areas = append(areas, "instance")
	}
	var bad []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "✗" || !slices.Contains(areas, f[1]) {
			continue
		}
		if f[1] == "instance" && scheme != "" && strings.Contains(l, `providerID "`+scheme) {
			continue
		}
		bad = append(bad, l)
	}
	return bad
}

func TestCrossedIn(t *testing.T) {
	areas := "Cluster e2e\n  ✗ node          3 nodes: no providerID\n  ✗ subnet        no subnet for internal ELBs\n  ✓ iam           may do all 49 actions\n"
	instances := "  ✗ instance      a: its providerID \"rke2://a\" names no instance\n  ✗ instance      b: no instance i-1\n"
	for _, c := range []struct {
		expect, out string
		want        int
	}{
		{"No ✗ line in the iam area: a ✓ line", areas, 0},
		{"No ✗ line in the instance, cluster-id, security-group and subnet areas: every node's", areas, 1},
		{"No ✗ in the options area (options a component", areas, 0},
		{"No ✗ line in the node area", areas, 1},
		{"Exit 0: a CCM pod ready", areas, 0},
		{"No ✗ line in the cluster-id, security-group and subnet areas, and in the instance area only the nodes on their rke2:// provider IDs, which", areas, 1},
		{"No ✗ line in the cluster-id areas, and in the instance area only the nodes on their rke2:// provider IDs", instances, 1},
		{"No ✗ line in the cluster-id areas, and in the instance area only the nodes on their k3s:// provider IDs", instances, 2},
		{"No ✗ line in the instance, cluster-id areas", instances, 2},
	} {
		if got := crossedIn(c.expect, c.out); len(got) != c.want {
			t.Errorf("crossedIn(%q): %q, want %d lines", c.expect, got, c.want)
		}
	}
}

// imds is the instance metadata service of the cluster's instances, on
// loopback: /<instance-id>/latest/... answers as IMDSv2 does for that
// instance (a token from PUT api/token, required by the reads).
var imds *httptest.Server

func serveIMDS(t *testing.T) *httptest.Server {
	byID := map[string]moto.Instance{}
	for _, n := range nodes {
		byID[n.instance.ID] = n.instance
	}
	const token = "replay-imds-token"
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		in, ok := byID[id]
		switch {
		case !ok:
			http.NotFound(w, r)
		case rest == "latest/api/token" && r.Method == http.MethodPut && r.Header.Get("X-aws-ec2-metadata-token-ttl-seconds") != "":
			fmt.Fprint(w, token)
		case r.Header.Get("X-aws-ec2-metadata-token") != token:
			w.WriteHeader(http.StatusUnauthorized)
		case rest == "latest/meta-data/local-hostname":
			fmt.Fprint(w, in.PrivateDNSName)
		case rest == "latest/meta-data/instance-id":
			fmt.Fprint(w, in.ID)
		case rest == "latest/meta-data/placement/availability-zone":
			fmt.Fprint(w, in.Zone)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}
