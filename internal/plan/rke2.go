package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// rancherSpec is the part of a provisioning cluster's spec the leader
// migration writes.
type rancherSpec struct {
	Spec struct {
		RKEConfig struct {
			MachineGlobalConfig   any             `yaml:"machineGlobalConfig"`
			MachineSelectorConfig []selectorEntry `yaml:"machineSelectorConfig"`
		} `yaml:"rkeConfig"`
	} `yaml:"spec"`
}

// selectorEntry is a machineSelectorConfig entry: the arguments it gives
// the components of the machines it selects.
type selectorEntry struct {
	Config               rke2Args `yaml:"config"`
	MachineLabelSelector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	} `yaml:"machineLabelSelector"`
}

// rke2Args are the components' arguments of an RKE2 or K3s configuration.
type rke2Args struct {
	KubeAPIServerArg                []string `yaml:"kube-apiserver-arg,omitempty"`
	KubeControllerManagerArg        []string `yaml:"kube-controller-manager-arg,omitempty"`
	KubeControllerManagerExtraMount []string `yaml:"kube-controller-manager-extra-mount,omitempty"`
	KubeletArg                      []string `yaml:"kubelet-arg,omitempty"`
}

// selectorFor is the entry that gives the machines with a label its
// arguments.
func selectorFor(label, value string, args rke2Args) selectorEntry {
	e := selectorEntry{Config: args}
	e.MachineLabelSelector.MatchLabels = map[string]string{label: value}
	return e
}

// roleEntry is the entry for the machines of one Rancher role.
func roleEntry(role string, args rke2Args) selectorEntry {
	return selectorFor("rke.cattle.io/"+role+"-role", "true", args)
}

// rke2Entries are the machineSelectorConfig entries that give each role's
// components cloud-provider=external.
func rke2Entries(apiServer bool) []selectorEntry {
	ext := []string{"cloud-provider=external"}
	cp := rke2Args{KubeControllerManagerArg: ext, KubeletArg: ext}
	if apiServer {
		cp.KubeAPIServerArg = ext
	}
	return []selectorEntry{roleEntry("control-plane", cp), roleEntry("etcd", rke2Args{KubeletArg: ext}), roleEntry("worker", rke2Args{KubeletArg: ext})}
}

// rancherYAML is a provisioning cluster's spec.rkeConfig with the
// plan's machineGlobalConfig and entries after the user's, the comments
// on the options they annotate.
func rancherYAML(global any, entries []selectorEntry, comments ...yamlComment) string {
	return rancherYAMLAfter("... your other entries, unchanged", global, entries, comments...)
}

// rancherYAMLAfter is rancherYAML with another comment before the
// entries.
func rancherYAMLAfter(before string, global any, entries []selectorEntry, comments ...yamlComment) string {
	var s rancherSpec
	s.Spec.RKEConfig.MachineGlobalConfig = global
	s.Spec.RKEConfig.MachineSelectorConfig = entries
	return yamlOf(s, append(comments, headComment("spec.rkeConfig.machineSelectorConfig.0", before))...)
}

// selectorEntries lists the machineSelectorConfig entries of a provisioning
// cluster, one a line: the selector (empty: every machine), then the config.
func selectorEntries(description string) Command {
	return script(KindCluster, atRancher, description, `
kubectl -n fleet-default get clusters.provisioning.cattle.io "$CLUSTER_NAME" \
  -o jsonpath='{range .spec.rkeConfig.machineSelectorConfig[*]}{.machineLabelSelector}{" "}{.config}{"\n"}{end}'`)
}

