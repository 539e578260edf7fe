package plan

import (
	"fmt"

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
	return b.text("rke.kcmConfigNote")
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
			Note: b.text("rke.kcmSnippets.note")})
		kcmNotes = append(kcmNotes, b.kcmConfigNote())
	}
	kcmSnippets = append([]Snippet{{File: "cluster.yml", Language: "yaml", Content: yamlOf(rkeClusterYML{CloudProvider: &rkeCloudProvider{Name: "aws"}, Services: rkeServices("kube-controller", kcmArgs)},
		lineComment("cloud_provider.name", 12, "unchanged, awsCloudProvider included")),
		Note: b.text("rke.kcmSnippets.note.2")}}, kcmSnippets...)
	kcmNotes = append(kcmNotes, b.text("rke.kcmNotes"))
	kcm := Step{
		Why:      b.text("rke.kcm.why"),
		Notes:    kcmNotes,
		Snippets: kcmSnippets,
		Commands: []Command{mainCmd(rkeUp)},
		Checks: []Check{{
			Description: b.text("rke.kcm.check.description"),
			Command:     inspect("kube-controller-manager", "--cloud-provider= -e --enable-leader-migration"),
			Expect:      "kube-controller-manager: --cloud-provider=aws --enable-leader-migration=true",
		}},
		Rollback: Rollback{
			Description: b.text("rke.kcm.rollback.description"),
			Commands:    []Command{rkeUp},
		},
	}

	imds := script(KindNode, atEveryNode, b.text("rke.imds"), `
TOKEN=$(curl -s -X PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 60')
curl -s -H "X-aws-ec2-metadata-token: $TOKEN" http://169.254.169.254/latest/meta-data/hostname; echo`)
	imds.Main = true
	nodeNames := Step{
		ID:    "node-names",
		Title: b.text("rke.node-names.title"),
		Why:   b.text("rke.node-names.why"),
		Notes: []string{
			b.text("rke.node-names.notes"),
		},
		Commands: []Command{imds},
		Checks: []Check{{
			Description: b.text("rke.node-names.check.description"),
			Expect:      b.text("rke.node-names.check.expect"),
		}},
		Rollback: readOnly(),
	}

	switchStep := Step{
		ID:    "switch",
		Title: b.text("rke.switch.title"),
		Why:   b.text("rke.switch.why"),
		Notes: b.texts("rke.switch.notes"),
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
			Note: b.text("rke.switch.snippet.note"),
		}},
		Commands: []Command{mainCmd(rkeUp)},
		Checks: []Check{
			{Description: b.text("rke.switch.check.description"), Command: b.checkRelease(), Expect: b.handoverExpect()},
			{
				Description: b.text("rke.switch.check.description.2"),
				Command:     inspect("kube-apiserver kube-controller-manager kubelet", "--cloud-provider= -e --hostname-override= -e --enable-leader-migration"),
				Expect:      b.text("rke.switch.check.expect"),
			},
		},
		Rollback: Rollback{
			Description: b.text("rke.switch.rollback.description"),
			Commands:    []Command{rkeUp},
		},
	}

	ecrConfigPath := "/etc/kubernetes/image-credential-provider/config.yaml"
	ecrSnippet := yamlOf(rkeClusterYML{Services: rkeServices("kubelet", ecrKubeletArgs{
		Config: ecrConfigPath, BinDir: "/etc/kubernetes/image-credential-provider/bin", FeatureGates: b.ecrFeatureGate(),
	})})

	var rkeCleanup []Command
	if b.customLease() {
		rkeCleanup = append(rkeCleanup, script(KindNode, atControlPlane, b.text("rke.rkeCleanup"), "sudo rm "+kcmConfigPath))
	}
	snapshot := func(name string) Command {
		return run(KindCluster, atRKE, b.text("rke.snapshot"), "rke", "etcd", "snapshot-save", "--config", "cluster.yml", "--name", name)
	}
	restore := b.text("rke.restore")

	return leaderParts{
		title:             "RKE1 (cluster.yml)",
		summary:           b.text("rke.summary"),
		duringSummary:     b.text("rke.duringSummary"),
		afterSummary:      b.text("rke.afterSummary"),
		preflightCommands: []Command{run(KindCluster, atRKE, b.text("rke.preflightCommands"), "rke", "--version")},
		preflightChecks: []Check{{
			Description: "The RKE CLI",
			Expect:      b.text("rke.preflightChecks.expect"),
		}},
		own:             []Step{nodeNames},
		hostnameWhy:     b.text("rke.hostnameWhy"),
		cloudConfig:     b.text("rke.cloudConfig"),
		readCloudConfig: script(KindNode, atControlPlane, b.text("rke.readCloudConfig"), "sudo cat /etc/kubernetes/cloud-config"),
		routeFlags:      *inspect("kube-controller-manager", "--allocate-node-cidrs -e --configure-cloud-routes -e --cluster-cidr"),
		routes:          b.text("rke.routes"),
		ecrBinDir:       "/etc/kubernetes/image-credential-provider/bin",
		ecrSnippets: []Snippet{
			{File: ecrConfigPath, Language: "yaml", Content: b.ecrConfig(),
				Note: b.text("rke.ecrSnippets.note")},
			{File: "cluster.yml", Language: "yaml", Content: ecrSnippet, Note: b.text("rke.ecrSnippets.note.2")},
		},
		ecrApply:   []Command{rkeUp},
		snapshot:   snapshot,
		restore:    restore,
		kcm:        kcm,
		switchStep: switchStep,
		verify: []Check{{
			Description: b.text("rke.verify.description"),
			Command:     inspect("kube-apiserver kube-controller-manager kubelet", "--cloud-provider="),
			Expect:      b.text("rke.verify.expect"),
		}},
		cleanup:      rkeCleanup,
		upgrade:      b.text("rke.upgrade"),
		upgradeNotes: rkeUpgradeNotes(r.minor),
	}
}

// rkeUpgradeNotes name the rke release line of each minor up to the last.
func rkeUpgradeNotes(minor int) []string {
	var lines string
	for m := minor + 1; m <= rkeLastMinor; m++ {
		if lines != "" {
			lines += ", "
		}
		lines += fmt.Sprintf("1.%d: rke %s", m, rkeLineFor[m])
	}
	return []string{
		prose("rke.rkeUpgradeNotes", textData{Args: map[string]any{"lines": lines}}),
		prose("rke.rkeUpgradeNotes.2", textData{Args: map[string]any{"rkeLastMinor": rkeLastMinor}}),
	}
}

// rkeClusterConfig is RKE1's cluster.yml.
func rkeClusterConfig(b *builder) ([]Snippet, []string) {
	r := b.r
	return []Snippet{{File: "cluster.yml", Language: "yaml", Content: rkeConfig(),
			Note: b.textWith("config.rkeClusterConfig.note", map[string]any{"rKELinesMinor": releases.RKELines[r.minor]})}},
		[]string{b.text("config.rkeClusterConfig"),
			b.text("config.rkeClusterConfig.2")}

}

func rkeConfigCheck(*builder) Command {
	return script(KindCluster, atRKE, prose("today.rkeConfigCheck", nil), `grep -A2 '^cloud_provider:' cluster.yml`)

}

// rkeRestart applies cluster.yml.
func rkeRestart(*builder) Command {
	return run(KindCluster, atRKE, "Apply cluster.yml", "rke", "up")
}

// rkeConfig is the part of RKE1's cluster.yml the plans set.
func rkeConfig() string {
	return mustYAML(map[string]any{"cloud_provider": map[string]any{"name": "external-aws", "useInstanceMetadataHostname": true}})
}
