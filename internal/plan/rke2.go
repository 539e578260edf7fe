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