func rke2Leader(b *builder) leaderParts {
	editCluster := script(KindCluster, atRancher, "Edit the provisioning cluster (CLUSTER_NAME: its name in Rancher)",
		`kubectl -n fleet-default edit clusters.provisioning.cattle.io "$CLUSTER_NAME"`)
	kcmArgs := func(want string) *Command {
		c := script(KindKubectl, atWorkstation, "", fmt.Sprintf(`
kubectl -n kube-system get pods -l component=kube-controller-manager -o yaml | grep -c -- '%s'`, want))
		return &c
	}
	cloudProviderName := Check{
		Description: "The cluster's cloud-provider-name (again after every edit in the Rancher UI)",
		Command: ptr(script(KindCluster, atRancher, "", `
kubectl -n fleet-default get clusters.provisioning.cattle.io "$CLUSTER_NAME" \
  -o jsonpath='{.spec.rkeConfig.machineGlobalConfig.cloud-provider-name}{"\n"}'`)),
		Expect: "aws. Anything else renames the nodes (RKE2 names them from instance metadata only with aws): put it " +
			"back before the machines are updated.",
	}
	kubeletExternal := kubeletNotExternal("rke2", "RKE2", "No output once every machine is updated. A node listed keeps the in-tree provider in its kubelet: "+
		"the machine matches no entry with kubelet-arg cloud-provider=external (or a later entry replaced "+
		"the list).")

	kcmItems := []string{"enable-leader-migration=true"}
	var kcmSnippetsExtra []Snippet
	var kcmNotes []string
	var mount []string
	if b.customLease() {
		kcmItems = append(kcmItems, "leader-migration-config="+kcmConfigPath)
		mount = []string{kcmConfigPath + ":" + kcmConfigPath + ":ro"}
		kcmSnippetsExtra = append(kcmSnippetsExtra, Snippet{File: kcmConfigPath, Language: "yaml", Content: b.kcmLMConfig(),
			Note: "On every control-plane node (Rancher can place it with spec.rkeConfig.machineSelectorFiles)"})
		kcmNotes = append(kcmNotes, b.kcmConfigNote())
	}
	kcmNotes = append(kcmNotes,
		"Rancher applies machineGlobalConfig, then every machineSelectorConfig entry that matches a machine, "+
			"in order; a key an entry sets replaces the earlier value whole, lists included (rancher/rancher "+
			"pkg/capr/planner). If another entry matching control-plane machines sets "+
			"kube-controller-manager-arg, copy its items into this list.",
		"RKE2 without Rancher: the same kube-controller-manager-arg list in /etc/rancher/rke2/config.yaml on "+
			"each server, then systemctl restart rke2-server, one server at a time.",
	)
	kcm := Step{
		Why: "Rancher writes kube-controller-manager-arg into the RKE2 configuration of the matching machines, " +
			"and RKE2 passes each item to kube-controller-manager as a flag.",
		Notes: kcmNotes,
		Snippets: append([]Snippet{{
			File: "spec.rkeConfig of the provisioning cluster", Language: "yaml",
			Content: rancherYAML(rke2Config{CloudProviderName: "aws"},
				[]selectorEntry{roleEntry("control-plane", rke2Args{KubeControllerManagerArg: kcmItems, KubeControllerManagerExtraMount: mount})},
				lineComment("spec.rkeConfig.machineGlobalConfig.cloud-provider-name", 10, "unchanged: the in-tree provider stays for now")),
			Note: "Add the entry at the end of machineSelectorConfig",
		}}, kcmSnippetsExtra...),
		Commands: []Command{mainCmd(editCluster)},
		Checks: []Check{{
			Description: "The controller managers' flags",
			Command:     kcmArgs("--enable-leader-migration=true"),
			Expect:      "The number of control-plane nodes (their static pods' mirror pods show the flags).",
		}},
		Rollback: Rollback{
			Description: "Remove the entry and save; the controller managers restart without leader migration. Only while the " +
				"CCM is not installed.",
			Commands: []Command{editCluster},
		},
	}

	switchStep := Step{
		ID:    "switch",
		Title: "Switch every component to the external provider, keeping cloud-provider-name: aws",
		Why: "On RKE2 up to 1.26 cloud-provider-name: aws does two things: it passes --cloud-provider=aws and " +
			"--cloud-config to kube-apiserver, kube-controller-manager and the kubelet (rancher/rke2 " +
			"pkg/podexecutor/staticpod.go, v1.26.15+rke2r1), and it names the node after the instance metadata's " +
			"local-hostname, the EC2 private DNS name in a VPC with the default DHCP options " +
			"(pkg/rke2/rke2_linux.go; before.hostname-label covers the others). Switching it to external would " +
			"drop the naming: every node would register anew under its hostname. So keep aws and give each " +
			"component cloud-provider=external: RKE2 puts its own arguments first and the user's after them, and " +
			"the last --cloud-provider wins. disable-cloud-controller keeps RKE2's own cloud controller off on " +
			"every server (RKE2 turns it off by itself only while cloud-provider-name is set, rke2_linux.go); in " +
			"machineGlobalConfig it applies to every server alike. Rancher writes a machine's configuration from " +
			"machineGlobalConfig, then from each machineSelectorConfig entry that selects it, in order, key by " +
			"key: an entry's list replaces the earlier one whole, it is not merged (" + rancherPlanner + "). So the last entry that sets " +
			"kubelet-arg decides a machine's kubelet flags: the plan's entries come after your other entries, " +
			"and your entries that set the same lists come after the plan's, with the flag added.",
		Notes: []string{
			"A machine that matches several entries (etcd and control plane on one node) takes each list from " +
				"the last entry that sets it, and all three carry cloud-provider=external.",
			"Your entries (the first command lists them, one a line: selector, then config): one that sets " +
				"kubelet-arg, kube-apiserver-arg or kube-controller-manager-arg would lose its items on the machines " +
				"it selects, the plan's entries coming later. Add cloud-provider=external to each such list of it " +
				"and move it after the plan's entries, so that its machines keep its items and the flag. Items of " +
				"yours for every machine of a role go into the plan's entry instead.",
			"Rancher updates the control-plane machines first, one at a time by default " +
				"(upgradeStrategy.controlPlaneConcurrency), then the workers. Controller managers not yet updated " +
				"keep the in-tree provider and leader migration: the lease holder, one of them or the CCM, runs the " +
				"cloud controllers, nobody else.",
			"Keep spec.kubernetesVersion as it is: switch first, check, then upgrade (after.upgrade).",
			"RKE2 without Rancher: the same keys in /etc/rancher/rke2/config.yaml (servers: " +
				"disable-cloud-controller and the three argument lists; agents: kubelet-arg), restarting rke2-server " +
				"on each server, then rke2-agent on each agent, one at a time.",
		},
		Snippets: []Snippet{{
			File: "spec.rkeConfig of the provisioning cluster", Language: "yaml",
			Content: rancherYAML(rke2Config{CloudProviderName: "aws", DisableCloudController: true}, rke2Entries(true),
				lineComment("spec.rkeConfig.machineGlobalConfig.cloud-provider-name", 10, "keep: RKE2 names the nodes from instance metadata with it")) +
				yamlComments(6, "then each entry of yours that sets kubelet-arg, kube-apiserver-arg or kube-controller-manager-arg,",
					"with cloud-provider=external added to each of those lists"),
			Note: "The control-plane entry replaces the entry of before.kcm-leader-migration",
		}},
		Commands: []Command{selectorEntries("Your machineSelectorConfig entries, before the edit (CLUSTER_NAME: its name in Rancher)"), mainCmd(editCluster)},
		Checks: []Check{
			cloudProviderName,
			{Description: "While Rancher updates the machines, after each control-plane machine", Command: b.checkRelease(), Expect: b.handoverExpect()},
			kubeletExternal,
		},
		Rollback: Rollback{
			Description: "Restore the spec.rkeConfig of before.kcm-leader-migration. The CCM, still in migrate mode, keeps " +
				"the lease until the controller managers take it back; node names and provider IDs do not change. To " +
				"go back all the way, uninstall the CCM afterwards (the rollback of before.install-ccm).",
			Commands: []Command{editCluster},
		},
	}

	var cleanupCmds []Command
	if b.customLease() {
		cleanupCmds = append(cleanupCmds, script(KindNode, atControlPlane, "The controller manager's leader migration config", "sudo rm "+kcmConfigPath))
	}
	snapshot := script(KindCluster, atRancher, "An on-demand snapshot of every etcd node (Rancher takes one when the generation grows)", `
gen=$(kubectl -n fleet-default get clusters.provisioning.cattle.io "$CLUSTER_NAME" -o jsonpath='{.spec.rkeConfig.etcdSnapshotCreate.generation}')
kubectl -n fleet-default patch clusters.provisioning.cattle.io "$CLUSTER_NAME" --type merge \
  -p "{\"spec\":{\"rkeConfig\":{\"etcdSnapshotCreate\":{\"generation\":$((gen + 1))}}}}"`)
	restore := "Rancher restores a snapshot from the cluster's Snapshots tab (spec.rkeConfig.etcdSnapshotRestore); " +
		"RKE2 without Rancher: rke2 etcd-snapshot save, and rke2 server --cluster-reset " +
		"--cluster-reset-restore-path to restore."

	nameFrom := strings.Join(rke2MetadataNameFrom, ", ")
	rke2Notes := []string{
		"From RKE2 " + nameFrom + ", cloud-provider-name: aws passes no --cloud-provider at all and only " +
			"names the node from instance metadata, and is deprecated for node-name-from-cloud-provider-metadata: true, " +
			"which does the same (rancher/rke2 pkg/rke2/rke2_linux.go, pkg/cli/cmds/root.go at those tags). When the " +
			"cluster reaches one of them, replace it (the Rancher note below); disable-cloud-controller: true stays, as RKE2 " +
			"no longer turns its cloud controller off by itself.",
		"Both keys name the node after the metadata's local-hostname whatever node-name says, from " +
			nameFrom + " on (rancher/rke2 pkg/rke2/rke2_linux.go; before those, only when node-name was " +
			"empty): a node given node-name in before.hostname-label would register anew under the metadata's name at " +
			"that upgrade. Write the drop-in below on each such node before its upgrade.",
		"Rancher passes node-name-from-cloud-provider-metadata on to RKE2 only where its KDM data lists the " +
			"key for the cluster's RKE2 release, and drops it without a word elsewhere (" + releases.KDMFilterSource + "): " + namingKeyKDM() + ". On older Rancher, or KDM data older " +
			"than that (an air-gapped Rancher's), keep cloud-provider-name: aws, which those RKE2 releases read " +
			"as the key. After the edit, a node's /etc/rancher/rke2/config.yaml.d/50-rancher.yaml shows which " +
			"one it got.",
		"kube-apiserver has no --cloud-provider from 1." + strconv.Itoa(apiServerNoCloudProvider) + " and exits on the unknown flag " +
			"(pkg/kubeapiserver/options/cloudprovider.go, gone at v1.33.0; kubernetes/kubernetes#130162). Drop " +
			"kube-apiserver-arg cloud-provider=external (from the plan's entry and from yours) with the move to " +
			"one of those RKE2 releases (they pass the API server no --cloud-provider), and in any case before 1." + strconv.Itoa(apiServerNoCloudProvider) + "; keep the kube-controller-manager and " +
			"kubelet items, whose flag stays.",
	}
	return leaderParts{
		title: "RKE2 provisioned by Rancher (spec.rkeConfig)",
		summary: "Leader migration of an RKE2 cluster at Kubernetes " + b.r.KubeVersion + " that runs the in-tree provider " +
			"(cloud-provider-name: aws) to the AWS CCM. The in-tree kube-controller-manager and the CCM share " +
			"the Lease " + b.r.LeaderName + ", so exactly one of them runs the cloud controllers at any time. The switch " +
			"keeps cloud-provider-name: aws, which names the nodes after their EC2 private DNS names, and sets " +
			"cloud-provider=external on every component through machineSelectorConfig.",
		duringSummary: "Rancher moves every component to --cloud-provider=external, machine by machine; the lease passes to " +
			"the CCM.",
		afterSummary: "The CCM alone: leader migration off, the migration's grants removed, then the upgrade past 1.26.",
		hostnameWhy: "on RKE2 the supervisor gives the kubelet --hostname-override set to the node's name as RKE2 sees it " +
			"(k3s pkg/daemons/agent/agent_linux.go): with cloud-provider-name: aws and no node-name, the " +
			"instance metadata's local-hostname (rancher/rke2 pkg/rke2/rke2_linux.go " +
			"hostnameFromMetadataEndpoint, v1.26.15+rke2r1), while the in-tree kubelet named the node after the " +
			"EC2 API's PrivateDnsName. In a VPC whose DHCP options set another domain the two differ: such a " +
			"node is listed, and after the switch its kubelet registers under the label's value, a new Node. " +
			"Give each node listed node-name: <NAME> in its RKE2 configuration before the switch (RKE2 reads the " +
			"metadata only when node-name is unset, up to the release before " + strings.Join(rke2MetadataNameFrom, ", ") + " of each line; from those on it names " +
			"the node from the metadata whatever node-name says, so after.upgrade turns the naming off on these " +
			"nodes); otherwise expect no node listed.",
		hostnameNotes: []string{"RKE2 reads the metadata's local-hostname, the in-tree provider the EC2 API's PrivateDnsName " +
			"(legacy-cloud-providers aws/aws.go buildSelfAWSInstance), which differ in a VPC whose DHCP options " +
			"set another domain."},
		cloudConfig: "RKE2 passes the file named by cloud-provider-config with --cloud-config (rancher/rke2 " +
			"pkg/podexecutor/staticpod.go); Rancher writes it from the cluster's cloud provider config.",
		readCloudConfig: script(KindNode, atControlPlane, "The in-tree provider's config", `
f=$(grep -o -e '--cloud-config=[^" ]*' /var/lib/rancher/rke2/agent/pod-manifests/kube-controller-manager.yaml | head -n 1 | cut -d= -f2)
[ -n "$f" ] && sudo cat "$f"`),
		routeFlags: mirrorPodRouteFlags(),
		routes: "RKE2 gives the controller manager --allocate-node-cidrs=true, and --configure-cloud-routes=false " +
			"only while its own cloud controller runs, which cloud-provider-name turns off (k3s " +
			"pkg/daemons/control/server.go controllerManager): with the in-tree aws provider the route " +
			"controller runs.",
		ecrBinDir: "/var/lib/rancher/credentialprovider/bin",
		ecrSnippets: []Snippet{{
			File: "/var/lib/rancher/credentialprovider/config.yaml", Language: "yaml", Content: b.ecrConfig(),
			Note: "On every node, with the binary at /var/lib/rancher/credentialprovider/bin/ecr-credential-provider: " +
				"when both exist the RKE2 agent passes them to the kubelet itself (its " +
				"--image-credential-provider-config and --image-credential-provider-bin-dir default to these paths; " +
				"k3s pkg/daemons/agent ImageCredProvAvailable). Rancher can place both with " +
				"spec.rkeConfig.machineSelectorFiles",
		}},
		ecrApply: []Command{script(KindNode, atEveryNode, "Restart RKE2 so that the kubelet picks the plugin up",
			"sudo systemctl restart rke2-server 2>/dev/null || sudo systemctl restart rke2-agent")},
		snapshot:   func(string) Command { return snapshot },
		restore:    restore,
		kcm:        kcm,
		switchStep: switchStep,
		verify: []Check{
			{Description: "No controller manager with leader migration", Command: kcmArgs("--enable-leader-migration"), Expect: "0"},
			kubeletExternal,
			cloudProviderName,
		},
		cleanup: cleanupCmds,
		upgrade: "Set spec.kubernetesVersion, one minor at a time; keep the machineSelectorConfig of the switch until " +
			"the notes below say otherwise.",
		upgradeNotes:    rke2Notes,
		upgradeSnippets: rke2UpgradeSnippets(),
	}
}

