package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// The plans of clusters at Kubernetes 1.27 and later: a new cluster
// (--from=new), one without a cloud provider (--from=none), and RKE2 on its
// own cloud controller (--from=builtin; K3s's is k3sPlan).

// neverCalledAWS names the cluster that never called AWS, for the IAM step.
func (b *builder) neverCalledAWS() string {
	if b.r.From == FromNew {
		return "A new cluster"
	}
	return renderer.DisplayName(b.r.Distro)
}

// byHand drops a step's first check, check against the live cluster, for
// a cluster that does not exist yet.
func byHand(s Step) Step {
	s.Checks = s.Checks[1:]
	if len(s.Checks) > 0 && s.Checks[0].Command != nil {
		s.Checks[0].Command = mainCheck(s.Checks[0].Command)
	}
	return s
}

// versionNotes are the changes of the distribution's and Kubernetes'
// options in force at the plan's minor, each with its source.
func (b *builder) versionNotes(cited []string) []string {
	var notes []string
	// A new cluster's configuration notes say what its distribution
	// takes; a running cluster may still carry what its version refuses.
	var comps []string
	if b.r.From != FromNew {
		comps = []string{"kube-apiserver", "kube-controller-manager", "kubelet"}
	}
	for _, c := range comps {
		for _, ch := range releases.Changes(c, b.r.minor) {
			// A change the distribution's notes cite already.
			if slices.ContainsFunc(cited, func(n string) bool { return strings.Contains(n, ch.Source) }) {
				continue
			}
			notes = append(notes, fmt.Sprintf("%s %s (%s, from %s): %s (%s).", ch.Component, ch.Option, ch.Effect, ch.ReleasesOf(), ch.Says, ch.Source))
		}
	}
	for _, d := range releases.DefectsOf(b.r.tag) {
		notes = append(notes, fmt.Sprintf("CCM %s: %s with %s; fixed in %s (%s).", b.r.tag, d.Summary, d.Flag, d.FixedIn, d.Source))
	}
	if m, ok := releases.Of(b.r.minor); ok && m.Unpromoted && m.Latest == b.r.tag {
		notes = append(notes, fmt.Sprintf("%s is the newest 1.%d release the Go module proxy serves; its image is not yet seen in registry.k8s.io's promotion list: pull %s:%s once before relying on it, else pin an older patch with --ccm-version.", b.r.tag, b.r.minor, ImageRepo, b.r.tag))
	}
	return notes
}

// nodesInitialised is the gate once the CCM runs: every node has an aws://
// provider ID and no uninitialized taint.
func (b *builder) nodesInitialised() Check {
	return Check{
		Description: "Every node's provider ID, and the nodes still waiting for the CCM",
		Command: ptr(script(KindKubectl, atWorkstation, "", `
kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.providerID}{" "}{.spec.taints[?(@.key=="node.cloudprovider.kubernetes.io/uninitialized")].effect}{"\n"}{end}' \
  | awk '$2 !~ /^aws:\/\// || $3 != ""'`)),
		Expect: "No output: every node has an aws:///<zone>/<instance-id> provider ID and no uninitialized taint. A node listed was not found by the CCM: its name is not its instance's private DNS name or ID, or its instance lacks the cluster tag (check --aws names which).",
	}
}

