package awsccm_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/awsccm"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/moto"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

const (
	uninitializedTaint = "node.cloudprovider.kubernetes.io/uninitialized"
	ccmAccount         = "cloud-controller-manager" // the chart's service account, in kube-system
)

// policy reads a policy's actions from testdata/iam/<name>.txt (one per
// line, # comments) and writes the IAM policy document that allows them.
func policy(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(testtools.Root(), "testdata", "iam", name+".txt"))
	if err != nil {
		t.Fatalf("%v (each AWS CCM release the tests run needs its prerequisites policy there)", err)
	}
	defer f.Close()
	var actions []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			actions = append(actions, l)
		}
	}
	return policyOf(t, actions)
}

// policyOf is the IAM policy document that allows the actions.
func policyOf(t *testing.T, actions []string) []byte {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{
		{"Effect": "Allow", "Action": actions, "Resource": "*"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// prerequisites is the name of the policy of cloud-provider-aws's
// docs/prerequisites.md at a release.
func prerequisites(r awsccm.Release) string { return "cloud-provider-aws-" + r.Version }

var users atomic.Int32

// ccm is a running AWS CCM and the IAM user it runs as.
type ccm struct {
	release awsccm.Release
	proc    *harness.Process
	creds   moto.Credentials
	name    string
}

// startCCM applies the service account and RBAC of a rendered stream,
// waits until the authorizer answers as they say (applyRBAC), and runs a
// CCM release with the rendered args as that service account, as an
// IAM user with the policy, against moto. The test's cleanup stops it and
// removes its leader lease.
func startCCM(t *testing.T, r awsccm.Release, policyName string, rbacStream []byte) *ccm {
	t.Helper()
	return startCCMWith(t, r, policyName, rbacStream, awsccm.CloudConfig{Cluster: cluster, Network: network, URL: aws.URL}, trap)
}

// startCCMWith is startCCM with a cloud config and a trap of the test's.
func startCCMWith(t *testing.T, r awsccm.Release, policyName string, rbacStream []byte, conf awsccm.CloudConfig, tr *awsccm.Trap) *ccm {
	t.Helper()
	return startCCMDoc(t, r, policyName, policy(t, policyName), rbacStream, conf, tr)
}

// startCCMDoc is startCCMWith with the IAM policy document itself;
// policyName names it in the log.
func startCCMDoc(t *testing.T, r awsccm.Release, policyName string, doc []byte, rbacStream []byte, conf awsccm.CloudConfig, tr *awsccm.Trap) *ccm {
	t.Helper()
	renders(t)
	applyRBAC(t, rbacStream)
	return runCCM(t, r, policyName, doc, ccmAccount, renderedArgs, conf, tr)
}

// runCCM runs a CCM release with args as the service account
// kube-system/account, whose RBAC is in place, as a new IAM user with the
// policy document, against moto. The test's cleanup stops it and removes
// its leader lease.
func runCCM(t *testing.T, r awsccm.Release, policyName string, doc []byte, account string, args []string, conf awsccm.CloudConfig, tr *awsccm.Trap) *ccm {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("ccm-%s-%d", r.Name, users.Add(1))
	creds, err := aws.CreateUser(ctx, name, doc)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := cp.ServiceAccountKubeconfig(ctx, "kube-system", account)
	if err != nil {
		t.Fatal(err)
	}
	leaked := len(tr.Seen())
	p, err := awsccm.Run(cp, awsccm.Options{Name: name, Binary: r.Binary, Args: args,
		Kubeconfig: kubeconfig, CloudConfig: conf.String(), Env: awsccm.Env(creds, tr)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("AWS CCM %s as IAM user %s (policy %s) and service account kube-system/%s, args %q", r.Version, name, policyName, account, args)
	t.Cleanup(func() {
		p.Stop()
		if tr == trap && len(trap.Seen()) > leaked {
			t.Errorf("requests left for outside moto: %q", trap.Seen()[leaked:])
		}
		if t.Failed() {
			t.Logf("%s log tail:\n%s", name, tail(p.Log(), 6000))
		}
		// A fresh start for the next CCM: no leader lease left behind.
		err := cp.Client.CoordinationV1().Leases("kube-system").Delete(context.Background(), "cloud-controller-manager", metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	})
	return &ccm{release: r, proc: p, creds: creds, name: name}
}

// appliedRBAC are the service account and RBAC objects applyRBAC applied
// last: what the CCM's account ran under before.
var appliedRBAC []*unstructured.Unstructured

// applyRBAC applies a stream's service account and RBAC objects and waits
// until the API server's authorizer answers for the CCM's account as they
// say, and as extra says: every grant of the objects present, and every
// grant of the objects applied before (appliedRBAC) that they lack gone.
// The authorizer serves roles and bindings from informer caches that take
// each update on its own time: without the wait a CCM started at once, or
// an assertion, may meet the new Role and still the old ClusterRole.
func applyRBAC(t *testing.T, stream []byte, extra ...harness.AccessExpectation) {
	t.Helper()
	objs := rbac(t, stream)
	if err := cp.Apply(context.Background(), objs); err != nil {
		t.Fatal(err)
	}
	before := appliedRBAC
	appliedRBAC = objs
	user, groups := harness.ServiceAccountUser("kube-system", ccmAccount)
	want, err := harness.Grants(objs, user, groups)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := harness.Revoked(before, objs, user, groups)
	if err != nil {
		t.Fatal(err)
	}
	harness.WaitAccess(t, cp.Client, 30*time.Second, append(append(want, gone...), extra...))
}

// registerNodes creates the nodes of the distributions (none: all) as
// their kubelets register them, and returns a function that deletes them,
// which the test's cleanup also calls.
func registerNodes(t *testing.T, distros ...string) (unregister func()) {
	t.Helper()
	var ns []corev1.Node
	for _, n := range nodes {
		if len(distros) == 0 || slices.Contains(distros, n.distro) {
			ns = append(ns, n.node)
		}
	}
	unregister = func() {
		for _, n := range ns {
			err := cp.Client.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Error(err)
			}
		}
	}
	t.Cleanup(unregister)
	if err := cp.CreateNodes(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return unregister
}

// requests returns the AWS requests the CCM's IAM user sent, from seq on.
func (c *ccm) requests(t *testing.T, from int) []moto.Request {
	t.Helper()
	reqs, err := aws.Requests(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []moto.Request
	for _, r := range moto.By(reqs, c.creds.AccessKeyID) {
		if r.Seq >= from {
			out = append(out, r)
		}
	}
	return out
}

// lastSeq is the sequence number of the newest request moto answered.
func lastSeq(t *testing.T) int {
	t.Helper()
	reqs, err := aws.Requests(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) == 0 {
		return 0
	}
	return reqs[len(reqs)-1].Seq
}

// alive fails the test when the CCM has exited.
func (c *ccm) alive(t *testing.T) {
	t.Helper()
	select {
	case <-c.proc.Done():
		t.Fatalf("the AWS CCM %s exited:\n%s", c.release.Version, tail(c.proc.Log(), 6000))
	default:
	}
}

func getNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n, err := cp.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func initialised(n *corev1.Node) bool {
	return n.Spec.ProviderID != "" && !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == uninitializedTaint })
}

// ec2Named are the nodes registered under their instances' names.
func ec2Named() []node {
	var out []node
	for _, n := range nodes {
		if !n.override {
			out = append(out, n)
		}
	}
	return out
}

// waitInitialised waits until the CCM has initialised every node named by
// its instance and returns how long that took. The cloud node controller
// writes a node twice: the providerID, labels and taint first, then its
// addresses (k8s.io/cloud-provider controllers/node/node_controller.go,
// syncNode: updateNodeAddress after the update that drops the taint, at
// v0.26.0 and v0.35.0), so a node counts once it has both.
func (c *ccm) waitInitialised(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	harness.WaitFor(t, 3*time.Minute, "the CCM to initialise every node named by its instance", func() bool {
		c.alive(t)
		for _, n := range ec2Named() {
			// The taint goes first; the CCM writes the instance's
			// addresses after that, over those the node registered with
			// (k8s.io/cloud-provider v0.26.0, which CCM v1.26.0 links,
			// controllers/node/node_controller.go: syncNode's Update, then
			// updateNodeAddress): wait for them too.
			if got := getNode(t, n.node.Name); !initialised(got) || addressesOf(got)[corev1.NodeInternalDNS] != n.instance.PrivateDNSName {
				return false
			}
		}
		return true
	})
	return time.Since(start)
}

// addressesOf gives a node's first address of each type.
func addressesOf(n *corev1.Node) map[corev1.NodeAddressType]string {
	addrs := map[corev1.NodeAddressType]string{}
	for _, a := range n.Status.Addresses {
		if _, ok := addrs[a.Type]; !ok {
			addrs[a.Type] = a.Address
		}
	}
	return addrs
}

// checkInitialised asserts what the CCM wrote on a node: the providerID of
// its instance, the instance's addresses, the topology labels, the
// uninitialized taint gone and the node's other taints kept.
func checkInitialised(t *testing.T, r awsccm.Release, n node) {
	t.Helper()
	got := getNode(t, n.node.Name)
	if got.Spec.ProviderID != n.instance.ProviderID() {
		t.Errorf("%s %s: providerID %q, want %q", n.distro, got.Name, got.Spec.ProviderID, n.instance.ProviderID())
	}
	addrs := addressesOf(got)
	for typ, want := range map[corev1.NodeAddressType]string{
		corev1.NodeInternalIP: n.instance.PrivateIP, corev1.NodeInternalDNS: n.instance.PrivateDNSName, corev1.NodeHostName: n.instance.PrivateDNSName,
	} {
		if addrs[typ] != want {
			t.Errorf("%s %s: address %s %q, want %q (all: %v)", n.distro, got.Name, typ, addrs[typ], want, got.Status.Addresses)
		}
	}
	wantLabels := map[string]string{
		corev1.LabelTopologyZone:       cluster.Zone,
		corev1.LabelTopologyRegion:     cluster.Region(),
		corev1.LabelInstanceTypeStable: "t3.medium",
	}
	for k, v := range wantLabels {
		if got.Labels[k] != v {
			t.Errorf("%s %s: label %s=%q, want %q", n.distro, got.Name, k, got.Labels[k], v)
		}
	}
	if r.Name != "1.26" && got.Labels["topology.k8s.aws/zone-id"] == "" {
		t.Errorf("%s %s: no topology.k8s.aws/zone-id label (labels %v)", n.distro, got.Name, got.Labels)
	}
	var want []string
	for _, tt := range n.node.Spec.Taints {
		if tt.Key != uninitializedTaint {
			want = append(want, tt.Key+":"+string(tt.Effect))
		}
	}
	var have []string
	for _, tt := range got.Spec.Taints {
		have = append(have, tt.Key+":"+string(tt.Effect))
	}
	if !slices.Equal(have, want) {
		t.Errorf("%s %s: taints %v, want %v (the fixture's but the uninitialized one)", n.distro, got.Name, have, want)
	}
}

// checkOverridesUninitialised asserts that every node registered under a
// hostname override is still uninitialised, and that the CCM's log says
// why for each.
func (c *ccm) checkOverridesUninitialised(t *testing.T) {
	t.Helper()
	for _, n := range nodes {
		if !n.override {
			continue
		}
		// The node controller logs each failed sync: "error syncing 'NAME':
		// failed to get provider ID for node NAME at cloudprovider: ...".
		re := regexp.MustCompile(`error syncing '` + regexp.QuoteMeta(n.node.Name) + `': ([^\n]*)`)
		var reason string
		harness.WaitFor(t, time.Minute, "the CCM's error for node "+n.node.Name, func() bool {
			c.alive(t)
			if m := re.FindStringSubmatch(c.proc.Log()); m != nil {
				reason = m[1]
				return true
			}
			return false
		})
		if !strings.Contains(reason, "instance not found") {
			t.Errorf("%s %s: the CCM's error %q does not say the instance was not found", n.distro, n.node.Name, reason)
		}
		if got := getNode(t, n.node.Name); initialised(got) || got.Spec.ProviderID != "" {
			t.Errorf("%s %s registered under a hostname override: initialised (providerID %q)", n.distro, got.Name, got.Spec.ProviderID)
		}
		t.Logf("%s node %s (hostname override, instance %s): uninitialised; CCM: error syncing: %s", n.distro, n.node.Name, n.instance.PrivateDNSName, reason)
	}
}

// loadBalancer creates a Service of type LoadBalancer and waits until the
// CCM has ensured its load balancer, or has failed to (the Service's
// SyncLoadBalancerFailed event). It returns the Service's ingress hostname
// or the event's message; the cleanup deletes the Service and waits until
// the CCM has deleted the load balancer.
func (c *ccm) loadBalancer(t *testing.T, name string) (hostname, failure string) {
	t.Helper()
	return c.loadBalancerWith(t, name, nil)
}

// loadBalancerWith is loadBalancer for a Service with annotations.
func (c *ccm) loadBalancerWith(t *testing.T, name string, annotations map[string]string) (hostname, failure string) {
	t.Helper()
	ctx := context.Background()
	services := cp.Client.CoreV1().Services("default")
	svc, err := services.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.deleteService(t, name) })
	harness.WaitFor(t, 3*time.Minute, "the CCM to ensure the load balancer of Service "+name+" (or fail to)", func() bool {
		c.alive(t)
		s, err := services.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ing := s.Status.LoadBalancer.Ingress; len(ing) > 0 {
			hostname = ing[0].Hostname
			return true
		}
		events, err := cp.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.uid=" + string(svc.UID) + ",reason=SyncLoadBalancerFailed",
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(events.Items) > 0 {
			failure = events.Items[0].Message
			return true
		}
		return false
	})
	return hostname, failure
}

// deleteService deletes a Service of type LoadBalancer and, while the CCM
// runs, waits until it has deleted the load balancer and let the Service
// go; otherwise drops the CCM's finalizer itself.
func (c *ccm) deleteService(t *testing.T, name string) {
	ctx := context.Background()
	services := cp.Client.CoreV1().Services("default")
	if err := services.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Error(err)
		return
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := services.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			// Its events outlive it, and check reads them: the next
			// release's test starts without them (TestRancherPolicy's
			// check expects no refusal before its own load balancer).
			if err := cp.Client.CoreV1().Events("default").DeleteCollection(ctx, metav1.DeleteOptions{},
				metav1.ListOptions{FieldSelector: "involvedObject.kind=Service,involvedObject.name=" + name}); err != nil {
				t.Error(err)
			}
			return
		}
		select {
		case <-c.proc.Done():
			deadline = time.Now()
		case <-time.After(250 * time.Millisecond):
		}
	}
	if s, err := services.Get(ctx, name, metav1.GetOptions{}); err == nil {
		t.Errorf("Service %s still there after its deletion (finalizers %v): dropping them", name, s.Finalizers)
		s.Finalizers = nil
		_, _ = services.Update(ctx, s, metav1.UpdateOptions{})
	}
}

// lbOf returns moto's Classic ELB with a DNS name.
func lbOf(t *testing.T, dns string) *moto.LoadBalancer {
	t.Helper()
	lbs, err := aws.LoadBalancers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range lbs {
		if lbs[i].DNSName == dns {
			return &lbs[i]
		}
	}
	return nil
}

// actions lists the distinct actions of requests, in order.
func actions(reqs []moto.Request) []string {
	var out []string
	for _, r := range reqs {
		if a := r.Service + ":" + r.Action; !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// check runs `aws-ccm-renderer check -f -` on a rendered stream against the
// test cluster, or, with none, `aws-ccm-renderer check` of what the
// cluster runs; it exits non-zero when it finds a problem, which is what
// the tests read.
func check(t *testing.T, stream []byte) string {
	t.Helper()
	args := []string{"check", "--kubeconfig", cp.Kubeconfig, "--no-color"}
	if stream != nil {
		args = append(args, "-f", "-")
	}
	cmd := exec.Command(testtools.Renderer(t), args...)
	cmd.Env = testtools.HelmEnv(t)
	cmd.Stdin = bytes.NewReader(stream)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	if code := testtools.ExitCode(err); code < 0 || errOut.Len() > 0 && out.Len() == 0 {
		t.Fatalf("check: %v\n%s", err, errOut.String())
	}
	t.Logf("check %s: %s", strings.Join(args[3:], " "), time.Since(start).Round(time.Millisecond))
	return out.String()
}

// lines returns the lines of check's table that contain every part, each
// with its fix line when it has one.
func lines(out string, parts ...string) []string {
	var found []string
	all := strings.Split(out, "\n")
	for i, l := range all {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if !ok || strings.HasPrefix(strings.TrimSpace(l), "→") {
			continue
		}
		line := strings.TrimSpace(l)
		if i+1 < len(all) && strings.HasPrefix(strings.TrimSpace(all[i+1]), "→") {
			line += "\n" + strings.TrimSpace(all[i+1])
		}
		found = append(found, line)
	}
	return found
}

// installWorkload creates the rendered DaemonSet in the cluster (no
// controller makes pods of it here: the CCM under test runs as a process),
// so that check reads the CCM as installed; the cleanup removes it.
func installWorkload(t *testing.T, stream []byte) {
	t.Helper()
	objs, err := harness.Decode(stream)
	if err != nil {
		t.Fatal(err)
	}
	var ds []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "DaemonSet" {
			ds = append(ds, o)
		}
	}
	if err := cp.Apply(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Remove(context.Background(), ds); err != nil {
			t.Error(err)
		}
	})
}