// rke2UpgradeSnippets are the configuration RKE2 needs from the releases
// that dropped the in-tree provider's flags.
func rke2UpgradeSnippets() []Snippet {
	return []Snippet{{
		File: "spec.rkeConfig of the provisioning cluster", Language: "yaml",
		Content: rancherYAML(struct {
			NodeNameFromMetadata   bool `yaml:"node-name-from-cloud-provider-metadata"`
			DisableCloudController bool `yaml:"disable-cloud-controller"`
		}{true, true}, rke2Entries(false),
			lineComment("spec.rkeConfig.machineGlobalConfig.node-name-from-cloud-provider-metadata", 3, "instead of cloud-provider-name: aws")),
		Note: "From RKE2 " + strings.Join(rke2MetadataNameFrom, ", ") + " on, and before 1.33 at the latest: no " +
			"kube-apiserver-arg cloud-provider",
	}, {
		File: releases.NodeNameDropIn, Language: "yaml",
		Content: yamlCompact(struct {
			NodeName             string `yaml:"node-name"`
			CloudProviderName    string `yaml:"cloud-provider-name"`
			NodeNameFromMetadata bool   `yaml:"node-name-from-cloud-provider-metadata"`
		}{"<NAME>", "external", false}),
		Note: "Each node given node-name in before.hostname-label, before its upgrade to " + strings.Join(rke2MetadataNameFrom, ", ") + " or later: " + releases.DropInOrder + ", so this file wins over Rancher's " +
			"50-rancher.yaml; cloud-provider-name: external gives the kubelet the flag the switch gave it.",
	}}
}

