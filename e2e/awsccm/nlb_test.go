package awsccm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/awsccm"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/moto"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	rel "github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The Service annotations of an NLB whose target group's attributes the
// CCM sets (kubernetes/cloud-provider-aws pkg/providers/v1/aws.go,
// ServiceAnnotationLoadBalancerType and
// ServiceAnnotationLoadBalancerTargetGroupAttributes; read from v1.32.6,
// v1.33.3, v1.34.0 and v1.34.2, v1.35.0 on: aws_loadbalancer.go
// reconcileTargetGroupsAttributes). The two attributes are the only ones
// the CCM accepts (aws_validations.go), each set against AWS's default for
// a TCP target group of instances.
const (
	annotationLBType      = "service.beta.kubernetes.io/aws-load-balancer-type"
	annotationTGAttrs     = "service.beta.kubernetes.io/aws-load-balancer-target-group-attributes"
	describeTGAttrs       = rel.ActionDescribeTargetGroupAttributes
	modifyTGAttrs         = rel.ActionModifyTargetGroupAttributes
	tgAttrsAnnotationText = "preserve_client_ip.enabled=false,proxy_protocol_v2.enabled=true"
)

// wantTGAttrs are the attributes the annotation sets; defaultTGAttrs
// AWS's defaults for them (moto's, patched: e2e/moto/server.py).
var (
	wantTGAttrs    = map[string]string{"preserve_client_ip.enabled": "false", "proxy_protocol_v2.enabled": "true"}
	defaultTGAttrs = map[string]string{"preserve_client_ip.enabled": "true", "proxy_protocol_v2.enabled": "false"}
)

// TestTargetGroupAttributes calibrates the IAM policy the plan prints for
// each release (its before.iam snippet: the actions the release's code
// calls, releases.IAMPolicy) against the docs' (releases.IAMControlPlane,
// docs/prerequisites.md at the release) on the real AWS CCM: a Service of
// type LoadBalancer, an NLB with the target-group-attributes annotation.
// For a release whose code calls the target group attribute actions (the
// data says which; the test fails where the CCM's requests say
// otherwise):
//   - under the plan's policy the Service gets its NLB and moto's target
//     group has the annotation's attributes, and a changed annotation is
//     set on the next sync;
//   - under the docs' policy, which lacks both actions, the Service never
//     gets a load balancer: SyncLoadBalancerFailed names the refused
//     elasticloadbalancing:DescribeTargetGroupAttributes;
//   - under the docs' policy with DescribeTargetGroupAttributes added, it
//     fails on ModifyTargetGroupAttributes: both are needed.
//
// A release whose code does not call them (v1.26.0) is not told to grant
// them (neither policy has them) and reconciles under the docs' policy,
// sending neither action; the annotation changes nothing in moto.
//
// Each run logs a row of the calibration table:
//
//	calibration | target-group-attributes | <release> | <policy> | <outcome> | <seconds from the Service to its status or event>
func TestTargetGroupAttributes(t *testing.T) {
	renders(t)
	var table []string
	for _, r := range releases {
		t.Run(r.Version, func(t *testing.T) {
			calls := callsTGAttrs(t, r)
			code, docs := planPolicy(t, r), rel.IAMControlPlane(r.Version)
			if !slices.Equal(code, rel.IAMPolicy(r.Version)) {
				t.Errorf("the plan's policy of %s is not the one its code calls (releases.IAMPolicy): %v", r.Version, code)
			}
			for _, a := range []string{describeTGAttrs, modifyTGAttrs} {
				if slices.Contains(docs, a) {
					t.Errorf("the docs' policy of %s has %s: nothing to calibrate", r.Version, a)
				}
				if slices.Contains(code, a) != calls {
					t.Errorf("the plan's policy of %s: %s in it %v, the release calls it %v", r.Version, a, slices.Contains(code, a), calls)
				}
			}
			onlyCode, _ := rel.IAMDiff(r.Version)
			var diff []string
			for _, c := range onlyCode {
				diff = append(diff, c.Action)
			}
			t.Logf("%s: the code calls, the docs' policy lacks: %v", r.Version, diff)
			type run struct {
				label   string
				actions []string
			}
			runs := []run{{"plan's policy", code}, {"docs' policy", docs}}
			if calls {
				runs = append(runs, run{"docs' policy + " + describeTGAttrs, append(slices.Clone(docs), describeTGAttrs)})
			}
			for i, p := range runs {
				t.Run(p.label, func(t *testing.T) {
					outcome, took := nlbUnder(t, r, p.label, p.actions, calls, fmt.Sprintf("nlb-%d-%d", r.Minor(), i))
					line := fmt.Sprintf("calibration | target-group-attributes | %s | %s | %s | %.1f s", r.Version, p.label, outcome, took.Seconds())
					t.Log(line)
					table = append(table, line)
				})
			}
		})
	}
	t.Logf("calibration table:\n%s", strings.Join(table, "\n"))
}

