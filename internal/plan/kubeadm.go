package plan

import (
	"fmt"
	"slices"
)

// kubeadmClusterConfiguration is the part of a kubeadm.k8s.io/v1beta3
// ClusterConfiguration the leader migration changes.
type kubeadmClusterConfiguration struct {
	APIVersion        string            `yaml:"apiVersion"`
	Kind              string            `yaml:"kind"`
	APIServer         *kubeadmComponent `yaml:"apiServer,omitempty"`
	ControllerManager *kubeadmComponent `yaml:"controllerManager,omitempty"`
}

// kubeadmComponent is a control-plane component's flags and volumes;
// ExtraVolumes nil leaves them out.
type kubeadmComponent struct {
	ExtraArgs    map[string]string `yaml:"extraArgs"`
	ExtraVolumes *[]kubeadmVolume  `yaml:"extraVolumes,omitempty"`
}

type kubeadmVolume struct {
	Name      string `yaml:"name"`
	HostPath  string `yaml:"hostPath"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly"`
	PathType  string `yaml:"pathType"`
}

func kubeadmLeader(b *builder) leaderParts {
	editConfig := run(KindCluster, atWorkstation, b.text("kubeadm.editConfig"), "kubectl", "-n", "kube-system", "edit", "configmap", "kubeadm-config")
	// regenerate writes static pod manifests from the ClusterConfiguration
	// of the ConfigMap. With a ClusterConfiguration alone kubeadm defaults
	// an InitConfiguration and detects localAPIEndpoint.advertiseAddress
	// again (the default route's interface), so for the API server the
	// file also holds an InitConfiguration with this node's endpoint, read
	// from the flags kubeadm wrote from it into the current manifest.
	regenerate := func(components ...string) Command {
		s := "sudo kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system get configmap kubeadm-config \\\n  -o jsonpath='{.data.ClusterConfiguration}' > cluster-configuration.yaml\n"
		cfg, desc := "cluster-configuration.yaml", b.text("kubeadm.cfg")
		if slices.Contains(components, "apiserver") {
			s += apiServerEndpoint
			cfg = "kubeadm-config.yaml"
			desc = b.text("kubeadm.desc")
		}
		for _, c := range components {
			s += "sudo kubeadm init phase control-plane " + c + " --config " + cfg + "\n"
		}
		return script(KindNode, atControlPlane, desc, s)
	}
	kcmArgs := func(want string) *Command {
		c := script(KindKubectl, atWorkstation, "", fmt.Sprintf(`
kubectl -n kube-system get pods -l component=kube-controller-manager -o yaml | grep -c -- '%s'`, want))
		return &c
	}
	// kubeletFlags reads the running kubelet's command line, whatever
	// file each flag came from.
	kubeletFlags := script(KindNode, atEveryNode, "", `
tr '\0' '\n' < "/proc/$(pidof kubelet)/cmdline" | grep -e '^--cloud-' -e '^--hostname-override'`)

	kcm := Step{
		Why:   b.text("kubeadm.kcm.why"),
		Notes: b.texts("kubeadm.kcm.notes"),
		Snippets: []Snippet{
			{File: kcmConfigPath, Language: "yaml", Content: b.kcmLMConfig(), Note: b.text("kubeadm.kcm.snippet.note")},
			{File: "ClusterConfiguration (ConfigMap kube-system/kubeadm-config)", Language: "yaml", Content: yamlOf(kubeadmClusterConfiguration{
				APIVersion: "kubeadm.k8s.io/v1beta3", Kind: "ClusterConfiguration",
				ControllerManager: &kubeadmComponent{
					ExtraArgs:    map[string]string{"cloud-provider": "aws", "enable-leader-migration": "true", "leader-migration-config": kcmConfigPath},
					ExtraVolumes: &[]kubeadmVolume{{Name: "kcm-leader-migration", HostPath: kcmConfigPath, MountPath: kcmConfigPath, ReadOnly: true, PathType: "File"}},
				},
			}, lineComment("controllerManager.extraArgs.cloud-provider", 15, "unchanged, as is cloud-config if you have one")), Note: b.text("kubeadm.kcm.snippet.note.2")},
		},
		Commands: []Command{
			script(KindNode, atControlPlane, b.text("kubeadm.kcm.command"), "sudo install -m 0644 kcm-leader-migration.yaml "+kcmConfigPath),
			mainCmd(editConfig),
			regenerate("controller-manager"),
		},
		Checks: []Check{{
			Description: b.text("kubeadm.kcm.check.description"),
			Command:     kcmArgs("--enable-leader-migration=true"),
			Expect:      b.text("kubeadm.kcm.check.expect"),
		}},
		Rollback: Rollback{
			Description: b.text("kubeadm.kcm.rollback.description"),
			Commands:    []Command{editConfig, regenerate("controller-manager")},
		},
	}

	switchStep := Step{
		ID:    "switch",
		Title: b.text("kubeadm.switch.title"),
		Why:   b.text("kubeadm.switch.why"),
		Notes: b.texts("kubeadm.switch.notes"),
		Snippets: []Snippet{
			{File: "ClusterConfiguration (ConfigMap kube-system/kubeadm-config)", Language: "yaml", Content: yamlOf(kubeadmClusterConfiguration{
				APIVersion: "kubeadm.k8s.io/v1beta3", Kind: "ClusterConfiguration",
				APIServer: &kubeadmComponent{ExtraArgs: map[string]string{}},
				ControllerManager: &kubeadmComponent{
					ExtraArgs:    map[string]string{"cloud-provider": "external"},
					ExtraVolumes: &[]kubeadmVolume{},
				},
			},
				lineComment("apiServer.extraArgs", 23, "cloud-provider and cloud-config removed"),
				lineComment("controllerManager.extraArgs.cloud-provider", 10, "enable-leader-migration, leader-migration-config and cloud-config removed"),
				lineComment("controllerManager.extraVolumes", 20, "the kcm-leader-migration volume removed")), Note: b.text("kubeadm.switch.snippet.note")},
			{File: "/var/lib/kubelet/kubeadm-flags.env", Language: "sh", Content: `KUBELET_KUBEADM_ARGS="... --cloud-provider=external ..."   # was --cloud-provider=aws; --cloud-config removed
`, Note: "On every node"},
			{File: "/etc/default/kubelet (Debian, Ubuntu) or /etc/sysconfig/kubelet (RHEL family)", Language: "sh", Content: `KUBELET_EXTRA_ARGS="... --cloud-provider=external ..."    # where it had --cloud-provider=aws; --cloud-config removed
`, Note: b.text("kubeadm.switch.snippet.note.2")},
		},
		Commands: []Command{
			mainCmd(editConfig),
			regenerate("apiserver", "controller-manager"),
			script(KindNode, atEveryNode, b.text("kubeadm.switch.command"), `
for f in `+kubeletEnvFiles+`; do
  [ ! -f "$f" ] || sudo sed -i -e 's/--cloud-provider=aws/--cloud-provider=external/g' -e 's/ --cloud-config=[^ "]*//g' -e 's/--cloud-config=[^ "]* *//g' "$f"
done
systemctl cat kubelet | grep -n -e '--cloud-provider' -e '--cloud-config'
sudo systemctl restart kubelet`),
		},
		Checks: []Check{
			{
				Description: b.text("kubeadm.switch.check.description"),
				Command:     ptr(script(KindNode, atControlPlane, "", `sudo diff kube-apiserver.yaml.before /etc/kubernetes/manifests/kube-apiserver.yaml`)),
				Expect:      b.text("kubeadm.switch.check.expect"),
			},
			{Description: b.text("kubeadm.switch.check.description.2"), Command: b.checkRelease(), Expect: b.handoverExpect()},
			{Description: b.text("kubeadm.switch.check.description.3"), Command: kcmArgs("--cloud-provider=external"), Expect: b.text("kubeadm.switch.check.expect.2")},
			{Description: b.text("kubeadm.switch.check.description.4"), Command: &kubeletFlags, Expect: b.text("kubeadm.switch.check.expect.3")},
		},
		Rollback: Rollback{
			Description: b.text("kubeadm.switch.rollback.description"),
			Commands:    []Command{editConfig, regenerate("apiserver", "controller-manager")},
		},
	}

	ecrFlags := "--image-credential-provider-config=/etc/kubernetes/image-credential-provider/config.yaml --image-credential-provider-bin-dir=/etc/kubernetes/image-credential-provider/bin"
	if g := b.ecrFeatureGate(); g != "" {
		ecrFlags += " --feature-gates=" + g
	}
	snapshot := func(name string) Command {
		return script(KindKubectl, atWorkstation, b.text("kubeadm.snapshot"), fmt.Sprintf(`
kubectl -n kube-system exec "etcd-$NODE" -- etcdctl --endpoints=https://127.0.0.1:2379 \
  --cacert=/etc/kubernetes/pki/etcd/ca.crt --cert=/etc/kubernetes/pki/etcd/server.crt \
  --key=/etc/kubernetes/pki/etcd/server.key snapshot save /var/lib/etcd/%s.db`, name))
	}
	restore := b.text("kubeadm.restore")

	return leaderParts{
		title:         b.text("kubeadm.title"),
		summary:       b.text("kubeadm.summary"),
		duringSummary: b.text("kubeadm.duringSummary"),
		afterSummary:  b.text("kubeadm.afterSummary"),
		hostnameWhy:   b.text("kubeadm.hostnameWhy"),
		cloudConfig:   b.text("kubeadm.cloudConfig"),
		readCloudConfig: script(KindNode, atControlPlane, b.text("kubeadm.readCloudConfig"), `
f=$(sudo kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system get configmap kubeadm-config \
  -o jsonpath='{.data.ClusterConfiguration}' | sed -n 's/^ *cloud-config: *//p' | head -n 1)
[ -n "$f" ] && sudo cat "$f"`),
		routeFlags: mirrorPodRouteFlags(),
		routes:     b.text("kubeadm.routes"),
		ecrBinDir:  "/etc/kubernetes/image-credential-provider/bin",
		ecrSnippets: []Snippet{
			{File: "/etc/kubernetes/image-credential-provider/config.yaml", Language: "yaml", Content: b.ecrConfig(),
				Note: b.text("kubeadm.ecrSnippets.note")},
			{File: "/var/lib/kubelet/kubeadm-flags.env", Language: "sh", Content: `KUBELET_KUBEADM_ARGS="... ` + ecrFlags + `"
`, Note: b.text("kubeadm.ecrSnippets.note.2")},
		},
		ecrApply:   []Command{kubeadmRestart(b)},
		snapshot:   snapshot,
		restore:    restore,
		kcm:        kcm,
		switchStep: switchStep,
		verify: []Check{{
			Description: b.text("kubeadm.verify.description"),
			Command:     kcmArgs("--cloud-provider=aws"),
			Expect:      "0",
		}},
		cleanup: []Command{script(KindNode, atControlPlane, b.text("kubeadm.cleanup"), "sudo rm "+kcmConfigPath)},
		upgrade: b.text("kubeadm.upgrade"),
	}
}

