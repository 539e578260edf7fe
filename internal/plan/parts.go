package plan

import (
	"maps"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// distroParts are a distribution's parts of the plans: the code beside
// its record (distros.Record), which holds its facts. TestParts holds
// the map to the records: one entry per distribution but auto.
type distroParts struct {
	// leader are the distribution's parts of the leader migration plan,
	// its plan from the in-tree provider; nil when it has none.
	leader func(*builder) leaderParts
	// plan is the distribution's plan from its own cloud controller when
	// it has no in-tree provider; nil otherwise.
	plan func(*builder) distroPlan
	// builtin is the plan from its own cloud controller, when that is not
	// plan; nil otherwise.
	builtin func(*builder) distroPlan
	// config is the cluster's configuration on the external provider:
	// snippets and notes.
	config func(*builder) ([]Snippet, []string)
	// configCheck reads that configuration back.
	configCheck func(*builder) Command
	// configExpect is what configCheck shows on a new cluster.
	configExpect string
	// restart applies the configuration on every node, and rolls it back.
	restart func(*builder) Command
	// kubeletSnippets are what moves the running kubelets to the external
	// provider, when not config's snippets.
	kubeletSnippets func(*builder) []Snippet
}

// parts is set in init: the plans' functions read it.
var parts map[distros.Distro]distroParts

func init() {
	parts = map[distros.Distro]distroParts{
		distros.RKE:     {leader: rkeLeader, config: rkeClusterConfig, configCheck: rkeConfigCheck, configExpect: rkeConfigExpect, restart: rkeRestart},
		distros.RKE2:    {leader: rke2Leader, builtin: rke2BuiltinPlan, config: rke2ClusterConfig, configCheck: rke2ConfigCheck, configExpect: rke2ConfigExpect, restart: rke2Restart},
		distros.K3s:     {plan: k3sPlan, config: k3sClusterConfig, configCheck: k3sConfigCheck, configExpect: k3sConfigExpect, restart: k3sRestart},
		distros.Kubeadm: {leader: kubeadmLeader, config: kubeadmClusterConfig, configCheck: kubeadmConfigCheck, configExpect: kubeadmConfigExpect, restart: kubeadmRestart, kubeletSnippets: kubeadmKubeletSnippets},
	}
	maps.Copy(parts, syntheticParts)
}
