package check

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Other cloud controllers beside the AWS CCM: a distribution's own (RKE2's
// static pod, K3s's embedded one, seen by their pods, their leases, and
// the providerIDs of the nodes they initialise), and a second AWS CCM.

// otherLease is the leader-election lease of a CCM workload,
// NAMESPACE/NAME.
func otherLease(c *candidate) string {
	f := flags(c.spec.Spec.Containers[c.container])
	ns, name := releases.LeaseNamespace, releases.CCMLease
	if x := f["leader-elect-resource-namespace"]; x != "" {
		ns = x
	}
	if x := f["leader-elect-resource-name"]; x != "" {
		name = x
	}
	return ns + "/" + name
}

// distroRunning is what shows a distribution's own cloud controller runs.
type distroRunning struct {
	dc       distros.OwnController
	evidence []string
}

// distroControllers finds the distributions' own cloud controllers that
// run: a pod of theirs among the control plane's, their lease held, nodes
// they gave their providerIDs after the AWS CCM was installed.
func (v *View) distroControllers() []distroRunning {
	var out []distroRunning
	for _, dc := range distros.OwnControllers(distros.Records()) {
		var ev, pods []string
		for _, p := range v.ControlPlanePods {
			if p.Labels["component"] != programCCM || p.DeletionTimestamp != nil {
				continue
			}
			if slices.ContainsFunc(p.Spec.Containers, func(c corev1.Container) bool {
				return dc.Image != "" && strings.Contains(c.Image, dc.Image) || flags(c)["cloud-provider"] == dc.Scheme
			}) {
				pods = append(pods, p.Name)
			}
		}
		if len(pods) > 0 {
			ev = append(ev, "its pod "+SomeOf(pods)+" in kube-system")
		}
		// K3s's embedded controller runs ServiceLB under the same lease
		// when disable-cloud-controller keeps its node controllers off.
		if l := v.Snapshot.Leases[metav1.NamespaceSystem+"/"+dc.Lease]; l != nil && !expired(l, v.Now) && !(facts(string(dc.Distro)).ServiceLB != nil && k3sCCMDisabled(v.Snapshot.Nodes)) {
			ev = append(ev, "Lease kube-system/"+dc.Lease+" held by "+*l.Spec.HolderIdentity)
		}
		if inst := v.Installed; inst != nil {
			var late []string
			for _, n := range v.Snapshot.Nodes {
				if providerScheme(n.Spec.ProviderID) == dc.Scheme && n.CreationTimestamp.After(inst.GetCreationTimestamp().Time) {
					late = append(late, n.Name)
				}
			}
			if len(late) > 0 {
				ev = append(ev, fmt.Sprintf("%d %s registered after the AWS CCM was installed got %s:// providerIDs (%s)", len(late), Plural(len(late), "node", "nodes"), dc.Scheme, SomeOf(late)))
			}
		}
		if len(ev) > 0 {
			out = append(out, distroRunning{dc, ev})
		}
	}
	return out
}

// k3sCCMDisabled tells whether a K3s server's recorded arguments keep its
// embedded cloud controller's node controllers off.
func k3sCCMDisabled(nodes []corev1.Node) bool {
	for i := range nodes {
		args := nodeArgs(&nodes[i])
		if len(args) > 0 && args[0] == "server" && (slices.Contains(args, "--disable-cloud-controller") || slices.Contains(argValues(args, "disable-cloud-controller"), "true")) {
			return true
		}
	}
	return false
}