func newClusterPlan(b *builder) distroPlan {
	r := b.r
	name := renderer.DisplayName(r.Distro)
	snippets, notes := b.clusterConfig()
	notes = append(notes, b.versionNotes(notes)...)
	configure := Step{
		ID:    "cluster-config",
		Title: fmt.Sprintf("Write %s's configuration for the external cloud provider", name),
		Why: fmt.Sprintf("Kubernetes 1.%d has no in-tree AWS provider: the kubelets must run with --cloud-provider=external, "+
			"so that each node registers with the taint node.cloudprovider.kubernetes.io/uninitialized, which the CCM removes "+
			"once it has set the node's provider ID (aws:///<zone>/<instance-id>), addresses and zone labels "+
			"(kubernetes/kubernetes pkg/kubelet/kubelet_node_status.go; k8s.io/cloud-provider controllers/node). No other "+
			"cloud controller may run: a distribution's own would give the nodes provider IDs the CCM cannot use, and a "+
			"provider ID never changes once set (pkg/apis/core/validation ValidateNodeUpdate).", r.minor),
		Notes:    notes,
		Snippets: snippets,
		Checks: []Check{{
			Description: "The configuration",
			Command:     ptr(mainCmd(b.configCheck())),
			Expect:      "Every server's and agent's configuration (or the provisioning cluster) holds the snippets above, and nothing else sets cloud-provider or a cloud provider's options.",
		}},
		Rollback: Rollback{Description: "Nothing to undo: the cluster is not created yet."},
	}
	create := Step{
		ID:    "create",
		Title: fmt.Sprintf("Create the %s cluster; its nodes wait for the CCM", name),
		Why: "With the external provider every node registers tainted uninitialized: only pods that tolerate the taint " +
			"(the CCM, the network plugin, the distribution's own) start until the CCM runs. check reads the nodes and the " +
			"AWS account before the CCM is installed: the instances, their cluster tag, the IAM role, the subnets.",
		Commands: []Command{
			script(KindKubectl, atWorkstation, "Every node's name, provider ID and kubelet version", shellLine(b.nodesArgv())+" | tee nodes-before.txt"),
		},
		Checks: []Check{{
			Description: "The CCM this plan installs, against the cluster and its AWS account",
			Command:     mainCheck(b.checkRenderedAWS(renderer.ModeInstall)),
			Expect: "The nodes without provider ID, tainted uninitialized (the CCM initialises them next); the ✓ lines of the " +
				"iam, instance, cluster-id, security-group and subnet areas; a CCM pod would run on every control-plane node. " + expectFix,
		}},
		Rollback: Rollback{Description: "Delete the cluster, or fix its configuration (the step before) and restart the nodes."},
	}
	tags := byHand(b.clusterTags("Tag every instance of the cluster, its subnets and its security groups when you create them."))
	tags.Commands[0].Main = true
	before := []Step{byHand(b.iam("", true)), tags}
	if r.CloudConfig {
		before = append(before, b.cloudConfig("A new cluster has none: this one holds what the CCM needs beyond its defaults (KubernetesClusterID without the tags, [ServiceOverride] sections for private endpoints).", nil))
	}
	before = append(before, configure)
	return distroPlan{
		title:    fmt.Sprintf("A new %s cluster at Kubernetes %s on the AWS CCM", name, r.KubeVersion),
		strategy: Install,
		summary: fmt.Sprintf("A new %s cluster at Kubernetes %s runs the AWS CCM from its first node: the AWS account "+
			"prepared (IAM, tags), the cluster configured for the external cloud provider, the CCM %s installed pinned to the "+
			"cluster's minor, and every node initialised by it.", name, r.KubeVersion, r.tag),
		phaseTitles:   [3]string{"Before the cluster", "The cluster and the CCM", "Afterwards"},
		beforeSummary: "The AWS account and the cluster's configuration.",
		duringSummary: "The cluster comes up with its nodes waiting for the CCM; the CCM initialises them.",
		afterSummary:  "The CCM follows the cluster's minor on every upgrade.",
		before:        before,
		during:        []Step{create, b.installNew(), b.verifyAll()},
		after:         []Step{b.upgrade("The AWS CCM is released per Kubernetes minor: upgrade one minor at a time and the CCM with it.", nil)},
	}
}

// configCheck reads the cluster's configuration back: what each
// distribution takes, on the machine or workstation that holds it.
func (b *builder) configCheck() Command { return parts[b.r.Distro].configCheck(b) }

func rke2ConfigCheck(*builder) Command {
	return script(KindNode, atEveryNode, "The options of this plan in RKE2's configuration, and none it must not have",
		`sudo grep -h -E '^(cloud-provider-|disable-cloud-controller|node-name|node-external-ip|kube-apiserver-arg)' /etc/rancher/rke2/config.yaml /etc/rancher/rke2/config.yaml.d/*.yaml 2>/dev/null`)
}

