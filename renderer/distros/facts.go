package distros

import (
	"maps"
	"slices"
	"strings"
)

// What a distribution's record says beyond placement: how a node shows
// it, and what it does to its nodes. Everything that lists distributions
// (flags, help, schemas, the wrapper chart, the plugins' parameters) is
// derived from the records through the functions below, or generated from
// them (make generate); check and plan read the fields.

// SignKind is where on a node a sign of its distribution is.
type SignKind int

const (
	// SignKubeletVersion: the kubelet's version contains Key (its build
	// suffix, v1.30.4+rke2r1).
	SignKubeletVersion SignKind = iota
	// SignAnnotationPrefix: an annotation whose key begins with Key.
	SignAnnotationPrefix
	// SignAnnotation: the annotation Key.
	SignAnnotation
	// SignLabel: the label Key.
	SignLabel
)

// SignStrength orders the signs: a node shows the distribution of its
// strongest sign, and of the first distribution (in the records' order) among
// those of equal strength.
type SignStrength int

const (
	// SignMark: a mark the distribution leaves, which others may copy
	// (RKE1's label, kubeadm's CRI socket annotation).
	SignMark SignStrength = iota
	// SignOwn: the distribution's own annotations (RKE2 and K3s record
	// the node's arguments under their name: k3s-io/k3s
	// pkg/nodeconfig/nodeconfig.go, version.Program + ".io/node-args").
	SignOwn
	// SignBuild: the kubelet's version says which build it is.
	SignBuild
)

// Sign is one thing a node of a distribution shows.
type Sign struct {
	Kind     SignKind
	Key      string
	Strength SignStrength
}

// OwnController is a distribution's own cloud controller manager: K3s's
// embedded one, which RKE2 runs as a static pod. It gives every node it
// initialises the providerID SCHEME://NODENAME.
type OwnController struct {
	// Distro is the distribution whose record holds it (OwnControllers
	// fills it in).
	Distro Distro
	// Scheme is its providerIDs' scheme (version.Program).
	Scheme string
	// Lease is its leader-election lease in kube-system.
	Lease string
	// Image is a part of its image's repository, when it runs as a pod.
	Image string
	// Disable is the server setting that keeps it off.
	Disable string
	Source  string
}

// OwnControllers are the own cloud controllers of the records'
// distributions, in their order.
func OwnControllers(recs []Record) []OwnController {
	var out []OwnController
	for _, p := range recs {
		if c := p.Controller; c != nil {
			oc := *c
			oc.Distro = p.Distro
			out = append(out, oc)
		}
	}
	return out
}

// ControllerOf returns a distribution's own cloud controller.
func ControllerOf(d Distro) (OwnController, bool) {
	i := slices.IndexFunc(OwnControllers(records), func(c OwnController) bool { return c.Distro == d })
	if i < 0 {
		return OwnController{}, false
	}
	return OwnControllers(records)[i], true
}

// ControllerOfScheme returns the distribution's cloud controller that
// writes providerIDs of a scheme (rke2, k3s).
func ControllerOfScheme(scheme string) (OwnController, bool) {
	i := slices.IndexFunc(OwnControllers(records), func(c OwnController) bool { return c.Scheme == scheme })
	if i < 0 {
		return OwnController{}, false
	}
	return OwnControllers(records)[i], true
}

// OwnControllerNames are the possessive names of the distributions with a
// cloud controller of their own ("RKE2's") and its providerIDs' schemes
// ("rke2://"), for people.
func OwnControllerNames(recs []Record) (names, schemes []string) {
	for _, c := range OwnControllers(recs) {
		names = append(names, DisplayName(c.Distro)+"'s")
		schemes = append(schemes, c.Scheme+"://")
	}
	return names, schemes
}

// ServiceLB is a distribution's service load balancer: a DaemonSet per
// Service of type LoadBalancer, labelled with the Service's name and
// namespace (k3s-io/k3s pkg/cloudprovider/servicelb.go).
type ServiceLB struct {
	NameLabel, NamespaceLabel string
}