// callsTGAttrs says whether a release's code calls both target group
// attribute actions, as CodeCalls has it; one without the other fails.
func callsTGAttrs(t *testing.T, r awsccm.Release) bool {
	t.Helper()
	has := func(action string) bool {
		return slices.ContainsFunc(rel.Calls(r.Version), func(c rel.CodeCall) bool { return c.Action == action })
	}
	if _, ok := rel.CodeCalls[r.Version]; !ok {
		t.Fatalf("CodeCalls has no data for %s", r.Version)
	}
	if has(describeTGAttrs) != has(modifyTGAttrs) {
		t.Fatalf("CodeCalls of %s: %s %v, %s %v", r.Version, describeTGAttrs, has(describeTGAttrs), modifyTGAttrs, has(modifyTGAttrs))
	}
	if has(describeTGAttrs) != rel.ReadsTargetGroupAttributes(r.Version) {
		t.Errorf("CodeCalls of %s has %s %v; releases.TargetGroupAttributes says %v", r.Version, describeTGAttrs, has(describeTGAttrs), rel.ReadsTargetGroupAttributes(r.Version))
	}
	return has(describeTGAttrs)
}

// planPolicy is the control-plane policy's actions the plan prints for a
// release (the ccm-control-plane-policy.json snippet of its before.iam
// step): an RKE2 cluster at the release's minor, new from 1.27, on the
// in-tree provider up to 1.26, with the release pinned (--ccm-version).
func planPolicy(t *testing.T, r awsccm.Release) []string {
	t.Helper()
	o := plan.DefaultOptions()
	o.Distro, o.KubeVersion, o.CCMVersion = distros.RKE2, fmt.Sprintf("v1.%d.0", r.Minor()), r.Version
	if r.Minor() > rel.LastInTreeMinor {
		o.From = plan.FromNew
	}
	p, err := plan.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	return planActions(t, p)
}

// planActions reads the actions of a plan's IAM policy: the snippet
// ccm-control-plane-policy.json of its before.iam.
func planActions(t *testing.T, p *plan.Plan) []string {
	t.Helper()
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			for _, sn := range s.Snippets {
				if s.ID != "before.iam" || sn.File != "ccm-control-plane-policy.json" {
					continue
				}
				var doc struct{ Statement []struct{ Action []string } }
				if err := json.Unmarshal([]byte(sn.Content), &doc); err != nil || len(doc.Statement) != 1 {
					t.Fatalf("the %s plan's policy of %s: %v\n%s", p.Distro, p.CCM.ImageTag, err, sn.Content)
				}
				return doc.Statement[0].Action
			}
		}
	}
	t.Fatalf("the %s plan for %s has no before.iam step with ccm-control-plane-policy.json", p.Distro, p.CCM.ImageTag)
	return nil
}