// namingKeyKDM says which Rancher minors' KDM data lists
// node-name-from-cloud-provider-metadata, and since when.
func namingKeyKDM() string {
	var l []string
	for _, d := range releases.NamingKeyKDM {
		l = append(l, fmt.Sprintf("Rancher %s's data since %s (%s)", d.Rancher, d.Since, d.Ref))
	}
	return strings.Join(l, ", ")
}

func rke2BuiltinPlan(b *builder) distroPlan {
	reregister := Step{
		ID:    "reregister-nodes",
		Title: "Register every node again, so that the CCM gives it an AWS provider ID",
		Why: "A node of RKE2's own cloud controller has an rke2:// provider ID, which never changes " +
			"(pkg/apis/core/validation ValidateNodeUpdate), and which the AWS CCM cannot read: from 1.30 it " +
			"never initialises such a node, and every release leaves it out of its load balancers " +
			"(kubernetes/cloud-provider-aws pkg/providers/v1/instances.go MapToAWSInstanceID, " +
			"aws_loadbalancer.go). A kubelet on the external provider taints its node uninitialized when it " +
			"registers it: the node becomes the CCM's by registering anew.",
		Notes: []string{
			"Agents: drain, delete the Node, restart rke2-agent on the node.",
			"Servers: do not delete a server's Node: RKE2 removes a server's etcd member when its Node is " +
				"deleted. Replace servers one at a time by new machines that join with the configuration of " +
				"during.external-provider, and remove the old ones as RKE2 documents (on Rancher: scale the " +
				"control-plane pool up, then down).",
		},
		Commands: []Command{drainDelete(), script(KindNode, atThatAgent, "Register it again", "sudo systemctl restart rke2-agent")},
		Checks:   []Check{providerIDCheck(), b.nodesInitialised()},
		Rollback: Rollback{Description: "Nothing per node: a node registered again keeps its aws:/// provider ID."},
	}
	install := b.installSwitch("A CCM pod ready on every server, its lease held. Exit 1 with one ✗ naming the nodes still on "+
		"rke2:// provider IDs (and how many) is expected until during.reregister-nodes; any other ✗ is "+
		"fixed first.", b.holdServices())
	return switchPlan(b, switchParts{
		title: "RKE2 at Kubernetes " + b.r.KubeVersion + " on its own cloud controller, onto the AWS CCM",
		summary: "RKE2's own cloud controller (rke2-cloud-provider) initialised the nodes of this cluster at " +
			"Kubernetes " + b.r.KubeVersion + " with rke2://<node name> provider IDs. The switch turns it off, installs " +
			"the AWS CCM " + b.r.tag + ", and registers every node again so that the CCM gives it an AWS provider ID.",
		beforeSummary: "Nothing changes yet: check what the CCM needs and how each node will be known to AWS.",
		duringSummary: "RKE2's cloud controller off and the kubelets external, CCM on, nodes registered again.",
		expectNodes: "Every PROVIDER-ID reads rke2://<NAME>: RKE2's own cloud controller set it. Note the nodes whose " +
			"NAME is neither their instance's private DNS name nor its instance ID: they register again under " +
			"such a name.",
		expectCheck: "Exit 1, and the only ✗ is the one naming the nodes on rke2:// provider IDs, with their count. " +
			"Every server shows where a CCM pod would run.",
		tags: "RKE2's own cloud controller did not need them: tag the instances, subnets and security groups now, " +
			"or set KubernetesClusterID in a cloud config (this plan with --cloud-config).",
		lbs: "RKE2 answers them only with enable-servicelb (ServiceLB, a controller of its own cloud controller); " +
			"once the AWS CCM's service controller runs, it makes an ELB (or NLB) for each, with a new DNS name.",
		kubelets: "disable-cloud-controller turns RKE2's own cloud controller off, which would keep giving new nodes " +
			"rke2:// provider IDs.",
		install: install,
		nodes:   reregister,
		upgrade: "The AWS CCM is released per Kubernetes minor: upgrade RKE2 one minor at a time and the CCM with it.",
	})
}

