package plan

import (
	"slices"
	"strconv"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The plans of clusters at Kubernetes 1.27 and later: a new cluster
// (--from=new), one without a cloud provider (--from=none), and RKE2 on its
// own cloud controller (--from=builtin; K3s's is k3sPlan).

// neverCalledAWS names the cluster that never called AWS, for the IAM step.
func (b *builder) neverCalledAWS() string {
	if b.r.From == FromNew {
		return "A new cluster"
	}
	return distros.DisplayName(b.r.Distro)
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
			notes = append(notes, ch.Component+" "+ch.Option+" ("+string(ch.Effect)+", from "+ch.ReleasesOf()+"): "+ch.Says+" ("+ch.Source+").")
		}
	}
	for _, d := range releases.DefectsOf(b.r.tag) {
		notes = append(notes, "CCM "+b.r.tag+": "+d.Summary+" with "+d.Flag+"; fixed in "+d.FixedIn+" ("+d.Source+").")
	}
	if m, ok := releases.Of(b.r.minor); ok && m.Unpromoted() && m.Latest == b.r.tag {
		notes = append(notes, b.r.tag+" is the newest 1."+strconv.Itoa(b.r.minor)+" release the Go module proxy serves; "+
			"registry.k8s.io's promotion list does not give its image yet, so the commands pin the digest you "+
			"read from the registry (see Inputs); a tag that cannot be pulled leaves every node uninitialised.")
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
		Expect: "No output: every node has an aws:///<zone>/<instance-id> provider ID and no uninitialized taint. A " +
			"node listed was not found by the CCM: its name is not its instance's private DNS name or ID, or its " +
			"instance lacks the cluster tag (check --aws names which).",
	}
}

func newClusterPlan(b *builder) distroPlan {
	r := b.r
	snippets, notes := b.clusterConfig()
	notes = append(notes, b.versionNotes(notes)...)
	configure := Step{
		ID:    "cluster-config",
		Title: "Write " + distros.DisplayName(r.Distro) + "'s configuration for the external cloud provider",
		Why: "Kubernetes 1." + strconv.Itoa(r.minor) + " has no in-tree AWS provider: the kubelets must run with " +
			"--cloud-provider=external, so that each node registers with the taint " +
			"node.cloudprovider.kubernetes.io/uninitialized, which the CCM removes once it has set the node's " +
			"provider ID (aws:///<zone>/<instance-id>), addresses and zone labels (kubernetes/kubernetes " +
			"pkg/kubelet/kubelet_node_status.go; k8s.io/cloud-provider controllers/node). No other cloud " +
			"controller may run: a distribution's own would give the nodes provider IDs the CCM cannot use, and " +
			"a provider ID never changes once set (pkg/apis/core/validation ValidateNodeUpdate).",
		Notes:    notes,
		Snippets: snippets,
		Checks: []Check{{
			Description: "The configuration",
			Command:     ptr(mainCmd(b.configCheck())),
			Expect:      parts[r.Distro].configExpect + ", and nothing else sets cloud-provider or a cloud provider's options.",
		}},
		Rollback: Rollback{Description: "Nothing to undo: the cluster is not created yet."},
	}
	create := Step{
		ID:    "create",
		Title: "Create the " + distros.DisplayName(r.Distro) + " cluster; its nodes wait for the CCM",
		Why: "With the external provider every node registers tainted uninitialized: only pods that tolerate the " +
			"taint (the CCM, the network plugin, the distribution's own) start until the CCM runs. check reads " +
			"the nodes and the AWS account before the CCM is installed: the instances, their cluster tag, the " +
			"IAM role, the subnets.",
		Commands: []Command{
			script(KindKubectl, atWorkstation, "Every node's name, provider ID and kubelet version", shellLine(b.nodesArgv())+" | tee nodes-before.txt"),
		},
		Checks: []Check{{
			Description: "The CCM this plan installs, against the cluster and its AWS account",
			Command:     mainCheck(b.checkRenderedAWS(renderer.ModeInstall)),
			Expect: "The nodes without provider ID, tainted uninitialized (the CCM initialises them next); the ✓ lines " +
				"of the iam, instance, cluster-id, security-group and subnet areas; a CCM pod would run on every " +
				"control-plane node. " + expectFix,
		}},
		Rollback: Rollback{Description: "Delete the cluster, or fix its configuration (the step before) and restart the nodes."},
	}
	tags := byHand(b.clusterTags("Tag every instance of the cluster, its subnets and its security groups when you create them."))
	tags.Commands[0].Main = true
	before := []Step{byHand(b.iam("", true)), tags}
	if r.CloudConfig {
		before = append(before, b.cloudConfig("A new cluster has none: this one holds what the CCM needs beyond its defaults (KubernetesClusterID "+
			"without the tags, [ServiceOverride] sections for private endpoints).", nil))
	}
	before = append(before, configure)
	install, upgradeNotes := b.installNew(), []string(nil)
	if dir := r.profile.Node.ManifestsDir; dir != "" {
		b.clusterApplied = true
		manifest, provisioning := b.clusterManifest(dir)
		before = append(before, manifest)
		// The first server's view comes once the cluster is created.
		create.Checks = append([]Check{provisioning}, create.Checks...)
		install.Notes = append(install.Notes, "With before.cluster-manifest the cluster runs the CCM already: skip the command, keep the check.")
		upgradeNotes = append(upgradeNotes, "With before.cluster-manifest: instead of the upgrade command, render the new minor's manifest as "+
			"that step does, its image.tag and --kube-version the new minor's, into aws-ccm-1.<minor>.yaml, and "+
			"replace the manifest the same way (Rancher's additionalManifest, or the file in "+dir+" on every server).")
	}
	return distroPlan{
		title:    "A new " + distros.DisplayName(r.Distro) + " cluster at Kubernetes " + r.KubeVersion + " on the AWS CCM",
		strategy: Install,
		summary: "A new " + distros.DisplayName(r.Distro) + " cluster at Kubernetes " + r.KubeVersion + " runs the AWS CCM from its first node: " +
			"the AWS account prepared (IAM, tags), the cluster configured for the external cloud provider, the " +
			"CCM " + r.tag + " installed pinned to the cluster's minor, and every node initialised by it.",
		phaseTitles:   [3]string{"Before the cluster", "The cluster and the CCM", "Afterwards"},
		beforeSummary: "The AWS account and the cluster's configuration.",
		duringSummary: "The cluster comes up with its nodes waiting for the CCM; the CCM initialises them.",
		afterSummary:  "The CCM follows the cluster's minor on every upgrade.",
		before:        before,
		during:        []Step{create, install, b.verifyAll()},
		after:         []Step{b.upgrade("The AWS CCM is released per Kubernetes minor: upgrade one minor at a time and the CCM with it.", upgradeNotes)},
	}
}

