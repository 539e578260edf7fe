package awsccm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/awsccm"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/moto"
	checkpkg "github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestCheckAWSCalibration holds `check --aws` to the real AWS CCM: for each
// release the package runs, on a healthy account and on each fault class
// seeded on moto one at a time (and restored by the row's cleanup), check
// reads the account as a read-only IAM user and judges it as that release
// would, and the CCM then runs on the same account. check must say ✗
// exactly where the CCM fails, in the way check said, and ✓ where the CCM
// initialises every node and ensures the load balancer. Each row logs one
// line of the calibration table:
//
//	calibration | <fault> | <release> | check: <its line> | CCM: <what it did>
//
// check runs right after the CCM starts: it needs the CCM's IAM user to
// exist (--aws-ccm-principal, simulated), and what it judges does not
// depend on whether the CCM has reached a node yet. Every row is modelled
// on moto; none is skipped.
func TestCheckAWSCalibration(t *testing.T) {
	renders(t)
	rows := []struct {
		fault string
		run   func(t *testing.T, r awsccm.Release, stream []byte) (verdict, did string)
	}{
		{"healthy", calHealthy},
		{"instance without the cluster tag", calUntagged},
		{"node name not the instance's", calOverride},
		{`providerID "aws"`, calBadProviderID},
		{"two security groups tagged for the cluster", calTwoGroups},
		{"no public subnet", calNoPublicSubnet},
		{"IAM without ec2:DescribeAvailabilityZones", calNoDescribeAZs},
		{"load balancers not the CCM's", calNotOurs},
	}
	var table []string
	for _, r := range releases {
		t.Run(r.Version, func(t *testing.T) {
			stream := streamOf(t, r)
			for _, row := range rows {
				t.Run(row.fault, func(t *testing.T) {
					start := time.Now()
					verdict, did := row.run(t, r, stream)
					line := fmt.Sprintf("calibration | %s | %s | check: %s | CCM: %s", row.fault, r.Version, verdict, did)
					t.Logf("%s (%s)", line, time.Since(start).Round(time.Second))
					table = append(table, line)
				})
			}
		})
	}
	t.Logf("calibration table:\n%s", strings.Join(table, "\n"))
}

// calHealthy: the RKE2 nodes named by their instances, nothing wrong.
func calHealthy(t *testing.T, r awsccm.Release, stream []byte) (string, string) {
	ns := registerHealthy(t)
	installWorkload(t, stream)
	c := startCal(t, r)
	out, exit := checkAWS(t, stream, "--aws-ccm-principal", userARN(c.name))
	if exit != 0 {
		t.Logf("check --aws exits %d on the healthy account for the cluster's side: %q", exit, otherErrors(out))
	}
	bad := awsLines(out, "✗", "!")
	if len(bad) > 0 {
		t.Errorf("check --aws on the healthy account: %q\n%s", bad, out)
	}
	var oks []string
	for _, area := range []string{checkpkg.AreaInstance, checkpkg.AreaClusterID, checkpkg.AreaSecurityGroup, checkpkg.AreaSubnet, checkpkg.AreaIAM, checkpkg.AreaMetadata} {
		l := findings(out, "✓", area)
		if len(l) == 0 {
			t.Errorf("check --aws on the healthy account: no ✓ %s line:\n%s", area, out)
		}
		oks = append(oks, l...)
	}
	c.waitNodes(t, ns)
	for _, n := range ns {
		checkInitialised(t, r, n)
	}
	name := fmt.Sprintf("cal-healthy-%d", r.Minor())
	host, failure := c.loadBalancer(t, name)
	if host == "" {
		t.Fatalf("the AWS CCM %s did not ensure the load balancer of the healthy account: %s", r.Version, failure)
	}
	out, _ = checkAWS(t, stream, "--aws-ccm-principal", userARN(c.name))
	lb := findings(out, "✓", checkpkg.AreaLoadBalancer, "default/"+name)
	if len(lb) != 1 {
		t.Errorf("check --aws after the CCM ensured the load balancer of Service default/%s: want one ✓ load-balancer line naming it:\n%s", name, out)
	}
	if bad := awsLines(out, "✗", "!"); len(bad) > 0 {
		t.Errorf("check --aws on the healthy account with its load balancer: %q\n%s", bad, out)
	}
	return fmt.Sprintf("no ✗ or ! in the AWS areas (%d ✓ lines); after the ELB: %s", len(oks), strings.Join(lb, "; ")),
		fmt.Sprintf("initialised %d/%d nodes; ELB ensured (%s)", len(ns), len(ns), host)
}

