package renderer

// Verdict is one of the renderer's judgements on a distribution, a mode and
// the CCM's and the cluster's versions: a refusal, or a warning that
// --strict makes one. Every front end (the post-renderer, the Helm 4
// plugin, the chart wrapper, the KRM function, the overlays, the Argo CD
// plugin, the Fleet bundle, the wrapper chart and helmfile) words it with
// its Reason, whatever else its message says in its own spelling (a flag,
// a ConfigMap key, a chart value); the wrapper chart's templates get the
// reasons generated (internal/wrapperchart), and the conformance test
// (internal/conformance) holds every front end to them.
type Verdict struct {
	ID     string // a name for tests and docs: "skew-install"
	Reason string // the words every front end's message carries
}

// The verdicts.
var (
	// VerdictSkewInstall: in install mode, a CCM of another minor than the
	// cluster's (a warning).
	VerdictSkewInstall = Verdict{"skew-install", "the AWS CCM is released per Kubernetes minor and meant to run at the cluster's"}
	// VerdictSkewMigrate: in migrate mode, a CCM of another minor than the
	// cluster's (a refusal).
	VerdictSkewMigrate = Verdict{"skew-migrate", "a migration runs the CCM of the cluster's minor"}
	// VerdictNoInTree: in migrate mode, a cluster whose Kubernetes has no
	// in-tree AWS provider (a refusal).
	VerdictNoInTree = Verdict{"no-in-tree", "has no in-tree AWS provider to migrate from"}
	// VerdictClusterUnknown: in migrate mode, the cluster's version not told
	// and the CCM newer than any cluster that can migrate (a refusal).
	VerdictClusterUnknown = Verdict{"cluster-unknown", "newer than any cluster that can migrate"}
	// VerdictNoMigrateMode: migrate mode for a distribution built without
	// the in-tree cloud providers (a refusal).
	VerdictNoMigrateMode = Verdict{"no-migrate-mode", "has no migrate mode: it is built without the in-tree cloud providers, " +
		"so no in-tree controller manager hands over to the CCM"}
)

// Verdicts lists them, in the order docs and tests list them.
var Verdicts = []Verdict{VerdictSkewInstall, VerdictSkewMigrate, VerdictNoInTree, VerdictClusterUnknown, VerdictNoMigrateMode}