// apiServerEndpoint writes kubeadm-config.yaml: an InitConfiguration with
// this node's localAPIEndpoint, taken from the --advertise-address and
// --secure-port kubeadm wrote into the current manifest (getAPIServerCommand),
// then the ClusterConfiguration. It keeps the manifest as it was, to compare.
const apiServerEndpoint = `m=/etc/kubernetes/manifests/kube-apiserver.yaml
sudo cp "$m" kube-apiserver.yaml.before
addr=$(sudo sed -n 's/^ *- --advertise-address=//p' "$m")
port=$(sudo sed -n 's/^ *- --secure-port=//p' "$m")
rm -f kubeadm-config.yaml
[ -n "$addr" ] && [ -n "$port" ] && {
  printf 'apiVersion: %s\nkind: InitConfiguration\nlocalAPIEndpoint:\n  advertiseAddress: "%s"\n  bindPort: %s\n---\n' \
    "$(sed -n 's/^apiVersion: *//p' cluster-configuration.yaml)" "$addr" "$port"
  cat cluster-configuration.yaml
} > kubeadm-config.yaml
`

// kubeletEnvFiles are the files the kubelet's flags come from on a kubeadm
// node: kubeadm's own, then KUBELET_EXTRA_ARGS of the drop-in 10-kubeadm.conf
// (/etc/default/kubelet in the Debian packages, /etc/sysconfig/kubelet in
// the RPMs; kubernetes/release).
const kubeletEnvFiles = "/var/lib/kubelet/kubeadm-flags.env /etc/default/kubelet /etc/sysconfig/kubelet"

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

func kubeadmConfigCheck(*builder) Command {
	return run(KindCluster, atControlPlane, prose("today.kubeadmConfigCheck", nil), "kubeadm", "config", "validate", "--config", "kubeadm-config.yaml")
}

// kubeadmRestart restarts the kubelets with their flags.
func kubeadmRestart(*builder) Command {
	return script(KindNode, atEveryNode, "Restart the kubelet", "sudo systemctl restart kubelet")
}

// kubeadmKubeletSnippets add the flag to the flags kubeadm wrote, and to
// the configuration of new nodes.
func kubeadmKubeletSnippets(b *builder) []Snippet {
	return []Snippet{{File: "/var/lib/kubelet/kubeadm-flags.env", Language: "sh",
		Content: "KUBELET_KUBEADM_ARGS=\"... --cloud-provider=external\"\n",
		Note:    b.text("today.kubeadmKubelets.snippets.note")},
		{File: "kubeadm-join.yaml (new nodes)", Language: "yaml", Content: kubeadmConfig(b.r.minor, "", true),
			Note: b.text("today.kubeadmKubelets.snippets.note.2")}}
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
