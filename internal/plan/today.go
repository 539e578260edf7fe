package plan

import (
	"slices"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The plans of clusters at Kubernetes 1.27 and later: a new cluster
// (--from=new), one without a cloud provider (--from=none), and RKE2 on its
// own cloud controller (--from=builtin; K3s's is k3sPlan).

// neverCalledAWS names the cluster that never called AWS, for the IAM step.
func (b *builder) neverCalledAWS() string {
	if b.r.From == FromNew {
		return "A new cluster"
	}
	return distros.DisplayName(b.r.Distro)
}

// byHand drops a step's first check, check against the live cluster, for
// a cluster that does not exist yet.
func byHand(s Step) Step {
	s.Checks = s.Checks[1:]
	if len(s.Checks) > 0 && s.Checks[0].Command != nil {
		s.Checks[0].Command = mainCheck(s.Checks[0].Command)
	}
	return s
}

// versionNotes are the changes of the distribution's and Kubernetes'
// options in force at the plan's minor, each with its source.
func (b *builder) versionNotes(cited []string) []string {
	var notes []string
	// A new cluster's configuration notes say what its distribution
	// takes; a running cluster may still carry what its version refuses.
	var comps []string
	if b.r.From != FromNew {
		comps = []string{"kube-apiserver", "kube-controller-manager", "kubelet"}
	}
	for _, c := range comps {
		for _, ch := range releases.Changes(c, b.r.minor) {
			// A change the distribution's notes cite already.
			if slices.ContainsFunc(cited, func(n string) bool { return strings.Contains(n, ch.Source) }) {
				continue
			}
			notes = append(notes, b.textWith("today.versionNotes.notes", map[string]any{"chComponent": ch.Component, "chEffect": ch.Effect, "chOption": ch.Option, "chReleasesOf": ch.ReleasesOf(), "chSays": ch.Says, "chSource": ch.Source}))
		}
	}
	for _, d := range releases.DefectsOf(b.r.tag) {
		notes = append(notes, b.textWith("today.versionNotes.notes.2", map[string]any{"dFixedIn": d.FixedIn, "dFlag": d.Flag, "dSource": d.Source, "dSummary": d.Summary}))
	}
	if m, ok := releases.Of(b.r.minor); ok && m.Unpromoted() && m.Latest == b.r.tag {
		notes = append(notes, b.textWith("today.versionNotes.notes.3", map[string]any{"imageRepo": ImageRepo}))
	}
	return notes
}

// nodesInitialised is the gate once the CCM runs: every node has an aws://
// provider ID and no uninitialized taint.
func (b *builder) nodesInitialised() Check {
	return Check{
		Description: b.text("today.nodesInitialised.description"),
		Command: ptr(script(KindKubectl, atWorkstation, "", `
kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.providerID}{" "}{.spec.taints[?(@.key=="node.cloudprovider.kubernetes.io/uninitialized")].effect}{"\n"}{end}' \
  | awk '$2 !~ /^aws:\/\// || $3 != ""'`)),
		Expect: b.text("today.nodesInitialised.expect"),
	}
}

func newClusterPlan(b *builder) distroPlan {
	r := b.r
	snippets, notes := b.clusterConfig()
	notes = append(notes, b.versionNotes(notes)...)
	configure := Step{
		ID:       "cluster-config",
		Title:    b.text("today.cluster-config.title"),
		Why:      b.text("today.cluster-config.why"),
		Notes:    notes,
		Snippets: snippets,
		Checks: []Check{{
			Description: "The configuration",
			Command:     ptr(mainCmd(b.configCheck())),
			Expect:      b.text("today.cluster-config.check.expect"),
		}},
		Rollback: Rollback{Description: b.text("today.cluster-config.rollback.description")},
	}
	create := Step{
		ID:    "create",
		Title: b.text("today.create.title"),
		Why:   b.text("today.create.why"),
		Commands: []Command{
			script(KindKubectl, atWorkstation, b.text("today.create.command"), shellLine(b.nodesArgv())+" | tee nodes-before.txt"),
		},
		Checks: []Check{{
			Description: b.text("today.create.check.description"),
			Command:     mainCheck(b.checkRenderedAWS(renderer.ModeInstall)),
			Expect:      b.text("today.create.check.expect"),
		}},
		Rollback: Rollback{Description: b.text("today.create.rollback.description")},
	}
	tags := byHand(b.clusterTags(b.text("today.newClusterPlan.tags.clusterTags")))
	tags.Commands[0].Main = true
	before := []Step{byHand(b.iam("", true)), tags}
	if r.CloudConfig {
		before = append(before, b.cloudConfig(b.text("today.newClusterPlan.before.cloudConfig"), nil))
	}
	before = append(before, configure)
	install, upgradeNotes := b.installNew(), []string(nil)
	if dir := r.profile.Node.ManifestsDir; dir != "" {
		b.clusterApplied = true
		manifest, provisioning := b.clusterManifest(dir)
		before = append(before, manifest)
		// The first server's view comes once the cluster is created.
		create.Checks = append([]Check{provisioning}, create.Checks...)
		install.Notes = append(install.Notes, b.text("today.cluster-manifest.install.note"))
		upgradeNotes = append(upgradeNotes, b.textWith("today.cluster-manifest.upgrade.note", map[string]any{"dir": dir}))
	}
	return distroPlan{
		title:         b.text("today.newClusterPlan.title"),
		strategy:      Install,
		summary:       b.text("today.newClusterPlan.summary"),
		phaseTitles:   [3]string{"Before the cluster", b.text("today.newClusterPlan.phaseTitles"), "Afterwards"},
		beforeSummary: b.text("today.newClusterPlan.beforeSummary"),
		duringSummary: b.text("today.newClusterPlan.duringSummary"),
		afterSummary:  b.text("today.newClusterPlan.afterSummary"),
		before:        before,
		during:        []Step{create, install, b.verifyAll()},
		after:         []Step{b.upgrade(b.text("today.newClusterPlan.after.upgrade"), upgradeNotes)},
	}
}

// clusterManifestFile is the CCM rendered for the cluster to apply itself.
const clusterManifestFile = "aws-ccm.yaml"

// clusterManifestAddon is the name of the file in the servers' manifests
// folder, and so of the Addon the deploy controller tracks it by (its name
// up to the first dot: k3s-io/k3s pkg/deploy/controller.go basename).
const clusterManifestAddon = "aws-cloud-controller-manager"

// clusterManifest renders the CCM into a manifest the cluster applies
// itself from its start: Rancher's spec.rkeConfig.additionalManifest, or
// the servers' manifests folder (dir). It returns the step, and the check
// of a cluster still provisioning, which reads what the first server
// applied once it runs.
func (b *builder) clusterManifest(dir string) (Step, Check) {
	tmpl := append([]string{"aws-ccm-renderer", "template"}, b.chartArgs(b.r.tag)...)
	tmpl = append(tmpl, b.rendererFlags(render{mode: renderer.ModeInstall})...)
	rendered := script(KindRenderer, atWorkstation, b.text("today.cluster-manifest.render"), shellLine(tmpl)+" > "+clusterManifestFile)
	rendered.Main = true
	rancher := script(KindCluster, atRancher, b.text("today.cluster-manifest.rancher"), `
{ printf 'spec:\n  rkeConfig:\n    additionalManifest: |\n'; sed 's/^/      /' `+clusterManifestFile+`; } > additional-manifest.yaml
kubectl -n fleet-default patch clusters.provisioning.cattle.io "$CLUSTER_NAME" --type merge --patch-file additional-manifest.yaml`)
	file := dir + "/" + clusterManifestAddon + ".yaml"
	folder := run(KindNode, atControlPlane, b.text("today.cluster-manifest.folder"), "sudo", "install", "-D", "-m", "0600", clusterManifestFile, file)
	step := Step{
		ID:       "cluster-manifest",
		Title:    b.text("today.cluster-manifest.title"),
		Why:      b.textWith("today.cluster-manifest.why", map[string]any{"dir": dir}),
		Notes:    b.texts("today.cluster-manifest.notes"),
		Commands: []Command{rendered, rancher, folder},
		Checks: []Check{{
			Description: b.text("today.cluster-manifest.check.description"),
			Command: ptr(script(KindCluster, atRancher, "", `
kubectl -n fleet-default get clusters.provisioning.cattle.io "$CLUSTER_NAME" -o jsonpath='{.spec.rkeConfig.additionalManifest}' \
  | diff - `+clusterManifestFile+` && echo same`)),
			Expect: b.textWith("today.cluster-manifest.check.expect", map[string]any{"file": file}),
		}},
		Rollback: Rollback{Description: b.textWith("today.cluster-manifest.rollback.description", map[string]any{"file": file})},
	}
	return step, Check{
		Description: b.text("today.cluster-manifest.provisioning.description"),
		Command: ptr(script(KindNode, atFirstServer, "", `
k="`+b.r.profile.Node.ServerKubectl+`"
$k -n kube-system get addons.k3s.cattle.io addons `+clusterManifestAddon+` --ignore-not-found
$k get nodes -o custom-columns='NAME:.metadata.name,PROVIDER-ID:.spec.providerID,TAINTS:.spec.taints[*].key'`)),
		Expect: b.textWith("today.cluster-manifest.provisioning.expect", map[string]any{"kubectl": b.r.profile.Node.ServerKubectl, "addon": clusterManifestAddon, "ds": upstream.ChartName}),
	}
}

// configCheck reads the cluster's configuration back: what each
// distribution takes, on the machine or workstation that holds it.
func (b *builder) configCheck() Command { return parts[b.r.Distro].configCheck(b) }

// installNew installs the CCM on a cluster whose nodes wait for it.
func (b *builder) installNew() Step {
	rd := render{mode: renderer.ModeInstall}
	return Step{
		ID:       "install-ccm",
		Title:    b.text("today.install-ccm.title"),
		Why:      b.text("today.install-ccm.why"),
		Commands: []Command{b.ccmUpgrade("Install the CCM", rd)},
		Checks:   []Check{b.nodesInitialised()},
		Rollback: Rollback{Description: b.text("today.install-ccm.rollback.description"), Commands: []Command{b.uninstall()}},
	}
}

// installSwitch installs the CCM on a running cluster: a preview, the
// install, more ways to do it; its gate expects what the switch leaves.
func (b *builder) installSwitch(expect string, more ...Command) Step {
	s := b.installNew()
	s.Commands = append([]Command{b.diff(render{mode: renderer.ModeInstall}), b.ccmUpgrade("Install the CCM", render{mode: renderer.ModeInstall})}, more...)
	s.Checks = []Check{{Description: b.text("today.installSwitch.check.description"), Command: b.checkRelease(), Expect: expect}}
	return s
}

// drainDelete moves an agent's pods away and deletes its Node, so that its
// kubelet registers it anew.
func drainDelete() Command {
	c := script(KindKubectl, atWorkstation, prose("today.drainDelete.c", nil), `
kubectl drain "$NODE" --ignore-daemonsets --delete-emptydir-data
kubectl delete node "$NODE"`)
	c.Main = true
	return c
}

// providerIDCheck reads a node's providerID after it registered again.
func providerIDCheck() Check {
	return Check{
		Description: prose("today.providerIDCheck.description", nil),
		Command:     ptr(script(KindKubectl, atWorkstation, "", `kubectl get node "$NODE" -o jsonpath='{.spec.providerID}{"\n"}'`)),
		Expect:      prose("today.providerIDCheck.expect", nil),
	}
}

// verifyAll is the last gate of the plans that end with the CCM alone.
func (b *builder) verifyAll() Step {
	return Step{
		ID:    "verify",
		Title: b.text("today.verify.title"),
		Why:   b.text("today.verify.why"),
		Checks: []Check{{
			Description: b.text("today.verify.check.description"),
			Command:     mainCheck(b.checkRelease()),
			Expect:      b.text("today.verify.check.expect"),
		}},
		Rollback: Rollback{Description: b.text("today.verify.rollback.description")},
	}
}

// externalKubelets is the step that moves the kubelets (and the
// distribution) to the external provider on a running cluster.
func (b *builder) externalKubelets(extraWhy string) Step {
	r := b.r
	snippets, notes := b.clusterConfig()
	notes = append(notes, b.versionNotes(notes)...)
	p := parts[r.Distro]
	restart := p.restart(b)
	if p.kubeletSnippets != nil {
		snippets = p.kubeletSnippets(b)
	}
	cmds, rollback := []Command{mainCmd(restart)}, []Command{restart}
	return Step{
		ID:       "external-provider",
		Title:    "Kubelets on --cloud-provider=external",
		Why:      b.textWith("today.external-provider.why", map[string]any{"extraWhy": extraWhy}),
		Notes:    append(notes, b.text("today.external-provider.notes")),
		Snippets: snippets,
		Commands: cmds,
		Checks: []Check{{
			Description: "The kubelets' flags",
			Command:     b.checkRenderedWith(renderer.ModeInstall, nil),
			Expect:      b.text("today.external-provider.check.expect"),
		}},
		Rollback: Rollback{Description: b.text("today.external-provider.rollback.description"), Commands: rollback},
	}
}

// holdServices is the render that keeps the CCM's service controller off.
var holdServices = render{mode: renderer.ModeInstall, extraArgs: []string{k3sHoldServices}}

// holdServices installs the CCM with its service controller off, while
// something else answers the Services of type LoadBalancer.
func (b *builder) holdServices() Command {
	hold := b.ccmUpgrade(b.text("today.noProviderPlan.hold.ccmUpgrade"), holdServices)
	hold.Main = false
	return hold
}

// lbStep lists the Services of type LoadBalancer the CCM will answer.
func (b *builder) lbStep(why string) Step {
	return Step{
		ID:       "load-balancers",
		Title:    b.text("today.load-balancers.title"),
		Why:      why,
		Commands: []Command{mainCmd(*b.lbServices())},
		Checks: []Check{{
			Description: b.text("today.load-balancers.check.description"),
			Expect:      b.text("today.load-balancers.check.expect"),
		}},
		Rollback: readOnly(),
	}
}

func noProviderPlan(b *builder) distroPlan {
	taint := script(KindKubectl, atWorkstation, b.text("today.noProviderPlan.taint"),
		`kubectl taint node "$NODE" node.cloudprovider.kubernetes.io/uninitialized=true:NoSchedule`)
	taint.Main = true
	taintStep := Step{
		ID:       "initialise-nodes",
		Title:    b.text("today.initialise-nodes.title"),
		Why:      b.text("today.initialise-nodes.why"),
		Notes:    []string{b.text("today.initialise-nodes.notes")},
		Commands: []Command{taint},
		Checks: []Check{
			{
				Description: b.text("today.initialise-nodes.check.description"),
				Command:     ptr(script(KindKubectl, atWorkstation, "", `kubectl get node "$NODE" -o jsonpath='{.spec.providerID}{" "}{.spec.taints[*].key}{"\n"}'`)),
				Expect:      b.text("today.initialise-nodes.check.expect"),
			},
			b.nodesInitialised(),
		},
		Rollback: Rollback{Description: b.text("today.initialise-nodes.rollback.description")},
	}
	install := b.installSwitch(b.text("today.noProviderPlan.install.installSwitch"), b.holdServices())
	return switchPlan(b, switchParts{
		title:         b.text("today.noProviderPlan.title"),
		summary:       b.text("today.noProviderPlan.summary"),
		beforeSummary: b.text("today.noProviderPlan.beforeSummary"),
		duringSummary: b.text("today.noProviderPlan.duringSummary"),
		expectNodes:   b.text("today.noProviderPlan.expectNodes"),
		expectCheck:   b.text("today.noProviderPlan.expectCheck"),
		tags:          b.text("today.noProviderPlan.tags"),
		lbs:           b.text("today.noProviderPlan.lbs"),
		install:       install,
		nodes:         taintStep,
		upgrade:       b.text("today.noProviderPlan.upgrade"),
	})
}

// switchParts are what the plans of a running cluster at 1.27 or later
// (--from none, --from builtin) do not share: switchPlan is their
// skeleton.
type switchParts struct {
	title, summary, beforeSummary, duringSummary string
	// expectNodes and expectCheck are what the preflight shows.
	expectNodes, expectCheck string
	// tags says whether the instances are tagged already, lbs who answers
	// the LoadBalancer Services now.
	tags, lbs string
	// kubelets says what else during.external-provider turns off.
	kubelets string
	// install installs the CCM; nodes makes the running nodes its.
	install, nodes Step
	// upgrade says how the cluster moves to the next minor.
	upgrade string
}

// switchPlan is the plan of a running cluster without an in-tree provider
// onto the CCM: kubelets external, the CCM on, then the running nodes.
func switchPlan(b *builder, p switchParts) distroPlan {
	return distroPlan{
		title:         p.title,
		strategy:      Switch,
		summary:       p.summary,
		beforeSummary: p.beforeSummary,
		duringSummary: p.duringSummary,
		afterSummary:  b.text("today.switchPlan.afterSummary"),
		before: []Step{
			b.preflight(p.expectNodes, p.expectCheck),
			b.iam("", true),
			b.clusterTags(p.tags),
			b.lbStep(p.lbs),
		},
		during: []Step{b.externalKubelets(p.kubelets), p.install, p.nodes, b.verifyAll()},
		after:  []Step{b.upgrade(p.upgrade, nil)},
	}
}
