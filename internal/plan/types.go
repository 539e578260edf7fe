// Package plan is the migration runbook as data: for each distribution
// (distros.Records but auto; its parts in parts.go) and phase (before, during, after the switch to
// the external cloud provider) the ordered steps, each with the configuration
// snippets to write, the commands to run (the renderer's through Helm among
// them), what to check before going on and how to roll the step back.
//
// Build makes a Plan from Options; WriteText, WriteMarkdown and WriteJSON
// print it for people, for docs/migration.md and for automation. The JSON
// form is described by docs/plan.schema.json and keeps its field names
// within an apiVersion.
package plan

import (
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// APIVersion and Kind identify the JSON form of a plan.
const (
	APIVersion = "aws-ccm-renderer.io/v1alpha1"
	Kind       = "MigrationPlan"
)

// Phase is a part of the migration, relative to the switch of the cluster
// to the external cloud provider.
type Phase string

const (
	// Before: the cluster still runs the in-tree provider; everything that
	// prepares the switch, up to the CCM waiting beside the in-tree
	// controller manager.
	Before Phase = "before"
	// During: the cluster's components move to the external provider.
	During Phase = "during"
	// After: leader migration off, leftovers removed, the upgrade past 1.26.
	After Phase = "after"
)

// Phases lists the phases in order.
var Phases = []Phase{Before, During, After}

// Distros lists the distributions a plan exists for: every one but auto.
var Distros = func() []distros.Distro {
	var ds []distros.Distro
	for _, p := range distros.Named(distros.Records()) {
		ds = append(ds, p.Distro)
	}
	return ds
}()

// Strategy says how the cloud controllers move.
type Strategy string

const (
	// LeaderMigration: the in-tree kube-controller-manager and the CCM run
	// side by side and hand the cloud controllers over through a lease.
	LeaderMigration Strategy = "leader-migration"
	// Switch: there is no in-tree provider to hand over from (K3s); the
	// distribution's own cloud controller is switched off and the CCM on.
	Switch Strategy = "switch"
	// Install: a new cluster, configured for the CCM from the start.
	Install Strategy = "install"
)

// Plan is the runbook for one distribution.
type Plan struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Distro     distros.Distro `json:"distro"`
	// Title names the distribution and where its configuration lives.
	Title    string   `json:"title"`
	Strategy Strategy `json:"strategy"`
	// From is what ran the cluster's cloud controllers before (plan
	// --from): new, in-tree, builtin or none.
	From string `json:"from"`
	// Summary says in a few sentences what the plan does and why.
	Summary           string `json:"summary"`
	KubernetesVersion string `json:"kubernetesVersion"`
	CCM               CCM    `json:"ccm"`
	// LeaderMigration is set for the LeaderMigration strategy.
	LeaderMigration *Lease `json:"leaderMigration,omitempty"`
	// Inputs are what the commands read that another command or the
	// operator makes: shell variables and the workstation's files, in the
	// order the plan first uses them.
	Inputs []Input     `json:"inputs,omitempty"`
	Phases []PhasePlan `json:"phases"`

	// flags are the plan command's flags that print this plan (Options.Flags).
	flags []string
}

// Input kinds.
const (
	InputVariable = "variable"
	InputFile     = "file"
)