// NodeFacts are what a distribution does to its nodes and its control
// plane, and what to tell its users, for check and plan. Texts may hold
// {what} (the node, each node), {name} (the name it should have), {nodes}
// (" (the nodes)") and {begun} (what shows the switch has begun), which
// the reader fills (FillText).
type NodeFacts struct {
	// NodeArgs is the annotation where the distribution records the
	// node's server or agent command line, as a JSON list.
	NodeArgs string
	// ManifestsDir is the server's folder whose manifests the cluster
	// applies itself, from its start on (k3s-io/k3s pkg/deploy), where
	// Rancher writes spec.rkeConfig.additionalManifest; "" when none.
	ManifestsDir string
	// ServerKubectl runs kubectl on a server against its own API server,
	// which answers before Rancher's cluster agent does (docs.rke2.io
	// cluster_access: /etc/rancher/rke2/rke2.yaml and the kubectl RKE2
	// installs; k3s kubectl reads /etc/rancher/k3s/k3s.yaml); "" when none.
	ServerKubectl string
	// ControlPlanePods: kube-controller-manager and kube-apiserver run
	// as static pods, whose mirror pods the API shows (rancher/rke2
	// pkg/staticpod/staticpod.go, kubeadm's control-plane phase).
	ControlPlanePods bool
	// ControlPlaneUnseen says why the API does not show the control
	// plane's flags, when it does not; ControlPlaneUnseenFix how to read
	// them.
	ControlPlaneUnseen, ControlPlaneUnseenFix string
	// ServiceLB is the service load balancer the distribution's own cloud
	// controller runs under its lease (K3s's ServiceLB), if any.
	ServiceLB *ServiceLB
	// ClusterConfigMap is the ConfigMap (namespace/name) the
	// distribution keeps the cluster's configuration in.
	ClusterConfigMap string
	// KubeletExternalItself: the distribution gives its kubelets
	// --cloud-provider=external itself while its own cloud controller
	// runs, and not once a server turns it off.
	KubeletExternalItself bool
	// KubeletArgMissing is check's finding on a node whose recorded
	// arguments do not give the kubelet --cloud-provider=external
	// ({begun}), and KubeletArgMissingFix its fix.
	KubeletArgMissing, KubeletArgMissingFix string
	// NameFix says how to register {what} as {name}; KeepNameFix how to
	// keep {what}'s name as its hostname label at the switch;
	// ExternalKubelets how to start the kubelets with
	// --cloud-provider=external.
	NameFix, KeepNameFix, ExternalKubelets string
	// Configuration is where the cluster's configuration is written, for
	// people: "cluster.yml", "RKE2's config.yaml".
	Configuration string
	// LastMinor is the last Kubernetes minor the distribution runs (0:
	// no end), LastMinorNote why, and Successor the distribution to move
	// to.
	LastMinor     int
	LastMinorNote string
	Successor     Distro
}

// FillText fills a NodeFacts text's placeholders: pairs of placeholder
// name (without braces) and value.
func FillText(text string, pairs ...string) string {
	var args []string
	for i := 0; i+1 < len(pairs); i += 2 {
		args = append(args, "{"+pairs[i]+"}", pairs[i+1])
	}
	return strings.NewReplacer(args...).Replace(text)
}

// DetectNode tells the distribution a node shows by its labels,
// annotations and kubelet version, and by what ("kubelet +rke2r1",
// "annotation rke2.io/node-args", "label ..."); "" when none.
func DetectNode(recs []Record, labels, annotations map[string]string, kubeletVersion string) (Distro, string) {
	keys := slices.Sorted(maps.Keys(annotations))
	for s := SignBuild; s >= SignMark; s-- {
		for _, p := range recs {
			for _, sign := range p.Signs {
				if sign.Strength != s {
					continue
				}
				if ev := sign.shown(labels, annotations, keys, kubeletVersion); ev != "" {
					return p.Distro, ev
				}
			}
		}
	}
	return "", ""
}