func k3sConfigCheck(*builder) Command {
	return script(KindNode, atEveryNode, "The options of this plan in K3s's configuration",
		`sudo grep -h -A3 -E '^(disable-cloud-controller|disable|kubelet-arg|node-name)' /etc/rancher/k3s/config.yaml /etc/rancher/k3s/config.yaml.d/*.yaml 2>/dev/null`)
}

func kubeadmConfigCheck(*builder) Command {
	return run(KindCluster, atControlPlane, "kubeadm checks the file against its API", "kubeadm", "config", "validate", "--config", "kubeadm-config.yaml")
}

func rkeConfigCheck(*builder) Command {
	return script(KindCluster, atRKE, "The cloud provider of cluster.yml", `grep -A2 '^cloud_provider:' cluster.yml`)

}

// installNew installs the CCM on a cluster whose nodes wait for it.
func (b *builder) installNew() Step {
	rd := render{mode: renderer.ModeInstall}
	return Step{
		ID:    "install-ccm",
		Title: "Install the CCM, pinned to the cluster's minor",
		Why: fmt.Sprintf("The renderer places the CCM on the control-plane nodes of %s with the tolerations it needs "+
			"(the uninitialized taint among them), grants what the chart's role lacks and runs it on the host network; "+
			"image.tag=%s is the CCM release of the cluster's minor (%s).", renderer.DisplayName(b.r.Distro), b.r.tag, b.r.tagSource),
		Commands: []Command{b.ccmUpgrade("Install the CCM", rd)},
		Checks:   []Check{b.nodesInitialised()},
		Rollback: Rollback{Description: "Uninstall the CCM: the nodes it initialised keep their provider IDs; new nodes wait again.", Commands: []Command{b.uninstall()}},
	}
}

// installSwitch installs the CCM on a running cluster: a preview, the
// install, more ways to do it; its gate expects what the switch leaves.
func (b *builder) installSwitch(expect string, more ...Command) Step {
	s := b.installNew()
	s.Commands = append([]Command{b.diff(render{mode: renderer.ModeInstall}), b.ccmUpgrade("Install the CCM", render{mode: renderer.ModeInstall})}, more...)
	s.Checks = []Check{{Description: "The CCM against the cluster", Command: b.checkRelease(), Expect: expect}}
	return s
}

// drainDelete moves an agent's pods away and deletes its Node, so that its
// kubelet registers it anew.
func drainDelete() Command {
	c := script(KindKubectl, atWorkstation, "Agents, one at a time (NODE: its name): move its pods away and delete the Node object", `
kubectl drain "$NODE" --ignore-daemonsets --delete-emptydir-data
kubectl delete node "$NODE"`)
	c.Main = true
	return c
}

// providerIDCheck reads a node's providerID after it registered again.
func providerIDCheck() Check {
	return Check{
		Description: "The node's provider ID",
		Command:     ptr(script(KindKubectl, atWorkstation, "", `kubectl get node "$NODE" -o jsonpath='{.spec.providerID}{"\n"}'`)),
		Expect:      "aws:///<zone>/<instance-id>, within seconds of the registration.",
	}
}

// verifyAll is the last gate of the plans that end with the CCM alone.
func (b *builder) verifyAll() Step {
	return Step{
		ID:    "verify",
		Title: "Check that the CCM runs and every node is its",
		Why:   "check reads the release's manifest and the cluster: the CCM's pods, its lease, every node's provider ID and taints, and the version skew.",
		Checks: []Check{{
			Description: "The CCM against the cluster",
			Command:     mainCheck(b.checkRelease()),
			Expect:      "Exit 0: a CCM pod ready on every control-plane node, its lease held, every node initialised. " + expectFix,
		}},
		Rollback: Rollback{Description: "See the rollbacks of the steps of this phase."},
	}
}