// nlbUnder runs the CCM of a release under a policy on the RKE2 nodes,
// creates the annotated NLB Service and asserts what the release does
// under that policy: it returns the outcome for the table and the time
// from the Service's creation to its hostname or its failure event.
func nlbUnder(t *testing.T, r awsccm.Release, label string, allowed []string, calls bool, name string) (string, time.Duration) {
	ns := registerHealthy(t)
	c := startCalNamed(t, r, label, policyOf(t, allowed))
	c.waitNodes(t, ns)
	from := lastSeq(t) + 1
	start := time.Now()
	host, failure := c.loadBalancerWith(t, name, map[string]string{annotationLBType: "nlb", annotationTGAttrs: tgAttrsAnnotationText})
	took := time.Since(start)
	reqs := c.requests(t, from)
	denied := moto.Denied(reqs)
	sent := map[string]bool{}
	for _, a := range actions(reqs) {
		sent[a] = true
	}
	t.Logf("AWS CCM %s, %s, NLB Service %s: hostname %q, failure %q, in %s; actions %v; denied %v", r.Version, label, name, host, failure, took.Round(10*time.Millisecond), actions(reqs), denied)

	missing := ""
	for _, a := range []string{describeTGAttrs, modifyTGAttrs} {
		if calls && !slices.Contains(allowed, a) {
			missing = a
			break
		}
	}
	switch {
	case missing != "":
		// The first of the two actions the policy lacks is refused, and
		// the Service gets no load balancer; the event names the action.
		if host != "" {
			t.Errorf("the AWS CCM %s under the %s ensured the NLB (%s) without %s", r.Version, label, host, missing)
		}
		if !slices.Contains(denied, missing) || !strings.Contains(failure, strings.TrimPrefix(missing, "elasticloadbalancing:")) || !strings.Contains(failure, "AccessDenied") {
			t.Errorf("the AWS CCM %s under the %s: want the failure to name the refused %s (AccessDenied); failure %q, denied %v", r.Version, label, missing, failure, denied)
		}
		if extra := slices.DeleteFunc(slices.Clone(denied), func(a string) bool { return a == missing }); len(extra) > 0 {
			t.Errorf("the AWS CCM %s under the %s: IAM also denied %v", r.Version, label, extra)
		}
		// Not once: the service controller retries, is refused again, and
		// the Service stays without a load balancer.
		harness.WaitForState(t, 2*time.Minute, "the CCM to retry the Service and be refused "+missing+" again", func() (bool, string) {
			c.alive(t)
			n := 0
			for _, q := range c.requests(t, from) {
				if q.Service+":"+q.Action == missing && q.Error == "AccessDenied" {
					n++
				}
			}
			return n >= 2, fmt.Sprintf("%d refusals", n)
		})
		if s := getService(t, name); len(s.Status.LoadBalancer.Ingress) > 0 {
			t.Errorf("Service %s has a load balancer after the retry: %v", name, s.Status.LoadBalancer.Ingress)
		}
		// check reads the refusal from the Service's event and names the
		// action, with the fix.
		out := check(t, nil)
		iam := lines(out, "✗ iam ", missing+": AWS refused it to the cloud controllers (AccessDenied): SyncLoadBalancerFailed on Service default/"+name)
		if len(iam) != 1 || !strings.Contains(iam[0], "→ add "+missing+" to the IAM policy of the control-plane instances' role") {
			t.Errorf("check after SyncLoadBalancerFailed: want one ✗ iam line naming %s, with the fix:\n%s", missing, out)
		}
		t.Logf("check after SyncLoadBalancerFailed: %q", iam)
		return fmt.Sprintf("not reconciled: SyncLoadBalancerFailed, %s denied (AccessDenied)", missing), took
	case host == "":
		t.Fatalf("the AWS CCM %s under the %s did not ensure the NLB: %s", r.Version, label, failure)
	}
	if len(denied) > 0 {
		t.Errorf("the AWS CCM %s under the %s: IAM denied %v", r.Version, label, denied)
	}
	lb, attrs := nlbOf(t, host)
	if lb.Type != "network" {
		t.Errorf("load balancer %s of Service %s: type %q, want network", lb.LoadBalancerName, name, lb.Type)
	}
	want := defaultTGAttrs
	if calls {
		want = wantTGAttrs
	}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("the AWS CCM %s under the %s: target group attribute %s=%q, want %q (all: %v)", r.Version, label, k, attrs[k], v, attrs)
		}
	}
	if sent[describeTGAttrs] != calls || sent[modifyTGAttrs] != calls {
		t.Errorf("the AWS CCM %s sent %s: %v, %s: %v; its CodeCalls say it calls them: %v", r.Version, describeTGAttrs, sent[describeTGAttrs], modifyTGAttrs, sent[modifyTGAttrs], calls)
	}
	// check, with no CCM installed in the cluster (as before a migration
	// that keeps the load balancers), takes the NLB's DNS name for an AWS
	// load balancer's.
	out := check(t, nil)
	if adopted := lines(out, "Service default/"+name+": ", "answered by an AWS load balancer already"); len(adopted) != 1 {
		t.Errorf("check: want one line saying Service default/%s is answered by an AWS load balancer (%s):\n%s", name, host, out)
	} else {
		t.Logf("check of the NLB's Service: %q", adopted)
	}
	if calls {
		// A change of the annotation is set on the next sync, which also
		// reads the Service's hostname (v1.37.1 refuses an NLB's Service
		// whose hostname looks like a Classic ELB's).
		svc := getService(t, name)
		svc.Annotations[annotationTGAttrs] = "preserve_client_ip.enabled=true,proxy_protocol_v2.enabled=false"
		if _, err := cp.Client.CoreV1().Services("default").Update(context.Background(), svc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		harness.WaitForState(t, 2*time.Minute, "the CCM to set the changed annotation's attributes", func() (bool, string) {
			c.alive(t)
			_, now := nlbOf(t, host)
			return maps.Equal(pick(now, defaultTGAttrs), defaultTGAttrs), fmtAttrs(now)
		})
		if d := moto.Denied(c.requests(t, from)); len(d) > 0 {
			t.Errorf("the AWS CCM %s under the %s, after the annotation changed: IAM denied %v", r.Version, label, d)
		}
	}
	c.deleteService(t, name)
	if nlbByName(t, lb.LoadBalancerName) != nil {
		t.Errorf("NLB %s still in moto after its Service was deleted", lb.LoadBalancerName)
	}
	if calls {
		return fmt.Sprintf("reconciled: NLB %s, target group %s", lb.LoadBalancerName, fmtAttrs(attrs)), took
	}
	return fmt.Sprintf("reconciled: NLB %s, annotation not read (target group %s), neither action sent", lb.LoadBalancerName, fmtAttrs(attrs)), took
}

