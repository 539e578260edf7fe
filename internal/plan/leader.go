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
	expectNodes := "Every NAME is its instance's EC2 private DNS name (ip-10-0-1-10.us-west-2.compute.internal, " +
		"ip-10-0-1-10.ec2.internal in us-east-1, or i-0123456789abcdef0.us-west-2.compute.internal with " +
		"resource-based names) and every PROVIDER-ID reads aws:///<zone>/<instance-id>: the in-tree provider " +
		"named the node after the EC2 API's PrivateDnsName of its instance (legacy-cloud-providers " +
		"aws/aws.go, CurrentNodeName and buildSelfAWSInstance, v0.26.15) and the switch must keep both."
	expectCheck := "Exit 0, with warnings that are expected at this point: the migration lease is missing (the " +
		"controller manager does not run leader migration yet), and the controller manager's access to it " +
		"comes only with the rendered manifests. A hostname warning is before.hostname-label's to settle, an " +
		"in-tree warning about the route controller before.routes'. Every control-plane node shows where a " +
		"CCM pod would run, every node is initialised (aws:// provider IDs), and the CCM's version matches " +
		"the API server."
	preflight := b.preflight(expectNodes, expectCheck, p.preflightCommands...)
	preflight.Checks = append(preflight.Checks, p.preflightChecks...)
	before := append([]Step{preflight}, p.own...)
	before = append(before,
		b.hostnameLabel(p.hostnameWhy, p.hostnameNotes...),
		b.iam("", false),
		b.clusterTags("The in-tree provider used the same tags: keep them."),
		b.cloudConfig(p.cloudConfig, &p.readCloudConfig),
		b.routes(p.routeFlags, p.routes),
		b.ebsCSI(ebsWhy(r.minor)),
		b.ecr(ecrInTree(r.minor), p.ecrBinDir, p.ecrSnippets, p.ecrApply),
		b.grantLease(),
		b.etcdSnapshot("the controller manager changes", p.snapshot("pre-leader-migration"), p.restore),
		b.kcmLeaderMigration(p.kcm),
		b.installMigrate(),
	)
	upgrade := b.upgrade("With the CCM alone in charge, the cluster can leave 1.26: the in-tree AWS provider, its EBS plugin "+
		"and its ECR credential provider are gone in 1.27, and nothing here depends on them any more. "+p.upgrade, p.upgradeNotes)
	upgrade.Snippets = p.upgradeSnippets
	return distroPlan{
		title:    p.title,
		strategy: LeaderMigration,
		summary:  p.summary,
		beforeSummary: "The cluster still runs the in-tree provider. Check what the CCM needs, let the in-tree controller " +
			"manager use the migration lease, then install the CCM beside it.",
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
