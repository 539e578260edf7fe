// Package check reads a live cluster and tells whether the AWS cloud
// controller manager (CCM) will work there, and if not, why: the
// distribution, where the CCM's pods would run, whether nodes can be
// initialised, the CCM's permissions (asked of the API server by
// SubjectAccessReview), the leader-election and migration leases, and
// version skew. It never writes to the cluster and reads each kind of
// object with one list, never once per node.
package check

import (
	"slices"
	"strings"
	"time"
)

// Severity grades a finding.
type Severity string

const (
	OK      Severity = "ok"      // as it should be
	Info    Severity = "info"    // a fact, or a check that does not apply yet
	Warning Severity = "warning" // may be fine, worth a look
	Error   Severity = "error"   // the CCM will not work, or not everywhere
)

// The areas a finding belongs to; Rules gives each its rules and its place
// in a report (Areas).
const (
	AreaDistribution = "distribution"
	AreaWorkload     = "workload"
	AreaPlacement    = "placement"
	AreaNode         = "node"
	AreaHostname     = "hostname"
	AreaInTree       = "in-tree"
	// AreaOptions: options a component no longer takes at its version or
	// at the one --upgrade-to names.
	AreaOptions = "options"
	// AreaControllers: other cloud controllers beside the AWS CCM (a
	// distribution's own, a second AWS CCM).
	AreaControllers = "controllers"
	AreaIAM         = "iam"
	AreaService     = "service"
	AreaRBAC        = "rbac"
	AreaLease       = "lease"
	AreaVersion     = "version"
	// AreaPlan: which plan fits the cluster.
	AreaPlan = "plan"
	// The areas of the AWS rules (check --aws).
	AreaAWS           = "aws"
	AreaInstance      = "instance"
	AreaClusterID     = "cluster-id"
	AreaSecurityGroup = "security-group"
	AreaSubnet        = "subnet"
	AreaMetadata      = "metadata"
	AreaLoadBalancer  = "load-balancer"
)

// Finding is one line of the report.
type Finding struct {
	Area     string   `json:"area"`
	Severity Severity `json:"severity"`
	// Subject is what the finding is about: a node, a lease, a service
	// account; empty for the cluster as a whole.
	Subject string `json:"subject,omitempty"`
	// Subjects and Count: a finding about several nodes (or other objects)
	// alike lists them all; Subject then counts them and names a few.
	Subjects []string `json:"subjects,omitempty"`
	Count    int      `json:"count,omitempty"`
	Message  string   `json:"message"`
	// Fix says what to do, in words; empty when nothing needs doing.
	Fix string `json:"fix,omitempty"`
	// Source names the public source of the fact a finding rests on
	// (repository, path, tag), where it is one of internal/releases.
	Source string `json:"source,omitempty"`
}

// Report is what check found on one cluster.
type Report struct {
	Context string `json:"context"`
	Server  string `json:"server,omitempty"`
	// Error is set when the cluster could not be read (unreachable,
	// credentials refused, a permission check needs missing); nothing
	// else is then.
	Error             string        `json:"error,omitempty"`
	KubernetesVersion string        `json:"kubernetesVersion,omitempty"`
	Distribution      Distribution  `json:"distribution"`
	Workload          *Workload     `json:"workload,omitempty"`
	Nodes             []NodeReport  `json:"nodes"`
	Leases            []LeaseReport `json:"leases"`
	Permissions       []Permission  `json:"permissions"`
	Findings          []Finding     `json:"findings"`
	// AWS is what check --aws read of the account; nil without --aws.
	AWS        *AWSSummary `json:"aws,omitempty"`
	Summary    Summary     `json:"summary"`
	DurationMS int64       `json:"durationMs"`
}

// AWSSummary is the account check --aws read: where, as whom, through
// which endpoints, with how many calls, and what it could not read.
type AWSSummary struct {
	Region     string            `json:"region"`
	RegionFrom string            `json:"regionFrom"`
	Caller     string            `json:"caller,omitempty"`
	Endpoints  map[string]string `json:"endpoints,omitempty"`
	// Instances maps each node to the instance the CCM finds for it.
	Instances map[string]string `json:"instances"`
	Calls     map[string]int    `json:"calls"`
	Unread    []AWSUnread       `json:"unread,omitempty"`
	// Errors and Warnings count the AWS areas' findings.
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
}

// Summary counts what a fleet overview shows per cluster.
type Summary struct {
	ControlPlaneNodes int `json:"controlPlaneNodes"`
	// CCMOnControlPlane counts control-plane nodes where a CCM pod would
	// run (a DaemonSet) or may run (a Deployment).
	CCMOnControlPlane int `json:"ccmOnControlPlane"`
	Nodes             int `json:"nodes"`
	Uninitialized     int `json:"uninitialized"`
	Errors            int `json:"errors"`
	Warnings          int `json:"warnings"`
}

// Distribution is what the nodes say the cluster is, and what the
// workload was rendered for.
type Distribution struct {
	// Detected is a --distro value of distros.All but auto, mixed or
	// unknown.
	Detected string   `json:"detected"`
	Evidence []string `json:"evidence,omitempty"`
	// Rendered is the --distro the workload was rendered for, when it
	// shows: a value of distros.All, those of the same placement
	// joined by "/" ("rke2/k3s"), or "" when it was not rendered by
	// aws-ccm-renderer.
	Rendered string `json:"rendered,omitempty"`
	// RenderedFrom is "annotation" (the renderer's options annotation)
	// or "placement" (inferred from the nodeSelector or node affinity).
	RenderedFrom string `json:"renderedFrom,omitempty"`
}

