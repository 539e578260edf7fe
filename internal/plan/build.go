package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Build makes the plan the options select. Its errors are usage errors
// (renderer.IsUsageError) that say what to pass instead.
func Build(o Options) (*Plan, error) {
	r, err := resolve(o)
	if err != nil {
		return nil, err
	}
	if _, ok := parts[o.Distro]; !ok {
		return nil, fmt.Errorf("--distro=%s: no plan parts for it (internal/plan/parts.go)", o.Distro)
	}
	b := &builder{r: r}
	var d distroPlan
	switch {
	case r.From == FromNew:
		d = newClusterPlan(b)
	case r.From == FromNone:
		d = noProviderPlan(b)
	case r.From == FromBuiltin && parts[o.Distro].builtin != nil:
		d = parts[o.Distro].builtin(b)
	case parts[o.Distro].leader != nil:
		d = leaderMigrationPlan(b, parts[o.Distro].leader(b))
	default:
		d = parts[o.Distro].plan(b)
	}
	p := &Plan{
		APIVersion:        APIVersion,
		Kind:              Kind,
		Distro:            o.Distro,
		Title:             d.title,
		Strategy:          d.strategy,
		From:              r.From,
		Summary:           d.summary,
		KubernetesVersion: r.KubeVersion,
		CCM: CCM{
			Chart:          r.Chart,
			Source:         r.source,
			ChartVersion:   r.ChartVersion,
			Image:          releases.ImageRepository + ":" + releases.Pin(r.tag),
			ImageTag:       r.tag,
			ImageTagSource: r.tagSource,
			Release:        r.Release,
			Namespace:      r.Namespace,
			DaemonSet:      upstream.Workload,
		},
	}
	if r.source == SourceRepoURL {
		p.CCM.Repository = r.Repo
	}
	if d.strategy == LeaderMigration {
		p.LeaderMigration = &Lease{Name: r.LeaderName, Namespace: releases.LeaseNamespace, KCMUser: r.KCMUser}
	}
	titles := d.phaseTitles
	if titles == [3]string{} {
		titles = [3]string{"Before the switch", "The switch", "After the switch"}
	}
	phases := []PhasePlan{
		{Name: Before, Title: titles[0], Summary: d.beforeSummary, Steps: d.before},
		{Name: During, Title: titles[1], Summary: d.duringSummary, Steps: d.during},
		{Name: After, Title: titles[2], Summary: d.afterSummary, Steps: d.after},
	}
	var ids []string
	for _, ph := range phases {
		for i := range ph.Steps {
			ph.Steps[i].ID = fmt.Sprintf("%s.%s", ph.Name, ph.Steps[i].ID)
			ids = append(ids, ph.Steps[i].ID)
		}
	}
	moveValuesSnippet(phases)
	inputs, usedBy := b.inputs(phases)
	p.flags = o.Flags()
	var shown []string
	for _, ph := range phases {
		switch {
		case o.Phase != "" && ph.Name != o.Phase:
			continue
		case o.Step != "":
			i := slices.IndexFunc(ph.Steps, func(s Step) bool { return s.ID == o.Step })
			if i < 0 {
				continue
			}
			ph.Steps = ph.Steps[i : i+1]
		}
		p.Phases = append(p.Phases, ph)
		for _, s := range ph.Steps {
			shown = append(shown, s.ID)
		}
	}
	// The inputs of the steps printed.
	for _, in := range inputs {
		if slices.ContainsFunc(usedBy[in.Name], func(id string) bool { return slices.Contains(shown, id) }) {
			p.Inputs = append(p.Inputs, in)
		}
	}
	if o.Step != "" && len(p.Phases) == 0 {
		return nil, usagef("--step %q: the %s plan has no such step; its steps are %s", o.Step, o.Distro, strings.Join(ids, ", "))
	}
	return p, nil
}

// distroPlan is what each distribution contributes.
type distroPlan struct {
	title, summary                             string
	strategy                                   Strategy
	beforeSummary, duringSummary, afterSummary string
	before, during, after                      []Step
	// phaseTitles, when set, name the phases (a new cluster has no
	// switch).
	phaseTitles [3]string
}

// builder makes the commands every distribution shares.
type builder struct {
	r resolved
	// clusterApplied: the cluster applies the CCM from its own manifests
	// (a new cluster's before.cluster-manifest), so no Helm release holds
	// it, and the checks read the CCM the cluster runs.
	clusterApplied bool
}