// externalKubelets is the step that moves the kubelets (and the
// distribution) to the external provider on a running cluster.
func (b *builder) externalKubelets(extraWhy string) Step {
	r := b.r
	snippets, notes := b.clusterConfig()
	notes = append(notes, b.versionNotes(notes)...)
	snippets, restart := parts[r.Distro].kubelets(b, snippets)
	cmds, rollback := []Command{mainCmd(restart)}, []Command{restart}
	return Step{
		ID:    "external-provider",
		Title: "Kubelets on --cloud-provider=external",
		Why: "A kubelet on the external provider taints the node it registers uninitialized; a node that is already " +
			"registered keeps its taints and its provider ID, so the running nodes need the next steps. " + extraWhy,
		Notes:    append(notes, "Until the CCM runs (next step), nodes that join stay uninitialised: go on at once."),
		Snippets: snippets,
		Commands: cmds,
		Checks: []Check{{
			Description: "The kubelets' flags",
			Command:     b.checkRenderedWith(renderer.ModeInstall, nil),
			Expect:      "No ✗ in the options area (options a component of this version no longer takes). " + expectFix,
		}},
		Rollback: Rollback{Description: "Restore the configuration and restart again.", Commands: rollback},
	}
}

// rke2Kubelets restarts RKE2 with the configuration.
func rke2Kubelets(_ *builder, snippets []Snippet) ([]Snippet, Command) {
	return snippets, script(KindNode, atEveryNode, "Restart RKE2: servers one at a time, then agents",
		"sudo systemctl restart rke2-server 2>/dev/null || sudo systemctl restart rke2-agent")
}

// k3sKubelets restarts K3s with the configuration.
func k3sKubelets(_ *builder, snippets []Snippet) ([]Snippet, Command) {
	return snippets, script(KindNode, atEveryNode, "Restart K3s: servers one at a time, then agents",
		"sudo systemctl restart k3s 2>/dev/null || sudo systemctl restart k3s-agent")
}

// kubeadmKubelets adds the flag to the flags kubeadm wrote, and to the
// configuration of new nodes, then restarts the kubelets.
func kubeadmKubelets(b *builder, snippets []Snippet) ([]Snippet, Command) {
	snippets = append(snippets[:0], Snippet{File: "/var/lib/kubelet/kubeadm-flags.env", Language: "sh",
		Content: "KUBELET_KUBEADM_ARGS=\"... --cloud-provider=external\"\n",
		Note:    "On every node: add the flag to the flags kubeadm wrote (keep the others); the ConfigMap kube-system/kubeadm-config and the JoinConfiguration of new nodes get it as in the configuration of a new cluster below"},
		Snippet{File: "kubeadm-join.yaml (new nodes)", Language: "yaml", Content: kubeadmConfig(b.r.minor, "", true),
			Note: "With the discovery section kubeadm join needs (kubeadm token create --print-join-command prints its values)"})
	return snippets, script(KindNode, atEveryNode, "Restart the kubelet", "sudo systemctl restart kubelet")
}

// rkeKubelets applies cluster.yml.
func rkeKubelets(_ *builder, snippets []Snippet) ([]Snippet, Command) {
	return snippets, run(KindCluster, atRKE, "Apply cluster.yml", "rke", "up")
}

// holdServices is the render that keeps the CCM's service controller off.
var holdServices = render{mode: renderer.ModeInstall, extraArgs: []string{k3sHoldServices}}

// lbStep lists the Services of type LoadBalancer the CCM will answer.
func (b *builder) lbStep(why string) Step {
	return Step{
		ID:       "load-balancers",
		Title:    "List the Services of type LoadBalancer: the CCM makes an AWS load balancer for each",
		Why:      why,
		Commands: []Command{mainCmd(*b.lbServices())},
		Checks: []Check{{
			Description: "Who answers each Service now",
			Expect: "For every Service listed you know whether something else answers it (MetalLB, ServiceLB, kube-vip): " +
				"if so, install the CCM with its service controller off (the command with " + k3sHoldServices + " in during.install-ccm) " +
				"until you move them, since two controllers would fight over the Service's status.",
		}},
		Rollback: readOnly(),
	}
}

