package plan_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// stepJSON is a step as the JSON form writes it, for looking into its text.
func stepJSON(t *testing.T, p *plan.Plan, id string) (plan.Step, string) {
	t.Helper()
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			if s.ID == id {
				b, err := json.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				return s, string(b)
			}
		}
	}
	return plan.Step{}, ""
}

func has(text string, want ...string) string {
	for _, w := range want {
		if !strings.Contains(text, w) {
			return fmt.Sprintf("lacks %q", w)
		}
	}
	return ""
}

func hasNot(text string, not ...string) string {
	for _, n := range not {
		if strings.Contains(text, n) {
			return fmt.Sprintf("says %q", n)
		}
	}
	return ""
}

// TestDefects: each defect of the review of issue 19, as the plan that
// had it, and what the plan says now (the source each fix rests on is in
// the step's why). Every row fails on the plan before the fixes.
func TestDefects(t *testing.T) {
	type check func(t *testing.T, p *plan.Plan) string
	step := func(id string, f func(s plan.Step, text string) string) check {
		return func(t *testing.T, p *plan.Plan) string {
			s, text := stepJSON(t, p, id)
			if text == "" {
				return "no step " + id
			}
			return f(s, text)
		}
	}
	// gates: the steps where the operator verifies run check.
	gates := func(ids ...string) check {
		return func(t *testing.T, p *plan.Plan) string {
			for _, id := range ids {
				_, text := stepJSON(t, p, id)
				if !strings.Contains(text, `"kind":"check"`) || !strings.Contains(text, "aws-ccm-renderer check") {
					return id + " does not run aws-ccm-renderer check"
				}
			}
			all, _ := json.Marshal(p)
			return hasNot(string(all), "custom-columns=LEASE", `{.spec.holderIdentity}`)
		}
	}
	leaderGates := gates("before.preflight", "before.kcm-leader-migration", "before.install-ccm", "during.switch", "during.verify", "after.ccm-install-mode", "after.upgrade")
	cases := []struct {
		name   string
		distro distros.Distro
		kube   string
		lease  string
		check  check
	}{
		{"RKE2: the kube-apiserver's cloud-provider override goes before 1.33 (kube-apiserver v1.33.0 has no --cloud-provider)", distros.RKE2, "", "",
			step("after.upgrade", func(s plan.Step, text string) string {
				if len(s.Snippets) == 0 || strings.Contains(s.Snippets[len(s.Snippets)-1].Content, "kube-apiserver-arg") {
					return "no configuration without kube-apiserver-arg cloud-provider=external"
				}
				return has(text, "1.33", "v1.29.11+rke2r1", "v1.30.7+rke2r1", "v1.31.3+rke2r1", "v1.32.0+rke2r1", "#130162")
			})},
		{"RKE1: useInstanceMetadataHostname names nodes after the metadata's hostname, not PrivateDnsName", distros.RKE, "", "",
			func(t *testing.T, p *plan.Plan) string {
				_, names := stepJSON(t, p, "before.node-names")
				_, sw := stepJSON(t, p, "during.switch")
				if m := has(names, "meta-data/hostname", "PrivateDnsName", "DHCP"); m != "" {
					return "before.node-names " + m
				}
				return has(sw, "hostname_override", "useInstanceMetadataHostname: true   # false where before.node-names found a difference")
			}},
	}
	for _, d := range plan.Distros {
		cases = append(cases, struct {
			name   string
			distro distros.Distro
			kube   string
			lease  string
			check  check
		}{"the kubernetes.io/hostname label: nodes, PVs and pods pinned to it (" + string(d) + ")", d, "", "",
			step("before.hostname-label", func(s plan.Step, text string) string {
				return has(text, `.metadata.labels.kubernetes\\.io/hostname`, `.spec.nodeAffinity.required.nodeSelectorTerms`, "updateDefaultLabels")
			})})
	}
	cases = append(cases, []struct {
		name   string
		distro distros.Distro
		kube   string
		lease  string
		check  check
	}{
		{"IAM: the policy of docs/prerequisites.md at the pinned tag (v1.26.14 calls DescribeAvailabilityZones)", distros.RKE2, "", "",
			step("before.iam", func(s plan.Step, text string) string {
				return has(text, "ec2:DescribeAvailabilityZones", "elasticloadbalancing:DeregisterTargets", "simulate-principal-policy", "v1.26.14")
			})},
		{"IAM on K3s at 1.30: both policies, DescribeInstanceTopology", distros.K3s, "v1.30.14", "",
			step("before.iam", func(s plan.Step, text string) string {
				return has(text, "ec2:DescribeInstanceTopology", "ccm-node-policy.json", "ecr:GetAuthorizationToken")
			})},
		{"IAM again at every CCM minor of the upgrade", distros.Kubeadm, "", "",
			step("after.upgrade", func(s plan.Step, text string) string { return has(text, "At every CCM minor: run before.iam") })},
		{"the cloud config: [ServiceOverride] names for aws-sdk-go and aws-sdk-go-v2 releases", distros.RKE, "", "",
			step("before.cloud-config", func(s plan.Step, text string) string {
				// Per release, not "v1.29.10 and later": v1.30.0–v1.30.9,
				// v1.31.0–v1.31.8, v1.32.0–v1.32.3 and v1.33.0 are on aws-sdk-go.
				if m := hasNot(text, "v1.29.10 and later"); m != "" {
					return m
				}
				return has(text, "Elastic Load Balancing v2", "EC2", "v1.29.9, v1.30.10, v1.31.9, v1.32.4, v1.33.1", "v1.34.0", "both names")
			})},
		{"ECR: the plugin itself, not a pull the built-in provider answers too", distros.RKE2, "", "",
			step("before.ecr-credentials", func(s plan.Step, text string) string {
				if m := hasNot(text, "kubectl run"); m != "" {
					return m
				}
				return has(text, `\"kind\":\"CredentialProviderRequest\"`, "credentialprovider.kubelet.k8s.io/v1alpha1", "keyring")
			})},
		{"routes: whether the in-tree route controller manages a route table (RKE2)", distros.RKE2, "", "",
			step("before.routes", func(s plan.Step, text string) string {
				return has(text, "--allocate-node-cidrs", "--configure-cloud-routes", "describe-route-tables", "--cluster-cidr")
			})},
		{"routes: kubeadm with a pod subnet", distros.Kubeadm, "", "",
			step("before.routes", func(s plan.Step, text string) string { return has(text, "podSubnet", "startRouteController") })},
		{"RKE1: the rke CLI's version (external-aws from v1.4.15 and v1.5.0)", distros.RKE, "", "",
			step("before.preflight", func(s plan.Step, text string) string { return has(text, "rke --version") })},
		{"RKE1: the rke release of each minor, end of life, RKE2", distros.RKE, "", "",
			step("after.upgrade", func(s plan.Step, text string) string {
				return has(text, "1.29: rke v1.6", "1.32: rke v1.8", "end of life", "RKE2")
			})},
		{"K3s: ServiceLB answers until every node is registered again; the CCM's service controller waits", distros.K3s, "", "",
			func(t *testing.T, p *plan.Plan) string {
				_, install := stepJSON(t, p, "during.install-ccm")
				_, lbs := stepJSON(t, p, "during.load-balancers")
				if m := has(install, "--set-arg=controllers=*,-service"); m != "" {
					return "during.install-ccm " + m
				}
				if m := hasNot(install, "servicelb"); m != "" {
					return "during.install-ccm " + m
				}
				return has(lbs, "servicelb", "svccontroller.k3s.cattle.io/svcname", "delete-load-balancer", "--reset-options")
			}},
		{"RKE2: every kubelet's effective --cloud-provider, cloud-provider-name after UI edits, disable-cloud-controller for every server", distros.RKE2, "", "",
			step("during.switch", func(s plan.Step, text string) string {
				return has(text, `rke2\\.io/node-args`, "machineGlobalConfig.cloud-provider-name", `machineGlobalConfig:\n      cloud-provider-name: aws          # keep: RKE2 names the nodes from instance metadata with it\n      disable-cloud-controller: true`)
			})},
		{"RKE2: node-name-from-cloud-provider-metadata from the releases that have it", distros.RKE2, "", "",
			step("after.upgrade", func(s plan.Step, text string) string {
				return has(text, "node-name-from-cloud-provider-metadata: true")
			})},
		{"backups: an etcd snapshot before the controller manager changes and before the switch", distros.Kubeadm, "", "",
			func(t *testing.T, p *plan.Plan) string {
				for _, id := range []string{"before.etcd-snapshot", "during.etcd-snapshot"} {
					if _, text := stepJSON(t, p, id); !strings.Contains(text, "snapshot save") {
						return "no " + id
					}
				}
				return ""
			}},
		{"rollback: the CCM alone, not the control plane a minor back", distros.RKE, "", "",
			step("after.upgrade", func(s plan.Step, text string) string {
				return hasNot(s.Rollback.Description, "with the control plane")
			})},
		{"the takeover takes a lease duration and up to two retries, not 15 s", distros.RKE2, "", "",
			step("during.switch", func(s plan.Step, text string) string {
				if m := hasNot(text, "at most a lease duration (15 s"); m != "" {
					return m
				}
				return has(text, "25 s", "tools/leaderelection")
			})},
		{"EBS at 1.22: CSI migration is off by default, the in-tree plugin stops at the switch", distros.RKE, "v1.22.17", "",
			step("before.ebs-csi", func(s plan.Step, text string) string { return has(s.Why, "off by default", "stops at the switch") })},
		{"EBS at 1.26: CSI migration is locked on, the switch changes nothing", distros.RKE, "", "",
			step("before.ebs-csi", func(s plan.Step, text string) string {
				return has(s.Why, "locked on", "the switch does not change that")
			})},
		{"the KCM's LeaderMigrationConfiguration v1 (1.24) has no resourceLock", distros.Kubeadm, "v1.24.17", "",
			step("before.kcm-leader-migration", func(s plan.Step, text string) string {
				return hasNot(s.Snippets[0].Content, "resourceLock")
			})},
		{"... and v1beta1 (1.23) needs it", distros.Kubeadm, "v1.23.17", "",
			step("before.kcm-leader-migration", func(s plan.Step, text string) string {
				return has(s.Snippets[0].Content, "controllermanager.config.k8s.io/v1beta1", "resourceLock: leases")
			})},
		{"the controller names of the cluster's minor, not always 1.26's", distros.RKE2, "v1.24.17", "",
			step("before.kcm-leader-migration", func(s plan.Step, text string) string {
				return has(s.Why, "as a 1.24 controller manager names them")
			})},
		{"check gates every step where the operator verifies (RKE1)", distros.RKE, "", "", leaderGates},
		{"check gates every step where the operator verifies (RKE2)", distros.RKE2, "", "", leaderGates},
		{"check gates every step where the operator verifies (kubeadm)", distros.Kubeadm, "", "", leaderGates},
		{"check gates every step where the operator verifies (K3s)", distros.K3s, "", "",
			gates("before.preflight", "during.install-ccm", "during.reregister-nodes", "during.verify", "after.upgrade")},
		{"the chart wrapper's upgrade, which keeps migrate mode, not a plain helm upgrade", distros.RKE2, "", "",
			func(t *testing.T, p *plan.Plan) string {
				for _, c := range allCommands(p) {
					if strings.HasPrefix(c.Shell, "helm upgrade") {
						return "runs " + c.Shell
					}
				}
				_, text := stepJSON(t, p, "before.install-ccm")
				return has(text, "aws-ccm-renderer upgrade --install")
			}},
		{"kubeadm: the kubelet's flags also come from KUBELET_EXTRA_ARGS (/etc/default/kubelet, /etc/sysconfig/kubelet) after kubeadm-flags.env; the check reads the running kubelet", distros.Kubeadm, "", "",
			step("during.switch", func(s plan.Step, text string) string {
				edits := false
				for _, c := range s.Commands {
					if strings.Contains(c.Shell, "systemctl restart kubelet") {
						edits = true
						if m := has(c.Shell, "/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet", "/etc/sysconfig/kubelet", "systemctl cat kubelet"); m != "" {
							return "the kubelet's command " + m
						}
					}
				}
				if !edits {
					return "no command restarts the kubelet"
				}
				for _, c := range s.Checks {
					if c.Command != nil && strings.Contains(c.Description, "kubelet") {
						if m := hasNot(c.Command.Shell, "cat /var/lib/kubelet/kubeadm-flags.env"); m != "" {
							return "the kubelet's check " + m
						}
						if m := has(c.Command.Shell, "/proc/", "cmdline"); m != "" {
							return "the kubelet's check " + m
						}
						return has(s.Why, "10-kubeadm.conf", "KUBELET_EXTRA_ARGS", "/etc/default/kubelet", "/etc/sysconfig/kubelet", "kubernetes/release", "spf13/pflag")
					}
				}
				return "no check of the kubelet's flags"
			})},
		{"kubeadm: the API server's manifest is written with this node's localAPIEndpoint, not one kubeadm detects again from the default route", distros.Kubeadm, "", "",
			step("during.switch", func(s plan.Step, text string) string {
				n := 0
				for _, c := range append(append([]plan.Command{}, s.Commands...), s.Rollback.Commands...) {
					if !strings.Contains(c.Shell, "kubeadm init phase control-plane apiserver") {
						continue
					}
					n++
					if m := hasNot(c.Shell, "apiserver --config cluster-configuration.yaml"); m != "" {
						return m
					}
					if m := has(c.Shell, "kind: InitConfiguration", "localAPIEndpoint", "advertiseAddress", "--advertise-address=", "--secure-port=", "kube-apiserver.yaml.before"); m != "" {
						return m
					}
				}
				if n != 2 {
					return fmt.Sprintf("%d commands write the API server's manifest, want 2 (the step and its rollback)", n)
				}
				if m := has(text, "sudo diff kube-apiserver.yaml.before /etc/kubernetes/manifests/kube-apiserver.yaml"); m != "" {
					return m
				}
				return has(s.Why, "SetAPIEndpointDynamicDefaults", "initconfiguration.go", "v1.26.5", "getAPIEndpointFromPodAnnotation")
			})},
		{"K3s on Rancher: an entry of machineSelectorConfig that sets kubelet-arg replaces machineGlobalConfig's list on its machines (no merge): the plan lists the entries and adds the flag to each", distros.K3s, "", "",
			step("during.disable-k3s-ccm", func(s plan.Step, text string) string {
				if m := has(text, ".spec.rkeConfig.machineSelectorConfig[*]", "Add cloud-provider=external to the kubelet-arg of every entry that sets one"); m != "" {
					return m
				}
				for _, sn := range s.Snippets {
					if strings.Contains(sn.File, "provisioning cluster") {
						if m := has(sn.Content, "machineSelectorConfig:", "- cloud-provider=external     # added"); m != "" {
							return "the Rancher snippet " + m
						}
						return has(s.Why, "machineSelectorConfig", "addUserConfig", "v2.15.0", "not merged")
					}
				}
				return "no snippet for Rancher"
			})},
		{"RKE2 on Rancher: entries of yours that set kubelet-arg keep their items and get the flag after the plan's entries, not copied into the role entries", distros.RKE2, "", "",
			step("during.switch", func(s plan.Step, text string) string {
				if m := hasNot(text, "Copy your other kubelet-arg"); m != "" {
					return m
				}
				if m := has(text, ".spec.rkeConfig.machineSelectorConfig[*]", "move it after the plan's entries", "# then each entry of yours that sets kubelet-arg"); m != "" {
					return m
				}
				return has(s.Why, "addUserConfig", "not merged")
			})},
		{"--kube-version 1.26", distros.RKE2, "1.26", "",
			func(t *testing.T, p *plan.Plan) string { return has(p.KubernetesVersion, "v1.26") }},
	}...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := plan.DefaultOptions()
			o.Distro = c.distro
			if c.kube != "" {
				o.KubeVersion = c.kube
			}
			if c.lease != "" {
				o.LeaderName = c.lease
			}
			p, err := plan.Build(o)
			if err != nil {
				t.Fatal(err)
			}
			if problem := c.check(t, p); problem != "" {
				t.Error(problem)
			}
		})
	}
}
