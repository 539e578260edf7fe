package check

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The in-tree side, as far as the API shows it: the flags of the control
// plane's kube-controller-manager and kube-apiserver where they run as
// static pods (NodeFacts.ControlPlanePods: the kubelet mirrors each into a
// pod of kube-system, labelled component=<program>), and the kubelet's
// arguments a distribution records on each node (NodeFacts.NodeArgs).
// Where the API shows neither, the record says why
// (NodeFacts.ControlPlaneUnseen).

// Control-plane programs whose mirror pods check reads.
const (
	programKCM       = "kube-controller-manager"
	programAPIServer = "kube-apiserver"
	// programCCM is RKE2's own cloud controller's static pod.
	programCCM = "cloud-controller-manager"
	// mirrorAnnotation marks a static pod's mirror pod.
	mirrorAnnotation = "kubernetes.io/config.mirror"
)

// collectControlPlane lists the pods of kube-system labelled as the
// control plane's controller manager or API server.
func (s *Snapshot) collectControlPlane(ctx context.Context, client kubernetes.Interface) error {
	sel := "component in (" + programKCM + "," + programAPIServer + "," + programCCM + ")"
	pods, err := client.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: "0"})
	if err != nil {
		return clusterError("list", "pods", metav1.NamespaceSystem, err)
	}
	s.ControlPlanePods = pods.Items
	sort.Slice(s.ControlPlanePods, func(i, j int) bool { return s.ControlPlanePods[i].Name < s.ControlPlanePods[j].Name })
	return nil
}

// controlPlaneProcess is one kube-controller-manager or kube-apiserver
// the API shows: its node, its flags, its Kubernetes minor.
type controlPlaneProcess struct {
	node, pod string
	mirror    bool
	flags     map[string]string
	minor     int // 0 when its image does not tell
}

// unreadProcess is a control-plane pod whose flags, of those asked for,
// the API does not show: why.
type unreadProcess struct {
	node, pod string
	why       string
}

// controlPlaneProcesses reads the control-plane pods of one program.
func (v *View) controlPlaneProcesses(program string) []controlPlaneProcess {
	out, _ := v.readControlPlane(program)
	return out
}

// readControlPlane reads the control-plane pods of one program: each time
// a container of one runs it, however wrapped (readContainer), and the
// pods where the flags asked for cannot be read or no container is seen to
// run it.
func (v *View) readControlPlane(program string, asked ...string) ([]controlPlaneProcess, []unreadProcess) {
	var out []controlPlaneProcess
	var unread []unreadProcess
	for _, p := range v.ControlPlanePods {
		if p.Labels["component"] != program || p.DeletionTimestamp != nil {
			continue
		}
		node := p.Spec.NodeName
		if node == "" {
			node = p.Name
		}
		_, mirror := p.Annotations[mirrorAnnotation]
		seen := false
		for _, c := range p.Spec.Containers {
			inv := readContainer(program, c)
			for _, why := range inv.unread {
				unread = append(unread, unreadProcess{node, p.Name, "container " + c.Name + ": " + why})
			}
			minor, _ := minorOf(renderer.ImageTag(c.Image))
			for _, words := range inv.found {
				seen = true
				flags, err := commandFlags(words, asked...)
				if err != nil {
					unread = append(unread, unreadProcess{node, p.Name, "container " + c.Name + ": " + err.Error()})
				}
				out = append(out, controlPlaneProcess{node: node, pod: p.Name, mirror: mirror, flags: flags, minor: minor})
			}
		}
		if !seen && len(asked) > 0 {
			unread = append(unread, unreadProcess{node, p.Name, "no container's command and args show " + program + " run"})
		}
	}
	return out, unread
}

// kcmState is what one controller manager's flags say of the cloud
// provider.
type kcmState struct {
	provider        string // --cloud-provider, "" when not set
	leaderMigration bool
}

func (k kcmState) String() string {
	s := "no --cloud-provider"
	if k.provider != "" {
		s = "--cloud-provider=" + k.provider
	}
	if k.leaderMigration {
		s += ", --enable-leader-migration"
	} else {
		s += ", no leader migration"
	}
	return s
}

// inTreeRule reports what the API shows of the in-tree side: the
// controller managers' cloud provider and leader migration against the
// CCM's mode, whether their route controller writes routes the CCM will
// not, a kube-apiserver still given --cloud-provider, and the kubelets
// RKE2 and K3s do not give --cloud-provider=external once the switch has
// begun. On RKE1 and K3s it says what it cannot see.
func inTreeRule(v *View) []Finding {
	var out []Finding
	kcms := v.controlPlaneProcesses(programKCM)
	d := v.Distribution.Detected
	switch f := facts(d); {
	case f.ControlPlaneUnseen != "":
		out = append(out, Finding{Area: AreaInTree, Severity: Info, Message: f.ControlPlaneUnseen, Fix: f.ControlPlaneUnseenFix})
	case len(kcms) == 0 && f.ControlPlanePods:
		out = append(out, Finding{Area: AreaInTree, Severity: Info,
			Message: "no kube-controller-manager pod in kube-system (the mirror pods of " + distros.DisplayName(distros.Distro(d)) + "'s static pods): its flags are not checked"})
	}
	out = append(out, v.kcmFindings(kcms)...)
	out = append(out, v.routeFindings(kcms)...)
	return append(out, v.kubeletArgFindings(kcms)...)
}

