package plan

import (
	"fmt"
	"slices"
	"strconv"
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
	editConfig := run(KindCluster, atWorkstation, "Merge the snippet into data.ClusterConfiguration", "kubectl", "-n", "kube-system", "edit", "configmap", "kubeadm-config")
	// regenerate writes static pod manifests from the ClusterConfiguration
	// of the ConfigMap. With a ClusterConfiguration alone kubeadm defaults
	// an InitConfiguration and detects localAPIEndpoint.advertiseAddress
	// again (the default route's interface), so for the API server the
	// file also holds an InitConfiguration with this node's endpoint, read
	// from the flags kubeadm wrote from it into the current manifest.
	regenerate := func(components ...string) Command {
		s := "sudo kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system get configmap kubeadm-config \\\n  -o jsonpath='{.data.ClusterConfiguration}' > cluster-configuration.yaml\n"
		cfg, desc := "cluster-configuration.yaml", "Write the static pod manifests from the new ClusterConfiguration; the kubelet restarts the pods"
		if slices.Contains(components, "apiserver") {
			s += apiServerEndpoint
			cfg = "kubeadm-config.yaml"
			desc = "Write the static pod manifests from the new ClusterConfiguration and this node's API endpoint (an " +
				"InitConfiguration with the --advertise-address and --secure-port of its current manifest, kept in " +
				"kube-apiserver.yaml.before outside the manifest directory); the kubelet restarts the pods"
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
		Why: "kubeadm keeps the control plane's flags in the ClusterConfiguration of the ConfigMap kubeadm-config " +
			"and writes them into the static pod manifests of /etc/kubernetes/manifests. The controller manager " +
			"gets its own LeaderMigrationConfiguration, naming the controllers of a 1." + strconv.Itoa(b.r.minor) + " controller manager as its built-in " +
			"configuration does, under the Lease " + b.r.LeaderName + "; kubeadm mounts only /etc/kubernetes/pki and its " +
			"kubeconfig from /etc/kubernetes into it (cmd/kubeadm/app/phases/controlplane/volumes.go), so the " +
			"file needs an extraVolume.",
		Notes: []string{
			"The ClusterConfiguration of kubeadm 1.22 to 1.30 is kubeadm.k8s.io/v1beta3, where extraArgs is a " +
				"map.",
			"Editing the ConfigMap changes nothing on the nodes by itself; it keeps kubeadm upgrade from undoing " +
				"the change. kubeadm init phase control-plane writes the manifest (\"Reconfiguring a kubeadm cluster\" " +
				"in the Kubernetes documentation).",
		},
		Snippets: []Snippet{
			{File: kcmConfigPath, Language: "yaml", Content: b.kcmLMConfig(), Note: "On every control-plane node"},
			{File: "ClusterConfiguration (ConfigMap kube-system/kubeadm-config)", Language: "yaml", Content: yamlOf(kubeadmClusterConfiguration{
				APIVersion: "kubeadm.k8s.io/v1beta3", Kind: "ClusterConfiguration",
				ControllerManager: &kubeadmComponent{
					ExtraArgs:    map[string]string{"cloud-provider": "aws", "enable-leader-migration": "true", "leader-migration-config": kcmConfigPath},
					ExtraVolumes: &[]kubeadmVolume{{Name: "kcm-leader-migration", HostPath: kcmConfigPath, MountPath: kcmConfigPath, ReadOnly: true, PathType: "File"}},
				},
			}, lineComment("controllerManager.extraArgs.cloud-provider", 15, "unchanged, as is cloud-config if you have one")), Note: "Merge into the existing controllerManager section; keep its other extraArgs and extraVolumes"},
		},
		Commands: []Command{
			script(KindNode, atControlPlane, "Put the file in place", "sudo install -m 0644 kcm-leader-migration.yaml "+kcmConfigPath),
			mainCmd(editConfig),
			regenerate("controller-manager"),
		},
		Checks: []Check{{
			Description: "The controller managers' flags",
			Command:     kcmArgs("--enable-leader-migration=true"),
			Expect:      "The number of control-plane nodes (their static pods' mirror pods show the flags).",
		}},
		Rollback: Rollback{
			Description: "Remove the two extraArgs and the extraVolume from the ClusterConfiguration and write the manifest " +
				"again on each control-plane node. Only while the CCM is not installed.",
			Commands: []Command{editConfig, regenerate("controller-manager")},
		},
	}

	switchStep := Step{
		ID:    "switch",
		Title: "Switch the control plane and every kubelet to the external provider",
		Why: "A controller manager with --cloud-provider=external runs no cloud controllers, so the CCM, waiting " +
			"for the lease, takes them over; the kubelets stop using the in-tree provider. Under the in-tree " +
			"provider a kubelet took its node's name from the provider (cmd/kubelet/app/server.go getNodeName, " +
			"v1.26.15); with external it uses --hostname-override or the host's name, which must be that same " +
			"name, or the kubelet registers a new Node. The manifests: kubeadm init phase control-plane given a " +
			"ClusterConfiguration alone defaults an InitConfiguration and sets its " +
			"localAPIEndpoint.advertiseAddress to the address of the default route's interface " +
			"(cmd/kubeadm/app/util/config/initconfiguration.go documentMapToInitConfiguration, " +
			"SetInitDynamicDefaults, SetAPIEndpointDynamicDefaults; k8s.io/apimachinery pkg/util/net " +
			"ChooseHostInterface; v1.26.5), and writes the API server's --advertise-address, --secure-port, " +
			"probes and kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint annotation from it " +
			"(cmd/kubeadm/app/phases/controlplane/manifests.go getAPIServerCommand, GetStaticPodSpecs): on a " +
			"node with several interfaces, or whose address was given to kubeadm init or join, the regenerated " +
			"API server would advertise another address, and kubeadm upgrade reads the endpoint back from that " +
			"annotation (cmd/kubeadm/app/util/config/cluster.go getAPIEndpointFromPodAnnotation). So the API " +
			"server's manifest is written from an InitConfiguration with this node's localAPIEndpoint, taken " +
			"from its current manifest, rather than edited by hand: kubeadm writes it as kubeadm upgrade will, " +
			"from the ConfigMap and the endpoint. The kubelet: kubeadm's systemd drop-in 10-kubeadm.conf starts " +
			"it with $KUBELET_KUBEADM_ARGS from /var/lib/kubelet/kubeadm-flags.env and then $KUBELET_EXTRA_ARGS " +
			"from /etc/sysconfig/kubelet, which the Debian package makes /etc/default/kubelet " +
			"(kubernetes/release cmd/kubepkg/templates/latest/deb/kubeadm/10-kubeadm.conf and " +
			"rpm/kubeadm/10-kubeadm.conf at v0.15.1; cmd/krel/templates/latest/kubeadm/10-kubeadm.conf and " +
			"kubeadm.spec from v0.16.0), and a flag given twice takes its last value (the kubelet parses its " +
			"flags with spf13/pflag v1.0.5, stringValue.Set): a --cloud-provider=aws in KUBELET_EXTRA_ARGS " +
			"outlives an edit of kubeadm-flags.env alone, so every file is edited and the check reads the " +
			"running kubelet's own command line.",
		Notes: []string{
			"Control-plane nodes first, one at a time: manifests, then the kubelet; then the workers. Controller " +
				"managers not yet switched keep the in-tree provider and leader migration: the lease holder, one of " +
				"them or the CCM, runs the cloud controllers, nobody else.",
			"Before restarting a kubelet, compare `hostname` with the node's NAME in nodes-before.txt: if they " +
				"differ, add --hostname-override=<NAME> to KUBELET_KUBEADM_ARGS (kubeadm writes it there itself for " +
				"a node that joined under another name).",
			"The kubelet's command: the lines systemctl cat kubelet prints are drop-ins of yours that set the " +
				"flags themselves (Environment=): edit them too before the restart.",
			"If the manifests were written with --patches (kubeadm init, join or upgrade), give kubeadm init " +
				"phase control-plane the same --patches directory.",
			"For nodes that join later, set nodeRegistration.kubeletExtraArgs.cloud-provider: external in the " +
				"JoinConfiguration you use.",
			"Keep kubernetesVersion as it is: switch first, check, then upgrade (after.upgrade).",
		},
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
				lineComment("controllerManager.extraVolumes", 20, "the kcm-leader-migration volume removed")), Note: "Remove exactly these keys and the volume; keep everything else"},
			{File: "/var/lib/kubelet/kubeadm-flags.env", Language: "sh", Content: `KUBELET_KUBEADM_ARGS="... --cloud-provider=external ..."   # was --cloud-provider=aws; --cloud-config removed
`, Note: "On every node"},
			{File: "/etc/default/kubelet (Debian, Ubuntu) or /etc/sysconfig/kubelet (RHEL family)", Language: "sh", Content: `KUBELET_EXTRA_ARGS="... --cloud-provider=external ..."    # where it had --cloud-provider=aws; --cloud-config removed
`, Note: "On every node where the file sets either flag: the kubelet takes the last --cloud-provider, and " +
				"this one comes after kubeadm-flags.env"},
		},
		Commands: []Command{
			mainCmd(editConfig),
			regenerate("apiserver", "controller-manager"),
			script(KindNode, atEveryNode, "The kubelet: its flags in every file they come from, your own drop-ins listed, then the restart", `
for f in `+kubeletEnvFiles+`; do
  [ ! -f "$f" ] || sudo sed -i -e 's/--cloud-provider=aws/--cloud-provider=external/g' -e 's/ --cloud-config=[^ "]*//g' -e 's/--cloud-config=[^ "]* *//g' "$f"
done
systemctl cat kubelet | grep -n -e '--cloud-provider' -e '--cloud-config'
sudo systemctl restart kubelet`),
		},
		Checks: []Check{
			{
				Description: "The API server's manifest, on each control-plane node, against the copy made before",
				Command:     ptr(script(KindNode, atControlPlane, "", `sudo diff kube-apiserver.yaml.before /etc/kubernetes/manifests/kube-apiserver.yaml`)),
				Expect: "Only the --cloud-provider and --cloud-config lines gone (and a volume of the cloud config you " +
					"removed from the ClusterConfiguration). Any other difference, --advertise-address above all: put " +
					"the copy back (sudo cp kube-apiserver.yaml.before /etc/kubernetes/manifests/kube-apiserver.yaml) " +
					"and find out why before going on.",
			},
			{Description: "While the control plane is switched, after each control-plane node", Command: b.checkRelease(), Expect: b.handoverExpect()},
			{Description: "The controller managers' flags", Command: kcmArgs("--cloud-provider=external"), Expect: "The number of control-plane nodes."},
			{Description: "The running kubelet's flags, on every node", Command: &kubeletFlags, Expect: "--cloud-provider=external (if several --cloud-provider lines, the last is external: the kubelet " +
				"takes the last), no --cloud-config, and --hostname-override=<NAME> where the host's name is not the " +
				"NAME."},
		},
		Rollback: Rollback{
			Description: "Restore the ClusterConfiguration of before.kcm-leader-migration, write the manifests again, and set " +
				"--cloud-provider=aws (and --cloud-config) again in the files you changed (kubeadm-flags.env, and " +
				"/etc/default/kubelet or /etc/sysconfig/kubelet where they had it), then restart the kubelet. The " +
				"CCM, still in migrate mode, keeps the lease until the controller managers take it back. To go back " +
				"all the way, uninstall the CCM afterwards (the rollback of before.install-ccm).",
			Commands: []Command{editConfig, regenerate("apiserver", "controller-manager")},
		},
	}

	ecrFlags := "--image-credential-provider-config=/etc/kubernetes/image-credential-provider/config.yaml --image-credential-provider-bin-dir=/etc/kubernetes/image-credential-provider/bin"
	if g := b.ecrFeatureGate(); g != "" {
		ecrFlags += " --feature-gates=" + g
	}
	snapshot := func(name string) Command {
		return script(KindKubectl, atWorkstation, "A snapshot from the etcd member of one control-plane node (NODE: its name), with the etcdctl of "+
			"kubeadm's etcd pod, into the host's /var/lib/etcd", fmt.Sprintf(`
kubectl -n kube-system exec "etcd-$NODE" -- etcdctl --endpoints=https://127.0.0.1:2379 \
  --cacert=/etc/kubernetes/pki/etcd/ca.crt --cert=/etc/kubernetes/pki/etcd/server.crt \
  --key=/etc/kubernetes/pki/etcd/server.key snapshot save /var/lib/etcd/%s.db`, name))
	}
	restore := "A restore is etcdutl snapshot restore on every etcd member (\"Operating etcd clusters for " +
		"Kubernetes\" in the Kubernetes documentation); with an external etcd, snapshot it as you run it."

	return leaderParts{
		title: "kubeadm (ClusterConfiguration in kube-system/kubeadm-config)",
		summary: "Leader migration of a kubeadm cluster at Kubernetes " + b.r.KubeVersion + " from the in-tree aws provider to the " +
			"AWS CCM. The in-tree kube-controller-manager and the CCM share the Lease " + b.r.LeaderName + ", so exactly one of them runs the cloud " +
			"controllers at any time; the control plane and the kubelets then switch to " +
			"--cloud-provider=external, and the CCM drops leader migration.",
		duringSummary: "The static pods and the kubelets move to --cloud-provider=external, node by node; the lease passes " +
			"to the CCM.",
		afterSummary: "The CCM alone: leader migration off, the migration's grants and files removed, then the upgrade " +
			"past 1.26.",
		hostnameWhy: "on kubeadm the label is the host's name, or the --hostname-override kubeadm wrote into " +
			"kubeadm-flags.env, and after the switch the kubelet must use the node's name (during.switch): every " +
			"node listed gets a new label value.",
		cloudConfig: "kubeadm passes it as cloud-config in apiServer.extraArgs and controllerManager.extraArgs of the " +
			"ClusterConfiguration, and to the kubelets in /var/lib/kubelet/kubeadm-flags.env.",
		readCloudConfig: script(KindNode, atControlPlane, "The in-tree provider's config", `
f=$(sudo kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system get configmap kubeadm-config \
  -o jsonpath='{.data.ClusterConfiguration}' | sed -n 's/^ *cloud-config: *//p' | head -n 1)
[ -n "$f" ] && sudo cat "$f"`),
		routeFlags: mirrorPodRouteFlags(),
		routes: "kubeadm gives the controller manager --allocate-node-cidrs=true and --cluster-cidr when " +
			"networking.podSubnet is set, and no --configure-cloud-routes " +
			"(cmd/kubeadm/app/phases/controlplane/manifests.go, v1.26.15): the route controller then runs unless " +
			"extraArgs turn it off.",
		ecrBinDir: "/etc/kubernetes/image-credential-provider/bin",
		ecrSnippets: []Snippet{
			{File: "/etc/kubernetes/image-credential-provider/config.yaml", Language: "yaml", Content: b.ecrConfig(),
				Note: "On every node, with the binary at " +
					"/etc/kubernetes/image-credential-provider/bin/ecr-credential-provider"},
			{File: "/var/lib/kubelet/kubeadm-flags.env", Language: "sh", Content: `KUBELET_KUBEADM_ARGS="... ` + ecrFlags + `"
`, Note: "Add the flags on every node; for nodes that join later, put them into " +
				"nodeRegistration.kubeletExtraArgs"},
		},
		ecrApply:   []Command{kubeadmRestart(b)},
		snapshot:   snapshot,
		restore:    restore,
		kcm:        kcm,
		switchStep: switchStep,
		verify: []Check{{
			Description: "No controller manager with the in-tree provider",
			Command:     kcmArgs("--cloud-provider=aws"),
			Expect:      "0",
		}},
		cleanup: []Command{script(KindNode, atControlPlane, "The controller manager's leader migration config (no manifest mounts it any more)", "sudo rm "+kcmConfigPath)},
		upgrade: "kubeadm upgrade apply, one minor at a time, then the kubelets.",
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
		"kubeadm 1." + strconv.Itoa(r.minor) + " takes " + api + ": v1beta4 is the default from 1.31, where extraArgs " +
			"became a list of name and value, and 1.37 refuses v1beta3 (" + mustChange("kubeadm", "kubeadm.k8s.io/v1beta3").Source + ").",
		"nodeRegistration.name is each node's name: its instance's private DNS name (or its instance ID, " +
			"resource-based names), which the CCM looks up; kubeadm's default, the hostname, is that name when " +
			"EC2 set the hostname. One JoinConfiguration per node, with its own name.",
		"The kubelet's cloud-provider=external makes each node register with the uninitialized taint, which " +
			"the CCM removes once it has set the node's provider ID, addresses and zone. The controller " +
			"manager's is harmless from 1.31, where it runs no cloud controllers whatever the flag says.",
		"Nothing for the API server: it has no --cloud-provider from 1.33 and exits on it (" + apiServerCP.Source + ").",
	}
	return []Snippet{
		{File: "kubeadm-config.yaml (kubeadm init --config kubeadm-config.yaml)", Language: "yaml",
			Content: kubeadmConfig(r.minor, fmt.Sprintf("v1.%d.0", r.minor), false)},
		{File: "kubeadm-join.yaml (kubeadm join --config kubeadm-join.yaml, one per node)", Language: "yaml",
			Content: kubeadmConfig(r.minor, "", true),
			Note: "With the discovery section kubeadm join needs (kubeadm token create --print-join-command prints its " +
				"values)"},
	}, notes
}

const kubeadmConfigExpect = "No error; kubeadm-config.yaml and every node's kubeadm-join.yaml hold the snippets above"

func kubeadmConfigCheck(*builder) Command {
	return run(KindCluster, atControlPlane, "kubeadm checks the file against its API", "kubeadm", "config", "validate", "--config", "kubeadm-config.yaml")
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
		Note: "On every node: add the flag to the flags kubeadm wrote (keep the others); the ConfigMap " +
			"kube-system/kubeadm-config and the JoinConfiguration of new nodes get it as in the configuration of " +
			"a new cluster below"},
		{File: "kubeadm-join.yaml (new nodes)", Language: "yaml", Content: kubeadmConfig(b.r.minor, "", true),
			Note: "With the discovery section kubeadm join needs (kubeadm token create --print-join-command prints its " +
				"values)"}}
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
		return yamlCompact(join)
	}
	return yamlCompact(init) + "---\n" + yamlCompact(cluster)
}