// Input is a shell variable or a file of the workstation that a command
// reads and does not make itself.
type Input struct {
	// Name is a variable's name (without $) or a file's path.
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Step sets the variable or writes the file (its command, or its
	// snippet); empty when the operator supplies it.
	Step string `json:"step,omitempty"`
	// Source says what it is and where it comes from.
	Source string `json:"source"`
}

// CCM is the cloud controller manager the plan installs.
type CCM struct {
	// Chart is the chart as the commands name it: a name looked up in
	// Repository, REPO/NAME, oci://... or a local package.
	Chart string `json:"chart"`
	// Source is how the commands find the chart: repository, repo-name,
	// oci or local.
	Source string `json:"source"`
	// Repository is the repository URL of a chart name.
	Repository   string `json:"repository,omitempty"`
	ChartVersion string `json:"chartVersion"`
	Image        string `json:"image"`
	ImageTag     string `json:"imageTag"`
	// ImageTagSource says where the tag comes from.
	ImageTagSource string `json:"imageTagSource"`
	Release        string `json:"release"`
	Namespace      string `json:"namespace"`
	DaemonSet      string `json:"daemonSet"`
}

// Lease is the lease the in-tree controller manager and the CCM share.
type Lease struct {
	Name      string `json:"leaseName"`
	Namespace string `json:"leaseNamespace"`
	// KCMUser is the identity the in-tree kube-controller-manager takes the
	// lease with.
	KCMUser string `json:"kcmUser"`
}

// PhasePlan is the ordered steps of one phase.
type PhasePlan struct {
	Name    Phase  `json:"name"`
	Title   string `json:"title"`
	Summary string `json:"summary"`
	Steps   []Step `json:"steps"`
}

// Step is one change to the cluster, or one set of checks, that is finished
// and verified before the next begins.
type Step struct {
	// ID is unique within a plan: "<phase>.<name>".
	ID    string `json:"id"`
	Title string `json:"title"`
	// Why the step exists and what goes wrong without it.
	Why string `json:"why"`
	// Notes are further facts the operator needs for this step.
	Notes    []string  `json:"notes,omitempty"`
	Snippets []Snippet `json:"snippets,omitempty"`
	Commands []Command `json:"commands,omitempty"`
	// Checks are run after the step, before the next one.
	Checks   []Check  `json:"checks,omitempty"`
	Rollback Rollback `json:"rollback"`
}

// Snippet is configuration to write: a file, or a part of one.
type Snippet struct {
	// File is where it goes: a path on the nodes, or the object or file
	// that holds the configuration.
	File     string `json:"file"`
	Language string `json:"language"`
	Content  string `json:"content"`
	// Note says how to apply it (merge, replace, on which nodes).
	Note string `json:"note,omitempty"`
}

// Command kinds.
const (
	// KindRenderer runs aws-ccm-renderer, directly or as Helm's post-renderer.
	KindRenderer = "renderer"
	// KindKubectl runs kubectl against the cluster being migrated.
	KindKubectl = "kubectl"
	// KindCluster changes the cluster's own configuration (rke up, kubectl
	// against Rancher, kubeadm).
	KindCluster = "cluster"
	// KindNode runs on a node.
	KindNode = "node"
	// KindAWS runs the AWS CLI.
	KindAWS = "aws"
	// KindCheck runs aws-ccm-renderer check: it reads the cluster and
	// exits 0 when nothing keeps the CCM from working.
	KindCheck = "check"
)

// Command is one command line.
type Command struct {
	Description string `json:"description,omitempty"`
	Kind        string `json:"kind"`
	// Where it runs: a workstation with kubectl, each control-plane node, ...
	Where string `json:"where"`
	// Argv is the program and its arguments when the command is a single
	// program invocation; it is empty for pipelines, loops and commands
	// that expand a variable (image.tag=TAG@$CCM_DIGEST_<tag>, the digest
	// of an image the promotion list does not give).
	Argv []string `json:"argv,omitempty"`
	// Shell is the command as a POSIX shell runs it.
	Shell string `json:"shell"`
	// Main marks the one command of a step that --brief shows: the change
	// the step makes, or its gate when it only reads.
	Main bool `json:"main,omitempty"`
}

// Check is what to verify before the next step.
type Check struct {
	Description string   `json:"description"`
	Command     *Command `json:"command,omitempty"`
	// Expect is the result that lets the migration go on.
	Expect string `json:"expect"`
}

// Rollback undoes a step.
type Rollback struct {
	Description string    `json:"description"`
	Commands    []Command `json:"commands,omitempty"`
}