// rke2ClusterConfig is RKE2's config.yaml, or its provisioning cluster's
// spec.
func rke2ClusterConfig(b *builder) ([]Snippet, []string) {
	r := b.r
	var rc rancherCluster
	rc.Spec.KubernetesVersion = fmt.Sprintf("v1.%d.<patch>+rke2r1", r.minor)
	rc.Spec.RKEConfig.MachineGlobalConfig = rke2ServerConfig(r.minor, true)
	return []Snippet{
		{File: "/etc/rancher/rke2/config.yaml (servers)", Language: "yaml", Content: yamlCompact(rke2ServerConfig(r.minor, true))},
		{File: "/etc/rancher/rke2/config.yaml (agents)", Language: "yaml", Content: yamlCompact(rke2ServerConfig(r.minor, false))},
		{File: "spec of the provisioning cluster (RKE2 provisioned by Rancher)", Language: "yaml", Content: yamlCompact(rc),
			Note: "Instead of the files: Rancher writes machineGlobalConfig to every machine, leaving out what a role " +
				"does not take (disable-cloud-controller on workers); a machineSelectorConfig entry that sets one of " +
				"these keys replaces it on its machines (" + rancherPlanner + "). In Rancher's UI, the cloud provider is " +
				"External, not Amazon"},
	}, rke2ConfigNotes(r.minor)
}