// shown returns the evidence of the sign on a node, "" when absent.
func (s Sign) shown(labels, annotations map[string]string, keys []string, kubeletVersion string) string {
	switch s.Kind {
	case SignKubeletVersion:
		if strings.Contains(kubeletVersion, s.Key) {
			return "kubelet " + buildSuffix(kubeletVersion)
		}
	case SignAnnotationPrefix:
		for _, k := range keys {
			if strings.HasPrefix(k, s.Key) {
				return "annotation " + k
			}
		}
	case SignAnnotation:
		if _, ok := annotations[s.Key]; ok {
			return "annotation " + s.Key
		}
	case SignLabel:
		if _, ok := labels[s.Key]; ok {
			return "label " + s.Key
		}
	}
	return ""
}

// buildSuffix is the +build part of a version: +rke2r1.
func buildSuffix(v string) string {
	if i := strings.IndexByte(v, '+'); i >= 0 {
		return "+" + strings.TrimLeft(v[i+1:], "+")
	}
	return v
}

// SignsHint says what no node showed, for a detection that found nothing:
// "no +rke2/+k3s kubelet version, no rke2.io/, k3s.io/, rke.cattle.io/ or
// kubeadm.alpha.kubernetes.io/cri-socket annotation, no
// node-role.kubernetes.io/controlplane label", strongest signs first.
func SignsHint(recs []Record) string {
	var kubelet, annotations, labels []string
	for s := SignBuild; s >= SignMark; s-- {
		for _, p := range recs {
			for _, sign := range p.Signs {
				if sign.Strength != s {
					continue
				}
				switch sign.Kind {
				case SignKubeletVersion:
					kubelet = append(kubelet, sign.Key)
				case SignLabel:
					labels = append(labels, sign.Key)
				default:
					annotations = append(annotations, sign.Key)
				}
			}
		}
	}
	var parts []string
	if len(kubelet) > 0 {
		parts = append(parts, "no "+strings.Join(kubelet, "/")+" kubelet version")
	}
	if len(annotations) > 0 {
		parts = append(parts, "no "+Alternatives(annotations, "or")+" annotation")
	}
	if len(labels) > 0 {
		parts = append(parts, "no "+Alternatives(labels, "or")+" label")
	}
	return strings.Join(parts, ", ")
}

// Alternatives writes words as a list for people: "a, b, c or d" (conj
// "or"), "a and b" (conj "and").
func Alternatives(words []string, conj string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}

// Named returns the records of real distributions: every one but auto,
// which is a placement, not a distribution.
func Named(recs []Record) []Record {
	return slices.DeleteFunc(slices.Clone(recs), func(p Record) bool { return p.Distro == Auto })
}

// Values are the records' --distro values, in their order.
func Values(recs []Record) []string {
	out := make([]string, len(recs))
	for i, p := range recs {
		out[i] = string(p.Distro)
	}
	return out
}

// DisplayNames are the records' names as their makers write them.
func DisplayNames(recs []Record) []string {
	out := make([]string, len(recs))
	for i, p := range recs {
		out[i] = p.Name
	}
	return out
}

// ValuesWithNames are the records' --distro values, each followed by its
// name where the name is more than its case: "rke (RKE1)", "rke2".
func ValuesWithNames(recs []Record) []string {
	out := make([]string, len(recs))
	for i, p := range recs {
		out[i] = string(p.Distro)
		if !strings.EqualFold(p.Name, string(p.Distro)) {
			out[i] += " (" + p.Name + ")"
		}
	}
	return out
}

// RancherNames writes the distributions as the programs' titles do:
// "Rancher (RKE1, RKE2, K3s) and kubeadm", Rancher's together.
func RancherNames(recs []Record) string {
	var rancher, other []string
	for _, p := range Named(recs) {
		if p.RancherProvider != "" {
			rancher = append(rancher, p.Name)
		} else {
			other = append(other, p.Name)
		}
	}
	var parts []string
	if len(rancher) > 0 {
		parts = append(parts, "Rancher ("+strings.Join(rancher, ", ")+")")
	}
	return Alternatives(append(parts, other...), "and")
}

// WithMigrate returns the records whose distribution has migrate mode (an
// in-tree cloud provider to hand over from; migrate: true) or has not.
func WithMigrate(recs []Record, migrate bool) []Record {
	return slices.DeleteFunc(slices.Clone(recs), func(p Record) bool { return p.NoInTreeProvider == migrate })
}
