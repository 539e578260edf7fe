package plan

import (
	"fmt"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// kcmConfigPath is where the in-tree controller manager's
// LeaderMigrationConfiguration goes when the plan writes one.
const kcmConfigPath = "/etc/kubernetes/kcm-leader-migration.yaml"

// kcmLMConfig is the in-tree controller manager's side of leader migration:
// the controllers a 1.22–1.26 controller manager registers, as its built-in
// default names them, under the plan's lease.
func (b *builder) kcmLMConfig() string {
	api := "controllermanager.config.k8s.io/v1"
	if b.r.minor < 24 {
		api = "controllermanager.config.k8s.io/v1beta1"
	}
	lock := "" // v1 has no resourceLock: its conversion sets leases
	if a, _ := renderer.MigrationAPIOf(api); a.ResourceLock {
		lock = "resourceLock: leases\n"
	}
	return fmt.Sprintf(`apiVersion: %s
kind: LeaderMigrationConfiguration
leaderName: %s
%scontrollerLeaders:
  - name: route
    component: "*"
  - name: service
    component: "*"
  - name: cloud-node-lifecycle
    component: "*"
`, api, b.r.LeaderName, lock)
}

// customLease reports whether the lease is not the one the controller
// manager's built-in configuration names.
func (b *builder) customLease() bool { return b.r.LeaderName != renderer.DefaultLeaderName }

func (b *builder) kcmConfigNote() string {
	return fmt.Sprintf("The controller manager's built-in configuration names the lease %s; this plan uses %s, so the "+
		"controller manager gets its own LeaderMigrationConfiguration (%s, the same controllers as the built-in "+
		"one). Write it on every control-plane node before the update.", renderer.DefaultLeaderName, b.r.LeaderName, kcmConfigPath)
}

func rkePlan(b *builder) distroPlan {
	r := b.r
	rkeUp := run(KindCluster, atRKE, "Apply cluster.yml", "rke", "up", "--config", "cluster.yml")
	inspect := func(description, containers string) *Command {
		c := script(KindNode, atControlPlane, description, fmt.Sprintf(`
for c in %s; do
  printf '%%s: ' "$c"; docker inspect "$c" --format '{{range .Args}}{{.}} {{end}}' | tr ' ' '\n' | grep -e --cloud-provider= -e --enable-leader-migration | tr '\n' ' '; echo
done`, containers))
		return &c
	}

	kcmSnippet := `cloud_provider:
  name: aws            # unchanged, awsCloudProvider included
services:
  kube-controller:
    extra_args:
      enable-leader-migration: "true"
`
	var kcmSnippets []Snippet
	var kcmNotes []string
	if b.customLease() {
		kcmSnippet += "      leader-migration-config: " + kcmConfigPath + "\n"
		kcmSnippets = append(kcmSnippets, Snippet{File: kcmConfigPath, Language: "yaml", Content: b.kcmLMConfig(),
			Note: "On every control-plane node; RKE mounts the host's /etc/kubernetes into the kube-controller container (rancher/rke cluster/plan.go)."})
		kcmNotes = append(kcmNotes, b.kcmConfigNote())
	}
	kcmSnippets = append([]Snippet{{File: "cluster.yml", Language: "yaml", Content: kcmSnippet,
		Note: "Merge into cluster.yml; keep the other extra_args. In Rancher: Edit as YAML, the same keys under rancher_kubernetes_engine_config."}}, kcmSnippets...)
	kcmNotes = append(kcmNotes, "rke up restarts kube-controller-manager on the control-plane nodes with --enable-leader-migration=true; the in-tree provider stays.")
	kcm := b.kcmLeaderMigration(Step{
		Why:      "RKE passes services.kube-controller.extra_args to kube-controller-manager as flags.",
		Notes:    kcmNotes,
		Snippets: kcmSnippets,
		Commands: []Command{rkeUp},
		Checks: []Check{{
			Description: "The controller manager's flags",
			Command:     inspect("", "kube-controller-manager"),
			Expect:      "kube-controller-manager: --cloud-provider=aws --enable-leader-migration=true",
		}},
		Rollback: Rollback{
			Description: "Remove enable-leader-migration (and leader-migration-config) from services.kube-controller.extra_args and run rke up; the controller manager runs the cloud controllers under its own lease again. Only while the CCM is not installed.",
			Commands:    []Command{rkeUp},
		},
	})

	switchStep := Step{
		ID:    "switch",
		Title: "Switch the cluster to the external provider (cloud_provider: external-aws)",
		Why: "With external-aws RKE passes --cloud-provider=external to kube-apiserver, kube-controller-manager and " +
			"the kubelets (rancher/rke cluster/plan.go, getCloudProviderName), so no controller manager runs the in-tree " +
			"cloud controllers any more and the CCM, waiting for the lease, takes them over. useInstanceMetadataHostname " +
			"makes each kubelet use the instance metadata's hostname, the EC2 private DNS name the in-tree provider named " +
			"the node after, so every node keeps its name and its provider ID.",
		Notes: []string{
			"Remove awsCloudProvider: when it is set RKE picks the aws provider and sets the name back to aws (rancher/rke cloudprovider.InitCloudProvider, cluster/defaults.go setCloudProvider), and it refuses aws from Kubernetes 1.27. Its settings went to the CCM in before.cloud-config.",
			"Leave useInstanceMetadataHostname false only if every node's hostname_override in cluster.yml already is its EC2 private DNS name; otherwise kubelets register new nodes under other names and the old ones go NotReady.",
			"rke up updates control-plane nodes one at a time (upgrade_strategy.max_unavailable_controlplane, default 1): it cordons a node, restarts its components with --cloud-provider=external and uncordons it; workers follow. Controller managers not yet updated keep the in-tree provider and leader migration: at any moment the lease holder, one of them or the CCM, runs the cloud controllers, and nobody else.",
			"Keep kubernetes_version as it is: switch first, check, then upgrade (after.upgrade).",
			"In Rancher: Cloud Provider \"External Amazon (out-of-tree)\" with the instance metadata hostname option sets the same.",
		},
		Snippets: []Snippet{{
			File: "cluster.yml", Language: "yaml",
			Content: `cloud_provider:
  name: external-aws
  useInstanceMetadataHostname: true
services:
  kube-controller:
    extra_args: {}     # enable-leader-migration and leader-migration-config removed; keep your other flags
`,
			Note: "Replace the cloud_provider section whole (awsCloudProvider goes); remove the leader migration flags of before.kcm-leader-migration.",
		}},
		Commands: []Command{rkeUp},
		Checks: []Check{
			{
				Description: "While rke up runs: who holds the migration lease",
				Command:     b.migrationHolder(),
				Expect: "Always a holder: the in-tree controller manager's leader until its node is updated, then, after at " +
					"most a lease duration (15 s by default), a CCM pod.",
			},
			{
				Description: "On every control-plane node after the update",
				Command:     inspect("", "kube-apiserver kube-controller-manager kubelet"),
				Expect:      "--cloud-provider=external for each; no --enable-leader-migration.",
			},
		},
		Rollback: Rollback{
			Description: "Restore the cluster.yml of before.kcm-leader-migration (cloud_provider aws with its awsCloudProvider section, enable-leader-migration) and run rke up. The CCM, still in migrate mode, keeps the lease until the controller managers can take it back; node names and provider IDs do not change. To go back all the way, uninstall the CCM afterwards (the rollback of before.install-ccm).",
			Commands:    []Command{rkeUp},
		},
	}

	ecrConfigPath := "/etc/kubernetes/image-credential-provider/config.yaml"
	ecrSnippet := `services:
  kubelet:
    extra_args:
      image-credential-provider-config: /etc/kubernetes/image-credential-provider/config.yaml
      image-credential-provider-bin-dir: /etc/kubernetes/image-credential-provider/bin
`
	if g := b.ecrFeatureGate(); g != "" {
		ecrSnippet += "      feature-gates: " + g + "\n"
	}

	var rkeCleanup []Command
	if b.customLease() {
		rkeCleanup = append(rkeCleanup, script(KindNode, atControlPlane, "The controller manager's leader migration config", "sudo rm "+kcmConfigPath))
	}

	return distroPlan{
		title:    "RKE1 (cluster.yml)",
		strategy: LeaderMigration,
		summary: fmt.Sprintf("Leader migration of an RKE1 cluster at Kubernetes %s from the in-tree aws provider to the AWS "+
			"CCM. The in-tree kube-controller-manager and the CCM share the Lease %s, so exactly one of them runs the "+
			"cloud controllers (node lifecycle, service load balancers, routes) at any time; the cluster then switches to "+
			"cloud_provider external-aws with node names from instance metadata, and the CCM drops leader migration.",
			r.KubeVersion, r.LeaderName),
		beforeSummary: "The cluster still runs the in-tree provider. Check what the CCM needs, let the in-tree controller manager use the migration lease, then install the CCM beside it.",
		duringSummary: "rke up moves every component to --cloud-provider=external, node by node; the lease passes to the CCM.",
		afterSummary:  "The CCM alone: leader migration off, the migration's grants removed, then the upgrade past 1.26.",
		before: []Step{
			b.preflight(nodesInTree),
			b.clusterTags(tagsInTree),
			b.cloudConfig("RKE writes the file /etc/kubernetes/cloud-config on every node from cloud_provider.awsCloudProvider of cluster.yml (an INI file, rancher/rke cloudprovider/aws) and passes it with --cloud-config.",
				script(KindNode, atControlPlane, "The in-tree provider's config", "cat /etc/kubernetes/cloud-config")),
			b.ebsCSI(ebsInTree),
			b.ecr(ecrInTree(r.minor), []Snippet{
				{File: ecrConfigPath, Language: "yaml", Content: b.ecrConfig(),
					Note: "On every node, with the binary at /etc/kubernetes/image-credential-provider/bin/ecr-credential-provider: the kubelet container mounts the host's /etc/kubernetes (rancher/rke cluster/plan.go)."},
				{File: "cluster.yml", Language: "yaml", Content: ecrSnippet, Note: "Merge into cluster.yml; keep the other kubelet extra_args."},
			}, []Command{rkeUp}),
			b.grantLease(),
			kcm,
			b.installMigrate(),
		},
		during: []Step{
			switchStep,
			b.verifyHandover(Check{
				Description: "No component with the in-tree provider",
				Command:     inspect("", "kube-apiserver kube-controller-manager kubelet"),
				Expect:      "--cloud-provider=external everywhere, on every node (the kubelet also on workers).",
			}),
		},
		after: []Step{
			b.installMode(),
			b.cleanup(rkeCleanup, nil),
			b.upgrade(upgradeInTree+" Set kubernetes_version in cluster.yml and run rke up, one minor at a time.", nil),
		},
	}
}