// Files the plan's commands use when the cluster has a cloud config.
const (
	cloudConfigValues = "ccm-cloud-config-values.yaml"
	cloudConfigMount  = "/etc/aws-ccm"
	cloudConfigFile   = cloudConfigMount + "/cloud.conf"
)

// setArgs are the CCM flags every render of this plan sets beyond the
// renderer's own: the cloud config and the route controller.
func (b *builder) setArgs() []string {
	var a []string
	if b.r.CloudConfig {
		a = append(a, "--set-arg=cloud-config="+cloudConfigFile)
	}
	if b.r.ClusterCIDR != "" {
		a = append(a, "--set-arg=configure-cloud-routes=true", "--set-arg=cluster-cidr="+b.r.ClusterCIDR)
	}
	return a
}

// render says how one render of the CCM differs from the plan's defaults.
type render struct {
	mode renderer.Mode
	// tag is the CCM image; "" is the plan's.
	tag string
	// noKubeVersion leaves --kube-version out: the chart wrapper asks the
	// cluster (after an upgrade only the operator knows it otherwise).
	noKubeVersion bool
	// extraArgs are more renderer flags (--set-arg=...).
	extraArgs []string
	// reset makes the chart wrapper ignore the options the release
	// records (needed to drop a --set-arg).
	reset bool
}

// rendererFlags are the renderer's flags for a render, as the plan passes
// them: read off the renderer's option table, then the plan's --set-args.
func (b *builder) rendererFlags(rd render) []string {
	o := renderer.DefaultOptions()
	o.Distro, o.Mode = b.r.Distro, rd.mode
	opts := []renderer.Opt{renderer.OptDistro, renderer.OptMode}
	if !rd.noKubeVersion {
		o.KubeVersion = b.r.KubeVersion
		opts = append(opts, renderer.OptKubeVersion)
	}
	if rd.mode == renderer.ModeMigrate {
		o.LeaderName, o.KCMUser = b.r.LeaderName, b.r.KCMUser
		opts = append(opts, renderer.OptLeaderName, renderer.OptKCMUser)
	}
	f := append(renderer.FlagArgs(o, opts...), b.setArgs()...)
	return append(f, rd.extraArgs...)
}

// chartArgs are the release, the chart and the flags that say where it
// comes from, which version, the namespace, the CCM image and the values.
func (b *builder) chartArgs(tag string) []string {
	r := b.r
	a := []string{r.Release, r.Chart}
	switch r.source {
	case SourceRepoURL:
		a = append(a, "--repo", r.Repo, "--version", r.ChartVersion)
	case SourceRepoName, SourceOCI:
		a = append(a, "--version", r.ChartVersion)
	}
	a = append(a, "--namespace", r.Namespace)
	if r.Namespace != upstream.Namespace {
		// The chart puts its objects in .Values.namespace, not in the
		// release's namespace.
		a = append(a, "--set", "namespace="+r.Namespace)
	}
	a = append(a, "--set", "image.tag="+pinned(tag))
	if r.CloudConfig {
		a = append(a, "-f", cloudConfigValues)
	}
	return a
}

// digestVar is the shell variable that holds the digest of a CCM image
// that the promotion list does not give (an input the operator reads from
// the registry, inputs.CCM_DIGEST): CCM_DIGEST_1_37_1 for v1.37.1.
func digestVar(tag string) string {
	return digestPrefix + strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' {
			return r
		}
		return '_'
	}, strings.TrimPrefix(tag, "v"))
}

const digestPrefix = "CCM_DIGEST_"

// pinned is what the commands set image.tag to: tag@digest, the digest
// from the promotion list (releases.Pin), or from $CCM_DIGEST_<tag> when
// the list does not give it, so that no command pins a tag alone.
func pinned(tag string) string {
	if _, ok := releases.Digest(tag); ok {
		return releases.Pin(tag)
	}
	return tag + "@$" + digestVar(tag)
}

// digestTag is the tag whose digest the variable name holds, among the
// plan's and each minor's latest.
func (b *builder) digestTag(name string) (string, bool) {
	for _, t := range append([]string{b.r.tag}, slices.Collect(maps.Values(releases.Tags()))...) {
		if digestVar(t) == name {
			return t, true
		}
	}
	return "", false
}