// clusterManifestFile is the CCM rendered for the cluster to apply itself.
const clusterManifestFile = "aws-ccm.yaml"

// clusterManifestAddon is the name of the file in the servers' manifests
// folder, and so of the Addon the deploy controller tracks it by (its name
// up to the first dot: k3s-io/k3s pkg/deploy/controller.go basename).
const clusterManifestAddon = "aws-cloud-controller-manager"

// clusterManifest renders the CCM into a manifest the cluster applies
// itself from its start: Rancher's spec.rkeConfig.additionalManifest, or
// the servers' manifests folder (dir). It returns the step, and the check
// of a cluster still provisioning, which reads what the first server
// applied once it runs.
func (b *builder) clusterManifest(dir string) (Step, Check) {
	tmpl := append([]string{"aws-ccm-renderer", "template"}, b.chartArgs(b.r.tag)...)
	tmpl = append(tmpl, b.rendererFlags(render{mode: renderer.ModeInstall})...)
	rendered := script(KindRenderer, atWorkstation, "The CCM, rendered for the cluster's minor", shellLine(tmpl)+" > "+clusterManifestFile)
	rendered.Main = true
	rancher := script(KindCluster, atRancher, "Rancher: the manifest as spec.rkeConfig.additionalManifest (CLUSTER_NAME: its name in Rancher)", `
{ printf 'spec:\n  rkeConfig:\n    additionalManifest: |\n'; sed 's/^/      /' `+clusterManifestFile+`; } > additional-manifest.yaml
kubectl -n fleet-default patch clusters.provisioning.cattle.io "$CLUSTER_NAME" --type merge --patch-file additional-manifest.yaml`)
	file := dir + "/" + clusterManifestAddon + ".yaml"
	folder := run(KindNode, atControlPlane, "Without Rancher, instead: on every server, the first before it starts (aws-ccm.yaml copied from the "+
		"workstation)", "sudo", "install", "-D", "-m", "0600", clusterManifestFile, file)
	step := Step{
		ID:    "cluster-manifest",
		Title: "Put the CCM in the cluster's own manifests, so that it runs from the first server on",
		Why: "A cluster Rancher provisions finishes only when its cluster agent runs, and the agent, like every " +
			"pod without the CCM's tolerations, waits on nodes tainted uninitialized (rancher/rancher#40004): a " +
			"Helm run from a workstation needs a cluster that may never become reachable. " + distros.DisplayName(b.r.Distro) + " applies every manifest in " + dir + " at its start and whenever the file " +
			"changes (k3s-io/k3s pkg/deploy), and Rancher writes spec.rkeConfig.additionalManifest there. The " +
			"plan puts the rendered manifests there, not a HelmChart: they are pinned as the renderer made them, " +
			"need no chart repository from the nodes and no Helm job, and the check before the install reads the " +
			"same objects.",
		Notes: []string{
			"Rancher: the patch needs the provisioning cluster to exist (created with before.cluster-config's " +
				"spec, its machines to come); or paste additional-manifest.yaml's spec into that spec before you " +
				"create it. additionalManifest is one string, and the patch replaces it; if it holds manifests of " +
				"yours, append aws-ccm.yaml to them (a line --- between) in additional-manifest.yaml before the " +
				"patch. Without Rancher: write the file on every server, the first before it starts.",
			"Then the CCM is not a Helm release: during.install-ccm's command is skipped (Helm refuses objects " +
				"it did not create), the checks read the CCM the cluster runs (aws-ccm-renderer check, without " +
				"--release), the rollbacks that run helm put the previous manifest back the same way, and " +
				"after.upgrade renders each minor into a file of its own (aws-ccm-1.<minor>.yaml), keeping the one " +
				"before for a rollback. The nodes of during.create are then initialised as they register.",
		},
		Commands: []Command{rendered, rancher, folder},
		Checks: []Check{{
			Description: "Rancher holds the manifest as rendered",
			Command: ptr(script(KindCluster, atRancher, "", `
kubectl -n fleet-default get clusters.provisioning.cattle.io "$CLUSTER_NAME" -o jsonpath='{.spec.rkeConfig.additionalManifest}' \
  | diff - `+clusterManifestFile+` && echo same`)),
			Expect: "same. Without Rancher: sudo cmp aws-ccm.yaml " + file + " on every server prints nothing.",
		}},
		Rollback: Rollback{Description: "Set spec.rkeConfig.additionalManifest back to what it held (Rancher), or remove " + file + " from every server; then kubectl delete " +
			"--ignore-not-found -f aws-ccm.yaml removes what the cluster applied."},
	}
	return step, Check{
		Description: "While the cluster is provisioning, Rancher's kubeconfig does not reach it (that needs the cluster " +
			"agent); the first server's own kubectl does",
		Command: ptr(script(KindNode, atFirstServer, "", `
k="`+b.r.profile.Node.ServerKubectl+`"
$k -n kube-system get addons.k3s.cattle.io addons `+clusterManifestAddon+` --ignore-not-found
$k get nodes -o custom-columns='NAME:.metadata.name,PROVIDER-ID:.spec.providerID,TAINTS:.spec.taints[*].key'`)),
		Expect: "the Addon addons (Rancher writes additionalManifest to rancher/addons.yaml) or " + clusterManifestAddon + " (the folder's file), as the deploy " +
			"controller names a file (k3s-io/k3s pkg/deploy), and every node registered so far with an aws:/// " +
			"provider ID and no node.cloudprovider.kubernetes.io/uninitialized taint. A node still tainted a " +
			"minute after it registered: " + b.r.profile.Node.ServerKubectl + " -n kube-system logs ds/" + upstream.ChartName + ".",
	}
}

