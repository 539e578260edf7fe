package check

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/nodefit"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// View is a snapshot with what follows from it, worked out once for every
// rule: the distribution, the workload's report and flags, each node's
// report and placement, the leases' reports.
type View struct {
	*Snapshot
	Distribution Distribution
	// Workload is nil when there is no CCM workload.
	Workload *workloadView
	Nodes    []nodeView
	// Leases are the leases the workload uses, as the report shows them;
	// none without a workload.
	Leases []LeaseReport
	// region is the cluster's AWS region as its nodes show it.
	region string
	// AWSView is what the AWS rules share (package awscheck), worked out
	// once; nil without check --aws.
	AWSView any
}

// Evaluate judges a snapshot: every rule of Rules over its view, into a
// report.
func Evaluate(s *Snapshot) *Report {
	v := NewView(s)
	rep := &Report{Context: s.Context, Server: s.Server, KubernetesVersion: s.KubernetesVersion, Distribution: v.Distribution,
		Nodes: []NodeReport{}, Leases: v.Leases, Permissions: s.Access, Findings: []Finding{}}
	if rep.Leases == nil {
		rep.Leases = []LeaseReport{}
	}
	if rep.Permissions == nil {
		rep.Permissions = []Permission{}
	}
	if v.Workload != nil {
		rep.Workload = v.Workload.Workload
	}
	for _, n := range v.Nodes {
		rep.Nodes = append(rep.Nodes, n.NodeReport)
		rep.Summary.Nodes++
		if n.ControlPlane {
			rep.Summary.ControlPlaneNodes++
			if n.CCM && v.Workload != nil {
				rep.Summary.CCMOnControlPlane++
			}
		}
		if n.Uninitialized {
			rep.Summary.Uninitialized++
		}
	}
	for _, r := range Rules {
		if check := s.check(r); check != nil { // nil: an AWS rule, without the AWS side
			rep.Findings = append(rep.Findings, check(v)...)
		}
	}
	rep.finish()
	if a := s.AWS; a != nil {
		sum := &AWSSummary{Region: a.Region, RegionFrom: a.RegionFrom, Caller: a.Caller, Endpoints: a.Endpoints, Calls: a.Calls, Unread: a.Unread, Instances: map[string]string{}}
		if s.AWSSide != nil {
			sum.Instances = s.AWSSide.Instances(v)
		}
		for _, f := range rep.Findings {
			if !AWSArea(f.Area) {
				continue
			}
			switch f.Severity {
			case Error:
				sum.Errors++
			case Warning:
				sum.Warnings++
			}
		}
		rep.AWS = sum
	}
	return rep
}

// NewView works out what follows from a snapshot.
func NewView(s *Snapshot) *View {
	v := &View{Snapshot: s, Distribution: Detect(s.Nodes), Workload: describeWorkload(s), region: ClusterRegion(s.Nodes)}
	if w := v.Workload; w != nil {
		d := &v.Distribution
		if opts, ok := readOptionsAnnotation(w.c.meta); ok && opts.Distro != "" {
			d.Rendered, d.RenderedFrom = string(opts.Distro), "annotation"
		} else if r := renderedFor(w.spec); r != "" {
			d.Rendered, d.RenderedFrom = r, "placement"
		}
		v.Leases = judgeLeases(s, w.leaseWants())
	}
	for i := range s.Nodes {
		v.Nodes = append(v.Nodes, v.describeNode(&s.Nodes[i]))
	}
	if s.AWS != nil && s.AWSSide != nil {
		v.AWSView = s.AWSSide.NewView(v)
	}
	return v
}

// workloadView is what the workload's spec says: its report, the CCM
// container and its flags, where it mounts its leader migration
// configuration from, and that configuration.
type workloadView struct {
	*Workload
	c     *candidate
	spec  corev1.PodSpec
	ctr   corev1.Container
	flags map[string]string
	// leaseNS is the namespace of its leader-election leases.
	leaseNS string
	// In migrate mode: the --leader-migration-config file ("": the
	// built-in default), and the ConfigMap and key it is mounted from
	// (configMap "": not mounted from one).
	configFile, configMap, configKey string
	// lmc is the LeaderMigrationConfiguration read from the ConfigMap;
	// lmcErr says why it could not be read.
	lmc    *leaderMigrationConfig
	lmcErr error
}

