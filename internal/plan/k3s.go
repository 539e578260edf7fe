package plan

import (
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// k3sHoldServices keeps the CCM's service controller off while ServiceLB
// still answers the Services of type LoadBalancer.
const k3sHoldServices = "--set-arg=controllers=*,-service"

func k3sPlan(b *builder) distroPlan {
	r := b.r
	restart := script(KindNode, atEveryNode, b.text("k3sPlan.script"),
		"sudo systemctl restart k3s 2>/dev/null || sudo systemctl restart k3s-agent")
	restartServers := script(KindNode, atControlPlane, b.text("k3sPlan.script.2"), "sudo systemctl restart k3s")
	nodeArgsExternal := kubeletNotExternal("k3s", "K3s", b.text("k3sPlan.kubeletNotExternal"))

	imds := script(KindNode, atEveryNode, b.text("k3sPlan.script.3"), `
TOKEN=$(curl -s -X PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 300')
for p in local-hostname instance-id placement/availability-zone; do
  printf '%s: %s\n' "$p" "$(curl -s -H "X-aws-ec2-metadata-token: $TOKEN" "http://169.254.169.254/latest/meta-data/$p")"
done`)
	imds.Main = true
	identity := Step{
		ID:    "node-identity",
		Title: b.text("k3sPlan.Title"),
		Why:   b.text("k3sPlan.Why"),
		Notes: []string{
			b.text("k3sPlan.Notes"),
			b.text("k3sPlan.Notes.2"),
			b.text("k3sPlan.Notes.3"),
		},
		Snippets: []Snippet{{
			File: "/etc/rancher/k3s/config.yaml", Language: "yaml",
			Content: yamlOf(rke2Config{NodeName: "ip-10-0-1-10.us-west-2.compute.internal"},
				headComment("node-name", "either: the node's name is its EC2 private DNS name (instance metadata local-hostname)")) +
				yamlComments(0, "or: the kubelet gives the provider ID itself (availability zone and instance ID from instance metadata)",
					"kubelet-arg:", "  - provider-id=aws:///us-west-2a/i-0123456789abcdef0"),
			Note: b.text("k3sPlan.Note"),
		}},
		Commands: []Command{imds},
		Checks: []Check{{
			Description: b.text("k3sPlan.Description"),
			Expect:      b.text("k3sPlan.Expect"),
		}},
		Rollback: readOnly(),
	}

	lbInventory := Step{
		ID:       "load-balancers",
		Title:    b.text("k3sPlan.Title.2"),
		Why:      b.text("k3sPlan.Why.2"),
		Commands: []Command{mainCmd(*b.lbServices())},
		Checks: []Check{{
			Description: b.text("k3sPlan.Description.2"),
			Expect:      b.text("k3sPlan.Expect.2"),
		}},
		Rollback: readOnly(),
	}

	external := []string{"cloud-provider=external"}
	servers := rke2Config{DisableCloudController: true, KubeletArg: external}
	disable := Step{
		ID:    "disable-k3s-ccm",
		Title: b.text("k3sPlan.Title.3"),
		Why:   b.text("k3sPlan.Why.3"),
		Notes: []string{
			b.text("k3sPlan.Notes.4"),
			b.text("k3sPlan.Notes.5"),
			b.text("k3sPlan.Notes.6"),
		},
		Snippets: []Snippet{
			{File: "/etc/rancher/k3s/config.yaml (servers)", Language: "yaml", Content: yamlOf(servers)},
			{File: "/etc/rancher/k3s/config.yaml (agents)", Language: "yaml", Content: yamlOf(rke2Config{KubeletArg: external})},
			{File: "spec.rkeConfig of the provisioning cluster (K3s provisioned by Rancher)", Language: "yaml", Content: rancherYAMLAfter(
				"every entry that sets kubelet-arg, for example:", servers,
				[]selectorEntry{selectorFor("rke.cattle.io/rke-machine-pool-name", "big", rke2Args{KubeletArg: []string{"max-pods=200", "cloud-provider=external"}})},
				lineComment("spec.rkeConfig.machineSelectorConfig.0.config.kubelet-arg.0", 16, "its items, unchanged"),
				lineComment("spec.rkeConfig.machineSelectorConfig.0.config.kubelet-arg.1", 5, "added")), Note: b.text("k3sPlan.Note.2")},
		},
		Commands: []Command{
			selectorEntries(b.text("k3sPlan.selectorEntries")),
			mainCmd(restart),
		},
		Checks: []Check{nodeArgsExternal},
		Rollback: Rollback{
			Description: b.text("k3sPlan.Description.3"),
			Commands:    []Command{restart},
		},
	}

	hold := render{mode: renderer.ModeInstall, extraArgs: []string{k3sHoldServices}}
	install := Step{
		ID:       "install-ccm",
		Title:    b.text("k3sPlan.Title.4"),
		Why:      b.text("k3sPlan.Why.7"),
		Commands: []Command{b.diff(hold), b.ccmUpgrade(b.text("k3sPlan.ccmUpgrade"), hold)},
		Checks: []Check{{
			Description: b.text("k3sPlan.Description.4"),
			Command:     b.checkRelease(),
			Expect:      b.text("k3sPlan.Expect.3"),
		}},
		Rollback: Rollback{
			Description: b.text("k3sPlan.Description.5"),
			Commands:    []Command{b.uninstall()},
		},
	}

	reregister := Step{
		ID:    "reregister-nodes",
		Title: b.text("k3sPlan.Title.5"),
		Why:   b.text("k3sPlan.Why.4"),
		Notes: []string{
			b.text("k3sPlan.Notes.7"),
			b.text("k3sPlan.Notes.8"),
		},
		Commands: []Command{drainDelete(), script(KindNode, atEveryNode, "On that agent", "sudo systemctl restart k3s-agent")},
		Checks: []Check{
			providerIDCheck(),
			{
				Description: b.text("k3sPlan.Description.6"),
				Command:     b.checkRelease(),
				Expect:      b.text("k3sPlan.Expect.4"),
			},
		},
		Rollback: Rollback{Description: b.text("k3sPlan.Description.7")},
	}

	elbs := render{mode: renderer.ModeInstall, reset: true}
	lbSwitch := Step{
		ID:    "load-balancers",
		Title: b.text("k3sPlan.Title.6"),
		Why:   b.text("k3sPlan.Why.5"),
		Notes: []string{
			b.text("k3sPlan.Notes.9"),
		},
		Snippets: []Snippet{{File: "/etc/rancher/k3s/config.yaml (servers)", Language: "yaml", Content: yamlOf(rke2Config{Disable: []string{"servicelb"}}), Note: b.text("k3sPlan.Note.3")}},
		Commands: []Command{
			restartServers,
			b.diff(elbs),
			b.ccmUpgrade(b.text("k3sPlan.ccmUpgrade.2"), elbs),
			run(KindKubectl, atWorkstation, b.text("k3sPlan.run"), "kubectl", "delete", "daemonsets", "--all-namespaces", "-l", b.r.profile.Node.ServiceLB.NameLabel),
		},
		Checks: []Check{{
			Description: "Load balancers",
			Command:     b.lbServices(),
			Expect:      b.text("k3sPlan.Expect.5"),
		}},
		Rollback: Rollback{
			Description: b.text("k3sPlan.Description.8"),
		},
	}

	verify := Step{
		ID:    "verify",
		Title: b.text("k3sPlan.Title.7"),
		Why:   b.text("k3sPlan.Why.6"),
		Checks: []Check{
			{Description: b.text("k3sPlan.Description.9"), Command: mainCheck(b.checkRelease()), Expect: b.text("k3sPlan.Expect.6")},
			{Description: "ServiceLB is gone", Command: ptr(run(KindKubectl, atWorkstation, "", "kubectl", "get", "daemonsets", "--all-namespaces", "-l", b.r.profile.Node.ServiceLB.NameLabel)), Expect: "No resources found."},
		},
		Rollback: Rollback{Description: b.text("k3sPlan.Description.10")},
	}

	snapshot := func(name string) Command {
		return script(KindNode, atControlPlane, b.text("k3sPlan.script.4"), "sudo k3s etcd-snapshot save --name "+name)
	}
	restore := b.text("k3sPlan.restore")

	before := []Step{
		b.preflight(b.text("k3sPlan.preflight"),
			b.text("k3sPlan.preflight.2")),
		b.hostnameLabel(b.text("k3sPlan.hostnameLabel")),
		identity,
		b.iam("", true),
		b.clusterTags(b.text("k3sPlan.clusterTags")),
	}
	if r.CloudConfig {
		before = append(before, b.cloudConfig(b.text("k3sPlan.cloudConfig"), nil))
	}
	before = append(before,
		lbInventory,
		b.ebsCSI(b.text("k3sPlan.ebsCSI")),
		b.ecr(b.text("k3sPlan.ecr"),
			"/var/lib/rancher/credentialprovider/bin",
			[]Snippet{{
				File: "/var/lib/rancher/credentialprovider/config.yaml", Language: "yaml", Content: b.ecrConfig(),
				Note: b.text("k3sPlan.Note.4"),
			}}, []Command{restart}),
		b.etcdSnapshot("the switch", snapshot("pre-switch"), restore),
	)
	return distroPlan{
		title:         b.text("k3sPlan.title"),
		strategy:      Switch,
		summary:       b.text("k3sPlan.summary"),
		beforeSummary: b.text("k3sPlan.beforeSummary"),
		duringSummary: b.text("k3sPlan.duringSummary"),
		afterSummary:  b.text("k3sPlan.afterSummary"),
		before:        before,
		during:        []Step{disable, install, reregister, lbSwitch, verify},
		after: []Step{
			b.upgrade(b.text("k3sPlan.upgrade"), nil),
		},
	}
}
