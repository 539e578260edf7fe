package plan

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

// disableCCMNote says why RKE2 needs disable-cloud-controller at a minor.
func disableCCMNote(minor int) string {
	c := mustChange("rke2", "disable-cloud-controller")
	if minor >= c.Minor {
		return c.Says + " (" + c.Source + ")."
	}
	return "RKE2 of this minor turns its own cloud controller off by itself when cloud-provider-name is set, " +
		"and " + c.ReleasesOf() + " no longer does (" + c.Source + "): set it now, so that the upgrade keeps it off."
}

// clusterConfig is the configuration of a cluster on the external
// provider, for the plan's distribution and minor: snippets and notes.
func (b *builder) clusterConfig() ([]Snippet, []string) { return parts[b.r.Distro].config(b) }