// calUntagged: one more node, whose instance lacks the cluster tag.
func calUntagged(t *testing.T, r awsccm.Release, stream []byte) (string, string) {
	ns := registerHealthy(t)
	in := extraInstance(t, "cal-untagged")
	if err := aws.Call(context.Background(), "ec2", "DeleteTags", map[string]any{
		"Resources": []string{in.ID}, "Tags": []map[string]string{{"Key": cluster.Tag()}},
	}, nil); err != nil {
		t.Fatal(err)
	}
	bad := extraNode(t, in, "")
	installWorkload(t, stream)
	c := startCal(t, r)
	out, exit := checkAWS(t, stream, "--aws-ccm-principal", userARN(c.name))
	inst := findings(out, "✗", checkpkg.AreaInstance, bad.Name, "lacks the tag")
	id := findings(out, "✗", checkpkg.AreaClusterID, in.ID)
	if len(inst) != 1 || len(id) != 1 || exit != 1 {
		t.Errorf("check --aws (exit %d): want a ✗ instance line naming %s (lacks the tag) and a ✗ cluster-id line naming %s:\n%s", exit, bad.Name, in.ID, out)
	}
	noOtherErrors(t, out, append(inst, id...))
	c.waitNodes(t, ns)
	reason := c.syncError(t, bad.Name, "instance not found")
	stillTainted(t, bad.Name)
	return strings.Join(append(inst, id...), "; "),
		fmt.Sprintf("initialised %d/%d nodes, not %s: %s", len(ns), len(ns)+1, bad.Name, reason)
}

// calOverride: the RKE2 node the package registers under its fixture's
// name (a hostname override), beside the healthy ones.
func calOverride(t *testing.T, r awsccm.Release, stream []byte) (string, string) {
	ns := registerHealthy(t)
	var o node
	for _, n := range nodes {
		if n.distro == "rke2" && n.override {
			o = n
		}
	}
	register(t, o.node)
	installWorkload(t, stream)
	c := startCal(t, r)
	out, exit := checkAWS(t, stream, "--aws-ccm-principal", userARN(c.name))
	inst := findings(out, "✗", checkpkg.AreaInstance, o.node.Name)
	if len(inst) != 1 || exit != 1 {
		t.Errorf("check --aws (exit %d): want a ✗ instance line naming %s:\n%s", exit, o.node.Name, out)
	}
	noOtherErrors(t, out, inst)
	c.waitNodes(t, ns)
	reason := c.syncError(t, o.node.Name, "instance not found")
	stillTainted(t, o.node.Name)
	return strings.Join(inst, "; "), fmt.Sprintf("initialised %d/%d nodes, not %s: %s", len(ns), len(ns)+1, o.node.Name, reason)
}