// pick is the attributes of m that like has.
func pick(m, like map[string]string) map[string]string {
	out := map[string]string{}
	for k := range like {
		out[k] = m[k]
	}
	return out
}

func getService(t *testing.T, name string) *corev1.Service {
	t.Helper()
	s, err := cp.Client.CoreV1().Services("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fmtAttrs(attrs map[string]string) string {
	var out []string
	for _, k := range []string{"preserve_client_ip.enabled", "proxy_protocol_v2.enabled"} {
		out = append(out, k+"="+attrs[k])
	}
	return strings.Join(out, ", ")
}

// elbv2LB is what the tests read of an ELBv2 load balancer.
type elbv2LB struct {
	LoadBalancerArn, LoadBalancerName, DNSName, Type string
}

// nlbOf returns moto's ELBv2 load balancer with a DNS name and the
// attributes of its one target group.
func nlbOf(t *testing.T, dns string) (elbv2LB, map[string]string) {
	t.Helper()
	ctx := context.Background()
	var lbs struct{ LoadBalancers []elbv2LB }
	if err := aws.Call(ctx, "elbv2", "DescribeLoadBalancers", map[string]any{}, &lbs); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(lbs.LoadBalancers, func(lb elbv2LB) bool { return lb.DNSName == dns })
	if i < 0 {
		t.Fatalf("the Service's hostname %q is no ELBv2 load balancer in moto: %+v", dns, lbs.LoadBalancers)
	}
	lb := lbs.LoadBalancers[i]
	var tgs struct {
		TargetGroups []struct{ TargetGroupArn string }
	}
	if err := aws.Call(ctx, "elbv2", "DescribeTargetGroups", map[string]any{"LoadBalancerArn": lb.LoadBalancerArn}, &tgs); err != nil {
		t.Fatal(err)
	}
	if len(tgs.TargetGroups) != 1 {
		t.Fatalf("NLB %s has %d target groups, want 1 (one port)", lb.LoadBalancerName, len(tgs.TargetGroups))
	}
	var out struct{ Attributes []struct{ Key, Value string } }
	if err := aws.Call(ctx, "elbv2", "DescribeTargetGroupAttributes", map[string]any{"TargetGroupArn": tgs.TargetGroups[0].TargetGroupArn}, &out); err != nil {
		t.Fatal(err)
	}
	attrs := map[string]string{}
	for _, a := range out.Attributes {
		attrs[a.Key] = a.Value
	}
	return lb, attrs
}

// nlbByName returns moto's ELBv2 load balancer of a name, or nil.
func nlbByName(t *testing.T, name string) *elbv2LB {
	t.Helper()
	var lbs struct{ LoadBalancers []elbv2LB }
	if err := aws.Call(context.Background(), "elbv2", "DescribeLoadBalancers", map[string]any{}, &lbs); err != nil {
		t.Fatal(err)
	}
	for _, lb := range lbs.LoadBalancers {
		if lb.LoadBalancerName == name {
			return &lb
		}
	}
	return nil
}
