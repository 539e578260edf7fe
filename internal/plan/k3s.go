package plan

import (
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// k3sHoldServices keeps the CCM's service controller off while ServiceLB
// still answers the Services of type LoadBalancer.
const k3sHoldServices = "--set-arg=controllers=*,-service"

func k3sPlan(b *builder) distroPlan {
	r := b.r
	restart := k3sRestart(b)
	restartServers := script(KindNode, atControlPlane, b.text("k3s.restartServers"), "sudo systemctl restart k3s")
	nodeArgsExternal := kubeletNotExternal("k3s", "K3s", b.text("k3s.nodeArgsExternal.kubeletNotExternal"))

	imds := script(KindNode, atEveryNode, b.text("k3s.imds"), `
TOKEN=$(curl -s -X PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 300')
for p in local-hostname instance-id placement/availability-zone; do
  printf '%s: %s\n' "$p" "$(curl -s -H "X-aws-ec2-metadata-token: $TOKEN" "http://169.254.169.254/latest/meta-data/$p")"
done`)
	imds.Main = true
	identity := Step{
		ID:    "node-identity",
		Title: b.text("k3s.node-identity.title"),
		Why:   b.text("k3s.node-identity.why"),
		Notes: b.texts("k3s.node-identity.notes"),
		Snippets: []Snippet{{
			File: "/etc/rancher/k3s/config.yaml", Language: "yaml",
			Content: yamlOf(rke2Config{NodeName: "ip-10-0-1-10.us-west-2.compute.internal"},
				headComment("node-name", "either: the node's name is its EC2 private DNS name (instance metadata local-hostname)")) +
				yamlComments(0, "or: the kubelet gives the provider ID itself (availability zone and instance ID from instance metadata)",
					"kubelet-arg:", "  - provider-id=aws:///us-west-2a/i-0123456789abcdef0"),
			Note: b.text("k3s.node-identity.snippet.note"),
		}},
		Commands: []Command{imds},
		Checks: []Check{{
			Description: b.text("k3s.node-identity.check.description"),
			Expect:      b.text("k3s.node-identity.check.expect"),
		}},
		Rollback: readOnly(),
	}

	lbInventory := Step{
		ID:       "load-balancers",
		Title:    b.text("k3s.load-balancers.title"),
		Why:      b.text("k3s.load-balancers.why"),
		Commands: []Command{mainCmd(*b.lbServices())},
		Checks: []Check{{
			Description: b.text("k3s.load-balancers.check.description"),
			Expect:      b.text("k3s.load-balancers.check.expect"),
		}},
		Rollback: readOnly(),
	}

	external := []string{"cloud-provider=external"}
	servers := rke2Config{DisableCloudController: true, KubeletArg: external}
	disable := Step{
		ID:    "disable-k3s-ccm",
		Title: b.text("k3s.disable-k3s-ccm.title"),
		Why:   b.text("k3s.disable-k3s-ccm.why"),
		Notes: b.texts("k3s.disable-k3s-ccm.notes"),
		Snippets: []Snippet{
			{File: "/etc/rancher/k3s/config.yaml (servers)", Language: "yaml", Content: yamlOf(servers)},
			{File: "/etc/rancher/k3s/config.yaml (agents)", Language: "yaml", Content: yamlOf(rke2Config{KubeletArg: external})},
			{File: "spec.rkeConfig of the provisioning cluster (K3s provisioned by Rancher)", Language: "yaml", Content: rancherYAMLAfter(
				"every entry that sets kubelet-arg, for example:", servers,
				[]selectorEntry{selectorFor("rke.cattle.io/rke-machine-pool-name", "big", rke2Args{KubeletArg: []string{"max-pods=200", "cloud-provider=external"}})},
				lineComment("spec.rkeConfig.machineSelectorConfig.0.config.kubelet-arg.0", 16, "its items, unchanged"),
				lineComment("spec.rkeConfig.machineSelectorConfig.0.config.kubelet-arg.1", 5, "added")), Note: b.text("k3s.disable-k3s-ccm.snippet.note")},
		},
		Commands: []Command{
			selectorEntries(b.text("k3s.disable-k3s-ccm.command.selectorEntries")),
			mainCmd(restart),
		},
		Checks: []Check{nodeArgsExternal},
		Rollback: Rollback{
			Description: b.text("k3s.disable-k3s-ccm.rollback.description"),
			Commands:    []Command{restart},
		},
	}

	hold := render{mode: renderer.ModeInstall, extraArgs: []string{k3sHoldServices}}
	install := Step{
		ID:       "install-ccm",
		Title:    b.text("k3s.install-ccm.title"),
		Why:      b.text("k3s.install-ccm.why"),
		Commands: []Command{b.diff(hold), b.ccmUpgrade(b.text("k3s.install-ccm.command.ccmUpgrade"), hold)},
		Checks: []Check{{
			Description: b.text("k3s.install-ccm.check.description"),
			Command:     b.checkRelease(),
			Expect:      b.text("k3s.install-ccm.check.expect"),
		}},
		Rollback: Rollback{
			Description: b.text("k3s.install-ccm.rollback.description"),
			Commands:    []Command{b.uninstall()},
		},
	}

	reregister := Step{
		ID:       "reregister-nodes",
		Title:    b.text("k3s.reregister-nodes.title"),
		Why:      b.text("k3s.reregister-nodes.why"),
		Notes:    b.texts("k3s.reregister-nodes.notes"),
		Commands: []Command{drainDelete(), script(KindNode, atThatAgent, "Register it again", "sudo systemctl restart k3s-agent")},
		Checks: []Check{
			providerIDCheck(),
			{
				Description: b.text("k3s.reregister-nodes.check.description"),
				Command:     b.checkRelease(),
				Expect:      b.text("k3s.reregister-nodes.check.expect"),
			},
		},
		Rollback: Rollback{Description: b.text("k3s.reregister-nodes.rollback.description")},
	}

	elbs := render{mode: renderer.ModeInstall, reset: true}
	lbSwitch := Step{
		ID:    "load-balancers",
		Title: b.text("k3s.load-balancers.title.2"),
		Why:   b.text("k3s.load-balancers.why.2"),
		Notes: []string{
			b.text("k3s.load-balancers.notes"),
		},
		Snippets: []Snippet{{File: "/etc/rancher/k3s/config.yaml (servers)", Language: "yaml", Content: yamlOf(rke2Config{Disable: []string{"servicelb"}}), Note: b.text("k3s.load-balancers.snippet.note")}},
		Commands: []Command{
			restartServers,
			b.diff(elbs),
			b.ccmUpgrade(b.text("k3s.load-balancers.command.ccmUpgrade"), elbs),
			run(KindKubectl, atWorkstation, b.text("k3s.load-balancers.command"), "kubectl", "delete", "daemonsets", "--all-namespaces", "-l", b.r.profile.Node.ServiceLB.NameLabel),
		},
		Checks: []Check{{
			Description: "Load balancers",
			Command:     b.lbServices(),
			Expect:      b.text("k3s.load-balancers.check.expect.2"),
		}},
		Rollback: Rollback{
			Description: b.text("k3s.load-balancers.rollback.description"),
		},
	}

	verify := Step{
		ID:    "verify",
		Title: b.text("k3s.verify.title"),
		Why:   b.text("k3s.verify.why"),
		Checks: []Check{
			{Description: b.text("k3s.verify.check.description"), Command: mainCheck(b.checkRelease()), Expect: b.text("k3s.verify.check.expect")},
			{Description: "ServiceLB is gone", Command: ptr(run(KindKubectl, atWorkstation, "", "kubectl", "get", "daemonsets", "--all-namespaces", "-l", b.r.profile.Node.ServiceLB.NameLabel)), Expect: "No resources found."},
		},
		Rollback: Rollback{Description: b.text("k3s.verify.rollback.description")},
	}

	snapshot := func(name string) Command {
		return script(KindNode, atFirstServer, b.text("k3s.snapshot"), "sudo k3s etcd-snapshot save --name "+name)
	}
	restore := b.text("k3s.restore")

	before := []Step{
		b.preflight(b.text("k3s.before.preflight"),
			b.text("k3s.before.preflight.2")),
		b.hostnameLabel(b.text("k3s.before.hostnameLabel")),
		identity,
		b.iam("", true),
		b.clusterTags(b.text("k3s.before.clusterTags")),
	}
	if r.CloudConfig {
		before = append(before, b.cloudConfig(b.text("k3s.before.cloudConfig"), nil))
	}
	before = append(before,
		lbInventory,
		b.ebsCSI(b.text("k3s.before.ebsCSI")),
		b.ecr(b.text("k3s.before.ecr"),
			"/var/lib/rancher/credentialprovider/bin",
			[]Snippet{{
				File: "/var/lib/rancher/credentialprovider/config.yaml", Language: "yaml", Content: b.ecrConfig(),
				Note: b.text("k3s.before.note"),
			}}, []Command{restart}),
		b.etcdSnapshot("the switch", snapshot("pre-switch"), restore),
	)
	return distroPlan{
		title:         b.text("k3s.title"),
		strategy:      Switch,
		summary:       b.text("k3s.summary"),
		beforeSummary: b.text("k3s.beforeSummary"),
		duringSummary: b.text("k3s.duringSummary"),
		afterSummary:  b.text("k3s.afterSummary"),
		before:        before,
		during:        []Step{disable, install, reregister, lbSwitch, verify},
		after: []Step{
			b.upgrade(b.text("k3s.after.upgrade"), nil),
		},
	}
}

// k3sClusterConfig is K3s's config.yaml.
func k3sClusterConfig(*builder) ([]Snippet, []string) {
	return []Snippet{
		{File: "/etc/rancher/k3s/config.yaml (servers)", Language: "yaml", Content: mustYAML(k3sConfig(true))},
		{File: "/etc/rancher/k3s/config.yaml (agents)", Language: "yaml", Content: mustYAML(k3sConfig(false))},
	}, k3sConfigNotes()
}

func k3sConfigCheck(*builder) Command {
	return script(KindNode, atEveryNode, prose("today.k3sConfigCheck", nil),
		`sudo cat /etc/rancher/k3s/config.yaml /etc/rancher/k3s/config.yaml.d/*.yaml 2>/dev/null | grep -A3 -E '^(disable-cloud-controller|disable|kubelet-arg|node-name)'`)
}

// k3sRestart restarts K3s with its configuration.
func k3sRestart(*builder) Command {
	return script(KindNode, atEveryNode, prose("today.k3sRestart", nil),
		"sudo systemctl restart k3s 2>/dev/null || sudo systemctl restart k3s-agent")
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
