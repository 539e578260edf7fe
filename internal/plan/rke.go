package plan

import (
	"fmt"
	"strconv"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// kcmConfigPath is where the in-tree controller manager's
// LeaderMigrationConfiguration goes when the plan writes one.
const kcmConfigPath = "/etc/kubernetes/kcm-leader-migration.yaml"

// kcmLMConfig is the in-tree controller manager's side of leader migration:
// the controllers a 1.22–1.26 controller manager registers, as its built-in
// default names them, under the plan's lease. v1beta1 (1.22, 1.23) has a
// resourceLock field without a default that validation requires; v1 (1.24
// and later) has none (k8s.io/controller-manager v0.22–v0.24,
// config/v1beta1 and v1 types).
func (b *builder) kcmLMConfig() string {
	api := "controllermanager.config.k8s.io/v1"
	if b.r.minor < 24 {
		api = "controllermanager.config.k8s.io/v1beta1"
	}
	c := leaderMigrationConfig{APIVersion: api, Kind: "LeaderMigrationConfiguration", LeaderName: b.r.LeaderName}
	// v1 has no resourceLock: its conversion sets leases.
	if a, _ := renderer.MigrationAPIOf(api); a.ResourceLock {
		c.ResourceLock = "leases"
	}
	for _, name := range []string{"route", "service", "cloud-node-lifecycle"} {
		c.ControllerLeaders = append(c.ControllerLeaders, controllerLeader{Name: name, Component: "*"})
	}
	return yamlOf(c)
}

// leaderMigrationConfig is a LeaderMigrationConfiguration
// (k8s.io/controller-manager config/v1 and v1beta1).
type leaderMigrationConfig struct {
	APIVersion        string             `yaml:"apiVersion"`
	Kind              string             `yaml:"kind"`
	LeaderName        string             `yaml:"leaderName"`
	ResourceLock      string             `yaml:"resourceLock,omitempty"`
	ControllerLeaders []controllerLeader `yaml:"controllerLeaders"`
}

type controllerLeader struct {
	Name      string `yaml:"name"`
	Component quoted `yaml:"component"`
}

// customLease reports whether the lease is not the one the controller
// manager's built-in configuration names.
func (b *builder) customLease() bool { return b.r.LeaderName != renderer.DefaultLeaderName }

func (b *builder) kcmConfigNote() string {
	return "The controller manager's built-in configuration names the lease " + renderer.DefaultLeaderName + "; this plan uses " + b.r.LeaderName + ", so the controller manager gets its " +
		"own LeaderMigrationConfiguration (" + kcmConfigPath + ", the same controllers as the built-in one). Write " +
		"it on every control-plane node before the update."
}

// rkeClusterYML is the part of RKE1's cluster.yml the leader migration
// writes.
type rkeClusterYML struct {
	CloudProvider *rkeCloudProvider     `yaml:"cloud_provider,omitempty"`
	Services      map[string]rkeService `yaml:"services,omitempty"`
	Nodes         []rkeNode             `yaml:"nodes,omitempty"`
}

type rkeCloudProvider struct {
	Name                        string `yaml:"name"`
	UseInstanceMetadataHostname bool   `yaml:"useInstanceMetadataHostname,omitempty"`
}

// rkeService is a service of cluster.yml: its extra_args, a map or a
// struct that keeps its flags in order.
type rkeService struct {
	ExtraArgs any `yaml:"extra_args"`
}

type rkeNode struct {
	Address          string `yaml:"address"`
	HostnameOverride string `yaml:"hostname_override"`
}

// rkeServices is the services section of one service's extra_args.
func rkeServices(service string, extraArgs any) map[string]rkeService {
	return map[string]rkeService{service: {ExtraArgs: extraArgs}}
}

// ecrKubeletArgs are the kubelet flags of the ECR credential provider.
type ecrKubeletArgs struct {
	Config       string `yaml:"image-credential-provider-config"`
	BinDir       string `yaml:"image-credential-provider-bin-dir"`
	FeatureGates string `yaml:"feature-gates,omitempty"`
}

func rkeLeader(b *builder) leaderParts {
	r := b.r
	rkeUp := run(KindCluster, atRKE, "Apply cluster.yml", "rke", "up", "--config", "cluster.yml")
	inspect := func(containers, flags string) *Command {
		c := script(KindNode, atEveryNode, "", fmt.Sprintf(`
for c in %s; do
  printf '%%s: ' "$c"; docker inspect "$c" --format '{{range .Args}}{{.}} {{end}}' | tr ' ' '\n' | grep -e %s | tr '\n' ' '; echo
done`, containers, flags))
		return &c
	}

	kcmArgs := map[string]string{"enable-leader-migration": "true"}
	var kcmSnippets []Snippet
	var kcmNotes []string
	if b.customLease() {
		kcmArgs["leader-migration-config"] = kcmConfigPath
		kcmSnippets = append(kcmSnippets, Snippet{File: kcmConfigPath, Language: "yaml", Content: b.kcmLMConfig(),
			Note: "On every control-plane node; RKE mounts the host's /etc/kubernetes into the kube-controller " +
				"container (rancher/rke cluster/plan.go)"})
		kcmNotes = append(kcmNotes, b.kcmConfigNote())
	}
	kcmSnippets = append([]Snippet{{File: "cluster.yml", Language: "yaml", Content: yamlOf(rkeClusterYML{CloudProvider: &rkeCloudProvider{Name: "aws"}, Services: rkeServices("kube-controller", kcmArgs)},
		lineComment("cloud_provider.name", 12, "unchanged, awsCloudProvider included")),
		Note: "Merge into cluster.yml; keep the other extra_args. In Rancher: Edit as YAML, the same keys under " +
			"rancher_kubernetes_engine_config"}}, kcmSnippets...)
	kcmNotes = append(kcmNotes, "rke up restarts kube-controller-manager on the control-plane nodes with "+
		"--enable-leader-migration=true; the in-tree provider stays.")
	kcm := Step{
		Why:      "RKE passes services.kube-controller.extra_args to kube-controller-manager as flags.",
		Notes:    kcmNotes,
		Snippets: kcmSnippets,
		Commands: []Command{mainCmd(rkeUp)},
		Checks: []Check{{
			Description: "The controller manager's flags, on each control-plane node",
			Command:     inspect("kube-controller-manager", "--cloud-provider= -e --enable-leader-migration"),
			Expect:      "kube-controller-manager: --cloud-provider=aws --enable-leader-migration=true",
		}},
		Rollback: Rollback{
			Description: "Remove enable-leader-migration (and leader-migration-config) from " +
				"services.kube-controller.extra_args and run rke up. Only while the CCM is not installed.",
			Commands: []Command{rkeUp},
		},
	}

	imds := script(KindNode, atEveryNode, "The instance metadata's hostname, which rke-tools gives the kubelet with useInstanceMetadataHostname", `
TOKEN=$(curl -s -X PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 60')
curl -s -H "X-aws-ec2-metadata-token: $TOKEN" http://169.254.169.254/latest/meta-data/hostname; echo`)
	imds.Main = true
	nodeNames := Step{
		ID:    "node-names",
		Title: "Decide how each kubelet keeps its node's name: instance metadata or hostname_override",
		Why: "The in-tree provider named each node after its instance's PrivateDnsName from the EC2 API, and " +
			"avoided the instance metadata on purpose: in a VPC whose DHCP options set another domain the " +
			"metadata's hostname differs (legacy-cloud-providers aws/aws.go buildSelfAWSInstance, v0.26.15). " +
			"With external-aws and useInstanceMetadataHostname RKE drops the kubelet's --hostname-override " +
			"(rancher/rke cluster/plan.go BuildKubeletProcess, v1.4.15) and rke-tools sets it from " +
			"meta-data/hostname (rancher/rke-tools entrypoint.sh); without it the kubelet gets the node's " +
			"hostname_override (default: its address, cluster/defaults.go). With the external provider the " +
			"kubelet registers under that name: every node whose name it is not registers anew.",
		Notes: []string{
			"hostname_override also names the node's etcd member (etcd-<hostname_override>, cluster/plan.go), " +
				"and RKE removes etcd members by that name (services/etcd.go RemoveEtcdMember): change it only with " +
				"before.etcd-snapshot taken.",
		},
		Commands: []Command{imds},
		Checks: []Check{{
			Description: "Every node's metadata hostname against its NAME in nodes-before.txt",
			Expect: "All the same: during.switch sets useInstanceMetadataHostname: true. Any different: during.switch " +
				"sets useInstanceMetadataHostname: false and every node's hostname_override in cluster.yml to its " +
				"NAME.",
		}},
		Rollback: readOnly(),
	}

	switchStep := Step{
		ID:    "switch",
		Title: "Switch the cluster to the external provider (cloud_provider: external-aws)",
		Why: "With external-aws RKE passes --cloud-provider=external to kube-apiserver, kube-controller-manager " +
			"and the kubelets (rancher/rke cluster/plan.go getCloudProviderName, from v1.4.15 and v1.5.0), so no " +
			"controller manager runs the in-tree cloud controllers any more and the CCM, waiting for the lease, " +
			"takes them over. Each kubelet keeps its node's name as before.node-names decided.",
		Notes: []string{
			"Remove awsCloudProvider: with it RKE picks the aws provider again (cloudprovider/cloudprovider.go " +
				"InitCloudProvider), and it refuses aws from Kubernetes 1.27 (cluster/defaults.go). Its settings " +
				"went to the CCM in before.cloud-config.",
			"rke up updates control-plane nodes one at a time (upgrade_strategy.max_unavailable_controlplane, " +
				"default 1), then the workers. Controller managers not yet updated keep the in-tree provider and " +
				"leader migration: the lease holder, one of them or the CCM, runs the cloud controllers, nobody else.",
			"Keep kubernetes_version as it is: switch first, check, then upgrade (after.upgrade).",
			"In Rancher: Cloud Provider \"External Amazon (out-of-tree)\" and its instance metadata hostname " +
				"option set the same.",
		},
		Snippets: []Snippet{{
			File: "cluster.yml", Language: "yaml",
			Content: yamlOf(rkeClusterYML{
				CloudProvider: &rkeCloudProvider{Name: "external-aws", UseInstanceMetadataHostname: true},
				Services:      rkeServices("kube-controller", map[string]string{}),
				Nodes:         []rkeNode{{Address: "10.0.1.10", HostnameOverride: "ip-10-0-1-10.us-west-2.compute.internal"}},
			},
				lineComment("cloud_provider.useInstanceMetadataHostname", 3, "false where before.node-names found a difference"),
				lineComment("services.kube-controller.extra_args", 5, "enable-leader-migration and leader-migration-config removed; keep your other flags"),
				lineComment("nodes.0.hostname_override", 3, "only with useInstanceMetadataHostname: false: the node's NAME")),
			Note: "Replace the cloud_provider section whole (awsCloudProvider goes); remove the leader migration flags " +
				"of before.kcm-leader-migration",
		}},
		Commands: []Command{mainCmd(rkeUp)},
		Checks: []Check{
			{Description: "While rke up runs, after each control-plane node", Command: b.checkRelease(), Expect: b.handoverExpect()},
			{
				Description: "Each node's components after its update",
				Command:     inspect("kube-apiserver kube-controller-manager kubelet", "--cloud-provider= -e --hostname-override= -e --enable-leader-migration"),
				Expect: "--cloud-provider=external for each (kube-apiserver and kube-controller-manager on control-plane " +
					"nodes only), no --enable-leader-migration, and the kubelet's --hostname-override is the node's NAME.",
			},
		},
		Rollback: Rollback{
			Description: "Restore the cluster.yml of before.kcm-leader-migration (cloud_provider aws with its " +
				"awsCloudProvider section, enable-leader-migration) and run rke up. The CCM, still in migrate mode, " +
				"keeps the lease until the controller managers take it back; node names and provider IDs do not " +
				"change. To go back all the way, uninstall the CCM afterwards (the rollback of before.install-ccm).",
			Commands: []Command{rkeUp},
		},
	}

	ecrConfigPath := "/etc/kubernetes/image-credential-provider/config.yaml"
	ecrSnippet := yamlOf(rkeClusterYML{Services: rkeServices("kubelet", ecrKubeletArgs{
		Config: ecrConfigPath, BinDir: "/etc/kubernetes/image-credential-provider/bin", FeatureGates: b.ecrFeatureGate(),
	})})

	var rkeCleanup []Command
	if b.customLease() {
		rkeCleanup = append(rkeCleanup, script(KindNode, atControlPlane, "The controller manager's leader migration config", "sudo rm "+kcmConfigPath))
	}
	snapshot := func(name string) Command {
		return run(KindCluster, atRKE, "A snapshot on every etcd node", "rke", "etcd", "snapshot-save", "--config", "cluster.yml", "--name", name)
	}
	restore := "To restore one: rke etcd snapshot-restore --config cluster.yml --name NAME (rancher/rke " +
		"cmd/etcd.go)."

	return leaderParts{
		title: "RKE1 (cluster.yml)",
		summary: "Leader migration of an RKE1 cluster at Kubernetes " + r.KubeVersion + " from the in-tree aws provider to the " +
			"AWS CCM. The in-tree kube-controller-manager and the CCM share the Lease " + r.LeaderName + ", so exactly one of them runs the cloud " +
			"controllers (node lifecycle, service load balancers, routes) at any time; the cluster then switches " +
			"to cloud_provider external-aws, every node keeping its name, and the CCM drops leader migration. " +
			"RKE1 is at end of life: the upgrade after the migration stops at 1." + strconv.Itoa(releases.RKELastMinor) + ".",
		duringSummary: "rke up moves every component to --cloud-provider=external, node by node; the lease passes to the " +
			"CCM.",
		afterSummary:      "The CCM alone: leader migration off, the migration's grants removed, then the upgrade past 1.26.",
		preflightCommands: []Command{run(KindCluster, atRKE, "The RKE CLI's version", "rke", "--version")},
		preflightChecks: []Check{{
			Description: "The RKE CLI",
			Expect: "rke version v1.4.15 or later of the v1.4 line, or v1.5.0 or later: older releases have no " +
				"cloud_provider external-aws (rancher/rke cluster/plan.go getCloudProviderName, not at v1.4.14). Use " +
				"the same rke release and cluster.rkestate for every rke up of this plan.",
		}},
		own: []Step{nodeNames},
		hostnameWhy: "on RKE1 the label is each node's hostname_override (default: its address; rancher/rke " +
			"cluster/plan.go BuildKubeletProcess, cluster/defaults.go), and after the switch it is the node's " +
			"name: every node listed gets a new label value.",
		cloudConfig: "RKE writes the file /etc/kubernetes/cloud-config on every node from cloud_provider.awsCloudProvider " +
			"of cluster.yml and passes it with --cloud-config (rancher/rke cloudprovider/aws, cluster/plan.go).",
		readCloudConfig: script(KindNode, atControlPlane, "The in-tree provider's config", "sudo cat /etc/kubernetes/cloud-config"),
		routeFlags:      *inspect("kube-controller-manager", "--allocate-node-cidrs -e --configure-cloud-routes -e --cluster-cidr"),
		routes: "RKE's kube-controller flags come with its Kubernetes version (kontainer-driver-metadata): read them " +
			"on a control-plane node.",
		ecrBinDir: "/etc/kubernetes/image-credential-provider/bin",
		ecrSnippets: []Snippet{
			{File: ecrConfigPath, Language: "yaml", Content: b.ecrConfig(),
				Note: "On every node, with the binary at " +
					"/etc/kubernetes/image-credential-provider/bin/ecr-credential-provider: the kubelet container mounts " +
					"the host's /etc/kubernetes (rancher/rke cluster/plan.go)"},
			{File: "cluster.yml", Language: "yaml", Content: ecrSnippet, Note: "Merge into cluster.yml; keep the other kubelet extra_args"},
		},
		ecrApply:   []Command{rkeUp},
		snapshot:   snapshot,
		restore:    restore,
		kcm:        kcm,
		switchStep: switchStep,
		verify: []Check{{
			Description: "No component with the in-tree provider, on every node",
			Command:     inspect("kube-apiserver kube-controller-manager kubelet", "--cloud-provider="),
			Expect:      "--cloud-provider=external everywhere (the kubelet also on workers).",
		}},
		cleanup: rkeCleanup,
		upgrade: "Set kubernetes_version in cluster.yml and run rke up, one minor at a time, with an rke release that " +
			"runs it.",
		upgradeNotes: rkeUpgradeNotes(r.minor),
	}
}

// rkeUpgradeNotes name the rke release line of each minor up to the last.
func rkeUpgradeNotes(minor int) []string {
	var lines string
	for m := minor + 1; m <= releases.RKELastMinor; m++ {
		if lines != "" {
			lines += ", "
		}
		lines += fmt.Sprintf("1.%d: rke %s", m, releases.RKELines[m])
	}
	return []string{
		"The rke CLI runs only the Kubernetes versions it lists (rke config --list-version --all): " + lines + " (rancher/rke release notes, \"RKE " +
			"Kubernetes versions\").",
		"RKE1 is at end of life: rke v1.8 is the last release line and stops at 1." + strconv.Itoa(releases.RKELastMinor) + ". Plan the move to RKE2 (whose cluster " +
			"keeps the AWS CCM: install it there with --distro=rke2 --mode=install).",
	}
}

// rkeClusterConfig is RKE1's cluster.yml.
func rkeClusterConfig(b *builder) ([]Snippet, []string) {
	r := b.r
	return []Snippet{{File: "cluster.yml", Language: "yaml", Content: rkeConfig(),
			Note: "rke " + releases.RKELines[r.minor] + " runs Kubernetes 1." + strconv.Itoa(r.minor) + "; external-aws exists from rke v1.4.15 " +
				"and v1.5.0"}},
		[]string{"external-aws gives kube-apiserver, kube-controller-manager and the kubelets " +
			"--cloud-provider=external, and useInstanceMetadataHostname names each node after its instance's " +
			"private DNS name (rancher/rke cluster/plan.go, v1.4.15 to v1.6.3).",
			"RKE1 reached end of life on 2025-07-31; rke v1.8 runs 1.30 to 1." + strconv.Itoa(releases.RKELastMinor) + " and is its last release line: plan the " +
				"move to RKE2."}

}

const rkeConfigExpect = "The cloud_provider of the snippet above"

func rkeConfigCheck(*builder) Command {
	return script(KindCluster, atRKE, "The cloud provider of cluster.yml", `grep -A2 '^cloud_provider:' cluster.yml`)

}

// rkeRestart applies cluster.yml.
func rkeRestart(*builder) Command {
	return run(KindCluster, atRKE, "Apply cluster.yml", "rke", "up")
}

// rkeConfig is the part of RKE1's cluster.yml the plans set.
func rkeConfig() string {
	type cloudProvider struct {
		Name                        string `yaml:"name"`
		UseInstanceMetadataHostname bool   `yaml:"useInstanceMetadataHostname"`
	}
	return yamlCompact(struct {
		CloudProvider cloudProvider `yaml:"cloud_provider"`
	}{cloudProvider{Name: "external-aws", UseInstanceMetadataHostname: true}})
}
