package plan

import (
	"fmt"
	"strings"
)

// roleSelector is a machineSelectorConfig selector for one Rancher role.
func roleSelector(role string) string {
	return `        machineLabelSelector:
          matchExpressions:
            - key: rke.cattle.io/` + role + `-role
              operator: In
              values: ["true"]
`
}

func rke2Plan(b *builder) distroPlan {
	r := b.r
	editCluster := script(KindCluster, atRancher, "Edit the provisioning cluster (CLUSTER_NAME: its name in Rancher)",
		`kubectl -n fleet-default edit clusters.provisioning.cattle.io "$CLUSTER_NAME"`)
	kcmArgs := func(want string) *Command {
		c := script(KindKubectl, atWorkstation, "", fmt.Sprintf(`
kubectl -n kube-system get pods -l component=kube-controller-manager -o yaml | grep -c -- '%s'`, want))
		return &c
	}

	kcmItems := []string{"enable-leader-migration=true"}
	var kcmSnippetsExtra []Snippet
	var kcmNotes []string
	mount := ""
	if b.customLease() {
		kcmItems = append(kcmItems, "leader-migration-config="+kcmConfigPath)
		mount = "          kube-controller-manager-extra-mount:\n            - " + kcmConfigPath + ":" + kcmConfigPath + ":ro\n"
		kcmSnippetsExtra = append(kcmSnippetsExtra, Snippet{File: kcmConfigPath, Language: "yaml", Content: b.kcmLMConfig(),
			Note: "On every control-plane node (Rancher can place it with spec.rkeConfig.machineSelectorFiles)."})
		kcmNotes = append(kcmNotes, b.kcmConfigNote())
	}
	list := func(indent string, items []string) string {
		var s strings.Builder
		for _, it := range items {
			s.WriteString(indent + "- " + it + "\n")
		}
		return s.String()
	}
	kcmNotes = append(kcmNotes,
		"Rancher applies machineGlobalConfig first, then every machineSelectorConfig entry that matches a machine, in order, and a key an entry sets replaces the earlier value whole, lists included (rancher/rancher pkg/capr/planner, addUserConfig). If machineGlobalConfig or another entry matching control-plane machines sets kube-controller-manager-arg, copy its items into this list.",
		"Rancher rolls the change out to the control-plane machines one at a time by default (upgradeStrategy.controlPlaneConcurrency).",
		"RKE2 without Rancher: add the same kube-controller-manager-arg list to /etc/rancher/rke2/config.yaml on each server and run systemctl restart rke2-server, one server at a time.",
	)
	kcm := b.kcmLeaderMigration(Step{
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
` + list("            ", kcmItems) + mount + roleSelector("control-plane"),
			Note: "Add the entry at the end of machineSelectorConfig.",
		}}, kcmSnippetsExtra...),
		Commands: []Command{editCluster},
		Checks: []Check{{
			Description: "The controller managers' flags",
			Command:     kcmArgs("--enable-leader-migration=true"),
			Expect:      "The number of control-plane nodes.",
		}},
		Rollback: Rollback{
			Description: "Remove the entry and save; the controller managers restart without leader migration. Only while the CCM is not installed.",
			Commands:    []Command{editCluster},
		},
	})

	switchStep := Step{
		ID:    "switch",
		Title: "Switch every component to the external provider, keeping cloud-provider-name: aws",
		Why: "On RKE2 up to 1.26 cloud-provider-name: aws does two things: it passes --cloud-provider=aws (and " +
			"--cloud-config) to kube-apiserver, kube-controller-manager and the kubelet, and it names the node after the " +
			"instance metadata's local-hostname, the EC2 private DNS name (rancher/rke2 pkg/rke2/rke2_linux.go, " +
			"pkg/podexecutor). Switching it to external would drop the second: every node would register under its " +
			"hostname, a new Node, and the old ones would go NotReady. Keeping aws alone leaves the first: the in-tree " +
			"controller manager keeps its cloud controllers. So keep aws and set cloud-provider=external per component: " +
			"RKE2 puts the user's arguments after its own, and the last --cloud-provider wins. The control-plane entry " +
			"replaces the one of before.kcm-leader-migration, whose flag goes with the in-tree provider. " +
			"disable-cloud-controller keeps RKE2's own cloud controller off (RKE2 also turns it off whenever " +
			"cloud-provider-name is set).",
		Notes: []string{
			"A machine that matches several entries (etcd and control plane on one node, say) takes each list from the last entry that sets it; all three carry cloud-provider=external. Copy your other kubelet-arg, kube-apiserver-arg and kube-controller-manager-arg items into each entry: an entry's list replaces the earlier ones whole.",
			"Rancher rolls it out to control-plane machines first, one at a time by default (upgradeStrategy.controlPlaneConcurrency), then to workers (workerConcurrency). Controller managers not yet updated keep the in-tree provider and leader migration: at any moment the lease holder, one of them or the CCM, runs the cloud controllers, and nobody else.",
			"Keep spec.kubernetesVersion as it is: switch first, check, then upgrade (after.upgrade).",
			"From RKE2 v1.29.11, v1.30.7, v1.31.3 and v1.32.0 cloud-provider-name: aws no longer passes --cloud-provider at all and only names the node from instance metadata (node-name-from-cloud-provider-metadata); the per-component settings stay right there.",
			"RKE2 without Rancher: the same keys in /etc/rancher/rke2/config.yaml (servers: disable-cloud-controller and the three argument lists; agents: kubelet-arg), restarting rke2-server on each server, then rke2-agent on each agent, one at a time.",
		},
		Snippets: []Snippet{{
			File: "spec.rkeConfig of the provisioning cluster", Language: "yaml",
			Content: `spec:
  rkeConfig:
    machineGlobalConfig:
      cloud-provider-name: aws          # keep: RKE2 names the nodes from instance metadata with it
    machineSelectorConfig:
      # ... your other entries, unchanged
      - config:
          disable-cloud-controller: true
          kube-apiserver-arg:
            - cloud-provider=external
          kube-controller-manager-arg:
            - cloud-provider=external
          kubelet-arg:
            - cloud-provider=external
` + roleSelector("control-plane") + `      - config:
          kubelet-arg:
            - cloud-provider=external
` + roleSelector("etcd") + `      - config:
          kubelet-arg:
            - cloud-provider=external
` + roleSelector("worker"),
			Note: "The control-plane entry replaces the entry of before.kcm-leader-migration.",
		}},
		Commands: []Command{editCluster},
		Checks: []Check{
			{
				Description: "While Rancher rolls it out: who holds the migration lease",
				Command:     b.migrationHolder(),
				Expect: "Always a holder: the in-tree controller manager's leader until its node is updated, then, after at " +
					"most a lease duration (15 s by default), a CCM pod.",
			},
			{
				Description: "The controller managers' flags",
				Command:     kcmArgs("--cloud-provider=external"),
				Expect:      "The number of control-plane nodes (each manifest lists RKE2's --cloud-provider=aws first and --cloud-provider=external after it; the last one counts).",
			},
		},
		Rollback: Rollback{
			Description: "Restore the machineSelectorConfig of before.kcm-leader-migration. The CCM, still in migrate mode, keeps the lease until the controller managers can take it back; node names and provider IDs do not change. To go back all the way, uninstall the CCM afterwards (the rollback of before.install-ccm).",
			Commands:    []Command{editCluster},
		},
	}

	var cleanupCmds []Command
	if b.customLease() {
		cleanupCmds = append(cleanupCmds, script(KindNode, atControlPlane, "The controller manager's leader migration config", "sudo rm "+kcmConfigPath))
	}

	return distroPlan{
		title:    "RKE2 provisioned by Rancher (spec.rkeConfig)",
		strategy: LeaderMigration,
		summary: fmt.Sprintf("Leader migration of an RKE2 cluster at Kubernetes %s that runs the in-tree provider "+
			"(cloud-provider-name: aws) to the AWS CCM. The in-tree kube-controller-manager and the CCM share the Lease "+
			"%s, so exactly one of them runs the cloud controllers at any time. The switch keeps cloud-provider-name: "+
			"aws, which names the nodes after their EC2 private DNS names, and sets cloud-provider=external on every "+
			"component through machineSelectorConfig.", r.KubeVersion, r.LeaderName),
		beforeSummary: "The cluster still runs the in-tree provider. Check what the CCM needs, let the in-tree controller manager use the migration lease, then install the CCM beside it.",
		duringSummary: "Rancher moves every component to --cloud-provider=external, machine by machine; the lease passes to the CCM.",
		afterSummary:  "The CCM alone: leader migration off, the migration's grants removed, then the upgrade past 1.26.",
		before: []Step{
			b.preflight(nodesInTree),
			b.clusterTags(tagsInTree),
			b.cloudConfig("RKE2 passes the file named by cloud-provider-config with --cloud-config (Rancher writes it from the cluster's cloud provider config).",
				script(KindNode, atControlPlane, "The in-tree provider's config", `
f=$(grep -o -e '--cloud-config=[^" ]*' /var/lib/rancher/rke2/agent/pod-manifests/kube-controller-manager.yaml | head -n 1 | cut -d= -f2)
[ -n "$f" ] && sudo cat "$f"`)),
			b.ebsCSI(ebsInTree),
			b.ecr(ecrInTree(r.minor), []Snippet{{
				File: "/var/lib/rancher/credentialprovider/config.yaml", Language: "yaml", Content: b.ecrConfig(),
				Note: "On every node, with the binary at /var/lib/rancher/credentialprovider/bin/ecr-credential-provider: when both exist the RKE2 agent passes them to the kubelet itself (--image-credential-provider-config and --image-credential-provider-bin-dir default to these paths). Rancher can place both with spec.rkeConfig.machineSelectorFiles.",
			}}, []Command{script(KindNode, atEveryNode, "Restart RKE2 so that the kubelet picks the plugin up",
				"sudo systemctl restart rke2-server 2>/dev/null || sudo systemctl restart rke2-agent")}),
			b.grantLease(),
			kcm,
			b.installMigrate(),
		},
		during: []Step{
			switchStep,
			b.verifyHandover(Check{
				Description: "No controller manager with the in-tree provider",
				Command:     kcmArgs("--enable-leader-migration"),
				Expect:      "0",
			}),
		},
		after: []Step{
			b.installMode(),
			b.cleanup(cleanupCmds, nil),
			b.upgrade(upgradeInTree+" Set spec.kubernetesVersion, one minor at a time; keep the machineSelectorConfig of the switch.", nil),
		},
	}
}