// controllersRule reports a distribution's own cloud controller running
// beside (or before) the AWS CCM, and a second AWS CCM.
func controllersRule(v *View) []Finding {
	var out []Finding
	w := v.Workload
	for _, r := range v.distroControllers() {
		name := distros.DisplayName(r.dc.Distro)
		f := Finding{Area: AreaControllers, Subject: name + "'s cloud controller", Source: r.dc.Source}
		ev := strings.Join(r.evidence, "; ")
		switch {
		case w != nil && w.Installed:
			f.Severity = Error
			f.Message = fmt.Sprintf("runs beside the AWS CCM (%s): both initialise new nodes, and those it takes first get %s:// providerIDs, which the AWS CCM cannot use and which never change", ev, r.dc.Scheme)
			f.Fix = r.dc.Disable + "; then register again the nodes it initialised (the node findings name them)"
		case w != nil:
			f.Severity = Warning
			f.Message = fmt.Sprintf("runs (%s): the AWS CCM installed beside it would race it for every new node", ev)
			f.Fix = r.dc.Disable + ", before installing the AWS CCM"
		default:
			f.Severity = Info
			f.Message = fmt.Sprintf("runs (%s): it initialises the nodes, with %s:// providerIDs", ev, r.dc.Scheme)
		}
		out = append(out, f)
	}
	if w == nil {
		return out
	}
	for i := range v.OtherCCMs {
		c := &v.OtherCCMs[i]
		lease := otherLease(c)
		image := c.spec.Spec.Containers[c.container].Image
		f := Finding{Area: AreaControllers, Subject: c.kind + " " + c.namespace + "/" + c.name,
			Fix: fmt.Sprintf("keep one AWS CCM: delete the other (helm uninstall its release, or kubectl delete -n %s %s/%s)", c.namespace, strings.ToLower(c.kind), c.name)}
		held := ""
		if l := v.Snapshot.Leases[lease]; l != nil && !expired(l, v.Now) {
			held = " (held by " + *l.Spec.HolderIdentity + ")"
		}
		switch {
		case !w.Installed:
			f.Severity = Error
			f.Message = fmt.Sprintf("a second AWS CCM (image %s) runs in the cluster: installing %s as well makes two", image, w.subject())
			f.Fix = fmt.Sprintf("upgrade that one instead (render with its release name and namespace), or uninstall it first (kubectl delete -n %s %s/%s)", c.namespace, strings.ToLower(c.kind), c.name)
		case w.LeaderElect && lease == w.Lease:
			f.Severity = Warning
			f.Message = fmt.Sprintf("a second AWS CCM (image %s) shares Lease %s%s with %s: one leads at a time, whichever takes the lease, with its own release and flags", image, lease, held, w.subject())
		default:
			f.Severity = Error
			f.Message = fmt.Sprintf("a second AWS CCM (image %s) leads under Lease %s%s, %s under %s: both run the cloud controllers on the same nodes and load balancers", image, lease, held, w.subject(), orPlaceholder(w.Lease, "no lease"))
		}
		out = append(out, f)
	}
	return out
}

// takeoverRule lists the Services of type LoadBalancer the CCM's service
// controller will give an AWS load balancer once it runs: while no CCM
// runs one, or it is held back (--controllers=*,-service). K3s's are the
// service rule's.
func takeoverRule(v *View) []Finding {
	w := v.Workload
	if v.LoadBalancers == nil || v.ServiceLBDaemonSets != nil || w.ccmServices() {
		return nil
	}
	held := w != nil && w.Installed
	var fresh, adopted []NodeIssue
	for _, svc := range v.LoadBalancers {
		if svc.Spec.LoadBalancerClass != nil {
			continue // another load balancer controller's
		}
		ref := svc.Namespace + "/" + svc.Name
		var addrs []string
		elb := false
		for _, in := range svc.Status.LoadBalancer.Ingress {
			a := orPlaceholder(in.Hostname, in.IP)
			addrs = append(addrs, a)
			elb = elb || awsLBHostname(in.Hostname)
		}
		if elb {
			adopted = append(adopted, NodeIssue{Node: ref, Finding: Finding{Area: AreaService, Severity: Info,
				Message: "answered by an AWS load balancer already: the CCM finds it by the name it derives from the Service's UID, and keeps it and its DNS name"}})
			continue
		}
		i := NodeIssue{Node: ref, Finding: Finding{Area: AreaService, Severity: Warning,
			Message: "type LoadBalancer without an AWS load balancer: once the CCM's service controller runs it creates one for each (a Classic ELB, or an NLB with the annotation service.beta.kubernetes.io/aws-load-balancer-type: nlb), and the Service's address becomes the load balancer's new DNS name (*.elb.amazonaws.com)",
			Fix:     fixHoldServices}}
		if held {
			i.Severity, i.Fix = Info, ""
			i.Message = "type LoadBalancer, held back: the CCM runs with --controllers=*,-service; once its service controller runs it creates an AWS load balancer for each, and the Service's address becomes the load balancer's new DNS name (*.elb.amazonaws.com)"
		}
		if len(addrs) > 0 {
			i.One = i.Message + ", in place of " + strings.Join(addrs, ", ")
		}
		fresh = append(fresh, i)
	}
	return append(GroupOf(fresh, "Service", "Services"), GroupOf(adopted, "Service", "Services")...)
}