func (b *builder) tagOf(rd render) string {
	if rd.tag != "" {
		return rd.tag
	}
	return b.r.tag
}

// upgrade installs or upgrades the CCM release: with the chart wrapper,
// which keeps the options the release records (so an upgrade that forgets
// --mode=migrate stays in migrate mode), or with --helm plain Helm and the
// renderer as post-renderer.
func (b *builder) ccmUpgrade(description string, rd render) Command {
	var argv []string
	if b.r.Helm {
		argv = append([]string{"helm", "upgrade", "--install"}, b.chartArgs(b.tagOf(rd))...)
		argv = append(argv, "--post-renderer", "aws-ccm-renderer")
		for _, f := range b.rendererFlags(rd) {
			argv = append(argv, "--post-renderer-args="+f)
		}
	} else {
		argv = append([]string{"aws-ccm-renderer", "upgrade", "--install"}, b.chartArgs(b.tagOf(rd))...)
		argv = append(argv, b.rendererFlags(rd)...)
		if rd.reset {
			argv = append(argv, "--reset-options")
		}
	}
	argv = append(argv, "--wait")
	c := run(KindRenderer, atWorkstation, description, argv...)
	c.Main = true
	return c
}

// diff previews what ccmUpgrade changes in the cluster.
func (b *builder) diff(rd render) Command {
	argv := append([]string{"aws-ccm-renderer", "diff"}, b.chartArgs(b.tagOf(rd))...)
	argv = append(argv, "--deployed")
	argv = append(argv, b.rendererFlags(rd)...)
	if rd.reset {
		argv = append(argv, "--reset-options")
	}
	return run(KindRenderer, atWorkstation, "Preview: what the upgrade below changes in the cluster (a server-side dry run against the release)", argv...)
}

func (b *builder) uninstall() Command {
	return run(KindRenderer, atWorkstation, "Remove the CCM release",
		"helm", "uninstall", b.r.Release, "--namespace", b.r.Namespace, "--wait")
}

// checkFlags are check's flags that the plan's options change.
func (b *builder) checkFlags() []string {
	if !b.r.profile.NoInTreeProvider && b.r.KCMUser != renderer.DefaultKCMUser {
		return []string{"--kcm-user", b.r.KCMUser}
	}
	return nil
}

// The sides check's --migration-lease-holder names: the gate of a step
// after which one side must hold the migration lease fails otherwise.
const (
	holderKCM = "kube-controller-manager"
	holderCCM = "ccm"
)

// holderFlag is check's flag that says which side should hold the
// migration lease ("" for none).
func holderFlag(holder string) []string {
	if holder == "" {
		return nil
	}
	return []string{"--migration-lease-holder=" + holder}
}

// checkRendered is the gate before the CCM is installed: the manifests the
// install would deploy, checked against the live cluster.
func (b *builder) checkRendered(mode renderer.Mode) *Command {
	return b.checkRenderedHolding(mode, "")
}

// checkRenderedHolding is checkRendered where one side must hold the
// migration lease.
func (b *builder) checkRenderedHolding(mode renderer.Mode, holder string) *Command {
	return b.checkRenderedWith(mode, holderFlag(holder))
}

// checkRenderedWith is checkRendered with more of check's flags.
func (b *builder) checkRenderedWith(mode renderer.Mode, flags []string) *Command {
	tmpl := append([]string{"aws-ccm-renderer", "template"}, b.chartArgs(b.r.tag)...)
	tmpl = append(tmpl, b.rendererFlags(render{mode: mode})...)
	chk := append(append([]string{"aws-ccm-renderer", "check", "-f", "-"}, b.checkFlags()...), flags...)
	c := script(KindCheck, atWorkstation, "", shellLine(tmpl)+" \\\n  | "+shellLine(chk))
	return &c
}

// checkRenderedAWS is the gate of the steps that prepare the AWS account:
// the manifests the install would deploy (their CCM release's policy)
// against the live cluster and its AWS account (check --aws).
func (b *builder) checkRenderedAWS(mode renderer.Mode) *Command {
	return b.checkRenderedWith(mode, []string{"--aws"})
}

// checkRelease is the gate once the CCM is installed: its release's
// deployed manifest against the live cluster.
func (b *builder) checkRelease() *Command {
	return b.checkReleaseHolding("")
}