// configCheck reads the cluster's configuration back: what each
// distribution takes, on the machine or workstation that holds it.
func (b *builder) configCheck() Command { return parts[b.r.Distro].configCheck(b) }

// installNew installs the CCM on a cluster whose nodes wait for it.
func (b *builder) installNew() Step {
	rd := render{mode: renderer.ModeInstall}
	return Step{
		ID:    "install-ccm",
		Title: "Install the CCM, pinned to the cluster's minor",
		Why: "The renderer places the CCM on the control-plane nodes of " + distros.DisplayName(b.r.Distro) + " with the tolerations it needs (the " +
			"uninitialized taint among them), grants what the chart's role lacks and runs it on the host " +
			"network; image.tag=" + b.r.tag + " is the CCM release of the cluster's minor (" + b.r.tagSource + ").",
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
		Why: "check reads the release's manifest and the cluster: the CCM's pods, its lease, every node's " +
			"provider ID and taints, and the version skew.",
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
	p := parts[r.Distro]
	restart := p.restart(b)
	if p.kubeletSnippets != nil {
		snippets = p.kubeletSnippets(b)
	}
	cmds, rollback := []Command{mainCmd(restart)}, []Command{restart}
	return Step{
		ID:    "external-provider",
		Title: "Kubelets on --cloud-provider=external",
		Why: "A kubelet on the external provider taints the node it registers uninitialized; a node that is " +
			"already registered keeps its taints and its provider ID, so the running nodes need the next steps. " + extraWhy,
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

// holdServices is the render that keeps the CCM's service controller off.
var holdServices = render{mode: renderer.ModeInstall, extraArgs: []string{k3sHoldServices}}

// holdServices installs the CCM with its service controller off, while
// something else answers the Services of type LoadBalancer.
func (b *builder) holdServices() Command {
	hold := b.ccmUpgrade("Or, while something else answers the LoadBalancer Services: the CCM with its service controller off", holdServices)
	hold.Main = false
	return hold
}

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
				"if so, install the CCM with its service controller off (the command with " + k3sHoldServices + " in during.install-ccm) until you move " +
				"them, since two controllers would fight over the Service's status.",
		}},
		Rollback: readOnly(),
	}
}

