package renderer

import "slices"

// The node facts of each distribution, as data. Every patch that depends on
// the distribution reads them from here; so do the generated kustomize
// overlays and the wrapper chart's tests.

// Distro names a Kubernetes distribution whose control-plane nodes the CCM
// must run on.
type Distro string

const (
	DistroAuto    Distro = "auto"
	DistroRKE     Distro = "rke"
	DistroRKE2    Distro = "rke2"
	DistroK3s     Distro = "k3s"
	DistroKubeadm Distro = "kubeadm"
)

// Distros lists every accepted --distro value, auto first.
var Distros = []Distro{DistroAuto, DistroRKE, DistroRKE2, DistroK3s, DistroKubeadm}

// DistroAliases are the names people give distributions that are not
// --distro values, with the value they mean: RKE1 is rke.
var DistroAliases = map[string]string{"rke1": string(DistroRKE)}

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

// Profile is what the renderer writes for one distribution.
type Profile struct {
	Distro Distro
	// Name is the distribution as its makers write it (RKE1, RKE2, K3s,
	// kubeadm), for people.
	Name string
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
}

// Modes returns the modes the distribution has: install, and migrate
// unless it has no in-tree provider.
func (p Profile) Modes() []Mode {
	if p.NoInTreeProvider {
		return []Mode{ModeInstall}
	}
	return Modes
}

func exists(key, effect string) Toleration {
	return Toleration{Key: key, Operator: "Exists", Effect: effect}
}

var (
	tolUninitialized = exists(TaintUninitialized, "NoSchedule")
	tolCritical      = exists(TaintCriticalAddon, "")
	tolEtcd          = exists(TaintEtcd, "NoExecute")
)

var profiles = map[Distro]Profile{
	DistroAuto: {
		Distro:         DistroAuto,
		Name:           "auto",
		AffinityLabels: []string{LabelControlPlane, LabelRKE1ControlPlane, LabelMaster},
		Tolerations: []Toleration{tolUninitialized,
			exists(LabelControlPlane, "NoSchedule"), exists(LabelRKE1ControlPlane, "NoSchedule"),
			exists(LabelMaster, "NoSchedule"), tolEtcd, tolCritical},
	},
	DistroRKE: {
		Distro:       DistroRKE,
		Name:         "RKE1",
		NodeSelector: map[string]string{LabelRKE1ControlPlane: "true"},
		Tolerations:  []Toleration{tolUninitialized, exists(LabelRKE1ControlPlane, "NoSchedule"), tolEtcd, tolCritical},
	},
	DistroRKE2: {
		Distro:       DistroRKE2,
		Name:         "RKE2",
		NodeSelector: map[string]string{LabelControlPlane: "true"},
		Tolerations:  []Toleration{tolUninitialized, exists(LabelControlPlane, "NoSchedule"), tolEtcd, tolCritical},
	},
	DistroK3s: {
		Distro:           DistroK3s,
		Name:             "K3s",
		NodeSelector:     map[string]string{LabelControlPlane: "true"},
		Tolerations:      []Toleration{tolUninitialized, exists(LabelControlPlane, "NoSchedule"), tolEtcd, tolCritical},
		NoInTreeProvider: true,
	},
	DistroKubeadm: {
		Distro:       DistroKubeadm,
		Name:         "kubeadm",
		NodeSelector: map[string]string{LabelControlPlane: ""},
		Tolerations: []Toleration{tolUninitialized, exists(LabelControlPlane, "NoSchedule"),
			exists(LabelMaster, "NoSchedule"), tolCritical},
	},
}

// DisplayName writes a distribution as its makers do (Profile.Name); a
// name that is no distribution, as it is.
func DisplayName(d Distro) string {
	if p, ok := profiles[d]; ok {
		return p.Name
	}
	return string(d)
}

// ProfileFor returns the profile of a distribution.
func ProfileFor(d Distro) (Profile, bool) {
	p, ok := profiles[d]
	return p, ok
}

// ManagedTolerationKeys are the taint keys some profile tolerates: the
// tolerations the renderer owns (see Tolerations).
var ManagedTolerationKeys = func() []string {
	var keys []string
	for _, d := range Distros {
		for _, t := range profiles[d].Tolerations {
			if !slices.Contains(keys, t.Key) {
				keys = append(keys, t.Key)
			}
		}
	}
	return keys
}()
