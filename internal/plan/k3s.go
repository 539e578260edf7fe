package plan

import (
	"fmt"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

func k3sPlan(b *builder) distroPlan {
	r := b.r
	restart := script(KindNode, atEveryNode, "Restart K3s: servers one at a time, then agents",
		"sudo systemctl restart k3s 2>/dev/null || sudo systemctl restart k3s-agent")
	kubeletLog := script(KindNode, atEveryNode, "", `sudo journalctl -u k3s -u k3s-agent | grep 'Running kubelet' | tail -n 1 | grep -o -e '--cloud-provider=[a-z]*'`)

	imds := script(KindNode, atEveryNode, "What AWS knows the node as (instance metadata, IMDSv2)", `
TOKEN=$(curl -s -X PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 300')
for p in local-hostname instance-id placement/availability-zone; do
  printf '%s: %s\n' "$p" "$(curl -s -H "X-aws-ec2-metadata-token: $TOKEN" "http://169.254.169.254/latest/meta-data/$p")"
done`)

	identity := Step{
		ID:    "node-identity",
		Title: "Decide how AWS will know each node: its name or a kubelet --provider-id",
		Why: "The CCM finds a node's instance by the node's provider ID or, when it has none, by the node's name taken as " +
			"the EC2 private DNS name, and registers only nodes with an aws:/// provider ID behind load balancers " +
			"(kubernetes/cloud-provider-aws pkg/providers/v1). K3s nodes have k3s:// provider IDs, and the API server " +
			"never lets a provider ID change once set (\"node updates may not change providerID except from \\\"\\\" to " +
			"valid\", pkg/apis/core/validation): every node registers anew in during.reregister-nodes, under its private " +
			"DNS name, or under any name with the provider ID its kubelet gives it.",
		Notes: []string{
			"Nodes whose name already is their private DNS name (local-hostname) need nothing here.",
			"K3s clusters provisioned by Rancher are named after their machines and rkeConfig has no per-node settings: custom clusters can register nodes with --node-name; machine pools register new machines under their machine names, which the CCM cannot find, unless the instances' hostnames are their private DNS names.",
		},
		Snippets: []Snippet{{
			File: "/etc/rancher/k3s/config.yaml", Language: "yaml",
			Content: `# either: the node's name is its EC2 private DNS name (instance metadata local-hostname)
node-name: ip-10-0-1-10.us-west-2.compute.internal
# or: the kubelet gives the provider ID itself (availability zone and instance ID from instance metadata)
# kubelet-arg:
#   - provider-id=aws:///us-west-2a/i-0123456789abcdef0
`,
			Note: "Per node, with its own values; used when the node registers again (during.reregister-nodes).",
		}},
		Commands: []Command{imds},
		Checks: []Check{{
			Description: "Every node has a way to be found",
			Expect:      "For every node of nodes-before.txt you know the name or the provider ID it will register with.",
		}},
		Rollback: readOnly(),
	}

	disable := Step{
		ID:    "disable-k3s-ccm",
		Title: "Turn off K3s's embedded cloud controller and ServiceLB; kubelets on --cloud-provider=external",
		Why: "Two cloud controllers must not serve one cluster: the embedded one would keep giving new nodes k3s:// " +
			"provider IDs, and its ServiceLB would answer the Services of type LoadBalancer that the CCM turns into ELBs. " +
			"With disable-cloud-controller K3s also stops passing --cloud-provider=external to the kubelet " +
			"(k3s pkg/daemons/agent), so the kubelet gets it as kubelet-arg: only a kubelet with it registers its node " +
			"with the node.cloudprovider.kubernetes.io/uninitialized taint that the CCM initialises.",
		Notes: []string{
			"Lists replace lists: keep your other items of disable and kubelet-arg in the same lists.",
			"Until the CCM runs (next step), nodes that join stay uninitialised and new Services of type LoadBalancer get no address: go on at once.",
		},
		Snippets: []Snippet{
			{File: "/etc/rancher/k3s/config.yaml (servers)", Language: "yaml", Content: `disable-cloud-controller: true
disable:
  - servicelb
kubelet-arg:
  - cloud-provider=external
`},
			{File: "/etc/rancher/k3s/config.yaml (agents)", Language: "yaml", Content: `kubelet-arg:
  - cloud-provider=external
`},
			{File: "spec.rkeConfig of the provisioning cluster (K3s provisioned by Rancher)", Language: "yaml", Content: `spec:
  rkeConfig:
    machineGlobalConfig:
      disable-cloud-controller: true
      disable:
        - servicelb
      kubelet-arg:
        - cloud-provider=external
`, Note: "Instead of the config files; Rancher restarts K3s on each machine."},
		},
		Commands: []Command{restart},
		Checks: []Check{{
			Description: "The kubelet's cloud provider, on every node",
			Command:     &kubeletLog,
			Expect:      "--cloud-provider=external",
		}},
		Rollback: Rollback{
			Description: "Remove the three settings and restart K3s: the embedded cloud controller and ServiceLB come back. Uninstall the CCM first if it was installed.",
			Commands:    []Command{restart},
		},
	}

	install := Step{
		ID:    "install-ccm",
		Title: "Install the CCM (--mode=install)",
		Why: fmt.Sprintf("There is no in-tree controller manager to hand over from, so no leader migration: the CCM is "+
			"the only cloud controller from the start and leads under the Lease %s. The renderer pins K3s's "+
			"control-plane placement and tolerations; image.tag pins the CCM to the cluster's minor.", ccmLease),
		Commands: []Command{
			b.diff(renderer.ModeInstall),
			b.helmUpgrade("Install the CCM, pinned to the cluster's minor", renderer.ModeInstall),
		},
		Checks: []Check{
			{Description: "The DaemonSet rolled out", Command: b.rollout(), Expect: "successfully rolled out"},
			{Description: "Where the pods run", Command: b.pods(), Expect: "One Running pod on each server."},
			{Description: "The CCM leads", Command: b.leases(ccmLease), Expect: "A CCM pod holds it; RENEWED moves on every few seconds."},
		},
		Rollback: Rollback{
			Description: "Uninstall the CCM, then undo during.disable-k3s-ccm.",
			Commands:    []Command{b.uninstall()},
		},
	}

	drain := script(KindKubectl, atWorkstation, "Agents, one at a time (NODE: its name): move its pods away and delete the Node object", `
kubectl drain "$NODE" --ignore-daemonsets --delete-emptydir-data
kubectl delete node "$NODE"`)
	reregister := Step{
		ID:    "reregister-nodes",
		Title: "Register every node again, so that the CCM gives it an AWS provider ID",
		Why: "A kubelet taints its node uninitialized only when it registers it, and a k3s:// provider ID never changes: " +
			"a node becomes the CCM's by registering anew, with the identity chosen in before.node-identity. The CCM then " +
			"sets its aws:/// provider ID, addresses and zone labels and removes the taint.",
		Notes: []string{
			"Agents: drain, delete the Node, restart k3s-agent on the node (with node-name or the provider-id kubelet-arg of before.node-identity in its config.yaml).",
			"Servers: do not delete a server's Node: K3s removes a server's etcd member when its Node is deleted (k3s pkg/etcd, member_controller.go). Replace servers one at a time by new instances that join with the configuration of during.disable-k3s-ccm and their own identity, and remove the old servers as K3s documents.",
		},
		Commands: []Command{
			drain,
			script(KindNode, atEveryNode, "On that agent", "sudo systemctl restart k3s-agent"),
		},
		Checks: []Check{
			{
				Description: "The node's provider ID",
				Command:     ptr(script(KindKubectl, atWorkstation, "", `kubectl get node "$NODE" -o jsonpath='{.spec.providerID}{"\n"}'`)),
				Expect:      "aws:///<zone>/<instance-id>, within seconds of the registration.",
			},
			{Description: "Nodes waiting for a cloud controller", Command: b.uninitialized(), Expect: "No output. A node that stays here was not found by the CCM: check its name or provider ID (before.node-identity) and the CCM's log."},
		},
		Rollback: Rollback{Description: "Nothing per node: a re-registered node keeps its aws:/// provider ID even under the embedded controller, which keeps a provider ID it finds (k3s pkg/cloudprovider)."},
	}

	verify := Step{
		ID:    "verify",
		Title: "Check that every node is the CCM's",
		Why:   "The switch is done when no node is left with a k3s:// provider ID and load balancers are ELBs.",
		Checks: []Check{
			{Description: "Provider IDs", Command: b.foreignProviderIDs(), Expect: "No output: every node has an aws:/// provider ID."},
			{Description: "Nodes waiting for a cloud controller", Command: b.uninitialized(), Expect: "No output."},
			{Description: "Load balancers", Command: b.lbServices(), Expect: "Every Service of type LoadBalancer has an ELB hostname (*.elb.amazonaws.com); ServiceLB's node addresses are gone."},
			{Description: "The CCM leads", Command: b.leases(ccmLease), Expect: "A CCM pod holds it."},
		},
		Rollback: Rollback{Description: "See the rollbacks of the steps of this phase."},
	}

	return distroPlan{
		title:    "K3s (/etc/rancher/k3s/config.yaml, or spec.rkeConfig when provisioned by Rancher)",
		strategy: Switch,
		summary: fmt.Sprintf("K3s is built without the in-tree cloud providers (the providerless build tag): its embedded "+
			"cloud controller (provider k3s) initialised the nodes with k3s://<node name> provider IDs and runs ServiceLB. "+
			"Moving a K3s cluster at Kubernetes %s to the AWS CCM is therefore a switch, not a leader migration: the "+
			"embedded controller goes off, the CCM comes on, and every node registers again to get an AWS provider ID.",
			r.KubeVersion),
		beforeSummary: "Nothing changes yet: check what the CCM needs and decide how each node will be known to AWS.",
		duringSummary: "Embedded controller off, CCM on, nodes registered again. Between the first and the second step new nodes and new load balancers wait.",
		afterSummary:  "The CCM follows the cluster's minor on every upgrade.",
		before: []Step{
			b.preflight("Every PROVIDER-ID reads k3s://<NAME>: K3s's embedded cloud controller set it (k3s pkg/cloudprovider). Note the nodes whose NAME is not their instance's EC2 private DNS name: before.node-identity is about them."),
			identity,
			b.clusterTags("K3s did not need them: tag the instances (control-plane ones at least), subnets and security groups now, or set KubernetesClusterID in a cloud config (--set-arg=cloud-config=... with a mounted file)."),
			b.ebsCSI("K3s has no in-tree EBS plugin to lose (it is built without the cloud providers' code): EBS volumes on K3s are the EBS CSI driver's already, and the switch does not touch them. Check that it stays so."),
			b.ecr("K3s's kubelet has no built-in ECR credential provider (it is built without the cloud providers' code): ECR pulls work only through the ecr-credential-provider plugin, and the switch does not change that. Check it is in place if the cluster pulls from ECR.",
				[]Snippet{{
					File: "/var/lib/rancher/credentialprovider/config.yaml", Language: "yaml", Content: b.ecrConfig(),
					Note: "On every node, with the binary at /var/lib/rancher/credentialprovider/bin/ecr-credential-provider: when both exist K3s passes them to the kubelet itself (--image-credential-provider-config and --image-credential-provider-bin-dir default to these paths).",
				}}, []Command{restart}),
		},
		during: []Step{disable, install, reregister, verify},
		after: []Step{
			b.upgrade("The AWS CCM is released per Kubernetes minor: upgrade K3s one minor at a time and the CCM with it.", nil),
		},
	}
}