// checkReleaseHolding is checkRelease where one side must hold the
// migration lease.
func (b *builder) checkReleaseHolding(holder string) *Command {
	argv := []string{"aws-ccm-renderer", "check", "--release", b.r.Release, "--namespace", b.r.Namespace}
	if b.clusterApplied {
		argv = argv[:2]
	}
	argv = append(argv, b.checkFlags()...)
	c := run(KindCheck, atWorkstation, "", append(argv, holderFlag(holder)...)...)
	return &c
}

// mainCheck marks a check's command as the step's main command.
func mainCheck(c *Command) *Command {
	cc := *c
	cc.Main = true
	return &cc
}

func (b *builder) pods() *Command {
	c := run(KindKubectl, atWorkstation, "", "kubectl", "-n", b.r.Namespace, "get", "pods",
		"-l", "k8s-app="+upstream.Workload, "-o", "wide")
	return &c
}

// nodesArgv lists each node's name, provider ID and kubelet version, sorted.
func (b *builder) nodesArgv() []string {
	return []string{"kubectl", "get", "nodes", "--sort-by=.metadata.name",
		"-o", "custom-columns=NAME:.metadata.name,PROVIDER-ID:.spec.providerID,KUBELET:.status.nodeInfo.kubeletVersion"}
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
		"-n", releases.LeaseNamespace, "--as", b.r.KCMUser)
	return &c
}

// kcmRole is the Role this plan creates so that the in-tree controller
// manager may take the migration lease before the CCM is installed.
const kcmRole = "kcm-leader-migration"

func (b *builder) lbServices() *Command {
	c := run(KindKubectl, atWorkstation, "", "kubectl", "get", "services", "--all-namespaces",
		"-o", `jsonpath={range .items[?(@.spec.type=="LoadBalancer")]}{.metadata.namespace}/{.metadata.name}{" "}{.status.loadBalancer.ingress[*].hostname}{.status.loadBalancer.ingress[*].ip}{"\n"}{end}`)
	return &c
}

// mirrorPodRouteFlags shows the controller managers' route flags, read off
// their static pods' mirror pods (RKE2, kubeadm).
func mirrorPodRouteFlags() Command {
	return script(KindKubectl, atWorkstation, "The controller managers' route flags (their static pods' mirror pods)", `
kubectl -n kube-system get pods -l component=kube-controller-manager -o yaml \
  | grep -o -e '--allocate-node-cidrs=[a-z]*' -e '--configure-cloud-routes=[a-z]*' -e '--cluster-cidr=[^" ]*' | sort | uniq -c`)
}

// kubeletNotExternal checks, off the node-args annotation RKE2 and K3s
// record on each node (rke2.io/node-args, k3s.io/node-args), which nodes'
// kubelets are not given cloud-provider=external.
func kubeletNotExternal(program, name, expect string) Check {
	return Check{
		Description: "Nodes whose kubelet is not told --cloud-provider=external (" + name + " records each node's arguments)",
		Command: ptr(script(KindKubectl, atWorkstation, "", `
kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.annotations.`+program+`\.io/node-args}{"\n"}{end}' \
  | grep -v 'cloud-provider=external' | cut -d' ' -f1`)),
		Expect: expect,
	}
}

// moveValuesSnippet puts the chart values that mount the cloud config
// (cloudConfigValues) in the first step whose commands pass them: the
// preflight's check renders the CCM with them, before before.cloud-config
// creates the ConfigMap they mount.
func moveValuesSnippet(phases []PhasePlan) {
	var reader, holder *Step
	at := -1
	for pi := range phases {
		for si := range phases[pi].Steps {
			s := &phases[pi].Steps[si]
			if reader == nil && holder == nil && slices.ContainsFunc(stepCommandsOf(*s), func(c Command) bool {
				return strings.Contains(c.Shell, "-f "+cloudConfigValues)
			}) {
				reader = s
			}
			if i := slices.IndexFunc(s.Snippets, func(sn Snippet) bool { return sn.File == cloudConfigValues }); i >= 0 && holder == nil {
				holder, at = s, i
			}
		}
	}
	if reader == nil || holder == nil || reader == holder {
		return
	}
	reader.Snippets = append(reader.Snippets, holder.Snippets[at])
	holder.Snippets = slices.Delete(holder.Snippets, at, at+1)
}
