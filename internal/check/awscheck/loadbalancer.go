package awscheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
)

// loadBalancerName is the name the CCM gives a Service's load balancer
// (cloudprovider.DefaultLoadBalancerName): "a" and the Service's UID
// without dashes, at most 32 characters.
func loadBalancerName(uid string) string {
	n := "a" + strings.ReplaceAll(uid, "-", "")
	if len(n) > 32 {
		n = n[:32]
	}
	return n
}

// classicELBs reads the Classic ELBs of the region and their tags.
func (r *awsReader) classicELBs(ctx context.Context) {
	var names []string
	p := elb.NewDescribeLoadBalancersPaginator(r.elb, &elb.DescribeLoadBalancersInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if !r.done(check.AreaLoadBalancer, "elasticloadbalancing:DescribeLoadBalancers", err) {
			return
		}
		for _, lb := range page.LoadBalancerDescriptions {
			names = append(names, aws.ToString(lb.LoadBalancerName))
		}
	}
	tags := map[string]map[string]string{}
	for chunk := range slices.Chunk(names, awsTagBatch) {
		out, err := r.elb.DescribeTags(ctx, &elb.DescribeTagsInput{LoadBalancerNames: chunk})
		if !r.done(check.AreaLoadBalancer, "elasticloadbalancing:DescribeTags", err) {
			break
		}
		for _, d := range out.TagDescriptions {
			tags[aws.ToString(d.LoadBalancerName)] = tagMap(d.Tags, func(t elbtypes.Tag) (*string, *string) { return t.Key, t.Value })
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		r.acct.LoadBalancers = append(r.acct.LoadBalancers, check.AWSLoadBalancer{Name: n, Type: "classic", Tags: tags[n]})
	}
}

// elbv2s reads the NLBs and ALBs of the region and their tags.
func (r *awsReader) elbv2s(ctx context.Context) {
	var lbs []check.AWSLoadBalancer
	p := elbv2.NewDescribeLoadBalancersPaginator(r.elbv2, &elbv2.DescribeLoadBalancersInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if !r.done(check.AreaLoadBalancer, "elasticloadbalancing:DescribeLoadBalancers", err) {
			return
		}
		for _, lb := range page.LoadBalancers {
			lbs = append(lbs, check.AWSLoadBalancer{Name: aws.ToString(lb.LoadBalancerName), Type: string(lb.Type), ARN: aws.ToString(lb.LoadBalancerArn)})
		}
	}
	for chunk := range slices.Chunk(lbs, awsTagBatch) {
		var arns []string
		for _, lb := range chunk {
			arns = append(arns, lb.ARN)
		}
		out, err := r.elbv2.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: arns})
		if !r.done(check.AreaLoadBalancer, "elasticloadbalancing:DescribeTags", err) {
			break
		}
		for _, d := range out.TagDescriptions {
			m := tagMap(d.Tags, func(t elbv2types.Tag) (*string, *string) { return t.Key, t.Value })
			for i := range chunk {
				if chunk[i].ARN == aws.ToString(d.ResourceArn) {
					chunk[i].Tags = m
				}
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acct.LoadBalancers = append(r.acct.LoadBalancers, lbs...)
}

// The AWS Load Balancer Controller: its Service webhook, and the values of
// aws-load-balancer-type that make a Service its own
// (cloud-provider-aws isLBExternal).
const (
	albcServiceWebhook = "mservice.elbv2.k8s.aws"
	annotationLBType   = "service.beta.kubernetes.io/aws-load-balancer-type"
)

// loadBalancerRule: per Service of type LoadBalancer, who owns its load
// balancer and whether the CCM's exists with the CCM's tags; load
// balancers tagged for the cluster whose Service is gone.
func loadBalancerRule(v *check.View) []check.Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	if u := unread(a, check.AreaLoadBalancer); len(u) > 0 {
		return unreadFindings(v, check.AreaLoadBalancer)
	}
	id, _ := clusterID(v)
	var out []check.Finding
	if w := serviceWebhook(v); w != "" {
		out = append(out, check.Finding{Area: check.AreaLoadBalancer, Severity: check.Warning, Subject: "MutatingWebhookConfiguration " + w,
			Message: "the AWS Load Balancer Controller's webhook gives every new Service of type LoadBalancer its loadBalancerClass: the CCM ensures none of them",
			Fix:     "to have the CCM serve them, turn the webhook off (the controller's chart: enableServiceMutatorWebhook=false)"})
	} else if v.WebhooksUnread != "" {
		out = append(out, check.Finding{Area: check.AreaLoadBalancer, Severity: check.Info, Message: "could not read the mutating webhooks: " + v.WebhooksUnread})
	}
	byName := map[string]check.AWSLoadBalancer{}
	for _, lb := range a.LoadBalancers {
		byName[lb.Name] = lb
	}
	services := map[string]bool{}
	var mine, theirs []string
	var missing []check.Finding
	for _, svc := range v.LoadBalancers {
		ref := svc.Namespace + "/" + svc.Name
		services[ref] = true
		if c := svc.Spec.LoadBalancerClass; c != nil {
			theirs = append(theirs, ref+" (class "+*c+")")
			continue
		}
		if t := svc.Annotations[annotationLBType]; t == "external" || t == "nlb-ip" {
			theirs = append(theirs, ref+" ("+annotationLBType+": "+t+")")
			continue
		}
		name := loadBalancerName(string(svc.UID))
		lb, ok := byName[name]
		switch {
		case !ok:
			missing = append(missing, check.Finding{Area: check.AreaLoadBalancer, Severity: check.Warning, Subject: "Service " + ref,
				Message: "the CCM's load balancer " + name + " is not in " + a.Region + ": not ensured yet, or it fails (the iam area and the Service's events say why)",
				Fix:     "kubectl describe service -n " + svc.Namespace + " " + svc.Name})
		case lb.Tags[tagServiceName] != ref || id != "" && !hasClusterTag(lb.Tags, id):
			missing = append(missing, check.Finding{Area: check.AreaLoadBalancer, Severity: check.Warning, Subject: "Service " + ref,
				Message: "load balancer " + name + " lacks the CCM's tags (" + tagServiceName + "=" + ref + ", " + tagClusterPrefix + id + "): not the CCM's, or tagged by hand"})
		default:
			mine = append(mine, ref+" → "+name)
		}
	}
	if len(mine) > 0 {
		out = append(out, check.Finding{Area: check.AreaLoadBalancer, Severity: check.OK, Message: fmt.Sprintf("the CCM's %s: %s", check.Plural(len(mine), "load balancer", "load balancers"), check.SomeOf(mine))})
	}
	if len(theirs) > 0 {
		out = append(out, check.Finding{Area: check.AreaLoadBalancer, Severity: check.Info, Subject: check.SomeOf(theirs),
			Message: "another controller's (the AWS Load Balancer Controller's): the CCM leaves them alone"})
	}
	out = append(out, missing...)
	if id == "" {
		return out
	}
	var orphans []string
	for _, lb := range a.LoadBalancers {
		ref := lb.Tags[tagServiceName]
		if ref == "" || !hasClusterTag(lb.Tags, id) || services[ref] {
			continue
		}
		orphans = append(orphans, lb.Name+" (Service "+ref+")")
	}
	if len(orphans) > 0 {
		f := check.Finding{Area: check.AreaLoadBalancer, Severity: check.Warning, Subject: check.SomeOf(orphans),
			Message: "tagged for the cluster, and its Service of type LoadBalancer is gone: AWS bills it, and nothing deletes it",
			Fix:     "delete it once nothing uses it (aws elb delete-load-balancer / aws elbv2 delete-load-balancer)"}
		if len(orphans) > 1 {
			f.Subjects, f.Count = orphans, len(orphans)
		}
		out = append(out, f)
	}
	return out
}

// serviceWebhook names the MutatingWebhookConfiguration holding the AWS
// Load Balancer Controller's Service webhook; "" when none does.
func serviceWebhook(v *check.View) string {
	for _, w := range v.Webhooks {
		if w.Webhook == albcServiceWebhook {
			return w.Configuration
		}
	}
	return ""
}

// tagMap is an AWS API's list of tags as a map, key to value.
func tagMap[T any](tags []T, kv func(T) (key, value *string)) map[string]string {
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		k, v := kv(t)
		m[aws.ToString(k)] = aws.ToString(v)
	}
	return m
}