// calBadProviderID: one more node, named by its instance, whose kubelet
// was given --provider-id=aws.
func calBadProviderID(t *testing.T, r awsccm.Release, stream []byte) (string, string) {
	ns := registerHealthy(t)
	in := extraInstance(t, "cal-providerid")
	bad := extraNode(t, in, "aws")
	installWorkload(t, stream)
	c := startCal(t, r)
	out, exit := checkAWS(t, stream, "--aws-ccm-principal", userARN(c.name))
	inst := findings(out, "✗", checkpkg.AreaInstance, bad.Name, `providerID "aws" names no instance`)
	if len(inst) != 1 || exit != 1 {
		t.Errorf("check --aws (exit %d): want a ✗ instance line naming %s (providerID \"aws\" names no instance):\n%s", exit, bad.Name, out)
	}
	noOtherErrors(t, out, inst)
	if panicsOnProviderID(r) {
		// The release's node informer indexes the nodes by the instance
		// ID of their providerID and panics on one it cannot map
		// (InstanceIDIndexFunc; fixed in v1.26.11): the CCM exits before
		// any controller has synced, and a pod of it crash-loops.
		if len(inst) == 1 && !strings.Contains(inst[0], "panics") {
			t.Errorf("check --aws says the CCM %s goes on without the node; it exits: %s", r.Version, inst[0])
		}
		harness.WaitFor(t, 2*time.Minute, "the AWS CCM "+r.Version+" to exit", func() bool {
			select {
			case <-c.proc.Done():
				return true
			default:
				return false
			}
		})
		panicLine := regexp.MustCompile(`panic: unable to calculate an index entry[^\n]*`).FindString(c.proc.Log())
		if !strings.Contains(panicLine, "Invalid format for AWS instance") {
			t.Errorf("the AWS CCM %s exited without the indexer's panic on the providerID:\n%s", r.Version, tail(c.proc.Log(), 3000))
		}
		for _, n := range append(slices.Clone(ns), node{node: *bad}) {
			stillTainted(t, n.node.Name)
		}
		return strings.Join(inst, "; "), fmt.Sprintf("exited at start, initialised 0/%d nodes: %s", len(ns)+1, panicLine)
	}
	c.waitNodes(t, ns)
	reason := c.syncError(t, bad.Name, "Invalid format for AWS instance")
	stillTainted(t, bad.Name)
	return strings.Join(inst, "; "), fmt.Sprintf("initialised %d/%d nodes, not %s: %s", len(ns), len(ns)+1, bad.Name, reason)
}

// calTwoGroups: a second security group tagged for the cluster on one
// node's instance.
func calTwoGroups(t *testing.T, r awsccm.Release, stream []byte) (string, string) {
	ctx := context.Background()
	ns := registerHealthy(t)
	target := workerOf(t, ns)
	var sg struct{ GroupId string }
	if err := aws.Call(ctx, "ec2", "CreateSecurityGroup", map[string]any{
		"GroupName": fmt.Sprintf("cal-second-%d", r.Minor()), "Description": "a second group tagged for the cluster", "VpcId": network.VPC,
		"TagSpecifications": []map[string]any{{"ResourceType": "security-group", "Tags": []map[string]string{{"Key": cluster.Tag(), "Value": "owned"}}}},
	}, &sg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := aws.Call(ctx, "ec2", "DeleteSecurityGroup", map[string]any{"GroupId": sg.GroupId}, nil); err != nil {
			t.Errorf("restoring the account: %v", err)
		}
	})
	setGroups(t, target.instance.ID, network.SecurityGroup, sg.GroupId)
	t.Cleanup(func() { setGroups(t, target.instance.ID, network.SecurityGroup) })
	installWorkload(t, stream)
	c := startCal(t, r)
	out, exit := checkAWS(t, stream, "--aws-ccm-principal", userARN(c.name))
	sgl := findings(out, "✗", checkpkg.AreaSecurityGroup, target.instance.ID)
	if len(sgl) != 1 || exit != 1 {
		t.Errorf("check --aws (exit %d): want a ✗ security-group line naming %s:\n%s", exit, target.instance.ID, out)
	}
	return c.failsLoadBalancer(t, out, sgl, ns, fmt.Sprintf("cal-groups-%d", r.Minor()), "Multiple tagged security groups found")
}

// failsLoadBalancer is the CCM's side of a row whose fault check found
// (lines, the only ✗ lines of the AWS areas): the CCM initialises every
// node, and the load balancer of a new Service fails with want.
func (c *ccm) failsLoadBalancer(t *testing.T, out string, lines []string, ns []node, service, want string) (string, string) {
	t.Helper()
	noOtherErrors(t, out, lines)
	c.waitNodes(t, ns)
	host, failure := c.loadBalancer(t, service)
	if host != "" || !strings.Contains(failure, want) {
		t.Errorf("the AWS CCM %s: load balancer %q, failure %q: want the failure %s", c.release.Version, host, failure, want)
	}
	return strings.Join(lines, "; "), fmt.Sprintf("initialised %d/%d nodes; ELB failed: %s", len(ns), len(ns), failure)
}