func noProviderPlan(b *builder) distroPlan {
	r := b.r
	name := renderer.DisplayName(r.Distro)
	taint := script(KindKubectl, atWorkstation, "One node at a time (NODE: its name): taint it, so that the CCM initialises it",
		`kubectl taint node "$NODE" node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule`)
	taint.Main = true
	taintStep := Step{
		ID:    "initialise-nodes",
		Title: "Let the CCM initialise the running nodes, one at a time",
		Why: "The CCM's node controller initialises only nodes that carry the uninitialized taint; a node registered " +
			"without a cloud provider has no provider ID, which the API server lets be set once (pkg/apis/core/validation " +
			"ValidateNodeUpdate). Tainting a node by hand makes the CCM look its instance up by the node's name (its private " +
			"DNS name, or its instance ID), set the provider ID, addresses and zone labels, and remove the taint. NoSchedule " +
			"keeps running pods where they are.",
		Notes:    []string{"A node the CCM cannot find keeps the taint: no new pods land on it. Remove the taint (kubectl taint node \"$NODE\" node.cloudprovider.kubernetes.io/uninitialized-) and fix its name or its instance's tags."},
		Commands: []Command{taint},
		Checks: []Check{
			{
				Description: "The node's provider ID and taints",
				Command:     ptr(script(KindKubectl, atWorkstation, "", `kubectl get node "$NODE" -o jsonpath='{.spec.providerID}{" "}{.spec.taints[*].key}{"\n"}'`)),
				Expect:      "aws:///<zone>/<instance-id>, and no node.cloudprovider.kubernetes.io/uninitialized, within seconds.",
			},
			b.nodesInitialised(),
		},
		Rollback: Rollback{Description: "A provider ID stays once set; nothing in a cluster without a cloud provider reads it. Remove the taint of a node the CCM did not initialise."},
	}
	hold := b.ccmUpgrade("Or, while something else answers the LoadBalancer Services: the CCM with its service controller off", holdServices)
	hold.Main = false
	install := b.installSwitch("A CCM pod ready on every control-plane node, its lease held. The nodes without a provider ID are listed until during.initialise-nodes. "+expectFix, hold)
	return switchPlan(b, switchParts{
		title: fmt.Sprintf("%s at Kubernetes %s without a cloud provider, onto the AWS CCM", name, r.KubeVersion),
		summary: fmt.Sprintf("A %s cluster at Kubernetes %s that runs no cloud provider (its nodes have no provider ID) "+
			"moves to the AWS CCM %s without re-registering a node: the kubelets move to the external provider, the CCM "+
			"comes on, and each node, tainted by hand, is initialised by it.", name, r.KubeVersion, r.tag),
		beforeSummary: "Nothing changes yet: check what the CCM needs and how it will find each node.",
		duringSummary: "Kubelets external, CCM on, then the running nodes one at a time.",
		expectNodes:   "Every PROVIDER-ID is <none>. Note the nodes whose NAME is neither their instance's private DNS name nor its instance ID: the CCM cannot find them, and they must register again under such a name.",
		expectCheck:   "The nodes without provider ID listed (the CCM initialises them in during.initialise-nodes); every control-plane node shows where a CCM pod would run, and the CCM's version matches the API server's.",
		tags:          name + " did not need them: tag the instances, subnets and security groups now, or set KubernetesClusterID in a cloud config (this plan with --cloud-config).",
		lbs:           "Without a cloud provider nothing in Kubernetes answers them, unless another load balancer implementation does; once its service controller runs, the CCM makes an ELB (or NLB) for each, with a new DNS name.",
		install:       install,
		nodes:         taintStep,
		upgrade:       "The AWS CCM is released per Kubernetes minor: upgrade one minor at a time and the CCM with it.",
	})
}

