package plan

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// The cluster's own configuration for the external cloud provider, per
// distribution and Kubernetes minor, as structs marshalled to YAML: the
// options follow internal/releases' record of what each release removed or
// changed.

// rke2Config is the part of RKE2's (and K3s's) config.yaml the plans set.
type rke2Config struct {
	CloudProviderName      string   `yaml:"cloud-provider-name,omitempty"`
	DisableCloudController bool     `yaml:"disable-cloud-controller,omitempty"`
	NodeNameFromMetadata   bool     `yaml:"node-name-from-cloud-provider-metadata,omitempty"`
	Disable                []string `yaml:"disable,omitempty"`
	KubeletArg             []string `yaml:"kubelet-arg,omitempty"`
	NodeName               string   `yaml:"node-name,omitempty"`
}

// rancherCluster is the part of a provisioning cluster the plans set.
type rancherCluster struct {
	Spec struct {
		KubernetesVersion string `yaml:"kubernetesVersion,omitempty"`
		RKEConfig         struct {
			MachineGlobalConfig rke2Config `yaml:"machineGlobalConfig"`
		} `yaml:"rkeConfig"`
	} `yaml:"spec"`
}

// kubeadmArg is an extraArgs item of kubeadm.k8s.io/v1beta4.
type kubeadmArg struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// mustYAML marshals v with kyaml (sequences level with their keys), as the
// new-cluster snippets print; yamlOf (yaml.go) indents them, as the
// migration steps' snippets print. The plans' structs always marshal.
func mustYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// kubeadmAPI is the kubeadm configuration API of a minor: v1beta4 is the
// default from 1.31 (experimental before), v1beta3 is refused from 1.37.
func kubeadmAPI(minor int) string {
	if minor >= 31 {
		return "kubeadm.k8s.io/v1beta4"
	}
	return "kubeadm.k8s.io/v1beta3"
}

// kubeadmArgs writes extraArgs in the shape of the API: a list of name and
// value from v1beta4, a map before.
func kubeadmArgs(minor int, kv ...string) any {
	if minor >= 31 {
		var l []kubeadmArg
		for i := 0; i+1 < len(kv); i += 2 {
			l = append(l, kubeadmArg{kv[i], kv[i+1]})
		}
		return l
	}
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// kubeadmConfig is the kubeadm configuration file of a new cluster: the
// kubelets and the controller manager on the external provider, nothing
// for the API server (it has no --cloud-provider from 1.33).
func kubeadmConfig(minor int, kubeVersion string, joinOnly bool) string {
	api := kubeadmAPI(minor)
	kubelet := kubeadmArgs(minor, "cloud-provider", "external")
	type nodeReg struct {
		Name             string `yaml:"name"`
		KubeletExtraArgs any    `yaml:"kubeletExtraArgs"`
	}
	type component struct {
		ExtraArgs any `yaml:"extraArgs"`
	}
	type doc struct {
		APIVersion        string     `yaml:"apiVersion"`
		Kind              string     `yaml:"kind"`
		KubernetesVersion string     `yaml:"kubernetesVersion,omitempty"`
		NodeRegistration  *nodeReg   `yaml:"nodeRegistration,omitempty"`
		ControllerManager *component `yaml:"controllerManager,omitempty"`
	}
	init := doc{APIVersion: api, Kind: "InitConfiguration",
		NodeRegistration: &nodeReg{Name: "ip-10-0-1-10.us-west-2.compute.internal", KubeletExtraArgs: kubelet}}
	cluster := doc{APIVersion: api, Kind: "ClusterConfiguration", KubernetesVersion: kubeVersion,
		ControllerManager: &component{ExtraArgs: kubeadmArgs(minor, "cloud-provider", "external")}}
	join := doc{APIVersion: api, Kind: "JoinConfiguration",
		NodeRegistration: &nodeReg{Name: "ip-10-0-1-11.us-west-2.compute.internal", KubeletExtraArgs: kubelet}}
	if joinOnly {
		return mustYAML(join)
	}
	return mustYAML(init) + "---\n" + mustYAML(cluster)
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

// disableCCMNote says why RKE2 needs disable-cloud-controller at a minor.
func disableCCMNote(minor int) string {
	c := mustChange("rke2", "disable-cloud-controller")
	if minor >= c.Minor {
		return c.Says + " (" + c.Source + ")."
	}
	return prose("config.disableCCMNote", textData{Args: map[string]any{"cReleasesOf": c.ReleasesOf(), "cSource": c.Source}})
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
		prose("config.k3sConfigNotes", nil),
		prose("config.k3sConfigNotes.2", nil),
		prose("config.k3sConfigNotes.3", nil),
	}
}

// rkeConfig is the part of RKE1's cluster.yml the plans set.
func rkeConfig() string {
	return mustYAML(map[string]any{"cloud_provider": map[string]any{"name": "external-aws", "useInstanceMetadataHostname": true}})
}

// clusterConfig is the configuration of a cluster on the external
// provider, for the plan's distribution and minor: snippets and notes.
func (b *builder) clusterConfig() ([]Snippet, []string) { return parts[b.r.Distro].config(b) }

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

// k3sClusterConfig is K3s's config.yaml.
func k3sClusterConfig(*builder) ([]Snippet, []string) {
	return []Snippet{
		{File: "/etc/rancher/k3s/config.yaml (servers)", Language: "yaml", Content: mustYAML(k3sConfig(true))},
		{File: "/etc/rancher/k3s/config.yaml (agents)", Language: "yaml", Content: mustYAML(k3sConfig(false))},
	}, k3sConfigNotes()
}

// kubeadmClusterConfig is kubeadm's configuration files.
func kubeadmClusterConfig(b *builder) ([]Snippet, []string) {
	r := b.r
	api := kubeadmAPI(r.minor)
	notes := []string{
		b.textWith("config.kubeadmClusterConfig.notes", map[string]any{"api": api, "v1beta3Source": mustChange("kubeadm", "kubeadm.k8s.io/v1beta3").Source}),
		b.text("config.kubeadmClusterConfig.notes.2"),
		b.text("config.kubeadmClusterConfig.notes.3"),
		b.text("config.kubeadmClusterConfig.notes.4"),
	}
	return []Snippet{
		{File: "kubeadm-config.yaml (kubeadm init --config kubeadm-config.yaml)", Language: "yaml",
			Content: kubeadmConfig(r.minor, fmt.Sprintf("v1.%d.0", r.minor), false)},
		{File: "kubeadm-join.yaml (kubeadm join --config kubeadm-join.yaml, one per node)", Language: "yaml",
			Content: kubeadmConfig(r.minor, "", true),
			Note:    b.text("config.kubeadmClusterConfig.note")},
	}, notes
}

// rkeClusterConfig is RKE1's cluster.yml.
func rkeClusterConfig(b *builder) ([]Snippet, []string) {
	r := b.r
	return []Snippet{{File: "cluster.yml", Language: "yaml", Content: rkeConfig(),
			Note: b.textWith("config.rkeClusterConfig.note", map[string]any{"rKELinesMinor": releases.RKELines[r.minor]})}},
		[]string{b.text("config.rkeClusterConfig"),
			b.text("config.rkeClusterConfig.2")}

}