// calNoPublicSubnet: the cluster's subnet loses its route to the internet
// gateway.
func calNoPublicSubnet(t *testing.T, r awsccm.Release, stream []byte) (string, string) {
	ctx := context.Background()
	ns := registerHealthy(t)
	route := map[string]any{"RouteTableId": network.RouteTable, "DestinationCidrBlock": "0.0.0.0/0"}
	if err := aws.Call(ctx, "ec2", "DeleteRoute", route, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		restore := map[string]any{"RouteTableId": network.RouteTable, "DestinationCidrBlock": "0.0.0.0/0", "GatewayId": network.InternetGateway}
		if err := aws.Call(ctx, "ec2", "CreateRoute", restore, nil); err != nil {
			t.Errorf("restoring the account: %v", err)
		}
	})
	installWorkload(t, stream)
	c := startCal(t, r)
	out, exit := checkAWS(t, stream, "--aws-ccm-principal", userARN(c.name))
	sub := findings(out, "✗", checkpkg.AreaSubnet, "internet-facing", "could not find any suitable subnets")
	if len(sub) != 1 || exit != 1 {
		t.Errorf("check --aws (exit %d): want a ✗ subnet line for internet-facing load balancers (could not find any suitable subnets):\n%s", exit, out)
	}
	return c.failsLoadBalancer(t, out, sub, ns, fmt.Sprintf("cal-subnet-%d", r.Minor()), "could not find any suitable subnets")
}

// calNoDescribeAZs: the CCM's IAM user has the plan's policy of the
// release without ec2:DescribeAvailabilityZones. v1.26.0's policy does not
// list it (that release never calls it): check must judge per release.
func calNoDescribeAZs(t *testing.T, r awsccm.Release, stream []byte) (string, string) {
	const action = "ec2:DescribeAvailabilityZones"
	ns := registerHealthy(t)
	doc, listed := without(t, policyOf(t, planPolicy(t, r)), action)
	installWorkload(t, stream)
	c := startCalNamed(t, r, "the plan's policy of "+r.Version+" without "+action, doc)
	out, exit := checkAWS(t, stream, "--aws-ccm-principal", userARN(c.name))
	iamErr := findings(out, "✗", checkpkg.AreaIAM, userARN(c.name))
	if r.Minor() == 26 {
		if listed {
			t.Errorf("the plan's policy of %s lists %s", r.Version, action)
		}
		ok := findings(out, "✓", checkpkg.AreaIAM, userARN(c.name))
		if len(iamErr) > 0 || len(ok) != 1 {
			t.Errorf("check --aws for %s, whose policy lacks nothing it calls: want one ✓ iam line for %s and no ✗:\n%s", r.Version, userARN(c.name), out)
		}
		noOtherErrors(t, out, nil)
		c.waitNodes(t, ns)
		host, failure := c.loadBalancer(t, fmt.Sprintf("cal-azs-%d", r.Minor()))
		if host == "" {
			t.Errorf("the AWS CCM %s without %s: no load balancer: %s", r.Version, action, failure)
		}
		return strings.Join(ok, "; "), fmt.Sprintf("initialised %d/%d nodes; ELB ensured (%s)", len(ns), len(ns), host)
	}
	if len(iamErr) != 1 || !strings.Contains(iamErr[0], "may not "+action) || exit != 1 {
		t.Errorf("check --aws (exit %d): want a ✗ iam line saying %s may not %s:\n%s", exit, userARN(c.name), action, out)
	}
	noOtherErrors(t, out, iamErr)
	var reason string
	for _, n := range ns {
		reason = c.syncError(t, n.node.Name, "error describe availability zones")
	}
	for _, n := range ns {
		stillTainted(t, n.node.Name)
	}
	return strings.Join(iamErr, "; "), fmt.Sprintf("initialised 0/%d nodes: %s", len(ns), reason)
}