// kcmFindings judges each kind of controller manager (nodes alike grouped)
// against the CCM's mode.
func (v *View) kcmFindings(kcms []controlPlaneProcess) []Finding {
	var order []kcmState
	nodes := map[kcmState][]string{}
	for _, k := range kcms {
		st := kcmState{provider: k.flags["cloud-provider"], leaderMigration: IsTrue(k.flags["enable-leader-migration"])}
		if _, ok := nodes[st]; !ok {
			order = append(order, st)
		}
		nodes[st] = append(nodes[st], k.node)
	}
	w := v.Workload
	migrate := w != nil && w.Mode == string(renderer.ModeMigrate)
	installed := w != nil && w.Installed
	var out []Finding
	for _, st := range order {
		f := Finding{Area: AreaInTree, Severity: Info, Subject: "kube-controller-manager on " + SomeOf(nodes[st])}
		if n := len(nodes[st]); n > 1 {
			f.Subject = fmt.Sprintf("kube-controller-manager on %d nodes: %s", n, SomeOf(nodes[st]))
			f.Subjects, f.Count = nodes[st], n
		}
		f.Message = st.String()
		switch {
		case st.provider == "aws" && w == nil:
			f.Message += ": the in-tree provider runs the cloud controllers"
		case st.provider == "aws" && st.leaderMigration && migrate:
			f.Severity = OK
			f.Message += ": it runs the cloud controllers only while it holds the migration lease, as the CCM in migrate mode does"
		case st.provider == "aws" && st.leaderMigration:
			f.Severity = Error
			f.Message += ": it runs the cloud controllers under the migration lease, which the CCM in install mode ignores: both act on the same nodes and load balancers"
			f.Fix = "render the CCM with --mode=migrate until every controller manager runs with --cloud-provider=external and without leader migration"
		case st.provider == "aws" && migrate && !installed:
			f.Severity = Warning
			f.Message += ": the migration lease means nothing to it"
			f.Fix = "turn on leader migration in the controller manager (--enable-leader-migration) before installing the CCM; plan step before.kcm-leader-migration"
		case st.provider == "aws":
			f.Severity = Error
			f.Message += fmt.Sprintf(": it runs the cloud controllers whatever the migration lease says, and so does the CCM (%s mode) once it leads: both act on the same nodes and load balancers", w.Mode)
			f.Fix = "turn on leader migration in the controller manager (--enable-leader-migration, plan step before.kcm-leader-migration), or uninstall the CCM until it is"
		case st.provider == "external" && st.leaderMigration && migrate:
			f.Severity = Error
			f.Message += ": it runs no cloud controller, yet takes the migration lease (kube-controller-manager 1.26 takes it whenever leader migration is on: cmd/kube-controller-manager/app/controllermanager.go), so the CCM's cloud controllers wait for as long as it holds it"
			f.Fix = "restart it without --enable-leader-migration (and --leader-migration-config), as the switch does"
		case st.provider == "external" && st.leaderMigration:
			f.Severity = Warning
			f.Message += ": leader migration is left on, with nothing to migrate"
			f.Fix = "remove --enable-leader-migration and --leader-migration-config from its flags"
		case st.provider == "external":
			f.Severity = OK
			f.Message += ": the cloud controllers are the CCM's"
		}
		out = append(out, f)
	}
	return out
}

