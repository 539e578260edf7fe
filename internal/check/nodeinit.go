package check

import (
	"fmt"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// nodeRule reports each node's initialisation by the AWS CCM, nodes alike
// grouped, then how many it has initialised: ✓ only when it has
// initialised them all.
func nodeRule(v *View) []Finding {
	var issues []nodeIssue
	initialised := 0
	for i := range v.Nodes {
		is, ok := v.nodeIssues(&v.Nodes[i])
		issues = append(issues, is...)
		if ok {
			initialised++
		}
	}
	out := groupNodes(issues)
	if initialised > 0 {
		f := Finding{Area: AreaNode, Severity: OK,
			Message: fmt.Sprintf("%d of %d %s initialised by the AWS CCM (aws:// providerID, no uninitialized taint)", initialised, len(v.Nodes), plural(len(v.Nodes), "node", "nodes"))}
		if initialised < len(v.Nodes) {
			f.Severity = Info
		}
		out = append(out, f)
	}
	return out
}

// nodeIssues says what keeps a node from being initialised; ok is true
// when the AWS CCM has initialised it.
func (v *View) nodeIssues(nv *nodeView) (out []nodeIssue, ok bool) {
	n, distro := nv.node, v.Distribution.Detected
	scheme := providerScheme(n.Spec.ProviderID)
	installed := v.Workload != nil && v.Workload.Installed
	ip := internalIP(n)
	issue := func(sev Severity, msg, fix string) nodeIssue {
		return nodeIssue{node: n.Name, Finding: Finding{Area: AreaNode, Severity: sev, Message: msg, Fix: fix}}
	}
	if scheme == "aws" && !nv.Uninitialized {
		if nameIP, _, ok := ec2NameOf(n.Name); ok && ip != "" && nameIP != ip {
			i := issue(Warning, "its name's IP is not its InternalIP", "")
			i.one = fmt.Sprintf("the name says %s, the node's internal IP is %s", nameIP, ip)
			out = append(out, i)
		}
		return out, true
	}
	if scheme != "" && scheme != "aws" {
		i := issue(Error, fmt.Sprintf("providerID %s://…: initialised by another cloud controller, not the AWS CCM", scheme), "a providerID never changes: "+externalFix(distro))
		i.one = fmt.Sprintf("providerID %s: initialised by another cloud controller, not the AWS CCM", n.Spec.ProviderID)
		if scheme == "k3s" || scheme == "rke2" {
			i.Message = fmt.Sprintf("providerID %s://…: initialised by %s's embedded cloud controller, not the AWS CCM", scheme, DisplayName(scheme))
			i.one = fmt.Sprintf("providerID %s: initialised by %s's embedded cloud controller, not the AWS CCM", n.Spec.ProviderID, DisplayName(scheme))
		}
		return []nodeIssue{i}, false
	}
	_, _, ec2Named := ec2NameOf(n.Name)
	misnamed := func(i nodeIssue) nodeIssue {
		i.Severity = Error
		i.note = n.Name
		if want := expectedEC2Name(ip, v.regionOf(n)); want != "" {
			i.note = n.Name + " → " + want
		}
		i.fix = func(notes []string) string { return nameFix(distro, notes) }
		return i
	}
	switch {
	case nv.Uninitialized && scheme == "aws":
		// The kubelet set --provider-id; the CCM has not finished.
		sev := Warning
		if installed {
			sev = Error
		}
		i := issue(sev, "providerID set, but still tainted "+renderer.TaintUninitialized,
			"the CCM removes the taint once it has initialised the node: check that a CCM pod runs and "+v.readLog())
		i.one = "providerID " + n.Spec.ProviderID + " set, but still tainted " + renderer.TaintUninitialized
		return []nodeIssue{i}, false
	case nv.Uninitialized:
		i := issue(Warning, "not initialised yet: tainted "+renderer.TaintUninitialized+", no providerID", "the CCM initialises it once it runs")
		if installed {
			i.Severity = Error
			i.Message = "uninitialised: tainted " + renderer.TaintUninitialized + ", no providerID"
			i.Fix = "the CCM has not initialised it, and records no event when it cannot: see the placement and iam findings, and " + v.readLog()
		}
		if !ec2Named {
			i.Message += "; the name is not an EC2 private DNS name (ip-A-B-C-D.REGION.compute.internal), so the CCM cannot find the instance"
			i = misnamed(i)
		}
		return []nodeIssue{i}, false
	}
	// No providerID and no taint: registered without the external provider.
	i := issue(Error, "no providerID and no "+renderer.TaintUninitialized+" taint: the kubelet registered without --cloud-provider=external, and the CCM only initialises nodes that carry the taint", externalFix(distro))
	if len(nv.ExternalProvider) > 0 {
		i.Message = "no providerID and no " + renderer.TaintUninitialized + " taint, although " + strings.Join(nv.ExternalProvider, ", ") + " show(s) the external provider: the taint was removed before the CCM initialised the node, and the CCM only initialises nodes that carry it"
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