// calNotOurs: a Service of another controller's class, and a Classic ELB
// tagged for the cluster whose Service is gone.
func calNotOurs(t *testing.T, r awsccm.Release, stream []byte) (string, string) {
	ctx := context.Background()
	ns := registerHealthy(t)
	orphan := fmt.Sprintf("cal-orphan-%d", r.Minor())
	if err := aws.Call(ctx, "elb", "CreateLoadBalancer", map[string]any{
		"LoadBalancerName": orphan,
		"Listeners":        []map[string]any{{"Protocol": "TCP", "LoadBalancerPort": 80, "InstanceProtocol": "TCP", "InstancePort": 30080}},
		"Subnets":          []string{network.Subnet},
		"Tags":             []map[string]string{{"Key": "kubernetes.io/service-name", "Value": "default/gone"}, {"Key": cluster.Tag(), "Value": "owned"}},
	}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := aws.Call(ctx, "elb", "DeleteLoadBalancer", map[string]any{"LoadBalancerName": orphan}, nil); err != nil {
			t.Errorf("restoring the account: %v", err)
		}
	})
	class := "service.k8s.aws/nlb"
	theirs := fmt.Sprintf("cal-class-%d", r.Minor())
	services := cp.Client.CoreV1().Services("default")
	svc, err := services.Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: theirs},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class, Selector: map[string]string{"app": theirs},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := services.Delete(ctx, theirs, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	})
	installWorkload(t, stream)
	c := startCal(t, r)
	out, _ := checkAWS(t, stream, "--aws-ccm-principal", userARN(c.name))
	info := findings(out, "·", checkpkg.AreaLoadBalancer, "default/"+theirs, "another controller's")
	warn := findings(out, "!", checkpkg.AreaLoadBalancer, orphan, "default/gone")
	if len(info) != 1 || len(warn) != 1 {
		t.Errorf("check --aws: want a · load-balancer line saying Service default/%s is another controller's and a ! line naming ELB %s (Service default/gone):\n%s", theirs, orphan, out)
	}
	noOtherErrors(t, out, nil)
	c.waitNodes(t, ns)
	name := fmt.Sprintf("cal-ours-%d", r.Minor())
	host, failure := c.loadBalancer(t, name)
	if host == "" {
		t.Fatalf("the AWS CCM %s did not ensure the load balancer of Service %s: %s", r.Version, name, failure)
	}
	lbs, err := aws.LoadBalancers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var v2 struct {
		LoadBalancers []struct{ LoadBalancerName string }
	}
	if err := aws.Call(ctx, "elbv2", "DescribeLoadBalancers", map[string]any{}, &v2); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, lb := range lbs {
		names = append(names, lb.LoadBalancerName)
	}
	for _, lb := range v2.LoadBalancers {
		names = append(names, lb.LoadBalancerName)
	}
	classLB := "a" + strings.ReplaceAll(string(svc.UID), "-", "")
	classLB = classLB[:min(len(classLB), 32)]
	if slices.Contains(names, classLB) {
		t.Errorf("the AWS CCM %s made load balancer %s for Service default/%s of class %s", r.Version, classLB, theirs, class)
	}
	if !slices.Contains(names, orphan) {
		t.Errorf("the orphan ELB %s is gone: %v", orphan, names)
	}
	return strings.Join(append(info, warn...), "; "),
		fmt.Sprintf("ELB of Service default/%s ensured (%s); none (%s) for the class Service; orphan %s left alone", name, host, classLB, orphan)
}

// streamOf is the rendered stream with the CCM image of the release: check
// judges the release from the workload's image tag.
func streamOf(t *testing.T, r awsccm.Release) []byte {
	t.Helper()
	image := regexp.MustCompile(`(image:\s*"?[^\s"]*/cloud-controller-manager):[^\s"]+`)
	if len(image.FindAll(rendered, -1)) != 1 {
		t.Fatalf("not one CCM image in the rendered stream")
	}
	return image.ReplaceAll(rendered, []byte("${1}:"+r.Version))
}