const rke2ConfigExpect = "Every server's and agent's config.yaml (or the provisioning cluster's spec) holds the snippets above"

func rke2ConfigCheck(*builder) Command {
	return script(KindNode, atEveryNode, "The options of this plan in RKE2's configuration, and none it must not have",
		`sudo cat /etc/rancher/rke2/config.yaml /etc/rancher/rke2/config.yaml.d/*.yaml 2>/dev/null | grep -E '^(cloud-provider-|disable-cloud-controller|node-name|node-external-ip|kube-apiserver-arg)'`)
}

// rke2Restart restarts RKE2 with its configuration.
func rke2Restart(*builder) Command {
	return script(KindNode, atEveryNode, "Restart RKE2: servers one at a time, then agents",
		"sudo systemctl restart rke2-server 2>/dev/null || sudo systemctl restart rke2-agent")
}

// rke2Metadata says whether every RKE2 release of the minor's line has
// node-name-from-cloud-provider-metadata, and from which release of the
// line it has it otherwise ("" when none does).
func rke2Metadata(minor int) (all bool, first string) {
	c := rke2NoOpAWS
	all = c.In(minor)
	for _, r := range c.Releases {
		if strings.HasPrefix(r, fmt.Sprintf("v1.%d.", minor)) {
			first = r
		}
	}
	return all, first
}

