package plan

import (
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// k3sHoldServices keeps the CCM's service controller off while ServiceLB
// still answers the Services of type LoadBalancer.
const k3sHoldServices = "--set-arg=controllers=*,-service"

func k3sPlan(b *builder) distroPlan {
	r := b.r
	restart := k3sRestart(b)
	restartServers := script(KindNode, atControlPlane, "Restart K3s on the servers, one at a time", "sudo systemctl restart k3s")
	nodeArgsExternal := kubeletNotExternal("k3s", "K3s", "No output once every node has restarted. A node listed has no kubelet-arg cloud-provider=external "+
		"(on Rancher: an entry of machineSelectorConfig that selects it sets kubelet-arg without it): K3s "+
		"gives it no cloud provider (the embedded one is off), and it registers without the uninitialized "+
		"taint the CCM needs.")

	imds := script(KindNode, atEveryNode, "What AWS knows the node as (instance metadata, IMDSv2)", `
TOKEN=$(curl -s -X PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 300')
for p in local-hostname instance-id placement/availability-zone; do
  printf '%s: %s\n' "$p" "$(curl -s -H "X-aws-ec2-metadata-token: $TOKEN" "http://169.254.169.254/latest/meta-data/$p")"
done`)
	imds.Main = true
	identity := Step{
		ID:    "node-identity",
		Title: "Decide how AWS will know each node: its name or a kubelet --provider-id",
		Why: "The CCM finds a node's instance by its provider ID or, without one, by its name taken as the EC2 " +
			"private DNS name, and puts only nodes with an aws:// provider ID behind load balancers " +
			"(kubernetes/cloud-provider-aws pkg/providers/v1 aws_loadbalancer.go findInstancesForELB, " +
			"instances.go mapToAWSInstanceIDsTolerant, v1.26.14). K3s nodes have k3s:// provider IDs, and the " +
			"API server lets a provider ID change only from empty (pkg/apis/core/validation ValidateNodeUpdate): " +
			"every node registers anew in during.reregister-nodes, under its private DNS name, or under its own " +
			"name with the provider ID its kubelet gives it.",
		Notes: []string{
			"Nodes whose name already is their private DNS name (local-hostname) need nothing here.",
			"Prefer the provider-id route on nodes with local volumes (before.hostname-label): the node keeps " +
				"its name and its kubernetes.io/hostname label.",
			"K3s clusters provisioned by Rancher are named after their machines and rkeConfig has no per-node " +
				"settings: custom clusters can register nodes with --node-name; machine pools register new machines " +
				"under their machine names, which the CCM cannot find, unless the instances' hostnames are their " +
				"private DNS names.",
		},
		Snippets: []Snippet{{
			File: "/etc/rancher/k3s/config.yaml", Language: "yaml",
			Content: yamlOf(rke2Config{NodeName: "ip-10-0-1-10.us-west-2.compute.internal"},
				headComment("node-name", "either: the node's name is its EC2 private DNS name (instance metadata local-hostname)")) +
				yamlComments(0, "or: the kubelet gives the provider ID itself (availability zone and instance ID from instance metadata)",
					"kubelet-arg:", "  - provider-id=aws:///us-west-2a/i-0123456789abcdef0"),
			Note: "Per node, with its own values; used when the node registers again (during.reregister-nodes)",
		}},
		Commands: []Command{imds},
		Checks: []Check{{
			Description: "Every node has a way to be found",
			Expect:      "For every node of nodes-before.txt you know the name or the provider ID it will register with.",
		}},
		Rollback: readOnly(),
	}

	lbInventory := Step{
		ID:    "load-balancers",
		Title: "List the Services of type LoadBalancer: each gets a new address",
		Why: "ServiceLB answers them today with the nodes' addresses. Once it is off the CCM makes an ELB for " +
			"each, with a new DNS name, and registers only nodes with an aws:// provider ID behind it " +
			"(findInstancesForELB, v1.26.14). The plan keeps ServiceLB on and the CCM's service controller off " +
			"until every node is registered again (during.load-balancers), so clients see one change: the new " +
			"ELB name.",
		Commands: []Command{mainCmd(*b.lbServices())},
		Checks: []Check{{
			Description: "Who uses each address",
			Expect: "For every Service listed you know what points at its address (DNS records, clients) and can change " +
				"it in during.load-balancers.",
		}},
		Rollback: readOnly(),
	}

	external := []string{"cloud-provider=external"}
	servers := rke2Config{DisableCloudController: true, KubeletArg: external}
	disable := Step{
		ID:    "disable-k3s-ccm",
		Title: "Turn off K3s's node controllers; kubelets on --cloud-provider=external",
		Why: "disable-cloud-controller turns off the cloud-node and cloud-node-lifecycle controllers of K3s's " +
			"embedded cloud controller, which would keep giving new nodes k3s:// provider IDs; ServiceLB is that " +
			"controller's service controller and stays until disable: servicelb (k3s docs/adrs/servicelb-ccm.md; " +
			"pkg/cloudprovider NodeEnabled and LBEnabled), which this plan keeps for during.load-balancers. With " +
			"disable-cloud-controller K3s also stops passing --cloud-provider=external to the kubelet " +
			"(pkg/daemons/agent/agent_linux.go), so it comes as kubelet-arg: only a kubelet with it registers " +
			"its node with the uninitialized taint the CCM initialises. Rancher writes a machine's K3s " +
			"configuration from machineGlobalConfig, then from each machineSelectorConfig entry that selects it, " +
			"key by key: an entry that sets kubelet-arg replaces the global list on its machines, it is not " +
			"merged (" + rancherPlanner + "), so such an entry needs cloud-provider=external too.",
		Notes: []string{
			"Lists replace lists: keep your other kubelet-arg items. disable-cloud-controller must be the same " +
				"on every server (K3s documentation, \"Critical configuration values\").",
			"Until the CCM runs (next step), nodes that join stay uninitialised: go on at once.",
			"K3s provisioned by Rancher: the first command lists the cluster's machineSelectorConfig entries, " +
				"one a line (selector, then config; no selector: every machine). Add cloud-provider=external to the " +
				"kubelet-arg of every entry that sets one; an entry that sets disable-cloud-controller must set it " +
				"true.",
		},
		Snippets: []Snippet{
			{File: "/etc/rancher/k3s/config.yaml (servers)", Language: "yaml", Content: yamlOf(servers)},
			{File: "/etc/rancher/k3s/config.yaml (agents)", Language: "yaml", Content: yamlOf(rke2Config{KubeletArg: external})},
			{File: "spec.rkeConfig of the provisioning cluster (K3s provisioned by Rancher)", Language: "yaml", Content: rancherYAMLAfter(
				"every entry that sets kubelet-arg, for example:", servers,
				[]selectorEntry{selectorFor("rke.cattle.io/rke-machine-pool-name", "big", rke2Args{KubeletArg: []string{"max-pods=200", "cloud-provider=external"}})},
				lineComment("spec.rkeConfig.machineSelectorConfig.0.config.kubelet-arg.0", 16, "its items, unchanged"),
				lineComment("spec.rkeConfig.machineSelectorConfig.0.config.kubelet-arg.1", 5, "added")), Note: "Instead of the config files; Rancher restarts K3s on each machine"},
		},
		Commands: []Command{
			selectorEntries("K3s provisioned by Rancher (CLUSTER_NAME: its name in Rancher): the machineSelectorConfig entries, " +
				"before the edit"),
			mainCmd(restart),
		},
		Checks: []Check{nodeArgsExternal},
		Rollback: Rollback{
			Description: "Remove the settings and restart K3s: the embedded node controllers come back. Uninstall the CCM " +
				"first if it was installed.",
			Commands: []Command{restart},
		},
	}

	hold := render{mode: renderer.ModeInstall, extraArgs: []string{k3sHoldServices}}
	install := Step{
		ID:    "install-ccm",
		Title: "Install the CCM (--mode=install), its service controller off",
		Why: "There is no in-tree controller manager to hand over from, so no leader migration: the CCM is the " +
			"only node controller from the start and leads under the Lease " + releases.CCMLease + " (K3s's embedded one uses " +
			"k3s-cloud-controller-manager, pkg/daemons/control/server.go). " + k3sHoldServices + " keeps its service controller off while " +
			"ServiceLB answers the LoadBalancer Services, so that two service controllers never act on one " +
			"Service (service is the controller's name up to the 1.27 libraries and an alias of " +
			"service-lb-controller from 1.28: k8s.io/cloud-provider names.CCMControllerAliases, which " +
			"cmd/aws-cloud-controller-manager/main.go passes from v1.28).",
		Commands: []Command{b.diff(hold), b.ccmUpgrade("Install the CCM, pinned to the cluster's minor", hold)},
		Checks: []Check{{
			Description: "The CCM against the cluster",
			Command:     b.checkRelease(),
			Expect: "A CCM pod running and ready on every server, the CCM's lease held by its leader. Exit 1 with one " +
				"✗ naming the nodes still on their k3s:// provider IDs (and how many) is expected until " +
				"during.reregister-nodes; any other ✗ is fixed first.",
		}},
		Rollback: Rollback{
			Description: "Uninstall the CCM, then undo during.disable-k3s-ccm.",
			Commands:    []Command{b.uninstall()},
		},
	}

	reregister := Step{
		ID:    "reregister-nodes",
		Title: "Register every node again, so that the CCM gives it an AWS provider ID",
		Why: "A kubelet taints its node uninitialized only when it registers it, and a k3s:// provider ID never " +
			"changes: a node becomes the CCM's by registering anew, with the identity chosen in " +
			"before.node-identity. The CCM then sets its aws:/// provider ID, addresses and zone labels and " +
			"removes the taint.",
		Notes: []string{
			"Agents: drain, delete the Node, restart k3s-agent on the node (with node-name or the provider-id " +
				"kubelet-arg of before.node-identity in its config.yaml).",
			"Servers: do not delete a server's Node: K3s removes a server's etcd member when its Node is deleted " +
				"(k3s pkg/etcd). Replace servers one at a time by new instances that join with the configuration of " +
				"during.disable-k3s-ccm and their own identity, and remove the old servers as K3s documents.",
		},
		Commands: []Command{drainDelete(), script(KindNode, atThatAgent, "Register it again", "sudo systemctl restart k3s-agent")},
		Checks: []Check{
			providerIDCheck(),
			{
				Description: "The CCM against the cluster, after the last node",
				Command:     b.checkRelease(),
				Expect: "Exit 0: every node initialised by the AWS CCM. A node still uninitialised was not found: its name " +
					"or provider ID (before.node-identity).",
			},
		},
		Rollback: Rollback{Description: "Nothing per node: a node registered again keeps its aws:/// provider ID."},
	}

	elbs := render{mode: renderer.ModeInstall, reset: true}
	lbSwitch := Step{
		ID:    "load-balancers",
		Title: "Move the LoadBalancer Services from ServiceLB to ELBs",
		Why: "With every node on an aws:// provider ID the CCM's ELBs get every node as a backend. disable: " +
			"servicelb turns K3s's service controller off; with its node controllers off too K3s runs no cloud " +
			"controller at all (k3s docs/adrs/servicelb-ccm.md), so nothing deletes ServiceLB's svclb " +
			"DaemonSets: delete them. Rendering the CCM without " + k3sHoldServices + " starts its service controller, which " +
			"makes an ELB per Service. --reset-options drops the --set-arg the release records " +
			"(docs/chart-wrapper.md).",
		Notes: []string{
			"Each Service is unreachable from when ServiceLB stops until its ELB answers (a minute or two) and " +
				"its clients use the new name: do it in a window, and change the DNS records of " +
				"before.load-balancers.",
		},
		Snippets: []Snippet{{
			File: "/etc/rancher/k3s/config.yaml (servers)", Language: "yaml", Content: yamlOf(rke2Config{Disable: []string{"servicelb"}}),
			Note: "Keep your other disable items; Rancher: the same in machineGlobalConfig, and servicelb added to " +
				"every machineSelectorConfig entry that sets disable (an entry's list replaces the global one: " +
				"during.disable-k3s-ccm)",
		}},
		Commands: []Command{
			restartServers,
			b.diff(elbs),
			b.ccmUpgrade("The CCM with its service controller", elbs),
			run(KindKubectl, atWorkstation, "ServiceLB's DaemonSets, left behind", "kubectl", "delete", "daemonsets", "--all-namespaces", "-l", r.profile.Node.ServiceLB.NameLabel),
		},
		Checks: []Check{{
			Description: "Load balancers",
			Command:     b.lbServices(),
			Expect:      "Every Service of type LoadBalancer has an ELB hostname (*.elb.amazonaws.com), no node address.",
		}},
		Rollback: Rollback{
			Description: "Render the CCM with " + k3sHoldServices + " again (during.install-ccm's command), delete the ELBs it made " +
				"(the hostname's first label up to its last '-' is the name: aws elb delete-load-balancer " +
				"--load-balancer-name NAME; an NLB: aws elbv2 delete-load-balancer) and the finalizer " +
				"service.kubernetes.io/load-balancer-cleanup of each Service, then remove servicelb from disable and " +
				"restart the servers.",
		},
	}

	verify := Step{
		ID:    "verify",
		Title: "Check that every node is the CCM's",
		Why:   "The switch is done when no node is left with a k3s:// provider ID and load balancers are ELBs.",
		Checks: []Check{
			{Description: "The CCM against the cluster", Command: mainCheck(b.checkRelease()), Expect: "Exit 0: every node initialised by the AWS CCM, the CCM's lease held. " + expectFix},
			{Description: "ServiceLB is gone", Command: ptr(run(KindKubectl, atWorkstation, "", "kubectl", "get", "daemonsets", "--all-namespaces", "-l", r.profile.Node.ServiceLB.NameLabel)), Expect: "No resources found."},
		},
		Rollback: Rollback{Description: "See the rollbacks of the steps of this phase."},
	}

	snapshot := func(name string) Command {
		return script(KindNode, atFirstServer, "On one server, with embedded etcd", "sudo k3s etcd-snapshot save --name "+name)
	}
	restore := "To restore: k3s server --cluster-reset --cluster-reset-restore-path=<snapshot> (K3s documentation, " +
		"\"etcd-snapshot\"). With SQLite or an external datastore, back that up instead."

	before := []Step{
		b.preflight("Every PROVIDER-ID reads k3s://<NAME>: K3s's embedded cloud controller set it (k3s "+
			"pkg/cloudprovider). Note the nodes whose NAME is not their instance's EC2 private DNS name: "+
			"before.node-identity is about them.",
			"Exit 1, and the only ✗ is the one naming the nodes on k3s:// provider IDs, with their count "+
				"(during.reregister-nodes replaces them). Every server shows where a CCM pod would run, and the "+
				"CCM's version matches the API server."),
		b.hostnameLabel("on K3s the agent gives the kubelet --hostname-override set to the node's name " +
			"(pkg/daemons/agent/agent_linux.go), so the label follows the name: a node that registers again " +
			"under a new name gets a new label, and local-path volumes (K3s's default StorageClass) stay behind " +
			"with the old one. Register such nodes under their own name with a provider ID " +
			"(before.node-identity)."),
		identity,
		b.iam("", true),
		b.clusterTags("K3s did not need them: tag the instances (servers at least), subnets and security groups now, or " +
			"set KubernetesClusterID in a cloud config (this plan with --cloud-config)."),
	}
	if r.CloudConfig {
		before = append(before, b.cloudConfig("K3s had none: this one holds what the CCM needs beyond its defaults (KubernetesClusterID without "+
			"the tags, [ServiceOverride] sections for private endpoints).", nil))
	}
	before = append(before,
		lbInventory,
		b.ebsCSI("K3s has no in-tree EBS plugin to lose (it is built without the cloud providers' code): EBS volumes "+
			"on K3s are the EBS CSI driver's already, and the switch does not touch them. Check that it stays so."),
		b.ecr("K3s's kubelet has no built-in ECR credential provider (it is built without the cloud providers' "+
			"code): ECR pulls work only through the ecr-credential-provider plugin, and the switch does not "+
			"change that. Check it is in place if the cluster pulls from ECR.",
			"/var/lib/rancher/credentialprovider/bin",
			[]Snippet{{
				File: "/var/lib/rancher/credentialprovider/config.yaml", Language: "yaml", Content: b.ecrConfig(),
				Note: "On every node, with the binary at /var/lib/rancher/credentialprovider/bin/ecr-credential-provider: " +
					"when both exist K3s passes them to the kubelet itself (pkg/daemons/agent/agent_linux.go " +
					"ImageCredProvAvailable)",
			}}, []Command{restart}),
		b.etcdSnapshot("the switch", snapshot("pre-switch"), restore),
	)
	return distroPlan{
		title:    "K3s (/etc/rancher/k3s/config.yaml, or spec.rkeConfig when provisioned by Rancher)",
		strategy: Switch,
		summary: "K3s is built without the in-tree cloud providers (the providerless build tag): its embedded cloud " +
			"controller (provider k3s) initialised the nodes with k3s://<node name> provider IDs and runs " +
			"ServiceLB. Moving a K3s cluster at Kubernetes " + r.KubeVersion + " to the AWS CCM is therefore a switch, " +
			"not a leader migration: the embedded node controllers go off, the CCM comes on, every node " +
			"registers again to get an AWS provider ID, and then the LoadBalancer Services move from ServiceLB " +
			"to ELBs.",
		beforeSummary: "Nothing changes yet: check what the CCM needs and decide how each node will be known to AWS.",
		duringSummary: "Node controllers off, CCM on, nodes registered again, then the load balancers. Between the first " +
			"two steps new nodes wait.",
		afterSummary: "The CCM follows the cluster's minor on every upgrade.",
		before:       before,
		during:       []Step{disable, install, reregister, lbSwitch, verify},
		after: []Step{
			b.upgrade("The AWS CCM is released per Kubernetes minor: upgrade K3s one minor at a time and the CCM with it.", nil),
		},
	}
}

// k3sClusterConfig is K3s's config.yaml.
func k3sClusterConfig(*builder) ([]Snippet, []string) {
	return []Snippet{
		{File: "/etc/rancher/k3s/config.yaml (servers)", Language: "yaml", Content: yamlCompact(k3sConfig(true))},
		{File: "/etc/rancher/k3s/config.yaml (agents)", Language: "yaml", Content: yamlCompact(k3sConfig(false))},
	}, k3sConfigNotes()
}

const k3sConfigExpect = "Every server's and agent's config.yaml holds the snippets above"

func k3sConfigCheck(*builder) Command {
	return script(KindNode, atEveryNode, "The options of this plan in K3s's configuration",
		`sudo cat /etc/rancher/k3s/config.yaml /etc/rancher/k3s/config.yaml.d/*.yaml 2>/dev/null | grep -A3 -E '^(disable-cloud-controller|disable|kubelet-arg|node-name)'`)
}

// k3sRestart restarts K3s with its configuration.
func k3sRestart(*builder) Command {
	return script(KindNode, atEveryNode, "Restart K3s: servers one at a time, then agents",
		"sudo systemctl restart k3s 2>/dev/null || sudo systemctl restart k3s-agent")
}

// k3sConfig is config.yaml of a K3s server or agent on the external
// provider.
func k3sConfig(server bool) rke2Config {
	c := rke2Config{KubeletArg: []string{"cloud-provider=external"}}
	if server {
		c.DisableCloudController = true
		c.Disable = []string{"servicelb"}
	}
	return c
}

// k3sConfigNotes are what K3s's configuration rests on.
func k3sConfigNotes() []string {
	return []string{
		"disable-cloud-controller turns off the node controllers of K3s's embedded cloud controller, which " +
			"would give new nodes k3s:// provider IDs the CCM cannot use; with it K3s no longer gives the " +
			"kubelet --cloud-provider=external, so kubelet-arg sets it (k3s pkg/daemons/agent/agent_linux.go). " +
			"It must be the same on every server.",
		"disable: servicelb turns off the embedded cloud controller's service controller, ServiceLB, which " +
			"would answer LoadBalancer Services beside the CCM's (k3s docs/adrs/servicelb-ccm.md). Keep it only " +
			"if you want ServiceLB and no AWS load balancers: then render the CCM with " +
			"--set-arg=controllers=*,-service.",
		"K3s names each node after its hostname: make it its instance's private DNS name (the hostname EC2 " +
			"gives an instance with IP-based names) or its instance ID (resource-based names), which the CCM " +
			"looks up, or set node-name.",
	}
}