func userARN(name string) string { return "arn:aws:iam::123456789012:user/" + name }

// startCal starts the CCM of a release as a new IAM user with the policy
// the plan prints for it (planPolicy), with the rendered RBAC and the
// package's cloud config.
func startCal(t *testing.T, r awsccm.Release) *ccm {
	t.Helper()
	return startCalNamed(t, r, "the plan's policy of "+r.Version, policyOf(t, planPolicy(t, r)))
}

func startCalNamed(t *testing.T, r awsccm.Release, label string, doc []byte) *ccm {
	t.Helper()
	return startCCMDoc(t, r, label, doc, rendered, awsccm.CloudConfig{Cluster: cluster, Network: network, URL: aws.URL}, trap)
}

// without returns the policy document without an action, and whether it
// had it.
func without(t *testing.T, doc []byte, action string) ([]byte, bool) {
	t.Helper()
	var p struct {
		Version   string
		Statement []struct {
			Effect   string
			Action   []string
			Resource string
		}
	}
	if err := json.Unmarshal(doc, &p); err != nil {
		t.Fatal(err)
	}
	had := false
	for i := range p.Statement {
		n := len(p.Statement[i].Action)
		p.Statement[i].Action = slices.DeleteFunc(p.Statement[i].Action, func(a string) bool { return a == action })
		had = had || len(p.Statement[i].Action) != n
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return out, had
}

// The checker: the IAM user check --aws reads the account as, allowed
// exactly checkpkg.AWSReadActions.
var (
	checkerOnce  sync.Once
	checkerCreds moto.Credentials
	checkerErr   error
)

func checker(t *testing.T) moto.Credentials {
	t.Helper()
	checkerOnce.Do(func() {
		doc, err := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{
			{"Effect": "Allow", "Action": checkpkg.AWSReadActions, "Resource": "*"},
		}})
		if err != nil {
			checkerErr = err
			return
		}
		checkerCreds, checkerErr = aws.CreateUser(context.Background(), "aws-ccm-renderer-check", doc)
	})
	if checkerErr != nil {
		t.Fatal(checkerErr)
	}
	return checkerCreds
}

// checkAWS runs `aws-ccm-renderer check --aws` on a rendered stream
// against the test cluster, as the checker, with AWS at moto and the
// region the nodes' (none in the environment), and asserts from moto's
// request log that it sent reads only and IAM refused it none. It returns
// check's table and exit code (1: an error found).
func checkAWS(t *testing.T, stream []byte, extraArgs ...string) (out string, exit int) {
	t.Helper()
	creds := checker(t)
	args := append([]string{"check", "--kubeconfig", cp.Kubeconfig, "--no-color", "-f", "-", "--aws"}, extraArgs...)
	env := slices.DeleteFunc(testtools.HelmEnv(t), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(name, "AWS_") || strings.HasSuffix(strings.ToLower(name), "_proxy")
	})
	env = append(append(env, awsccm.Env(creds, trap)...), "AWS_ENDPOINT_URL="+aws.URL)
	from := lastSeq(t) + 1
	cmd := exec.Command(testtools.Renderer(t), args...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stream)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	exit = testtools.ExitCode(err)
	if exit < 0 || exit > 1 || stderr.Len() > 0 && stdout.Len() == 0 {
		t.Fatalf("check --aws: exit %d (%v)\nstderr: %s\nstdout: %s", exit, err, stderr.String(), stdout.String())
	}
	reqs, err := aws.Requests(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var mine []moto.Request
	for _, q := range moto.By(reqs, creds.AccessKeyID) {
		if q.Seq >= from {
			mine = append(mine, q)
		}
	}
	if len(mine) == 0 {
		t.Errorf("check --aws sent moto no request")
	}
	if w := moto.Writes(mine); len(w) > 0 {
		t.Errorf("check --aws sent requests that are not reads: %v", actions(w))
	}
	if d := moto.Denied(mine); len(d) > 0 {
		t.Errorf("IAM refused check --aws %v: checkpkg.AWSReadActions is not enough", d)
	}
	t.Logf("check --aws %s: exit %d, %d requests to moto (%v), %s; its AWS lines:\n%s", strings.Join(extraArgs, " "), exit, len(mine), actions(mine),
		time.Since(start).Round(time.Millisecond), awsTable(stdout.String()))
	return stdout.String(), exit
}