// describeWorkload reads the workload's spec into its report; nil without
// a workload.
func describeWorkload(s *Snapshot) *workloadView {
	c := s.Workload
	if c == nil {
		return nil
	}
	w := &workloadView{c: c, spec: c.spec.Spec, ctr: c.spec.Spec.Containers[c.container]}
	w.flags = flags(w.ctr)
	w.Workload = &Workload{
		Kind: c.kind, Namespace: c.namespace, Name: c.name, Source: s.Source, Release: s.Release,
		Installed: s.Installed != nil, AppliedBy: appliedBy(c.meta), Container: w.ctr.Name, Image: w.ctr.Image, ServiceAccount: w.spec.ServiceAccountName,
		Mode: string(renderer.ModeInstall), Chart: chartOf(c.meta), LeaderElect: true,
	}
	wr := w.Workload
	if wr.ServiceAccount == "" {
		wr.ServiceAccount = "default"
	}
	if s.ReleaseChart != "" {
		wr.Chart = s.ReleaseChart
	}
	if v, ok := w.flags["enable-leader-migration"]; ok && IsTrue(v) {
		wr.Mode = string(renderer.ModeMigrate)
	}
	if v, ok := w.flags["leader-elect"]; ok && !IsTrue(v) {
		wr.LeaderElect = false
	}
	w.leaseNS = releases.LeaseNamespace
	if v := w.flags["leader-elect-resource-namespace"]; v != "" {
		w.leaseNS = v
	}
	if wr.LeaderElect {
		name := releases.CCMLease
		if v := w.flags["leader-elect-resource-name"]; v != "" {
			name = v
		}
		wr.Lease = w.leaseNS + "/" + name
	}
	if wr.Mode != string(renderer.ModeMigrate) {
		return w
	}
	w.configFile = w.flags["leader-migration-config"]
	if w.configFile == "" {
		wr.MigrationConfig = "built-in default"
		wr.MigrationLease = w.leaseNS + "/" + renderer.DefaultLeaderName
		return w
	}
	var ok bool
	if w.configMap, w.configKey, ok = configMapSource(w.spec, w.ctr, w.configFile); !ok {
		return w
	}
	wr.MigrationConfig = fmt.Sprintf("ConfigMap %s/%s (key %s)", c.namespace, w.configMap, w.configKey)
	if s.MigrationConfigMap == nil {
		return w
	}
	lmc, err := parseLeaderMigrationConfig(s.MigrationConfigMap.Data[w.configKey])
	if err != nil {
		w.lmcErr = err
		return w
	}
	w.lmc = &lmc
	leader := lmc.LeaderName
	if leader == "" {
		leader = renderer.DefaultLeaderName
	}
	wr.MigrationLease = w.leaseNS + "/" + leader
	return w
}

// subject names the workload in findings: "DaemonSet kube-system/ccm".
func (w *workloadView) subject() string { return w.Kind + " " + w.Namespace + "/" + w.Name }

// nodeView is a node with its report and whether the CCM's pods fit it.
type nodeView struct {
	NodeReport
	node *corev1.Node
	// exclusion is the rule that keeps the CCM's pods off, nil when they
	// fit (or there is no workload).
	exclusion *nodefit.Exclusion
	// labelled is false when only a taint or the node's arguments show
	// its control-plane role.
	labelled bool
}

// Node is the node itself.
func (n *nodeView) Node() *corev1.Node { return n.node }

// HostNetwork tells whether the CCM's pods run in the host network.
func (w *workloadView) HostNetwork() bool { return w.spec.HostNetwork }

// CCMImage is the image of the CCM's container; "" without a workload.
func (s *Snapshot) CCMImage() string {
	if s.Workload == nil {
		return ""
	}
	return s.Workload.spec.Spec.Containers[s.Workload.container].Image
}

func (v *View) describeNode(n *corev1.Node) nodeView {
	nv := nodeView{node: n, NodeReport: NodeReport{Name: n.Name, KubeletVersion: n.Status.NodeInfo.KubeletVersion, ProviderID: n.Spec.ProviderID,
		Uninitialized: hasTaint(n, distros.TaintUninitialized), ExternalProvider: externalEvidence(n)}}
	nv.Distribution, _ = nodeDistro(n)
	_, _, nv.EC2Name = ec2NameOf(n.Name)
	nv.ControlPlane, nv.ControlPlaneBy, nv.labelled = IsControlPlane(n)
	if w := v.Workload; w != nil {
		nv.exclusion = nodefit.Exclude(&w.spec, n, w.Kind == "DaemonSet")
		nv.CCM = nv.exclusion == nil
		if nv.exclusion != nil {
			nv.ExcludedBy = nv.exclusion.String()
		}
		if p := v.Pods[n.Name]; p != nil {
			nv.Pod = podReport(p)
		}
	}
	return nv
}

// object is the candidate's object.
func (c *candidate) object() metav1.Object {
	if c.ds != nil {
		return c.ds
	}
	return c.deploy
}

// subjects the rules ask about.
func (w *workloadView) serviceAccount() subject {
	return serviceAccountSubject(w.Namespace, w.ServiceAccount)
}

func kcmSubject(user string) subject {
	return subject{label: "User " + user, user: user, groups: []string{"system:authenticated"}}
}

// question is what Collect asks the API server about one subject.
type question struct {
	who  subject
	what []access
}

// questions are the SubjectAccessReviews the workload needs answered: its
// service account's, once installed, and in migrate mode the in-tree
// controller manager's on the migration lease.
func (w *workloadView) questions(kcmUser string) []question {
	var qs []question
	if w.Installed {
		qs = append(qs, question{w.serviceAccount(), append(w.ccmAccess(), tokenScopeAccess()...)})
	}
	if w.MigrationLease != "" {
		ns, name, _ := strings.Cut(w.MigrationLease, "/")
		qs = append(qs, question{kcmSubject(kcmUser), []access{
			{verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: ns, name: name},
			{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: ns, name: name},
			{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: ns},
		}})
	}
	return qs
}

// answers are the snapshot's answers about one subject.
func (v *View) answers(who subject) []Permission {
	var out []Permission
	for _, p := range v.Access {
		if p.Subject == who.label {
			out = append(out, p)
		}
	}
	return out
}
