package releases

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/version"
)

// CodeCall is an AWS API action a CCM release's program can call, as its
// IAM policy names it (ec2:DescribeInstances), with the first site of its
// source that builds the request: file and function.
type CodeCall struct {
	Action string
	Site   string
}

// The target group attribute actions of the load balancer code
// (pkg/providers/v1/aws_loadbalancer.go ensureTargetGroupAttributes), for a
// Service with the annotation
// service.beta.kubernetes.io/aws-load-balancer-target-group-attributes
// (TargetGroupAttributes). The docs' policy lists neither.
const (
	ActionDescribeTargetGroupAttributes = "elasticloadbalancing:DescribeTargetGroupAttributes"
	ActionModifyTargetGroupAttributes   = "elasticloadbalancing:ModifyTargetGroupAttributes"
)

// TargetGroupAttributes says which releases read the target-group-attributes
// annotation and so call the target group attribute actions: from the
// first release of each minor in Since (every release of a later minor),
// but those in Except.
var TargetGroupAttributes = struct {
	Since, Except []string
	Source        string
}{
	Since:  []string{"v1.32.6", "v1.33.3", "v1.34.0"},
	Except: []string{"v1.34.1"},
	Source: "kubernetes/cloud-provider-aws pkg/providers/v1/aws_loadbalancer.go reconcileTargetGroupsAttributes and " +
		"ensureTargetGroupAttributes, at the tags: in v1.32.6, v1.33.3, v1.34.0, v1.34.2 and v1.35.0, not in v1.32.5, v1.33.2 or v1.34.1 " +
		"(\"feat/tg-attr: support target group attrib annotation on NLB\")",
}

// ReadsTargetGroupAttributes reports whether a CCM release calls the target
// group attribute actions (TargetGroupAttributes).
func ReadsTargetGroupAttributes(tag string) bool {
	v, ok := parse(tag)
	return ok && sinceLines(TargetGroupAttributes.Since, v) && !slices.Contains(TargetGroupAttributes.Except, "v"+v.String())
}

// CallsSource says how CodeCalls was read.
const CallsSource = "the release's source (kubernetes/cloud-provider-aws at the tag): the AWS SDK requests its program " +
	"builds in code reached from its main and from k8s.io/cloud-provider's interfaces"

// CallsAlso are releases besides the pinned ones whose calls CodeCalls
// holds: v1.26.0, the first release of the last in-tree minor, which calls
// fewer actions than that minor's Latest (no ec2:DescribeAvailabilityZones)
// and on which the calls are calibrated against moto.
var CallsAlso = []string{"v1.26.0"}

// CallTags are the releases whose calls CodeCalls holds: every minor's
// Latest and Unpulled, and CallsAlso; by version.
func CallTags() []string {
	tags := slices.Clone(CallsAlso)
	for _, c := range CCM {
		tags = append(tags, c.Latest)
		tags = append(tags, c.Unpulled...)
	}
	slices.SortFunc(tags, func(a, b string) int { c, _ := version.MustParseGeneric(a).Compare(b); return c })
	return tags
}

// IAMDependency is an action AWS checks for an action the CCM calls, which
// the CCM's code never names.
type IAMDependency struct {
	Action string
	// For are the calls that need it.
	For    []string
	Why    string
	Source string
}

// IAMDependencies are the actions the policy needs beside the calls.
var IAMDependencies = []IAMDependency{{
	Action: "iam:CreateServiceLinkedRole",
	For:    []string{"elasticloadbalancing:CreateLoadBalancer", "elasticloadbalancing:CreateTargetGroup"},
	Why:    "the account's first load balancer or target group creates Elastic Load Balancing's service-linked role (AWSServiceRoleForElasticLoadBalancing) with its caller's permissions",
	Source: "docs.aws.amazon.com/elasticloadbalancing/latest/userguide/elb-service-linked-roles.html",
}}

// Calls returns the AWS API actions a CCM release's program can call
// (CodeCalls): of the tag itself, else of its minor's Latest, else of the
// nearest release with data, without the target group attribute actions
// when the tag does not call them (ReadsTargetGroupAttributes); sorted.
func Calls(tag string) []CodeCall {
	if c, ok := CodeCalls[tag]; ok {
		return c
	}
	minor := LastMinor()
	v, ok := parse(tag)
	if ok {
		minor = max(FirstMinor(), min(LastMinor(), int(v.Minor())))
	}
	latest, _ := Latest(minor)
	c := CodeCalls[latest]
	if ok && !ReadsTargetGroupAttributes(tag) {
		c = slices.DeleteFunc(slices.Clone(c), func(c CodeCall) bool {
			return c.Action == ActionDescribeTargetGroupAttributes || c.Action == ActionModifyTargetGroupAttributes
		})
	}
	return c
}

// IAMPolicy returns the control-plane policy a CCM release needs: the
// actions its program can call (Calls) and the ones AWS checks for them
// (IAMDependencies), nothing else; sorted.
func IAMPolicy(tag string) []string {
	var out []string
	for _, c := range Calls(tag) {
		out = append(out, c.Action)
		for _, d := range IAMDependencies {
			if slices.Contains(d.For, c.Action) {
				out = append(out, d.Action)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// IAMDiff is how a release's policy (IAMPolicy) differs from its docs'
// (IAMControlPlane): the actions only the code calls, each with its site,
// and the ones only the docs list.
func IAMDiff(tag string) (onlyCode []CodeCall, onlyDocs []string) {
	docs := IAMControlPlane(tag)
	policy := IAMPolicy(tag)
	for _, c := range Calls(tag) {
		if !slices.Contains(docs, c.Action) {
			onlyCode = append(onlyCode, c)
		}
	}
	for _, a := range docs {
		if !slices.Contains(policy, a) {
			onlyDocs = append(onlyDocs, a)
		}
	}
	return onlyCode, onlyDocs
}
