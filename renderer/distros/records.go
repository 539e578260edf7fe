// Package distros holds the record of each distribution the program
// serves, as data: what the renderer writes for it (placement,
// tolerations, modes), how a node shows it, its own cloud controller and
// what it does to its nodes. The renderer's patches, the flags and help
// texts, check, plan and the generated files read the records; none
// switches on a distribution. It imports no other package of the program
// but the release data.
package distros

import (
	"slices"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// The record of each distribution, as data (Records; the types beyond
// placement in facts.go): every patch that depends on the distribution
// reads it, and so does everything else that knows distributions: the
// flags and help texts, check, plan (its parts in internal/plan/parts.go),
// the generated overlays, wrapper chart, schemas and examples. Adding a
// distribution: docs/dev/architecture.md, "Where to add things".

// Distro names a Kubernetes distribution whose control-plane nodes the CCM
// must run on.
type Distro string

const (
	Auto    Distro = "auto"
	RKE     Distro = "rke"
	RKE2    Distro = "rke2"
	K3s     Distro = "k3s"
	Kubeadm Distro = "kubeadm"
)

// All lists every accepted --distro value, auto first: the
// distributions of Records, in their order.
var All = func() []Distro {
	var ds []Distro
	for _, p := range records {
		ds = append(ds, p.Distro)
	}
	return ds
}()

// Aliases are the names people give distributions that are not
// --distro values, with the value they mean (rke1 is rke): the records'
// Aliases.
var Aliases = func() map[string]string {
	m := map[string]string{}
	for _, p := range records {
		for _, a := range p.Aliases {
			m[a] = string(p.Distro)
		}
	}
	return m
}()

// Label keys and taints named by the profiles.
const (
	LabelControlPlane     = "node-role.kubernetes.io/control-plane"
	LabelRKE1ControlPlane = "node-role.kubernetes.io/controlplane" // RKE1 (no hyphen), not LabelControlPlane
	LabelMaster           = "node-role.kubernetes.io/master"
	TaintEtcd             = "node-role.kubernetes.io/etcd"
	TaintUninitialized    = "node.cloudprovider.kubernetes.io/uninitialized"
	TaintCriticalAddon    = "CriticalAddonsOnly"
)

// ControlPlaneLabels are the node labels that mark a control-plane node on
// some distribution. Charts select on them; the placement patch replaces them.
var ControlPlaneLabels = []string{LabelControlPlane, LabelRKE1ControlPlane, LabelMaster}

// Toleration is the subset of a Kubernetes toleration the profiles need.
type Toleration struct {
	Key      string
	Operator string
	Value    string
	Effect   string
}

// Record is what the program knows of one distribution: what the renderer writes for
// it, and what every other part of the program (check, plan, the
// generated overlays, charts, schemas and help texts) knows of it. A
// consumer reads a field; none switches on the distribution.
type Record struct {
	Distro Distro
	// Name is the distribution as its makers write it, for people.
	Name string
	// Aliases are other names people give it, which --distro suggests it
	// for.
	Aliases []string
	// RancherProvider is the value of Rancher's provider.cattle.io
	// cluster label for the distribution, "" when Rancher does not
	// provision it.
	RancherProvider string
	// NodeSelector places the pod on the distribution's control-plane
	// nodes. Empty for auto, which writes AffinityLabels instead.
	NodeSelector map[string]string
	// AffinityLabels, for auto: a required node affinity with one term per
	// label (operator Exists), so a node with any of them qualifies.
	AffinityLabels []string
	// Tolerations the pod needs on the distribution's control-plane nodes.
	Tolerations []Toleration
	// NoInTreeProvider: the distribution's Kubernetes is built without the
	// in-tree cloud providers (K3s: the providerless build tag, k3s-io/k3s
	// scripts/build), so there is no in-tree controller manager to hand
	// over from and no migrate mode; its move to the AWS CCM is a switch
	// (aws-ccm-renderer plan --distro k3s).
	NoInTreeProvider bool
	// Signs are what a node of the distribution shows, for check and
	// --distro=detect (DetectNode).
	Signs []Sign
	// Controller is the distribution's own cloud controller, if it has
	// one.
	Controller *OwnController
	// Node is what the distribution does to its nodes, and how a user
	// changes it: the facts and texts of check and plan.
	Node NodeFacts
}

func exists(key, effect string) Toleration {
	return Toleration{Key: key, Operator: "Exists", Effect: effect}
}

var (
	tolUninitialized = exists(TaintUninitialized, "NoSchedule")
	tolCritical      = exists(TaintCriticalAddon, "")
	tolEtcd          = exists(TaintEtcd, "NoExecute")
)

// records are the distributions, auto first: the one place for what the
// program knows of each (docs/dev/architecture.md, "Where to add things"), and
// the synthetic one of TestSyntheticDistro when built for it.
var records = append(known, synthetic...)

// known are the distributions the program serves.
var known = []Record{
	{
		Distro:         Auto,
		Name:           "auto",
		AffinityLabels: []string{LabelControlPlane, LabelRKE1ControlPlane, LabelMaster},
		Tolerations: []Toleration{tolUninitialized,
			exists(LabelControlPlane, "NoSchedule"), exists(LabelRKE1ControlPlane, "NoSchedule"),
			exists(LabelMaster, "NoSchedule"), tolEtcd, tolCritical},
	},
	{
		Distro:          RKE,
		Name:            "RKE1",
		Aliases:         []string{"rke1"},
		RancherProvider: "rke",
		NodeSelector:    map[string]string{LabelRKE1ControlPlane: "true"},
		Tolerations:     []Toleration{tolUninitialized, exists(LabelRKE1ControlPlane, "NoSchedule"), tolEtcd, tolCritical},
		Signs:           []Sign{{SignAnnotationPrefix, "rke.cattle.io/", SignMark}, {SignLabel, LabelRKE1ControlPlane, SignMark}},
		Node: NodeFacts{
			ControlPlaneUnseen:    "RKE1 runs kube-controller-manager and kube-apiserver as Docker containers, which the API does not show: their flags are not checked",
			ControlPlaneUnseenFix: "on each control-plane node: docker inspect kube-controller-manager kube-apiserver --format '{{.Args}}'",
			Configuration:         "cluster.yml",
			NameFix:               "RKE1: name {what} {name}: in Rancher, cloud provider External Amazon (out-of-tree) with useInstanceMetadataHostname: true (use_instance_metadata_hostname in cluster.yml), or --node-name / hostname_override set to it; then re-register the node",
			KeepNameFix:           "RKE1: before the switch set {what}'s hostname_override to its NAME with useInstanceMetadataHostname: false{nodes} (plan step before.node-names): the node keeps its name and the label becomes it",
			ExternalKubelets:      "RKE1: cloud provider external-aws (Rancher: External Amazon (out-of-tree)) sets --cloud-provider=external on every kubelet",
			LastMinor:             releases.RKELastMinor,
			LastMinorNote:         "rke v1.8, its last release line",
			Successor:             RKE2,
		},
	},
	{
		Distro:          RKE2,
		Name:            "RKE2",
		RancherProvider: "rke2",
		NodeSelector:    map[string]string{LabelControlPlane: "true"},
		Tolerations:     []Toleration{tolUninitialized, exists(LabelControlPlane, "NoSchedule"), tolEtcd, tolCritical},
		Signs:           []Sign{{SignKubeletVersion, "+rke2", SignBuild}, {SignAnnotationPrefix, "rke2.io/", SignOwn}},
		Controller: &OwnController{Scheme: "rke2", Lease: "rke2-cloud-controller-manager", Image: "rke2-cloud-provider",
			Disable: "disable-cloud-controller: true in /etc/rancher/rke2/config.yaml of every server (Rancher: machineGlobalConfig)",
			Source: "rancher/rke2 pkg/rke2/rke2_linux.go (the cloud-controller-manager static pod, image rke2-cloud-provider); " +
				"k3s-io/k3s pkg/daemons/control/server.go and pkg/cloudprovider (lease and provider name version.Program, rke2)"},
		Node: NodeFacts{
			NodeArgs:             "rke2.io/node-args",
			ManifestsDir:         "/var/lib/rancher/rke2/server/manifests",
			ServerKubectl:        "sudo /var/lib/rancher/rke2/bin/kubectl --kubeconfig /etc/rancher/rke2/rke2.yaml",
			ControlPlanePods:     true,
			KubeletArgMissing:    "its kubelet is not given cloud-provider=external (rke2.io/node-args): it keeps the in-tree provider, while the switch has begun ({begun})",
			KubeletArgMissingFix: "its machine matches no machineSelectorConfig entry with kubelet-arg cloud-provider=external, or a later entry replaced the list (plan step during.switch); RKE2 without Rancher: kubelet-arg in its /etc/rancher/rke2/config.yaml",
			Configuration:        "RKE2's config.yaml",
			NameFix:              "RKE2: name {what} {name}: cloud-provider-name: aws in the cluster's machineGlobalConfig (the supervisor then names the node and sets its providerID), or node-name in /etc/rancher/rke2/config.yaml; then re-register the node",
			KeepNameFix:          "RKE2: before the switch set node-name: <its NAME> in {what}'s RKE2 configuration{nodes} (RKE2 gives the kubelet --hostname-override from it): the node keeps its name and the label becomes it",
			ExternalKubelets:     "RKE2: kubelet-arg cloud-provider=external on every node (Rancher: machineSelectorConfig per role) and disable-cloud-controller: true on the servers",
		},
	},
	{
		Distro:           K3s,
		Name:             "K3s",
		RancherProvider:  "k3s",
		NodeSelector:     map[string]string{LabelControlPlane: "true"},
		Tolerations:      []Toleration{tolUninitialized, exists(LabelControlPlane, "NoSchedule"), tolEtcd, tolCritical},
		NoInTreeProvider: true,
		Signs:            []Sign{{SignKubeletVersion, "+k3s", SignBuild}, {SignAnnotationPrefix, "k3s.io/", SignOwn}},
		Controller: &OwnController{Scheme: "k3s", Lease: "k3s-cloud-controller-manager",
			Disable: "disable-cloud-controller: true in /etc/rancher/k3s/config.yaml of every server, with kubelet-arg: [cloud-provider=external] on every node",
			Source:  "k3s-io/k3s pkg/daemons/control/server.go and pkg/cloudprovider (lease and provider name version.Program, k3s)"},
		Node: NodeFacts{
			NodeArgs:              "k3s.io/node-args",
			ManifestsDir:          "/var/lib/rancher/k3s/server/manifests",
			ServerKubectl:         "sudo k3s kubectl",
			ControlPlaneUnseen:    "K3s runs the controller manager inside its own process, which the API does not show: only the servers' node-args (k3s.io/node-args) are checked",
			ServiceLB:             &ServiceLB{NameLabel: "svccontroller.k3s.cattle.io/svcname", NamespaceLabel: "svccontroller.k3s.cattle.io/svcnamespace"},
			KubeletExternalItself: true,
			KubeletArgMissing:     "its kubelet is not given cloud-provider=external (k3s.io/node-args), and with disable-cloud-controller on the servers K3s gives it no cloud provider: it registers without the uninitialized taint the CCM initialises",
			KubeletArgMissingFix:  "kubelet-arg: [cloud-provider=external] in its /etc/rancher/k3s/config.yaml (Rancher: machineGlobalConfig), then restart K3s and register the node again",
			// K3s has no cloud-provider-name setting: the name, or the
			// provider ID, is the node's own configuration.
			Configuration:    "K3s's config.yaml",
			NameFix:          "K3s: name {what} {name}: node-name in /etc/rancher/k3s/config.yaml, or keep the name and give the kubelet its instance (kubelet-arg: provider-id=aws:///ZONE/INSTANCE-ID); then re-register the node",
			KeepNameFix:      "K3s: set node-name: <its NAME> in {what}'s /etc/rancher/k3s/config.yaml{nodes} (the agent gives the kubelet --hostname-override from it)",
			ExternalKubelets: "K3s: kubelet-arg cloud-provider=external on every node (Rancher: machineSelectorConfig per role) and disable-cloud-controller: true on the servers",
		},
	},
	{
		Distro:       Kubeadm,
		Name:         "kubeadm",
		NodeSelector: map[string]string{LabelControlPlane: ""},
		Tolerations: []Toleration{tolUninitialized, exists(LabelControlPlane, "NoSchedule"),
			exists(LabelMaster, "NoSchedule"), tolCritical},
		// kubernetes/kubernetes cmd/kubeadm/app/constants/constants.go at
		// v1.26.15.
		Signs: []Sign{{SignAnnotation, "kubeadm.alpha.kubernetes.io/cri-socket", SignMark}},
		Node: NodeFacts{
			ControlPlanePods: true,
			ClusterConfigMap: releases.KubeadmConfig,
			Configuration:    "kubeadm's configuration",
			NameFix:          "kubeadm: name {what} {name} with nodeRegistration.name in its InitConfiguration/JoinConfiguration (the metadata service's local-hostname), then re-join it",
			KeepNameFix:      "kubeadm: before the switch give {what}'s kubelet --hostname-override=<its NAME> in /var/lib/kubelet/kubeadm-flags.env{nodes}: the node keeps its name and the label becomes it",
			ExternalKubelets: "kubeadm: nodeRegistration.kubeletExtraArgs cloud-provider: external",
		},
	},
}

// profiles are the records by distribution.
var profiles = func() map[Distro]Record {
	m := map[Distro]Record{}
	for _, p := range records {
		m[p.Distro] = p
	}
	return m
}()

// Records returns the distributions' records, auto first, in the order
// of All. The slice is the caller's.
func Records() []Record { return slices.Clone(records) }

// DisplayName writes a distribution as its makers do (Record.Name); a
// name that is no distribution, as it is.
func DisplayName(d Distro) string {
	if p, ok := profiles[d]; ok {
		return p.Name
	}
	return string(d)
}

// RecordOf returns the profile of a distribution.
func RecordOf(d Distro) (Record, bool) {
	p, ok := profiles[d]
	return p, ok
}

// ManagedTolerationKeys are the taint keys some profile tolerates: the
// tolerations the renderer owns (see Tolerations).
var ManagedTolerationKeys = func() []string {
	var keys []string
	for _, d := range All {
		for _, t := range profiles[d].Tolerations {
			if !slices.Contains(keys, t.Key) {
				keys = append(keys, t.Key)
			}
		}
	}
	return keys
}()