// awsAreas are the areas of check --aws's findings.
var awsAreas = []string{checkpkg.AreaAWS, checkpkg.AreaInstance, checkpkg.AreaClusterID, checkpkg.AreaSecurityGroup, checkpkg.AreaSubnet,
	checkpkg.AreaIAM, checkpkg.AreaMetadata, checkpkg.AreaLoadBalancer}

// findings returns check's table lines (without their fix) with a mark,
// of an area, that contain every part.
func findings(out, mark, area string, parts ...string) []string {
	var found []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != mark || f[1] != area {
			continue
		}
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			found = append(found, strings.Join(strings.Fields(l), " "))
		}
	}
	return found
}

// awsLines returns the lines of the AWS areas with one of the marks. The
// iam area's findings from the events (an AWS refusal some CCM met before,
// in an earlier test) are check's reading of the cluster, not of the
// account, and are left out.
func awsLines(out string, marks ...string) []string {
	var found []string
	for _, m := range marks {
		for _, a := range awsAreas {
			for _, l := range findings(out, m, a) {
				if a == checkpkg.AreaIAM && strings.Contains(l, "AWS refused it to the cloud controllers") {
					continue
				}
				found = append(found, l)
			}
		}
	}
	return found
}

// otherErrors are the ✗ lines of check's areas that do not read AWS.
func otherErrors(out string) []string {
	var found []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "✗" && !slices.Contains(awsAreas, f[1]) {
			found = append(found, strings.Join(f, " "))
		}
	}
	return found
}

// noOtherErrors fails the test for ✗ lines of the AWS areas other than
// the expected ones: one fault, one verdict.
func noOtherErrors(t *testing.T, out string, expected []string) {
	t.Helper()
	for _, l := range awsLines(out, "✗") {
		if !slices.Contains(expected, l) {
			t.Errorf("check --aws: an error besides the fault's: %s", l)
		}
	}
}

// registerHealthy registers the RKE2 fixture nodes named by their
// instances (not the one under a hostname override) and returns them.
func registerHealthy(t *testing.T) []node {
	t.Helper()
	var ns []node
	for _, n := range ec2Named() {
		if n.distro == "rke2" {
			ns = append(ns, n)
			register(t, n.node)
		}
	}
	return ns
}

// register creates a node as its kubelet registers it; the cleanup
// deletes it.
func register(t *testing.T, n corev1.Node) {
	t.Helper()
	t.Cleanup(func() {
		err := cp.Client.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	})
	if err := cp.CreateNodes(context.Background(), []corev1.Node{n}); err != nil {
		t.Fatal(err)
	}
}

// workerOf is the RKE2 worker among the nodes.
func workerOf(t *testing.T, ns []node) node {
	t.Helper()
	for _, n := range ns {
		if n.instance.Name == "rke2-worker" {
			return n
		}
	}
	t.Fatal("no rke2-worker fixture")
	return node{}
}

// extraInstance runs one more instance of the cluster; the cleanup
// terminates it.
func extraInstance(t *testing.T, name string) moto.Instance {
	t.Helper()
	ins, err := aws.RunInstances(context.Background(), cluster, network, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := aws.Call(context.Background(), "ec2", "TerminateInstances", map[string]any{"InstanceIds": []string{ins[0].ID}}, nil); err != nil {
			t.Errorf("restoring the account: %v", err)
		}
	})
	return ins[0]
}

// extraNode registers an RKE2 worker on an instance, named by its private
// DNS name, with the kubelet's addresses and the uninitialized taint, and
// a providerID when one is given.
func extraNode(t *testing.T, in moto.Instance, providerID string) *corev1.Node {
	t.Helper()
	n := nodeOn(t, in, providerID)
	register(t, *n)
	return n
}