func rke2BuiltinPlan(b *builder) distroPlan {
	r := b.r
	reregister := Step{
		ID:    "reregister-nodes",
		Title: "Register every node again, so that the CCM gives it an AWS provider ID",
		Why: "A node of RKE2's own cloud controller has an rke2:// provider ID, which never changes (pkg/apis/core/validation " +
			"ValidateNodeUpdate), and which the AWS CCM cannot read: from 1.30 it never initialises such a node, and every " +
			"release leaves it out of its load balancers (kubernetes/cloud-provider-aws pkg/providers/v1/instances.go " +
			"MapToAWSInstanceID, aws_loadbalancer.go). A kubelet on the external provider taints its node uninitialized when " +
			"it registers it: the node becomes the CCM's by registering anew.",
		Notes: []string{
			"Agents: drain, delete the Node, restart rke2-agent on the node.",
			"Servers: do not delete a server's Node: RKE2 removes a server's etcd member when its Node is deleted. Replace servers one at a time by new machines that join with the configuration of during.external-provider, and remove the old ones as RKE2 documents (on Rancher: scale the control-plane pool up, then down).",
		},
		Commands: []Command{drainDelete(), script(KindNode, atEveryNode, "On that agent", "sudo systemctl restart rke2-agent")},
		Checks:   []Check{providerIDCheck(), b.nodesInitialised()},
		Rollback: Rollback{Description: "Nothing per node: a node registered again keeps its aws:/// provider ID."},
	}
	install := b.installSwitch("A CCM pod ready on every server, its lease held. Exit 1 with one ✗ naming the nodes still on rke2:// provider IDs (and how many) is expected until during.reregister-nodes; any other ✗ is fixed first.")
	return switchPlan(b, switchParts{
		title: fmt.Sprintf("RKE2 at Kubernetes %s on its own cloud controller, onto the AWS CCM", r.KubeVersion),
		summary: fmt.Sprintf("RKE2's own cloud controller (rke2-cloud-provider) initialised the nodes of this cluster at "+
			"Kubernetes %s with rke2://<node name> provider IDs. The switch turns it off, installs the AWS CCM %s, and "+
			"registers every node again so that the CCM gives it an AWS provider ID.", r.KubeVersion, r.tag),
		beforeSummary: "Nothing changes yet: check what the CCM needs and how each node will be known to AWS.",
		duringSummary: "RKE2's cloud controller off and the kubelets external, CCM on, nodes registered again.",
		expectNodes:   "Every PROVIDER-ID reads rke2://<NAME>: RKE2's own cloud controller set it. Note the nodes whose NAME is neither their instance's private DNS name nor its instance ID: they register again under such a name.",
		expectCheck:   "Exit 1, and the only ✗ is the one naming the nodes on rke2:// provider IDs, with their count. Every server shows where a CCM pod would run.",
		tags:          "RKE2's own cloud controller did not need them: tag the instances, subnets and security groups now, or set KubernetesClusterID in a cloud config (this plan with --cloud-config).",
		lbs:           "RKE2 answers them only with enable-servicelb (ServiceLB, a controller of its own cloud controller); once the AWS CCM's service controller runs, it makes an ELB (or NLB) for each, with a new DNS name.",
		kubelets:      "disable-cloud-controller turns RKE2's own cloud controller off, which would keep giving new nodes rke2:// provider IDs.",
		install:       install,
		nodes:         reregister,
		upgrade:       "The AWS CCM is released per Kubernetes minor: upgrade RKE2 one minor at a time and the CCM with it.",
	})
}

// switchParts are what the plans of a running cluster at 1.27 or later
// (--from none, --from builtin) do not share: switchPlan is their
// skeleton.
type switchParts struct {
	title, summary, beforeSummary, duringSummary string
	// expectNodes and expectCheck are what the preflight shows.
	expectNodes, expectCheck string
	// tags says whether the instances are tagged already, lbs who answers
	// the LoadBalancer Services now.
	tags, lbs string
	// kubelets says what else during.external-provider turns off.
	kubelets string
	// install installs the CCM; nodes makes the running nodes its.
	install, nodes Step
	// upgrade says how the cluster moves to the next minor.
	upgrade string
}

// switchPlan is the plan of a running cluster without an in-tree provider
// onto the CCM: kubelets external, the CCM on, then the running nodes.
func switchPlan(b *builder, p switchParts) distroPlan {
	return distroPlan{
		title:         p.title,
		strategy:      Switch,
		summary:       p.summary,
		beforeSummary: p.beforeSummary,
		duringSummary: p.duringSummary,
		afterSummary:  "The CCM follows the cluster's minor on every upgrade.",
		before: []Step{
			b.preflight(p.expectNodes, p.expectCheck),
			b.iam("", true),
			b.clusterTags(p.tags),
			b.lbStep(p.lbs),
		},
		during: []Step{b.externalKubelets(p.kubelets), p.install, p.nodes, b.verifyAll()},
		after:  []Step{b.upgrade(p.upgrade, nil)},
	}
}
