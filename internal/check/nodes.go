package check

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// controlPlaneTaints are the role taints that only control-plane nodes
// carry.
var controlPlaneTaints = []string{distros.LabelControlPlane, distros.LabelRKE1ControlPlane, distros.LabelMaster}

// IsControlPlane tells whether a node has the control-plane role: by one of
// the distributions' control-plane labels, else by a control-plane role
// taint, else by RKE2's or K3s's node arguments (a server that runs the
// API server). labelled is false when only a taint or the arguments show
// it.
func IsControlPlane(n *corev1.Node) (cp bool, by string, labelled bool) {
	for _, l := range distros.ControlPlaneLabels {
		if v, ok := n.Labels[l]; ok {
			return true, fmt.Sprintf("label %s=%q", l, v), true
		}
	}
	for _, t := range n.Spec.Taints {
		if slices.Contains(controlPlaneTaints, t.Key) {
			return true, "taint " + t.Key + ":" + string(t.Effect), false
		}
	}
	if args := nodeArgs(n); len(args) > 0 && args[0] == "server" && !slices.Contains(args, "--disable-apiserver") &&
		!slices.Contains(argValues(args, "disable-apiserver"), "true") {
		return true, "node-args of a server", false
	}
	return false, "", false
}

// ec2Name matches the EC2 private DNS name of an instance with IP-based
// naming: ip-10-0-1-10.us-west-2.compute.internal, or
// ip-10-0-1-10.ec2.internal in us-east-1.
var ec2Name = regexp.MustCompile(`^ip-(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})\.(?:([a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d+)\.compute\.internal|ec2\.internal)$`)

// ec2NameOf reports whether a node name is an EC2 private DNS name, and
// which IP and region it names ("us-east-1" for ec2.internal).
func ec2NameOf(name string) (ip, region string, ok bool) {
	m := ec2Name.FindStringSubmatch(name)
	if m == nil {
		return "", "", false
	}
	region = m[5]
	if region == "" {
		region = "us-east-1"
	}
	return strings.Join(m[1:5], "."), region, true
}

// expectedEC2Name writes the private DNS name a node with this IP would
// have in a region; "" when either is unknown.
func expectedEC2Name(ip, region string) string {
	if ip == "" || region == "" || strings.Contains(ip, ":") {
		return ""
	}
	host := "ip-" + strings.ReplaceAll(ip, ".", "-")
	if region == "us-east-1" {
		return host + ".ec2.internal"
	}
	return host + "." + region + ".compute.internal"
}

func InternalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	if v := n.Annotations[annotationProvidedIP]; v != "" {
		first, _, _ := strings.Cut(v, ",")
		return first
	}
	return ""
}

func regionOf(n *corev1.Node) string {
	if r := n.Labels[labelRegion]; r != "" {
		return r
	}
	return n.Labels[labelRegionBeta]
}

// regionOf is a node's region: its label, else the cluster's.
func (v *View) regionOf(n *corev1.Node) string {
	if r := regionOf(n); r != "" {
		return r
	}
	return v.region
}

// ClusterRegion is the region most nodes show, by their region label or
// their EC2 private DNS name; "" when none does.
func ClusterRegion(nodes []corev1.Node) string {
	count := map[string]int{}
	best := ""
	for i := range nodes {
		r := regionOf(&nodes[i])
		if r == "" {
			_, r, _ = ec2NameOf(nodes[i].Name)
		}
		if r == "" {
			continue
		}
		count[r]++
		if count[r] > count[best] || count[r] == count[best] && r < best {
			best = r
		}
	}
	return best
}

// externalEvidence lists what the API shows of a kubelet started with
// --cloud-provider=external: the uninitialized taint it registers with, the
// provided-node-ip annotation it sets (only with an external provider and
// --node-ip), and RKE2's or K3s's recorded node arguments.
func externalEvidence(n *corev1.Node) []string {
	var ev []string
	if hasTaint(n, distros.TaintUninitialized) {
		ev = append(ev, "taint "+distros.TaintUninitialized)
	}
	if _, ok := n.Annotations[annotationProvidedIP]; ok {
		ev = append(ev, "annotation "+annotationProvidedIP)
	}
	args := nodeArgs(n)
	for _, v := range argValues(args, "kubelet-arg") {
		if strings.TrimLeft(v, "-") == "cloud-provider=external" {
			ev = append(ev, "node-args kubelet-arg cloud-provider=external")
		}
	}
	for _, v := range argValues(args, "cloud-provider-name") {
		if v == "external" || v == "aws" {
			ev = append(ev, "node-args cloud-provider-name="+v)
		}
	}
	return ev
}

func hasTaint(n *corev1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == key })
}

// providerScheme returns the scheme of a provider ID: aws for
// aws:///us-west-2a/i-0123.
func providerScheme(id string) string {
	s, _, ok := strings.Cut(id, "://")
	if !ok {
		return ""
	}
	return s
}

// nameFix says how to register nodes under their EC2 private DNS names on
// each distribution. notes are the nodes', "NODE" or "NODE → NAME" with
// the name it should have where the node's InternalIP and the region tell.
func nameFix(distro string, notes []string) string {
	name, what := "its EC2 private DNS name", "the node"
	if len(notes) == 1 {
		if _, want, ok := strings.Cut(notes[0], " → "); ok {
			name = want
		}
	} else if len(notes) > 1 {
		what = "each node"
		name += " (" + SomeOf(notes) + ")"
	}
	if t := facts(distro).NameFix; t != "" {
		return distros.FillText(t, "what", what, "name", name)
	}
	return "register " + what + " as " + name + " (kubelet --hostname-override), or start its kubelet with --provider-id=aws:///ZONE/INSTANCE-ID"
}

// externalFix says how to start the kubelets with the external cloud
// provider on each distribution.
func externalFix(distro string) string {
	how := facts(distro).ExternalKubelets
	if how == "" {
		how = "start every kubelet with --cloud-provider=external"
	}
	return how + "; the kubelet adds the uninitialized taint only when it registers the node, so drain the node, delete the Node object and restart the kubelet"
}
