package plan

import (
	"fmt"
	"strings"
)

// roleSelector is a machineSelectorConfig selector for one Rancher role.
func roleSelector(role string) string {
	return `        machineLabelSelector:
          matchLabels:
            rke.cattle.io/` + role + `-role: "true"
`
}

// rke2Args is a machineSelectorConfig entry that gives each role's
// components their arguments.
func rke2Entries(apiServer bool) string {
	cp := `      - config:
`
	if apiServer {
		cp += `          kube-apiserver-arg:
            - cloud-provider=external
`
	}
	cp += `          kube-controller-manager-arg:
            - cloud-provider=external
          kubelet-arg:
            - cloud-provider=external
` + roleSelector("control-plane")
	for _, role := range []string{"etcd", "worker"} {
		cp += `      - config:
          kubelet-arg:
            - cloud-provider=external
` + roleSelector(role)
	}
	return cp
}

// selectorEntries lists the machineSelectorConfig entries of a provisioning
// cluster, one a line: the selector (empty: every machine), then the config.
func selectorEntries(description string) Command {
	return script(KindCluster, atRancher, description, `
kubectl -n fleet-default get clusters.provisioning.cattle.io "$CLUSTER_NAME" \
  -o jsonpath='{range .spec.rkeConfig.machineSelectorConfig[*]}{.machineLabelSelector}{" "}{.config}{"\n"}{end}'`)
}

