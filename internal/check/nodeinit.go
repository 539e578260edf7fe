package check

import (
	"fmt"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// nodeRule reports each node's initialisation by the AWS CCM, nodes alike
// grouped, then how many it has initialised: ✓ only when it has
// initialised them all.
func nodeRule(v *View) []Finding {
	var issues []NodeIssue
	initialised := 0
	for i := range v.Nodes {
		is, ok := v.nodeIssues(&v.Nodes[i])
		issues = append(issues, is...)
		if ok {
			initialised++
		}
	}
	out := GroupNodes(issues)
	if initialised > 0 {
		f := Finding{Area: AreaNode, Severity: OK,
			Message: fmt.Sprintf("%d of %d %s initialised by the AWS CCM (aws:// providerID, no uninitialized taint)", initialised, len(v.Nodes), Plural(len(v.Nodes), "node", "nodes"))}
		if initialised < len(v.Nodes) {
			f.Severity = Info
		}
		out = append(out, f)
	}
	return out
}

// nodeIssues says what keeps a node from being initialised; ok is true
// when the AWS CCM has initialised it.
func (v *View) nodeIssues(nv *nodeView) (out []NodeIssue, ok bool) {
	n, distro := nv.node, v.Distribution.Detected
	scheme := providerScheme(n.Spec.ProviderID)
	installed := v.Workload != nil && v.Workload.Installed
	ip := InternalIP(n)
	issue := func(sev Severity, msg, fix string) NodeIssue {
		return NodeIssue{Node: n.Name, Finding: Finding{Area: AreaNode, Severity: sev, Message: msg, Fix: fix}}
	}
	if scheme == "aws" && !nv.Uninitialized {
		if nameIP, _, ok := ec2NameOf(n.Name); ok && ip != "" && nameIP != ip {
			i := issue(Warning, "its name's IP is not its InternalIP", "")
			i.One = fmt.Sprintf("the name says %s, the node's internal IP is %s", nameIP, ip)
			out = append(out, i)
		}
		return out, true
	}
	if scheme != "" && scheme != "aws" {
		return []NodeIssue{v.foreignProviderID(nv)}, false
	}
	_, _, ec2Named := ec2NameOf(n.Name)
	misnamed := func(i NodeIssue) NodeIssue {
		i.Severity = Error
		i.Note = n.Name
		if want := expectedEC2Name(ip, v.regionOf(n)); want != "" {
			i.Note = n.Name + " → " + want
		}
		i.FixFor = func(notes []string) string { return nameFix(distro, notes) }
		return i
	}
	switch {
	case nv.Uninitialized && scheme == "aws":
		// The kubelet set --provider-id; the CCM has not finished.
		sev := Warning
		if installed {
			sev = Error
		}
		i := issue(sev, "providerID set, but still tainted "+distros.TaintUninitialized,
			"the CCM removes the taint once it has initialised the node: check that a CCM pod runs and "+v.readLog())
		i.One = "providerID " + n.Spec.ProviderID + " set, but still tainted " + distros.TaintUninitialized
		return []NodeIssue{i}, false
	case nv.Uninitialized:
		i := issue(Warning, "not initialised yet: tainted "+distros.TaintUninitialized+", no providerID", "the CCM initialises it once it runs")
		if installed {
			i.Severity = Error
			i.Message = "uninitialised: tainted " + distros.TaintUninitialized + ", no providerID"
			i.Fix = "the CCM has not initialised it, and records no event when it cannot: see the placement and iam findings, and " + v.readLog()
		}
		if !ec2Named {
			i.Message += "; the name is not an EC2 private DNS name (ip-A-B-C-D.REGION.compute.internal), so the CCM cannot find the instance"
			i = misnamed(i)
		}
		return []NodeIssue{i}, false
	}
	// No providerID and no taint: registered without the external provider.
	i := issue(Error, "no providerID and no "+distros.TaintUninitialized+" taint: the kubelet registered without --cloud-provider=external, and the CCM only initialises nodes that carry the taint", "")
	i.FixFor = func(names []string) string { return externalFix(distro) + "; or keep the Node: " + taintByHand(names) }
	i.Note = n.Name
	if len(nv.ExternalProvider) > 0 {
		i.Message = "no providerID and no " + distros.TaintUninitialized + " taint, although " + strings.Join(nv.ExternalProvider, ", ") + " show(s) the external provider: the taint was removed before the CCM initialised the node, and the CCM only initialises nodes that carry it"
	}
	out = append(out, i)
	if !ec2Named {
		out = append(out, misnamed(issue(Error, "the name is not an EC2 private DNS name (ip-A-B-C-D.REGION.compute.internal), so the CCM cannot find the instance", "")))
	}
	return out, false
}

// readLog says how to read what the CCM logs of the nodes it cannot
// initialise: the leader's log (the holder of its lease names the host it
// runs on), else the workload's.
func (v *View) readLog() string {
	w := v.Workload
	if w == nil || !w.Installed {
		return "read the CCM's log"
	}
	target := strings.ToLower(w.Kind) + "/" + w.Name
	if p := v.leaderPod(); p != "" {
		target = p
	}
	return fmt.Sprintf("read its leader's log: kubectl logs -n %s %s | grep -e 'error syncing' -e UnauthorizedOperation -e AccessDenied", w.Namespace, target)
}

// leaderPod is the CCM pod that leads: on the node the holder of the CCM's
// lease names (HOSTNAME_UUID; with the host network the node's host
// name); "" when that is not known.
func (v *View) leaderPod() string {
	for _, l := range v.Leases {
		if l.Role != LeaseCCM || l.Holder == "" || l.Expired {
			continue
		}
		host, _, _ := strings.Cut(l.Holder, "_")
		for node, p := range v.Pods {
			if node == host || strings.HasPrefix(node, host+".") {
				return p.Name
			}
		}
	}
	return ""
}

// taintByHand says how to have the CCM initialise nodes registered
// without a providerID and without the uninitialized taint: the taint
// added by hand, after which the CCM sets the providerID (which the API
// server lets change from empty).
func taintByHand(names []string) string {
	node := "NODE"
	if len(names) == 1 {
		node = names[0]
	}
	return "kubectl taint node " + node + " " + releases.UninitializedTaint + "=true:NoSchedule" +
		" has the CCM initialise it and set its providerID (a providerID may change from empty); give its kubelet --cloud-provider=external too, for the next registration"
}

// nodeGroup is a node's group in findings about many: the control plane
// or the workers.
func nodeGroup(nv *nodeView) string {
	if nv.ControlPlane {
		return "control plane"
	}
	return "workers"
}

// foreignProviderID judges a node whose providerID another cloud
// controller wrote: the AWS CCM reads an instance ID from it only when its
// last part is one (rke2://i-0abc); otherwise it leaves the node out of
// every load balancer and never deletes it, and from 1.30
// (releases.ProviderIDFallbackUntil) does not initialise it even tainted
// again; the providerID never changes, so the node must register again.
func (v *View) foreignProviderID(nv *nodeView) NodeIssue {
	n, distro := nv.node, v.Distribution.Detected
	scheme := providerScheme(n.Spec.ProviderID)
	by := "another cloud controller"
	if dc, ok := distros.ControllerOfScheme(scheme); ok {
		by = distros.DisplayName(dc.Distro) + "'s embedded cloud controller"
	}
	i := NodeIssue{Node: n.Name, Finding: Finding{Area: AreaNode, Source: releases.ProviderIDSource}}
	if id, _, ok := InstanceIDOf(n.Spec.ProviderID); ok {
		i.Severity = Info
		i.Message = fmt.Sprintf("providerID %s://i-…: initialised by %s (%s); the AWS CCM reads the instance ID from its last part, so it can use the node", scheme, by, nodeGroup(nv))
		i.One = fmt.Sprintf("providerID %s: initialised by %s; the AWS CCM reads instance %s from it, so it can use the node", n.Spec.ProviderID, by, id)
		return i
	}
	tag, what := v.ccmTag()
	later := fmt.Sprintf("%s, which looks such a node up by its name if it is tainted %s again (up to 1.%d)", what, releases.UninitializedTaint, releases.ProviderIDFallbackUntil)
	if fallback, ok := releases.ProviderIDFallback(tag); !ok || !fallback {
		later = fmt.Sprintf("%s, which leaves it uninitialized if it is tainted %s again (from 1.%d it reads providerIDs only)", what, releases.UninitializedTaint, releases.ProviderIDFallbackUntil+1)
	}
	consequence := fmt.Sprintf("the AWS CCM cannot read an instance ID from it (Invalid format for AWS instance): every release leaves the node out of its load balancers and never deletes it; %s", later)
	i.Severity = Error
	i.Message = fmt.Sprintf("providerID %s://…: initialised by %s, not the AWS CCM (%s); %s", scheme, by, nodeGroup(nv), consequence)
	i.One = fmt.Sprintf("providerID %s: initialised by %s, not the AWS CCM; %s", n.Spec.ProviderID, by, consequence)
	i.Fix = "a providerID changes only from empty, so the node must register again: " + externalFix(distro)
	return i
}

// ccmTag is the CCM release the node rules speak of: the workload's image
// tag, else the release for the cluster's minor; what names it.
func (v *View) ccmTag() (tag, what string) {
	if w := v.Workload; w != nil {
		if tag = renderer.ImageTag(w.Image); tag != "" {
			return tag, "CCM " + tag
		}
	}
	server, _ := minorOf(v.KubernetesVersion)
	tag = releases.Tag(server)
	return tag, "CCM " + tag + " (the release for 1." + fmt.Sprint(server) + ")"
}