func noProviderPlan(b *builder) distroPlan {
	taint := script(KindKubectl, atWorkstation, "One node at a time (NODE: its name): taint it, so that the CCM initialises it",
		`kubectl taint node "$NODE" node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule`)
	taint.Main = true
	taintStep := Step{
		ID:    "initialise-nodes",
		Title: "Let the CCM initialise the running nodes, one at a time",
		Why: "The CCM's node controller initialises only nodes that carry the uninitialized taint; a node " +
			"registered without a cloud provider has no provider ID, which the API server lets be set once " +
			"(pkg/apis/core/validation ValidateNodeUpdate). Tainting a node by hand makes the CCM look its " +
			"instance up by the node's name (its private DNS name, or its instance ID), set the provider ID, " +
			"addresses and zone labels, and remove the taint. NoSchedule keeps running pods where they are.",
		Notes: []string{"A node the CCM cannot find keeps the taint: no new pods land on it. Remove the taint (kubectl taint " +
			"node \"$NODE\" node.cloudprovider.kubernetes.io/uninitialized-) and fix its name or its instance's " +
			"tags."},
		Commands: []Command{taint},
		Checks: []Check{
			{
				Description: "The node's provider ID and taints",
				Command:     ptr(script(KindKubectl, atWorkstation, "", `kubectl get node "$NODE" -o jsonpath='{.spec.providerID}{" "}{.spec.taints[*].key}{"\n"}'`)),
				Expect:      "aws:///<zone>/<instance-id>, and no node.cloudprovider.kubernetes.io/uninitialized, within seconds.",
			},
			b.nodesInitialised(),
		},
		Rollback: Rollback{Description: "A provider ID stays once set; nothing in a cluster without a cloud provider reads it. Remove the " +
			"taint of a node the CCM did not initialise."},
	}
	install := b.installSwitch("A CCM pod ready on every control-plane node, its lease held. The nodes without a provider ID are "+
		"listed until during.initialise-nodes. "+expectFix, b.holdServices())
	return switchPlan(b, switchParts{
		title: distros.DisplayName(b.r.Distro) + " at Kubernetes " + b.r.KubeVersion + " without a cloud provider, onto the AWS " +
			"CCM",
		summary: "A " + distros.DisplayName(b.r.Distro) + " cluster at Kubernetes " + b.r.KubeVersion + " that runs no cloud provider (its nodes " +
			"have no provider ID) moves to the AWS CCM " + b.r.tag + " without re-registering a node: the kubelets move " +
			"to the external provider, the CCM comes on, and each node, tainted by hand, is initialised by it.",
		beforeSummary: "Nothing changes yet: check what the CCM needs and how it will find each node.",
		duringSummary: "Kubelets external, CCM on, then the running nodes one at a time.",
		expectNodes: "Every PROVIDER-ID is <none>. Note the nodes whose NAME is neither their instance's private DNS name " +
			"nor its instance ID: the CCM cannot find them, and they must register again under such a name.",
		expectCheck: "The nodes without provider ID listed (the CCM initialises them in during.initialise-nodes); every " +
			"control-plane node shows where a CCM pod would run, and the CCM's version matches the API server's.",
		tags: distros.DisplayName(b.r.Distro) + " did not need them: tag the instances, subnets and security groups " +
			"now, or set KubernetesClusterID in a cloud config (this plan with --cloud-config).",
		lbs: "Without a cloud provider nothing in Kubernetes answers them, unless another load balancer " +
			"implementation does; once its service controller runs, the CCM makes an ELB (or NLB) for each, with " +
			"a new DNS name.",
		install: install,
		nodes:   taintStep,
		upgrade: "The AWS CCM is released per Kubernetes minor: upgrade one minor at a time and the CCM with it.",
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
