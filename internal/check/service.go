package check

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// K3s's load balancers. K3s's embedded cloud controller answers Services
// of type LoadBalancer with ServiceLB: a DaemonSet per Service
// (svclb-<name>-<hash>, in kube-system by default, labelled with the
// Service's name and namespace: k3s pkg/cloudprovider/servicelb.go) and the
// nodes' addresses as the Service's ingress. The CCM's service controller
// makes an ELB per Service instead, with the nodes whose providerID is
// aws:// as its backends (findInstancesForELB). A K3s cluster on the way to
// the CCM can have either, both, or an ELB with nodes left out.

const (
	// labelExcludeLB keeps a node out of every load balancer's backends.
	labelExcludeLB = "node.kubernetes.io/exclude-from-external-load-balancers"
)

// collectServices lists, on K3s, the Services of every namespace and
// ServiceLB's DaemonSets.
func (s *Snapshot) collectServices(ctx context.Context, client kubernetes.Interface) error {
	lb := facts(Detect(s.Nodes).Detected).ServiceLB
	k3s := lb != nil
	// The Services the CCM's service controller will take over: read
	// while none runs.
	takeover := !describeWorkload(s).ccmServices()
	if !k3s && s.AWSOptions == nil && !takeover {
		return nil
	}
	svcs, err := client.CoreV1().Services("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return clusterError("list", "services", "", err)
	}
	for _, svc := range svcs.Items {
		if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			s.LoadBalancers = append(s.LoadBalancers, svc)
		}
	}
	if s.LoadBalancers == nil {
		s.LoadBalancers = []corev1.Service{}
	}
	if !k3s {
		return nil
	}
	dss, err := client.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{LabelSelector: lb.NameLabel, ResourceVersion: "0"})
	if err != nil {
		return clusterError("list", "daemonsets.apps", "", err)
	}
	s.ServiceLBDaemonSets = dss.Items
	if s.ServiceLBDaemonSets == nil {
		s.ServiceLBDaemonSets = []appsv1.DaemonSet{}
	}
	return nil
}

// serviceLBDisabled tells whether a K3s server's recorded arguments turn
// ServiceLB off (disable: servicelb).
func serviceLBDisabled(nodes []corev1.Node) bool {
	for i := range nodes {
		args := nodeArgs(&nodes[i])
		if len(args) == 0 || args[0] != "server" {
			continue
		}
		for _, v := range argValues(args, "disable") {
			if slices.Contains(strings.Split(v, ","), "servicelb") {
				return true
			}
		}
	}
	return false
}

// ccmServices tells whether the CCM's service controller runs: installed,
// and its --controllers do not leave it out (service up to the 1.27
// libraries, service-lb-controller from 1.28, where service is an alias).
func (w *workloadView) ccmServices() bool {
	if w == nil || !w.Installed {
		return false
	}
	for _, c := range strings.Split(w.flags["controllers"], ",") {
		if c == "-service" || c == "-service-lb-controller" {
			return false
		}
	}
	return true
}