// rke2ServerConfig is config.yaml of an RKE2 server (agent: without
// disable-cloud-controller) on the external provider at a minor.
func rke2ServerConfig(minor int, server bool) rke2Config {
	all, first := rke2Metadata(minor)
	return rke2Config{
		CloudProviderName:      "external",
		DisableCloudController: server,
		NodeNameFromMetadata:   all || first != "",
	}
}

// rke2ConfigNotes are the facts of RKE2 releases the configuration rests
// on, at a minor.
func rke2ConfigNotes(minor int) []string {
	all, first := rke2Metadata(minor)
	var notes []string
	switch {
	case all:
		notes = append(notes, "node-name-from-cloud-provider-metadata: true names each node after its instance's private DNS name "+
			"(instance metadata local-hostname), which the CCM looks its instance up by (rancher/rke2 "+
			"pkg/rke2/rke2.go).")
	case first != "":
		notes = append(notes, "node-name-from-cloud-provider-metadata exists from "+first+" in this line ("+rke2NoOpAWS.Source+"): on an older patch leave it out and "+
			"make each node's name its instance's private DNS name (node-name, or the instance's hostname as EC2 "+
			"sets it).")
	default:
		notes = append(notes, "RKE2 of this minor has no node-name-from-cloud-provider-metadata: make each node's name its "+
			"instance's private DNS name (node-name: ip-10-0-1-10.us-west-2.compute.internal, or the hostname "+
			"EC2 gives the instance), or its instance ID (resource-based names, "+
			"i-0123456789abcdef0.us-west-2.compute.internal), which the CCM both look up.")
	}
	if all || first != "" {
		notes = append(notes,
			"From "+rke2NodeName.ReleasesOf()+", node-name-from-cloud-provider-metadata names the node whatever "+
				"node-name says ("+rke2NodeName.Source+"): give a node one or the other.",
			"Rancher passes node-name-from-cloud-provider-metadata on to RKE2 only where its KDM data lists the "+
				"key for the cluster's RKE2 release, and drops it without a word elsewhere ("+releases.KDMFilterSource+"): "+namingKeyKDM()+". Without it the nodes keep the names "+
				"Rancher gives its machines, which the CCM cannot look up. On older Rancher, or KDM data older than "+
				"that (an air-gapped Rancher's), set cloud-provider-name: aws instead of external and the key (those "+
				"RKE2 releases read it as the key, and give the kubelet no --cloud-provider), with kubelet-arg: "+
				"cloud-provider=external. A node's /etc/rancher/rke2/config.yaml.d/50-rancher.yaml shows what it got.")
	}
	notes = append(notes,
		"disable-cloud-controller: true on every server: "+disableCCMNote(minor),
		"No kube-apiserver-arg cloud-provider: RKE2 gives the API server the flag itself up to 1.32 and none "+
			"from v1.33.0+rke2r1, and kube-apiserver exits on it from 1.33 ("+apiServerCP.Source+"). The Rancher documentation's recipe "+
			"still sets it (rancher/rancher-docs#2281).",
		"No node-external-ip on any node: with a cloud provider RKE2 refuses to start ("+mustChange("rke2", "node-external-ip").Source+"); the CCM writes the instance's "+
			"addresses.",
		"cloud-provider-name: aws is not the in-tree provider any more: from "+rke2NoOpAWS.ReleasesOf()+" it only names nodes, and before those "+
			"releases it gives the kubelet and the controller manager --cloud-provider=aws, which 1.27 and later "+
			"refuse.",
	)
	return notes
}