// nodeOn is extraNode's node, not yet registered.
func nodeOn(t *testing.T, in moto.Instance, providerID string) *corev1.Node {
	t.Helper()
	var n *corev1.Node
	for _, x := range nodes {
		if x.distro == "rke2" && !x.override && x.instance.Name == "rke2-worker" {
			n = x.node.DeepCopy()
		}
	}
	if n == nil {
		t.Fatal("no rke2-worker fixture")
	}
	n.Name = in.PrivateDNSName
	n.Labels["kubernetes.io/hostname"] = n.Name
	n.Spec.ProviderID = providerID
	registered("rke2", n, in)
	return n
}

// panicsOnProviderID: the release's CCM exits on a node whose providerID
// it cannot map to an instance ID (cloud-provider-aws before v1.26.11 of
// the 1.26 minor, v1.27.6 of 1.27; see check's panicsOnProviderID).
func panicsOnProviderID(r awsccm.Release) bool {
	parts := strings.SplitN(strings.TrimPrefix(r.Version, "v"), ".", 3)
	patch := 0
	if len(parts) == 3 {
		fmt.Sscanf(parts[2], "%d", &patch)
	}
	first, ok := map[int]int{23: 20, 24: 19, 25: 15, 26: 11, 27: 6}[r.Minor()]
	return ok && patch < first
}

// setGroups sets an instance's security groups.
func setGroups(t *testing.T, instance string, groups ...string) {
	t.Helper()
	if err := aws.Call(context.Background(), "ec2", "ModifyInstanceAttribute", map[string]any{"InstanceId": instance, "Groups": groups}, nil); err != nil {
		t.Errorf("setting the security groups of %s: %v", instance, err)
	}
}

// waitNodes waits until the CCM has initialised the nodes: their
// providerID, the uninitialized taint gone, and the addresses it sets (an
// InternalDNS one, which the kubelet does not set).
func (c *ccm) waitNodes(t *testing.T, ns []node) {
	t.Helper()
	harness.WaitFor(t, 3*time.Minute, fmt.Sprintf("the CCM to initialise the %d nodes named by their instances", len(ns)), func() bool {
		c.alive(t)
		for _, n := range ns {
			got := getNode(t, n.node.Name)
			if !initialised(got) || !slices.ContainsFunc(got.Status.Addresses, func(a corev1.NodeAddress) bool { return a.Type == corev1.NodeInternalDNS }) {
				return false
			}
		}
		return true
	})
}

// syncError waits until the CCM's log says why it could not sync a node
// ("error syncing 'NAME': ...") in words that contain want, and returns
// that reason.
func (c *ccm) syncError(t *testing.T, name, want string) string {
	t.Helper()
	re := regexp.MustCompile(`error syncing '` + regexp.QuoteMeta(name) + `': ([^\n]*)`)
	var reason, last string
	harness.WaitForState(t, 2*time.Minute, fmt.Sprintf("the CCM's log to say %q for node %s", want, name), func() (bool, string) {
		c.alive(t)
		for _, m := range re.FindAllStringSubmatch(c.proc.Log(), -1) {
			last = m[1]
			if strings.Contains(m[1], want) {
				reason = m[1]
				return true, ""
			}
		}
		return false, "last error: " + last
	})
	return strings.TrimSpace(reason)
}

// stillTainted fails the test when the CCM has initialised a node.
func stillTainted(t *testing.T, name string) {
	t.Helper()
	got := getNode(t, name)
	if !slices.ContainsFunc(got.Spec.Taints, func(tt corev1.Taint) bool { return tt.Key == uninitializedTaint }) {
		t.Errorf("node %s: the uninitialized taint is gone (providerID %q)", name, got.Spec.ProviderID)
	}
}

// awsTable is check's table in the AWS areas, with the fixes: what a
// user reads of the account.
func awsTable(out string) string {
	var b strings.Builder
	keep := false
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && len(f[0]) <= 3 && !strings.HasPrefix(f[0], "→"):
			keep = slices.Contains(awsAreas, f[1])
		case len(f) > 0 && strings.HasPrefix(f[0], "→"):
		default:
			keep = false
		}
		if keep {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