// Workload is the CCM's DaemonSet or Deployment.
type Workload struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Source is where its spec was read: manifests, release or cluster.
	Source string `json:"source"`
	// Release names the Helm release (--release), as NAME revision N.
	Release string `json:"release,omitempty"`
	// Installed tells whether the workload exists in the cluster.
	Installed bool `json:"installed"`
	// AppliedBy is the tool that applied it, by the marks each leaves on
	// what it applies (appliedBy): "Argo CD (Application NAME)", "Fleet
	// (Helm release NAMESPACE/NAME)", "Helm (release NAMESPACE/NAME)";
	// empty when it bears none.
	AppliedBy      string `json:"appliedBy,omitempty"`
	Container      string `json:"container"`
	Image          string `json:"image"`
	ServiceAccount string `json:"serviceAccount"`
	// Mode is install or migrate (leader migration on).
	Mode string `json:"mode"`
	// Chart is the chart name and version the workload was made from.
	Chart          string `json:"chart,omitempty"`
	LeaderElect    bool   `json:"leaderElect"`
	Lease          string `json:"lease,omitempty"`          // NAMESPACE/NAME of its leader-election lease
	MigrationLease string `json:"migrationLease,omitempty"` // NAMESPACE/NAME, in migrate mode
	// MigrationConfig is where the LeaderMigrationConfiguration comes
	// from: "ConfigMap NAME (key KEY)", or "built-in default".
	MigrationConfig string `json:"migrationConfig,omitempty"`
}

// NodeReport is one node as check sees it.
type NodeReport struct {
	Name string `json:"name"`
	// ControlPlane is true when a label, a taint or the distribution's
	// node arguments show the control-plane role; ControlPlaneBy says
	// which.
	ControlPlane   bool   `json:"controlPlane"`
	ControlPlaneBy string `json:"controlPlaneBy,omitempty"`
	Distribution   string `json:"distribution,omitempty"`
	KubeletVersion string `json:"kubeletVersion,omitempty"`
	// CCM says whether a CCM pod would run here (DaemonSet) or may be
	// scheduled here (Deployment); ExcludedBy says which rule keeps it
	// off: "nodeSelector ...", "affinity ...", "taint ...".
	CCM        bool   `json:"ccm"`
	ExcludedBy string `json:"excludedBy,omitempty"`
	// Pod is the CCM pod on this node, when the workload is installed.
	Pod *PodReport `json:"pod,omitempty"`
	// ProviderID as set; Uninitialized: the node carries
	// node.cloudprovider.kubernetes.io/uninitialized.
	ProviderID    string `json:"providerID,omitempty"`
	Uninitialized bool   `json:"uninitialized"`
	// EC2Name: the node name has the EC2 private DNS form.
	EC2Name bool `json:"ec2Name"`
	// ExternalProvider lists what shows the kubelet runs with
	// --cloud-provider=external.
	ExternalProvider []string `json:"externalProvider,omitempty"`
}

// PodReport is a CCM pod.
type PodReport struct {
	Name     string `json:"name"`
	Phase    string `json:"phase"`
	Ready    bool   `json:"ready"`
	Restarts int32  `json:"restarts"`
	Waiting  string `json:"waiting,omitempty"` // the container's waiting reason, e.g. CrashLoopBackOff
}

// LeaseReport is a lease check read.
type LeaseReport struct {
	// Role is ccm (the CCM's leader election), migration (the lease the
	// in-tree controller manager and the CCM share) or
	// kube-controller-manager.
	Role      string `json:"role"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Exists    bool   `json:"exists"`
	Holder    string `json:"holder,omitempty"`
	// Side is who the holder is: ccm, kube-controller-manager or unknown
	// (migration lease only).
	Side     string `json:"side,omitempty"`
	Acquired string `json:"acquired,omitempty"` // RFC 3339
	Renewed  string `json:"renewed,omitempty"`  // RFC 3339
	Expired  bool   `json:"expired"`

	acquiredAt, renewedAt time.Time
}

// Permission is one SubjectAccessReview and its answer.
type Permission struct {
	Subject   string `json:"subject"` // the user or service account asked about
	Verb      string `json:"verb"`
	Group     string `json:"group,omitempty"`
	Resource  string `json:"resource"` // with its subresource: serviceaccounts/token
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Allowed   bool   `json:"allowed"`
	// Purpose is empty for a permission the subject needs; token-scope
	// for check's questions of how far the CCM may create tokens.
	Purpose string `json:"purpose,omitempty"`
}

func (r *Report) add(f Finding) { r.Findings = append(r.Findings, f) }

// finish sorts the findings by area (stable within an area) and counts.
func (r *Report) finish() {
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return slices.Index(areaOrder, a.Area) - slices.Index(areaOrder, b.Area)
	})
	r.Summary.Errors, r.Summary.Warnings = 0, 0
	for _, f := range r.Findings {
		switch f.Severity {
		case Error:
			r.Summary.Errors++
		case Warning:
			r.Summary.Warnings++
		}
	}
}

// Failed returns the report of a cluster check could not read.
func Failed(context, server string, err error) *Report {
	return &Report{Context: context, Server: server, Error: err.Error(), Distribution: Distribution{Detected: DistroUnknown}, Nodes: []NodeReport{}, Leases: []LeaseReport{}, Permissions: []Permission{}, Findings: []Finding{}}
}

// Problems reports whether the report holds an error.
func (r *Report) Problems() bool { return r.Summary.Errors > 0 }

func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func JoinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
