//go:build syntheticdistro

package plan

import "github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"

// syntheticParts are the plan parts of the synthetic distribution of
// renderer/distros/synthetic.go, built in with the tag syntheticdistro
// only: TestSyntheticDistro (internal/generated) builds its plans and
// counts the files the distribution needed. They are what a distribution
// of its kind (no in-tree provider, a cloud controller of its own) writes:
// its configuration on the external provider, how it is read back and
// applied, and its plan from its own controller.
var syntheticParts = map[distros.Distro]distroParts{
	"synthd": {plan: synthdPlan, config: synthdConfig, configCheck: synthdConfigCheck, configExpect: synthdConfigExpect, restart: synthdRestart},
}

func synthdPlan(b *builder) distroPlan {
	return distroPlan{
		title:    "SynthD (synthd.conf)",
		strategy: Switch,
		summary: "SynthD's own cloud controller initialised the nodes with synthd:// provider IDs; at Kubernetes " +
			b.r.KubeVersion + " it goes off and the AWS CCM comes on.",
		beforeSummary: "Nothing changes yet.",
		duringSummary: "SynthD's cloud controller off, the CCM on.",
		afterSummary:  "The CCM follows the cluster's minor on every upgrade.",
		during:        []Step{b.externalKubelets(""), b.installSwitch("Exit 0. " + expectFix), b.verifyAll()},
		after:         []Step{b.upgrade("Upgrade SynthD one minor at a time and the CCM with it.", nil)},
	}
}

func synthdConfig(*builder) ([]Snippet, []string) {
	return []Snippet{{File: "/etc/synthd/synthd.conf", Language: "yaml", Content: yamlCompact(rke2Config{
		DisableCloudController: true, KubeletArg: []string{"cloud-provider=external"},
	})}}, []string{"synthd.conf must be the same on every node."}
}

const synthdConfigExpect = "Every node's synthd.conf holds the snippet above"

func synthdConfigCheck(*builder) Command {
	return script(KindNode, atEveryNode, "SynthD's configuration", "sudo cat /etc/synthd/synthd.conf")
}

func synthdRestart(*builder) Command {
	return script(KindNode, atEveryNode, "Restart SynthD", "sudo systemctl restart synthd")
}