// routeFindings reports a controller manager whose in-tree route
// controller writes routes (--cloud-provider=aws, --allocate-node-cidrs
// true, --configure-cloud-routes not false: startRouteController,
// cmd/kube-controller-manager/app/core.go v1.26.5) that the CCM as
// rendered will not.
func (v *View) routeFindings(kcms []controlPlaneProcess) []Finding {
	var nodes []string
	cidr := ""
	for _, k := range kcms {
		if k.flags["cloud-provider"] == "aws" && IsTrue(k.flags["allocate-node-cidrs"]) && !isFalse(k.flags["configure-cloud-routes"]) {
			nodes = append(nodes, k.node)
			if c := k.flags["cluster-cidr"]; c != "" {
				cidr = c
			}
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	f := Finding{Area: AreaInTree, Subject: "route controller",
		Message: fmt.Sprintf("kube-controller-manager on %s runs the in-tree route controller (--allocate-node-cidrs=true, --configure-cloud-routes not false, --cluster-cidr=%s): it writes a VPC route for each node's pod CIDR", SomeOf(nodes), orUnset(cidr))}
	w := v.Workload
	switch {
	case w == nil:
		f.Severity = Info
	case !isFalse(w.flags["configure-cloud-routes"]) && w.flags["cluster-cidr"] != "":
		f.Severity = OK
		f.Message += fmt.Sprintf("; the CCM's route controller takes them over (--configure-cloud-routes, --cluster-cidr=%s)", w.flags["cluster-cidr"])
		if cidr != "" && w.flags["cluster-cidr"] != cidr {
			f.Severity = Error
			f.Message += ", but for another cluster CIDR"
			f.Fix = "render the CCM with --set-arg=cluster-cidr=" + cidr
		}
	default:
		f.Severity = Warning
		f.Message += "; the CCM as rendered does not (--configure-cloud-routes=false): if the pod network relies on those routes, nodes that join after the switch get none"
		f.Fix = "if route tables tagged for the cluster hold routes to instances, render the CCM with --set-arg=configure-cloud-routes=true --set-arg=cluster-cidr=" + orPlaceholder(cidr, "<the cluster CIDR>") + " (aws-ccm-renderer plan --cluster-cidr)"
	}
	return []Finding{f}
}

// kubeletArgFindings reports the RKE2 and K3s nodes whose recorded
// arguments do not give the kubelet --cloud-provider=external once the
// switch has begun (a controller manager shows external, a node's kubelet
// has it, the CCM runs in install mode; on K3s a server has
// disable-cloud-controller): their kubelets keep the in-tree provider, or
// on K3s get none, and register no node the CCM initialises.
func (v *View) kubeletArgFindings(kcms []controlPlaneProcess) []Finding {
	var begun []string
	if slices.ContainsFunc(kcms, func(k controlPlaneProcess) bool { return k.flags["cloud-provider"] == "external" }) {
		begun = append(begun, "a controller manager runs with --cloud-provider=external")
	}
	if w := v.Workload; w != nil && w.Installed && w.Mode == string(renderer.ModeInstall) {
		begun = append(begun, "the CCM runs in install mode")
	}
	type recorded struct {
		node   string
		distro string
		args   []string
	}
	var nodes []recorded
	withArg, disabledCCM := 0, false
	for _, n := range v.Snapshot.Nodes {
		args := nodeArgs(&n)
		d, _ := nodeDistro(&n)
		if len(args) == 0 || facts(d).NodeArgs == "" {
			continue
		}
		if facts(d).KubeletExternalItself && args[0] == "server" && (slices.Contains(args, "--disable-cloud-controller") || slices.Contains(argValues(args, "disable-cloud-controller"), "true")) {
			disabledCCM = true
		}
		if kubeletExternal(args) {
			withArg++
		}
		nodes = append(nodes, recorded{n.Name, d, args})
	}
	if withArg > 0 {
		begun = append(begun, fmt.Sprintf("%d %s it", withArg, Plural(withArg, "node's kubelet has", "nodes' kubelets have")))
	}
	var without []NodeIssue
	for _, n := range nodes {
		if kubeletExternal(n.args) {
			continue
		}
		i := NodeIssue{Node: n.node, Finding: Finding{Area: AreaInTree, Severity: Error}}
		f := facts(n.distro)
		// K3s gives its kubelets --cloud-provider=external itself while
		// its embedded cloud controller runs (pkg/daemons/agent).
		if f.KubeletExternalItself && !disabledCCM || !f.KubeletExternalItself && len(begun) == 0 {
			continue
		}
		i.Message = distros.FillText(f.KubeletArgMissing, "begun", strings.Join(begun, "; "))
		i.Fix = f.KubeletArgMissingFix
		without = append(without, i)
	}
	return GroupNodes(without)
}

// kubeletExternal tells whether recorded node arguments give the kubelet
// --cloud-provider=external: a kubelet-arg, or RKE2's
// cloud-provider-name external.
func kubeletExternal(args []string) bool {
	for _, v := range argValues(args, "kubelet-arg") {
		if strings.TrimLeft(v, "-") == "cloud-provider=external" {
			return true
		}
	}
	return slices.Contains(argValues(args, "cloud-provider-name"), "external")
}

// isFalse reads a boolean flag value that is set to false.
func isFalse(v string) bool {
	switch strings.ToLower(v) {
	case "0", "f", "false":
		return true
	}
	return false
}

func orUnset(s string) string { return orPlaceholder(s, "unset") }

func orPlaceholder(s, placeholder string) string {
	if s == "" {
		return placeholder
	}
	return s
}