// serviceRule judges, on K3s, every Service of type LoadBalancer: served
// by ServiceLB or by an ELB, an ELB's nodes without an aws:// providerID
// (no backends there), ServiceLB and the CCM both acting on one; and
// ServiceLB's DaemonSets left behind.
func serviceRule(v *View) []Finding {
	if v.ServiceLBDaemonSets == nil && v.AWSOptions == nil {
		return nil // not K3s, and no --aws
	}
	w := v.Workload
	var awsNodes, others []string
	for _, n := range v.Snapshot.Nodes {
		if _, excluded := n.Labels[labelExcludeLB]; excluded {
			continue
		}
		if providerScheme(n.Spec.ProviderID) == "aws" {
			awsNodes = append(awsNodes, n.Name)
		} else {
			others = append(others, n.Name)
		}
	}
	// The DaemonSets were read by the labels of the distribution's
	// ServiceLB (collectServices).
	lb := facts(Detect(v.Snapshot.Nodes).Detected).ServiceLB
	if lb == nil {
		lb = &distros.ServiceLB{} // none: no DaemonSets were read
	}
	svclbFor := map[string]string{} // NAMESPACE/NAME of a Service -> its DaemonSet
	for _, ds := range v.ServiceLBDaemonSets {
		svclbFor[ds.Labels[lb.NamespaceLabel]+"/"+ds.Labels[lb.NameLabel]] = ds.Namespace + "/" + ds.Name
	}
	disabled := serviceLBDisabled(v.Snapshot.Nodes)
	var issues []NodeIssue
	lbs := map[string]bool{}
	for _, svc := range v.LoadBalancers {
		ref := svc.Namespace + "/" + svc.Name
		lbs[ref] = true
		if svc.Spec.LoadBalancerClass != nil {
			continue // another load balancer controller's
		}
		issue := func(sev Severity, msg, fix string) NodeIssue {
			return NodeIssue{Node: ref, Finding: Finding{Area: AreaService, Severity: sev, Message: msg, Fix: fix}}
		}
		elb := slices.ContainsFunc(svc.Status.LoadBalancer.Ingress, func(i corev1.LoadBalancerIngress) bool { return awsLBHostname(i.Hostname) })
		_, servicelb := svclbFor[ref]
		reregister := "register them again so that the CCM gives them aws:// provider IDs (plan step during.reregister-nodes)"
		switch {
		case servicelb && w.ccmServices():
			issues = append(issues, issue(Error, "answered by ServiceLB while the CCM's service controller runs: both act on it (node addresses and an ELB)",
				"keep the CCM's service controller off (--set-arg=controllers=*,-service) until every node has an aws:// providerID, then disable servicelb on the servers and delete ServiceLB's DaemonSets (plan step during.load-balancers)"))
		case servicelb && w != nil && w.Installed:
			issues = append(issues, issue(Info, "answered by ServiceLB (the nodes' addresses); the CCM's service controller is off: the ELB that replaces it has a new address", ""))
		case (elb || w.ccmServices()) && len(awsNodes) == 0:
			i := issue(Error, "its load balancer is the CCM's, and no node has an aws:// providerID: the CCM registers only those behind an ELB, so it has no backends", reregister)
			if !elb {
				i.Message = "no address yet, and no node has an aws:// providerID: the CCM registers only those behind an ELB, so it would have no backends"
			}
			issues = append(issues, i)
		case (elb || w.ccmServices()) && len(others) > 0:
			i := issue(Warning, fmt.Sprintf("its ELB's backends are the %d %s with an aws:// providerID; %d %s (%s) cannot be",
				len(awsNodes), Plural(len(awsNodes), "node", "nodes"), len(others), Plural(len(others), "node", "nodes"), SomeOf(others)), reregister)
			issues = append(issues, i)
		}
	}
	out := GroupOf(issues, "Service", "Services")
	var left []NodeIssue
	for _, ds := range v.ServiceLBDaemonSets {
		svc := ds.Labels[lb.NamespaceLabel] + "/" + ds.Labels[lb.NameLabel]
		var why string
		switch {
		case !lbs[svc]:
			why = "its Service " + svc + " is gone or no longer of type LoadBalancer"
		case disabled:
			why = "ServiceLB is disabled on the servers, and nothing deletes its DaemonSets"
		default:
			continue
		}
		i := NodeIssue{Node: ds.Namespace + "/" + ds.Name, Finding: Finding{Area: AreaService, Severity: Warning,
			Message: "ServiceLB's DaemonSet, left behind: its pods still hold the Service's ports on every node",
			Fix:     "kubectl delete daemonsets --all-namespaces -l " + lb.NameLabel}}
		i.One = "ServiceLB's DaemonSet, left behind: " + why + "; its pods still hold the Service's ports on every node"
		left = append(left, i)
	}
	return append(out, GroupOf(left, "DaemonSet", "DaemonSets")...)
}

// ServiceWebhook is a mutating webhook that mutates Services.
type ServiceWebhook struct {
	Configuration string // the MutatingWebhookConfiguration's name
	Webhook       string // the webhook's name
}

// collectWebhooks lists, with --aws, the mutating webhooks that mutate
// Services (the AWS Load Balancer Controller's sets loadBalancerClass). A
// refusal is a fact of the snapshot, not an error.
func (s *Snapshot) collectWebhooks(ctx context.Context, client kubernetes.Interface) error {
	if s.AWSOptions == nil {
		return nil
	}
	list, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	switch {
	case apierrors.IsForbidden(err):
		s.WebhooksUnread = `check may not list mutatingwebhookconfigurations.admissionregistration.k8s.io (kubectl auth can-i list mutatingwebhookconfigurations)`
		return nil
	case err != nil:
		return clusterError("list", "mutatingwebhookconfigurations.admissionregistration.k8s.io", "", err)
	}
	for _, c := range list.Items {
		for _, w := range c.Webhooks {
			for _, r := range w.Rules {
				if slices.Contains(r.Resources, "services") || slices.Contains(r.Resources, "*") {
					s.Webhooks = append(s.Webhooks, ServiceWebhook{Configuration: c.Name, Webhook: w.Name})
					break
				}
			}
		}
	}
	return nil
}

// awsLBHostname reports whether a Service's ingress hostname is an AWS load
// balancer's DNS name: a Classic ELB's (or an ALB's),
// NAME-ID.REGION.elb.amazonaws.com, or a Network Load Balancer's,
// NAME-ID.elb.REGION.amazonaws.com; .amazonaws.com.cn in China.
func awsLBHostname(h string) bool {
	return strings.HasSuffix(h, ".elb.amazonaws.com") || strings.HasSuffix(h, ".elb.amazonaws.com.cn") || nlbHostname.MatchString(h)
}

var nlbHostname = regexp.MustCompile(`\.elb\.[a-z]{2}(-[a-z]+)+-\d+\.amazonaws\.com(\.cn)?$`)