// planFrom says which plan fits the cluster, and why: in-tree (the
// controller managers run the in-tree AWS provider), builtin (a
// distribution's own cloud controller runs, or nodes carry its
// providerIDs), none (no cloud provider: no providerIDs, no AWS CCM), new
// (no nodes); "" when the AWS CCM runs and nodes have its providerIDs.
func (v *View) planFrom() (from, why string) {
	if len(v.Snapshot.Nodes) == 0 {
		return "new", "no node has joined"
	}
	server, _ := minorOf(v.KubernetesVersion)
	var intree []string
	for _, k := range v.controlPlaneProcesses(programKCM) {
		// From 1.27 the controller manager refuses the flag (the options
		// rule says so): there is nothing to migrate from. Its own image
		// tells its version (mid-upgrade they differ), else the API
		// server's.
		if m := cmp.Or(k.minor, server); m > releases.LastInTreeMinor {
			continue
		}
		if k.flags["cloud-provider"] == "aws" {
			intree = append(intree, k.node)
		}
	}
	if len(intree) > 0 {
		return "in-tree", "kube-controller-manager on " + SomeOf(intree) + " runs the in-tree AWS provider (--cloud-provider=aws)"
	}
	schemes := map[string]int{}
	for _, n := range v.Snapshot.Nodes {
		schemes[providerScheme(n.Spec.ProviderID)]++
	}
	for _, dc := range distros.OwnControllers(distros.Records()) {
		if n := schemes[dc.Scheme]; n > 0 {
			return "builtin", fmt.Sprintf("%d of %d nodes have %s:// providerIDs from %s's own cloud controller", n, len(v.Snapshot.Nodes), dc.Scheme, distros.DisplayName(dc.Distro))
		}
	}
	if rs := v.distroControllers(); len(rs) > 0 {
		return "builtin", distros.DisplayName(rs[0].dc.Distro) + "'s own cloud controller runs"
	}
	installed := v.Workload != nil && v.Workload.Installed
	waiting := 0
	for _, n := range v.Snapshot.Nodes {
		if n.Spec.ProviderID == "" && slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == releases.UninitializedTaint }) {
			waiting++
		}
	}
	switch {
	case installed:
		return "", ""
	case schemes["aws"] > 0 && server <= releases.LastInTreeMinor:
		return "in-tree", fmt.Sprintf("%d of %d nodes have aws:// providerIDs and no AWS CCM runs, at 1.%d: the in-tree provider's", schemes["aws"], len(v.Snapshot.Nodes), server)
	case waiting == len(v.Snapshot.Nodes) && server > releases.LastInTreeMinor:
		return "new", fmt.Sprintf("every node (%d) waits for the CCM, tainted uninitialized without providerID: the kubelets are on the external provider (the plan's during.install-ccm is next)", waiting)
	case schemes[""] == len(v.Snapshot.Nodes):
		return "none", fmt.Sprintf("no cloud provider: none of the %d nodes has a providerID, and no AWS CCM runs", len(v.Snapshot.Nodes))
	}
	return "", ""
}

// planRule says which aws-ccm-renderer plan fits the cluster, as a command
// line with what check knows filled in.
func planRule(v *View) []Finding {
	from, why := v.planFrom()
	if from == "" {
		return nil
	}
	distro := v.Distribution.Detected
	if _, ok := distros.RecordOf(distros.Distro(distro)); !ok || distro == string(distros.Auto) {
		distro = "DISTRO"
	}
	kv, _, _ := strings.Cut(v.KubernetesVersion, "+")
	if server, _ := minorOf(kv); from == "in-tree" && server > releases.LastInTreeMinor {
		// The in-tree controller managers are older than the API server
		// that answered: the plan is for their minor.
		kv = fmt.Sprintf("v1.%d", releases.LastInTreeMinor)
		for _, k := range v.controlPlaneProcesses(programKCM) {
			if k.minor > 0 && k.minor <= releases.LastInTreeMinor {
				kv = fmt.Sprintf("v1.%d", k.minor)
			}
		}
	}
	return []Finding{{Area: AreaPlan, Severity: Info, Message: why + ": the plan to move it to the AWS CCM starts from " + from,
		Fix: fmt.Sprintf("aws-ccm-renderer plan --from=%s --distro=%s --kube-version=%s", from, distro, orPlaceholder(kv, "VERSION"))}}
}
