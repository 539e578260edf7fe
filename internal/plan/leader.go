package plan

// leaderParts are a distribution's parts of the leader migration plan
// (every distribution with an in-tree provider): what leaderMigrationPlan,
// the one skeleton of the plans from the in-tree provider, does not share. Adding a distribution
// with an in-tree provider is adding its leaderParts.
type leaderParts struct {
	// title names the distribution and where its configuration lives;
	// summary is the plan's, duringSummary and afterSummary its phases'.
	title, summary, duringSummary, afterSummary string
	// preflight are the distribution's commands and checks beyond the
	// shared ones.
	preflightCommands []Command
	preflightChecks   []Check
	// own are the distribution's steps right after the preflight.
	own []Step
	// hostnameWhy and hostnameNotes say how the distribution sets the
	// kubernetes.io/hostname label.
	hostnameWhy   string
	hostnameNotes []string
	// cloudConfig says where the in-tree provider's --cloud-config comes
	// from, and readCloudConfig reads it.
	cloudConfig     string
	readCloudConfig Command
	// routeFlags reads the controller managers' route flags; routes says
	// which the distribution gives them.
	routeFlags Command
	routes     string
	// ecrBinDir, ecrSnippets and ecrApply put the ECR credential provider
	// in place.
	ecrBinDir   string
	ecrSnippets []Snippet
	ecrApply    []Command
	// snapshot takes an etcd snapshot of the given name; restore says how
	// one is restored.
	snapshot func(name string) Command
	restore  string
	// kcm is the distribution's half of before.kcm-leader-migration,
	// switchStep is during.switch.
	kcm        Step
	switchStep Step
	// verify are the distribution's checks of during.verify.
	verify []Check
	// cleanup are the distribution's commands of after.cleanup.
	cleanup []Command
	// upgrade says how the cluster moves to the next minor, with its
	// notes and snippets.
	upgrade         string
	upgradeNotes    []string
	upgradeSnippets []Snippet
}

// leaderMigrationPlan is the plan from the in-tree provider: the steps
// every distribution shares, in order, filled with the distribution's
// parts.
func leaderMigrationPlan(b *builder, p leaderParts) distroPlan {
	r := b.r
	preflight := b.preflight(b.text("nodesInTree"), b.text("checkBeforeLM"), p.preflightCommands...)
	preflight.Checks = append(preflight.Checks, p.preflightChecks...)
	before := append([]Step{preflight}, p.own...)
	before = append(before,
		b.hostnameLabel(p.hostnameWhy, p.hostnameNotes...),
		b.iam("", false),
		b.clusterTags(b.text("tagsInTree")),
		b.cloudConfig(p.cloudConfig, &p.readCloudConfig),
		b.routes(p.routeFlags, p.routes),
		b.ebsCSI(ebsWhy(r.minor)),
		b.ecr(ecrInTree(r.minor), p.ecrBinDir, p.ecrSnippets, p.ecrApply),
		b.grantLease(),
		b.etcdSnapshot(b.text("leader.before.etcdSnapshot"), p.snapshot("pre-leader-migration"), p.restore),
		b.kcmLeaderMigration(p.kcm),
		b.installMigrate(),
	)
	upgrade := b.upgrade(b.text("upgradeInTree")+" "+p.upgrade, p.upgradeNotes)
	upgrade.Snippets = p.upgradeSnippets
	return distroPlan{
		title:         p.title,
		strategy:      LeaderMigration,
		summary:       p.summary,
		beforeSummary: b.text("leader.beforeSummary"),
		duringSummary: p.duringSummary,
		afterSummary:  p.afterSummary,
		before:        before,
		during: []Step{
			b.etcdSnapshot("the switch", p.snapshot("pre-switch"), p.restore),
			p.switchStep,
			b.verifyHandover(p.verify...),
		},
		after: []Step{
			b.installMode(),
			b.cleanup(p.cleanup...),
			upgrade,
		},
	}
}
