package plan

import (
	"fmt"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Build makes the plan the options select. Its errors are usage errors
// (renderer.IsUsageError) that say what to pass instead.
func Build(o Options) (*Plan, error) {
	r, err := resolve(o)
	if err != nil {
		return nil, err
	}
	b := &builder{r: r}
	var d distroPlan
	switch o.Distro {
	case renderer.DistroRKE:
		d = rkePlan(b)
	case renderer.DistroRKE2:
		d = rke2Plan(b)
	case renderer.DistroK3s:
		d = k3sPlan(b)
	case renderer.DistroKubeadm:
		d = kubeadmPlan(b)
	}
	p := &Plan{
		APIVersion:        APIVersion,
		Kind:              Kind,
		Distro:            o.Distro,
		Title:             d.title,
		Strategy:          d.strategy,
		Summary:           d.summary,
		KubernetesVersion: o.KubeVersion,
		CCM: CCM{
			Chart:          ChartName,
			Repository:     ChartRepo,
			ChartVersion:   o.ChartVersion,
			Image:          ImageRepo + ":" + r.tag,
			ImageTag:       r.tag,
			ImageTagSource: r.tagSource,
			Release:        o.Release,
			Namespace:      o.Namespace,
			DaemonSet:      daemonSet,
		},
	}
	if d.strategy == LeaderMigration {
		p.LeaderMigration = &Lease{Name: o.LeaderName, Namespace: leaseNS, KCMUser: o.KCMUser}
	}
	phases := []PhasePlan{
		{Name: Before, Title: "Before the switch", Summary: d.beforeSummary, Steps: d.before},
		{Name: During, Title: "The switch", Summary: d.duringSummary, Steps: d.during},
		{Name: After, Title: "After the switch", Summary: d.afterSummary, Steps: d.after},
	}
	for _, ph := range phases {
		if o.Phase != "" && ph.Name != o.Phase {
			continue
		}
		for i := range ph.Steps {
			ph.Steps[i].ID = fmt.Sprintf("%s.%s", ph.Name, ph.Steps[i].ID)
		}
		p.Phases = append(p.Phases, ph)
	}
	return p, nil
}

// distroPlan is what each distribution contributes.
type distroPlan struct {
	title, summary                             string
	strategy                                   Strategy
	beforeSummary, duringSummary, afterSummary string
	before, during, after                      []Step
}

// builder makes the commands every distribution shares.
type builder struct {
	r resolved
}

// rendererFlags are the renderer's flags for mode, as the plan passes them.
func (b *builder) rendererFlags(mode renderer.Mode, withKubeVersion bool) []string {
	o := renderer.DefaultOptions()
	o.Distro, o.Mode = b.r.Distro, mode
	opts := []renderer.Opt{renderer.OptDistro, renderer.OptMode}
	if withKubeVersion {
		o.KubeVersion = b.r.KubeVersion
		opts = append(opts, renderer.OptKubeVersion)
	}
	if mode == renderer.ModeMigrate {
		o.LeaderName, o.KCMUser = b.r.LeaderName, b.r.KCMUser
		opts = append(opts, renderer.OptLeaderName, renderer.OptKCMUser)
	}
	return renderer.FlagArgs(o, opts...)
}

// chartArgs are the Helm flags that select the chart, its version and the
// CCM image.
func (b *builder) chartArgs(tag string) []string {
	a := []string{"--version", b.r.ChartVersion, "--namespace", b.r.Namespace}
	if b.r.Namespace != DefaultNamespace {
		// The chart puts its objects in .Values.namespace, not in the
		// release's namespace.
		a = append(a, "--set", "namespace="+b.r.Namespace)
	}
	return append(a, "--set", "image.tag="+tag)
}

// helmUpgrade installs or upgrades the CCM release through Helm with the
// renderer as post-renderer.
func (b *builder) helmUpgrade(description string, mode renderer.Mode) Command {
	return b.helmUpgradeTo(description, mode, b.r.tag, true)
}

func (b *builder) helmUpgradeTo(description string, mode renderer.Mode, tag string, withKubeVersion bool) Command {
	argv := []string{"helm", "upgrade", "--install", b.r.Release, ChartName, "--repo", ChartRepo}
	argv = append(argv, b.chartArgs(tag)...)
	argv = append(argv, "--post-renderer", "aws-ccm-renderer")
	for _, f := range b.rendererFlags(mode, withKubeVersion) {
		argv = append(argv, "--post-renderer-args="+f)
	}
	argv = append(argv, "--wait")
	return run(KindRenderer, atWorkstation, description, argv...)
}

// diff previews what helmUpgrade changes in the cluster.
func (b *builder) diff(mode renderer.Mode) Command {
	argv := []string{"aws-ccm-renderer", "diff", b.r.Release, "--deployed"}
	argv = append(argv, b.chartArgs(b.r.tag)...)
	argv = append(argv, b.rendererFlags(mode, true)...)
	return run(KindRenderer, atWorkstation,
		"Preview: what the upgrade below would change in the cluster (the release's deployed manifest against the new one, a server-side dry run)", argv...)
}

func (b *builder) uninstall() Command {
	return run(KindRenderer, atWorkstation, "Remove the CCM release",
		"helm", "uninstall", b.r.Release, "--namespace", b.r.Namespace, "--wait")
}

// leases lists the holders of the given leases in kube-system.
func (b *builder) leases(names ...string) *Command {
	argv := append([]string{"kubectl", "-n", leaseNS, "get", "lease"}, names...)
	argv = append(argv, "-o", "custom-columns=LEASE:.metadata.name,HOLDER:.spec.holderIdentity,RENEWED:.spec.renewTime")
	c := run(KindKubectl, atWorkstation, "", argv...)
	return &c
}

// migrationHolder prints the identity that holds the migration lease.
func (b *builder) migrationHolder() *Command {
	c := run(KindKubectl, atWorkstation, "", "kubectl", "-n", leaseNS, "get", "lease", b.r.LeaderName,
		"-o", `jsonpath={.spec.holderIdentity}{"\n"}`)
	return &c
}

func (b *builder) pods() *Command {
	c := run(KindKubectl, atWorkstation, "", "kubectl", "-n", b.r.Namespace, "get", "pods",
		"-l", "k8s-app="+daemonSet, "-o", "wide")
	return &c
}

func (b *builder) rollout() *Command {
	c := run(KindKubectl, atWorkstation, "", "kubectl", "-n", b.r.Namespace, "rollout", "status", "daemonset/"+daemonSet, "--timeout=5m")
	return &c
}

// nodes lists each node's name, provider ID and kubelet version, sorted.
func (b *builder) nodesArgv() []string {
	return []string{"kubectl", "get", "nodes", "--sort-by=.metadata.name",
		"-o", "custom-columns=NAME:.metadata.name,PROVIDER-ID:.spec.providerID,KUBELET:.status.nodeInfo.kubeletVersion"}
}

// uninitialized lists the nodes that still wait for a cloud controller.
func (b *builder) uninitialized() *Command {
	c := script(KindKubectl, atWorkstation, "", `
kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.taints[*].key}{"\n"}{end}' \
  | grep node.cloudprovider.kubernetes.io/uninitialized`)
	return &c
}

// providerIDs lists the nodes whose provider ID is not an AWS one.
func (b *builder) foreignProviderIDs() *Command {
	c := script(KindKubectl, atWorkstation, "", `
kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.providerID}{"\n"}{end}' \
  | grep -v ' aws:///'`)
	return &c
}

// nodesUnchanged compares the nodes with the list saved before the switch.
func (b *builder) nodesUnchanged() *Command {
	c := script(KindKubectl, atWorkstation, "", shellLine(b.nodesArgv())+` \
  | awk '{print $1, $2}' > nodes-now.txt
awk '{print $1, $2}' nodes-before.txt | diff - nodes-now.txt`)
	return &c
}

func (b *builder) canI(verb string) *Command {
	c := run(KindKubectl, atWorkstation, "", "kubectl", "auth", "can-i", verb, "leases/"+b.r.LeaderName,
		"-n", leaseNS, "--as", b.r.KCMUser)
	return &c
}

// kcmRole is the Role this plan creates so that the in-tree controller
// manager may take the migration lease before the CCM is installed.
const kcmRole = "kcm-leader-migration"

func (b *builder) lbServices() *Command {
	c := run(KindKubectl, atWorkstation, "", "kubectl", "get", "services", "--all-namespaces",
		"-o", `jsonpath={range .items[?(@.spec.type=="LoadBalancer")]}{.metadata.namespace}/{.metadata.name}{" "}{.status.loadBalancer.ingress[*].hostname}{"\n"}{end}`)
	return &c
}