func rke2Leader(b *builder) leaderParts {
	r := b.r
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
		Expect: "aws. Anything else renames the nodes (RKE2 names them from instance metadata only with aws): put it back before the machines are updated.",
	}
	kubeletExternal := kubeletNotExternal("rke2", "RKE2", "No output once every machine is updated. A node listed keeps the in-tree provider in its kubelet: the machine matches no entry with kubelet-arg cloud-provider=external (or a later entry replaced the list).")

	kcmItems := []string{"enable-leader-migration=true"}
	var kcmSnippetsExtra []Snippet
	var kcmNotes []string
	mount := ""
	if b.customLease() {
		kcmItems = append(kcmItems, "leader-migration-config="+kcmConfigPath)
		mount = "          kube-controller-manager-extra-mount:\n            - " + kcmConfigPath + ":" + kcmConfigPath + ":ro\n"
		kcmSnippetsExtra = append(kcmSnippetsExtra, Snippet{File: kcmConfigPath, Language: "yaml", Content: b.kcmLMConfig(),
			Note: "On every control-plane node (Rancher can place it with spec.rkeConfig.machineSelectorFiles)"})
		kcmNotes = append(kcmNotes, b.kcmConfigNote())
	}
	var list strings.Builder
	for _, it := range kcmItems {
		list.WriteString("            - " + it + "\n")
	}
	kcmNotes = append(kcmNotes,
		"Rancher applies machineGlobalConfig, then every machineSelectorConfig entry that matches a machine, in order; a key an entry sets replaces the earlier value whole, lists included (rancher/rancher pkg/capr/planner). If another entry matching control-plane machines sets kube-controller-manager-arg, copy its items into this list.",
		"RKE2 without Rancher: the same kube-controller-manager-arg list in /etc/rancher/rke2/config.yaml on each server, then systemctl restart rke2-server, one server at a time.",
	)
	kcm := Step{
		Why:   "Rancher writes kube-controller-manager-arg into the RKE2 configuration of the matching machines, and RKE2 passes each item to kube-controller-manager as a flag.",
		Notes: kcmNotes,
		Snippets: append([]Snippet{{
			File: "spec.rkeConfig of the provisioning cluster", Language: "yaml",
			Content: `spec:
  rkeConfig:
    machineGlobalConfig:
      cloud-provider-name: aws          # unchanged: the in-tree provider stays for now
    machineSelectorConfig:
      # ... your other entries, unchanged
      - config:
          kube-controller-manager-arg:
` + list.String() + mount + roleSelector("control-plane"),
			Note: "Add the entry at the end of machineSelectorConfig",
		}}, kcmSnippetsExtra...),
		Commands: []Command{mainCmd(editCluster)},
		Checks: []Check{{
			Description: "The controller managers' flags",
			Command:     kcmArgs("--enable-leader-migration=true"),
			Expect:      "The number of control-plane nodes (their static pods' mirror pods show the flags).",
		}},
		Rollback: Rollback{
			Description: "Remove the entry and save; the controller managers restart without leader migration. Only while the CCM is not installed.",
			Commands:    []Command{editCluster},
		},
	}

	switchStep := Step{
		ID:    "switch",
		Title: "Switch every component to the external provider, keeping cloud-provider-name: aws",
		Why: "On RKE2 up to 1.26 cloud-provider-name: aws does two things: it passes --cloud-provider=aws and --cloud-config " +
			"to kube-apiserver, kube-controller-manager and the kubelet (rancher/rke2 pkg/podexecutor/staticpod.go, " +
			"v1.26.15+rke2r1), and it names the node after the instance metadata's local-hostname, the EC2 private DNS name " +
			"in a VPC with the default DHCP options (pkg/rke2/rke2_linux.go; before.hostname-label covers the others). " +
			"Switching it to external would drop the naming: every node would register anew under its hostname. So keep aws and give each component cloud-provider=external: RKE2 puts its own arguments first " +
			"and the user's after them, and the last --cloud-provider wins. disable-cloud-controller keeps RKE2's own cloud " +
			"controller off on every server (RKE2 turns it off by itself only while cloud-provider-name is set, " +
			"rke2_linux.go); in machineGlobalConfig it applies to every server alike. Rancher writes a machine's configuration from " +
			"machineGlobalConfig, then from each machineSelectorConfig entry that selects it, in order, key by key: an entry's " +
			"list replaces the earlier one whole, it is not merged (" + rancherPlanner + "). So the last entry that sets " +
			"kubelet-arg decides a machine's kubelet flags: the plan's entries come after your other entries, and your entries " +
			"that set the same lists come after the plan's, with the flag added.",
		Notes: []string{
			"A machine that matches several entries (etcd and control plane on one node) takes each list from the last entry that sets it, and all three carry cloud-provider=external.",
			"Your entries (the first command lists them, one a line: selector, then config): one that sets kubelet-arg, kube-apiserver-arg or kube-controller-manager-arg would lose its items on the machines it selects, the plan's entries coming later. Add cloud-provider=external to each such list of it and move it after the plan's entries, so that its machines keep its items and the flag. Items of yours for every machine of a role go into the plan's entry instead.",
			"Rancher updates the control-plane machines first, one at a time by default (upgradeStrategy.controlPlaneConcurrency), then the workers. Controller managers not yet updated keep the in-tree provider and leader migration: the lease holder, one of them or the CCM, runs the cloud controllers, nobody else.",
			"Keep spec.kubernetesVersion as it is: switch first, check, then upgrade (after.upgrade).",
			"RKE2 without Rancher: the same keys in /etc/rancher/rke2/config.yaml (servers: disable-cloud-controller and the three argument lists; agents: kubelet-arg), restarting rke2-server on each server, then rke2-agent on each agent, one at a time.",
		},
		Snippets: []Snippet{{
			File: "spec.rkeConfig of the provisioning cluster", Language: "yaml",
			Content: `spec:
  rkeConfig:
    machineGlobalConfig:
      cloud-provider-name: aws          # keep: RKE2 names the nodes from instance metadata with it
      disable-cloud-controller: true
    machineSelectorConfig:
      # ... your other entries, unchanged
` + rke2Entries(true) + `      # then each entry of yours that sets kubelet-arg, kube-apiserver-arg or kube-controller-manager-arg,
      # with cloud-provider=external added to each of those lists
`,
			Note: "The control-plane entry replaces the entry of before.kcm-leader-migration",
		}},
		Commands: []Command{selectorEntries("Your machineSelectorConfig entries, before the edit (CLUSTER_NAME: its name in Rancher)"), mainCmd(editCluster)},
		Checks: []Check{
			cloudProviderName,
			{Description: "While Rancher updates the machines, after each control-plane machine", Command: b.checkRelease(), Expect: b.handoverExpect()},
			kubeletExternal,
		},
		Rollback: Rollback{
			Description: "Restore the spec.rkeConfig of before.kcm-leader-migration. The CCM, still in migrate mode, keeps the lease until the controller managers take it back; node names and provider IDs do not change. To go back all the way, uninstall the CCM afterwards (the rollback of before.install-ccm).",
			Commands:    []Command{editCluster},
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
	const restore = "Rancher restores a snapshot from the cluster's Snapshots tab (spec.rkeConfig.etcdSnapshotRestore); RKE2 without Rancher: rke2 etcd-snapshot save, and rke2 server --cluster-reset --cluster-reset-restore-path to restore."

	rke2Notes := []string{
		fmt.Sprintf("From RKE2 %s, cloud-provider-name: aws passes no --cloud-provider at all and only names the node from instance metadata, and is deprecated for node-name-from-cloud-provider-metadata: true, which names the nodes the same (rancher/rke2 pkg/rke2/rke2_linux.go, pkg/cli/cmds/root.go at those tags). When the cluster reaches one of them, replace it; disable-cloud-controller: true stays, as RKE2 no longer turns its cloud controller off by itself.", strings.Join(rke2MetadataNameFrom, ", ")),
		fmt.Sprintf("kube-apiserver has no --cloud-provider from 1.%d and exits on the unknown flag (pkg/kubeapiserver/options/cloudprovider.go, gone at v1.33.0; kubernetes/kubernetes#130162). Drop kube-apiserver-arg cloud-provider=external (from the plan's entry and from yours) with the move to one of those RKE2 releases (they pass the API server no --cloud-provider), and in any case before 1.%d; keep the kube-controller-manager and kubelet items, whose flag stays.", apiServerNoCloudProvider, apiServerNoCloudProvider),
	}
	return leaderParts{
		title: "RKE2 provisioned by Rancher (spec.rkeConfig)",
		summary: fmt.Sprintf("Leader migration of an RKE2 cluster at Kubernetes %s that runs the in-tree provider "+
			"(cloud-provider-name: aws) to the AWS CCM. The in-tree kube-controller-manager and the CCM share the Lease "+
			"%s, so exactly one of them runs the cloud controllers at any time. The switch keeps cloud-provider-name: "+
			"aws, which names the nodes after their EC2 private DNS names, and sets cloud-provider=external on every "+
			"component through machineSelectorConfig.", r.KubeVersion, r.LeaderName),
		duringSummary: "Rancher moves every component to --cloud-provider=external, machine by machine; the lease passes to the CCM.",
		afterSummary:  "The CCM alone: leader migration off, the migration's grants removed, then the upgrade past 1.26.",
		hostnameWhy:   "on RKE2 the supervisor gives the kubelet --hostname-override set to the node's name as RKE2 sees it (k3s pkg/daemons/agent/agent_linux.go): with cloud-provider-name: aws and no node-name, the instance metadata's local-hostname (rancher/rke2 pkg/rke2/rke2_linux.go hostnameFromMetadataEndpoint, v1.26.15+rke2r1), while the in-tree kubelet named the node after the EC2 API's PrivateDnsName. In a VPC whose DHCP options set another domain the two differ: such a node is listed, and after the switch its kubelet registers under the label's value, a new Node. Give each node listed node-name: <NAME> in its RKE2 configuration before the switch (RKE2 reads the metadata only when node-name is unset); otherwise expect no node listed.",
		hostnameNotes: []string{"RKE2 reads the metadata's local-hostname, the in-tree provider the EC2 API's PrivateDnsName (legacy-cloud-providers aws/aws.go buildSelfAWSInstance), which differ in a VPC whose DHCP options set another domain."},
		cloudConfig:   "RKE2 passes the file named by cloud-provider-config with --cloud-config (rancher/rke2 pkg/podexecutor/staticpod.go); Rancher writes it from the cluster's cloud provider config.",
		readCloudConfig: script(KindNode, atControlPlane, "The in-tree provider's config", `
f=$(grep -o -e '--cloud-config=[^" ]*' /var/lib/rancher/rke2/agent/pod-manifests/kube-controller-manager.yaml | head -n 1 | cut -d= -f2)
[ -n "$f" ] && sudo cat "$f"`),
		routeFlags: mirrorPodRouteFlags(),
		routes:     "RKE2 gives the controller manager --allocate-node-cidrs=true, and --configure-cloud-routes=false only while its own cloud controller runs, which cloud-provider-name turns off (k3s pkg/daemons/control/server.go controllerManager): with the in-tree aws provider the route controller runs.",
		ecrBinDir:  "/var/lib/rancher/credentialprovider/bin",
		ecrSnippets: []Snippet{{
			File: "/var/lib/rancher/credentialprovider/config.yaml", Language: "yaml", Content: b.ecrConfig(),
			Note: "On every node, with the binary at /var/lib/rancher/credentialprovider/bin/ecr-credential-provider: when both exist the RKE2 agent passes them to the kubelet itself (its --image-credential-provider-config and --image-credential-provider-bin-dir default to these paths; k3s pkg/daemons/agent ImageCredProvAvailable). Rancher can place both with spec.rkeConfig.machineSelectorFiles",
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
		cleanup:         cleanupCmds,
		upgrade:         "Set spec.kubernetesVersion, one minor at a time; keep the machineSelectorConfig of the switch until the notes below say otherwise.",
		upgradeNotes:    rke2Notes,
		upgradeSnippets: rke2UpgradeSnippets(),
	}
}

// rke2UpgradeSnippets are the configuration RKE2 needs from the releases
// that dropped the in-tree provider's flags.
func rke2UpgradeSnippets() []Snippet {
	return []Snippet{{
		File: "spec.rkeConfig of the provisioning cluster", Language: "yaml",
		Content: `spec:
  rkeConfig:
    machineGlobalConfig:
      node-name-from-cloud-provider-metadata: true   # instead of cloud-provider-name: aws
      disable-cloud-controller: true
    machineSelectorConfig:
      # ... your other entries, unchanged
` + rke2Entries(false),
		Note: "From RKE2 " + strings.Join(rke2MetadataNameFrom, ", ") + " on, and before 1.33 at the latest: no kube-apiserver-arg cloud-provider",
	}}
}
