package plan

import (
	"fmt"
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
	editCluster := script(KindCluster, atRancher, b.text("rke2.editCluster"),
		`kubectl -n fleet-default edit clusters.provisioning.cattle.io "$CLUSTER_NAME"`)
	kcmArgs := func(want string) *Command {
		c := script(KindKubectl, atWorkstation, "", fmt.Sprintf(`
kubectl -n kube-system get pods -l component=kube-controller-manager -o yaml | grep -c -- '%s'`, want))
		return &c
	}
	cloudProviderName := Check{
		Description: b.text("rke2.cloudProviderName.description"),
		Command: ptr(script(KindCluster, atRancher, "", `
kubectl -n fleet-default get clusters.provisioning.cattle.io "$CLUSTER_NAME" \
  -o jsonpath='{.spec.rkeConfig.machineGlobalConfig.cloud-provider-name}{"\n"}'`)),
		Expect: b.text("rke2.cloudProviderName.expect"),
	}
	kubeletExternal := kubeletNotExternal("rke2", "RKE2", b.text("rke2.kubeletExternal.kubeletNotExternal"))

	kcmItems := []string{"enable-leader-migration=true"}
	var kcmSnippetsExtra []Snippet
	var kcmNotes []string
	var mount []string
	if b.customLease() {
		kcmItems = append(kcmItems, "leader-migration-config="+kcmConfigPath)
		mount = []string{kcmConfigPath + ":" + kcmConfigPath + ":ro"}
		kcmSnippetsExtra = append(kcmSnippetsExtra, Snippet{File: kcmConfigPath, Language: "yaml", Content: b.kcmLMConfig(),
			Note: b.text("rke2.kcmSnippetsExtra.note")})
		kcmNotes = append(kcmNotes, b.kcmConfigNote())
	}
	kcmNotes = append(kcmNotes,
		b.text("rke2.kcmNotes"),
		b.text("rke2.kcmNotes.2"),
	)
	kcm := Step{
		Why:   b.text("rke2.kcm.why"),
		Notes: kcmNotes,
		Snippets: append([]Snippet{{
			File: "spec.rkeConfig of the provisioning cluster", Language: "yaml",
			Content: rancherYAML(rke2Config{CloudProviderName: "aws"},
				[]selectorEntry{roleEntry("control-plane", rke2Args{KubeControllerManagerArg: kcmItems, KubeControllerManagerExtraMount: mount})},
				lineComment("spec.rkeConfig.machineGlobalConfig.cloud-provider-name", 10, "unchanged: the in-tree provider stays for now")),
			Note: b.text("rke2.kcm.snippet.note"),
		}}, kcmSnippetsExtra...),
		Commands: []Command{mainCmd(editCluster)},
		Checks: []Check{{
			Description: b.text("rke2.kcm.check.description"),
			Command:     kcmArgs("--enable-leader-migration=true"),
			Expect:      b.text("rke2.kcm.check.expect"),
		}},
		Rollback: Rollback{
			Description: b.text("rke2.kcm.rollback.description"),
			Commands:    []Command{editCluster},
		},
	}

	switchStep := Step{
		ID:    "switch",
		Title: b.text("rke2.switch.title"),
		Why:   b.text("rke2.switch.why"),
		Notes: b.texts("rke2.switch.notes"),
		Snippets: []Snippet{{
			File: "spec.rkeConfig of the provisioning cluster", Language: "yaml",
			Content: rancherYAML(rke2Config{CloudProviderName: "aws", DisableCloudController: true}, rke2Entries(true),
				lineComment("spec.rkeConfig.machineGlobalConfig.cloud-provider-name", 10, "keep: RKE2 names the nodes from instance metadata with it")) +
				yamlComments(6, "then each entry of yours that sets kubelet-arg, kube-apiserver-arg or kube-controller-manager-arg,",
					"with cloud-provider=external added to each of those lists"),
			Note: b.text("rke2.switch.snippet.note"),
		}},
		Commands: []Command{selectorEntries(b.text("rke2.switch.command.selectorEntries")), mainCmd(editCluster)},
		Checks: []Check{
			cloudProviderName,
			{Description: b.text("rke2.switch.check.description"), Command: b.checkRelease(), Expect: b.handoverExpect()},
			kubeletExternal,
		},
		Rollback: Rollback{
			Description: b.text("rke2.switch.rollback.description"),
			Commands:    []Command{editCluster},
		},
	}

	var cleanupCmds []Command
	if b.customLease() {
		cleanupCmds = append(cleanupCmds, script(KindNode, atControlPlane, b.text("rke2.cleanupCmds"), "sudo rm "+kcmConfigPath))
	}
	snapshot := script(KindCluster, atRancher, b.text("rke2.snapshot"), `
gen=$(kubectl -n fleet-default get clusters.provisioning.cattle.io "$CLUSTER_NAME" -o jsonpath='{.spec.rkeConfig.etcdSnapshotCreate.generation}')
kubectl -n fleet-default patch clusters.provisioning.cattle.io "$CLUSTER_NAME" --type merge \
  -p "{\"spec\":{\"rkeConfig\":{\"etcdSnapshotCreate\":{\"generation\":$((gen + 1))}}}}"`)
	restore := b.text("rke2.restore")

	nameFrom := map[string]any{"rke2MetadataNameFrom": strings.Join(rke2MetadataNameFrom, ", ")}
	rke2Notes := []string{
		b.textWith("rke2.rke2Notes", nameFrom),
		b.textWith("rke2.rke2Notes.names", nameFrom),
		b.textWith("rke2.rke2Notes.kdm", map[string]any{"filter": releases.KDMFilterSource, "floors": namingKeyKDM()}),
		b.text("rke2.rke2Notes.2"),
	}
	return leaderParts{
		title:         b.text("rke2.title"),
		summary:       b.text("rke2.summary"),
		duringSummary: b.text("rke2.duringSummary"),
		afterSummary:  b.text("rke2.afterSummary"),
		hostnameWhy:   b.textWith("rke2.hostnameWhy", map[string]any{"rke2MetadataNameFrom": strings.Join(rke2MetadataNameFrom, ", ")}),
		hostnameNotes: []string{b.text("rke2.hostnameNotes")},
		cloudConfig:   b.text("rke2.cloudConfig"),
		readCloudConfig: script(KindNode, atControlPlane, b.text("rke2.readCloudConfig"), `
f=$(grep -o -e '--cloud-config=[^" ]*' /var/lib/rancher/rke2/agent/pod-manifests/kube-controller-manager.yaml | head -n 1 | cut -d= -f2)
[ -n "$f" ] && sudo cat "$f"`),
		routeFlags: mirrorPodRouteFlags(),
		routes:     b.text("rke2.routes"),
		ecrBinDir:  "/var/lib/rancher/credentialprovider/bin",
		ecrSnippets: []Snippet{{
			File: "/var/lib/rancher/credentialprovider/config.yaml", Language: "yaml", Content: b.ecrConfig(),
			Note: b.text("rke2.ecrSnippets.note"),
		}},
		ecrApply: []Command{script(KindNode, atEveryNode, b.text("rke2.ecrApply"),
			"sudo systemctl restart rke2-server 2>/dev/null || sudo systemctl restart rke2-agent")},
		snapshot:   func(string) Command { return snapshot },
		restore:    restore,
		kcm:        kcm,
		switchStep: switchStep,
		verify: []Check{
			{Description: b.text("rke2.verify.description"), Command: kcmArgs("--enable-leader-migration"), Expect: "0"},
			kubeletExternal,
			cloudProviderName,
		},
		cleanup:         cleanupCmds,
		upgrade:         b.text("rke2.upgrade"),
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
		Note: prose("rke2.note", textData{Args: map[string]any{"rke2MetadataNameFrom": strings.Join(rke2MetadataNameFrom, ", ")}}),
	}, {
		File: releases.NodeNameDropIn, Language: "yaml",
		Content: mustYAML(struct {
			NodeName             string `yaml:"node-name"`
			CloudProviderName    string `yaml:"cloud-provider-name"`
			NodeNameFromMetadata bool   `yaml:"node-name-from-cloud-provider-metadata"`
		}{"<NAME>", "external", false}),
		Note: prose("rke2.dropIn.note", textData{Args: map[string]any{"rke2MetadataNameFrom": strings.Join(rke2MetadataNameFrom, ", "),
			"dropInOrder": releases.DropInOrder}}),
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
		ID:       "reregister-nodes",
		Title:    b.text("today.reregister-nodes.title"),
		Why:      b.text("today.reregister-nodes.why"),
		Notes:    b.texts("today.reregister-nodes.notes"),
		Commands: []Command{drainDelete(), script(KindNode, atThatAgent, "Register it again", "sudo systemctl restart rke2-agent")},
		Checks:   []Check{providerIDCheck(), b.nodesInitialised()},
		Rollback: Rollback{Description: b.text("today.reregister-nodes.rollback.description")},
	}
	install := b.installSwitch(b.text("today.rke2BuiltinPlan.install.installSwitch"), b.holdServices())
	return switchPlan(b, switchParts{
		title:         b.text("today.rke2BuiltinPlan.title"),
		summary:       b.text("today.rke2BuiltinPlan.summary"),
		beforeSummary: b.text("today.rke2BuiltinPlan.beforeSummary"),
		duringSummary: b.text("today.rke2BuiltinPlan.duringSummary"),
		expectNodes:   b.text("today.rke2BuiltinPlan.expectNodes"),
		expectCheck:   b.text("today.rke2BuiltinPlan.expectCheck"),
		tags:          b.text("today.rke2BuiltinPlan.tags"),
		lbs:           b.text("today.rke2BuiltinPlan.lbs"),
		kubelets:      b.text("today.rke2BuiltinPlan.kubelets"),
		install:       install,
		nodes:         reregister,
		upgrade:       b.text("today.rke2BuiltinPlan.upgrade"),
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
		{File: "/etc/rancher/rke2/config.yaml (servers)", Language: "yaml", Content: mustYAML(rke2ServerConfig(r.minor, true))},
		{File: "/etc/rancher/rke2/config.yaml (agents)", Language: "yaml", Content: mustYAML(rke2ServerConfig(r.minor, false))},
		{File: "spec of the provisioning cluster (RKE2 provisioned by Rancher)", Language: "yaml", Content: mustYAML(rc),
			Note: b.text("config.rke2ClusterConfig.note")},
	}, rke2ConfigNotes(r.minor)
}

func rke2ConfigCheck(*builder) Command {
	return script(KindNode, atEveryNode, prose("today.rke2ConfigCheck", nil),
		`sudo cat /etc/rancher/rke2/config.yaml /etc/rancher/rke2/config.yaml.d/*.yaml 2>/dev/null | grep -E '^(cloud-provider-|disable-cloud-controller|node-name|node-external-ip|kube-apiserver-arg)'`)
}

// rke2Restart restarts RKE2 with its configuration.
func rke2Restart(*builder) Command {
	return script(KindNode, atEveryNode, prose("today.rke2Restart", nil),
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
		notes = append(notes, prose("config.rke2ConfigNotes.notes", nil))
	case first != "":
		notes = append(notes, prose("config.rke2ConfigNotes.notes.2", textData{Args: map[string]any{"first": first, "noOpSource": rke2NoOpAWS.Source}}))
	default:
		notes = append(notes, prose("config.rke2ConfigNotes.notes.3", nil))
	}
	if all || first != "" {
		notes = append(notes,
			prose("config.rke2ConfigNotes.nodeName", textData{Args: map[string]any{"source": rke2NodeName.Source, "releases": rke2NodeName.ReleasesOf()}}),
			prose("config.rke2ConfigNotes.kdm", textData{Args: map[string]any{"filter": releases.KDMFilterSource, "floors": namingKeyKDM()}}))
	}
	notes = append(notes,
		prose("config.rke2ConfigNotes.notes.4", textData{Args: map[string]any{"disableCCMNote": disableCCMNote(minor)}}),
		prose("config.rke2ConfigNotes.notes.5", textData{Args: map[string]any{"apiServerCPSource": apiServerCP.Source}}),
		prose("config.rke2ConfigNotes.notes.6", textData{Args: map[string]any{"nodeExternalIPSource": mustChange("rke2", "node-external-ip").Source}}),
		prose("config.rke2ConfigNotes.notes.7", textData{Args: map[string]any{"noOpReleases": rke2NoOpAWS.ReleasesOf()}}),
	)
	return notes
}
