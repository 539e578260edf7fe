// Package check reads a live cluster and tells whether the AWS cloud
// controller manager will work there, and if not, why. It works in two
// steps: Collect reads everything once (every API call and
// SubjectAccessReview) into a Snapshot; Evaluate runs the rules, pure
// functions of the snapshot per area (rules.go lists them), into a Report.
package check

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Sources of the workload's spec.
const (
	SourceManifests = "manifests"
	SourceRelease   = "release"
	SourceCluster   = "cluster"
)

// Input says what to check.
type Input struct {
	// Context and Server name the cluster in the report.
	Context, Server string
	// Source is manifests, release or cluster. With manifests or release,
	// Objects hold them (DecodeManifests); with cluster the workload is
	// found among the DaemonSets and Deployments in the cluster.
	Source  string
	Objects []runtime.Object
	// Release names the Helm release, "NAME revision N", and ReleaseChart
	// its chart, "NAME-VERSION"; ReleaseStatus is that revision's status
	// (deployed, failed, pending-upgrade, ...) and ReleaseDescription what
	// Helm says of it.
	Release, ReleaseChart             string
	ReleaseStatus, ReleaseDescription string
	// ManifestNamespace is the namespace of the objects of the manifests
	// or the release that name none ("": default).
	ManifestNamespace string
	// SearchNamespace is where in the cluster the workload is looked for
	// with source cluster ("": every namespace).
	SearchNamespace string
	// Target picks one workload, KIND/NAMESPACE/NAME, when there are
	// several.
	Target string
	// KCMUser is the in-tree controller manager's identity, whose access
	// to the migration lease is checked in migrate mode.
	KCMUser string
	// MigrationHolder, when set (LeaseKCM or LeaseCCM), is the side that
	// should hold the migration lease at this step of the migration: in
	// migrate mode a lease missing, lapsed or held by anyone else is then
	// an error (the gates of plan ask it).
	MigrationHolder string
	// UpgradeTo is the Kubernetes version the cluster is about to move to
	// (check --upgrade-to, 1.37): the options rule judges each component's
	// options at it too. Empty: the cluster's own version only.
	UpgradeTo string
	// Now is the time leases are judged at; zero means time.Now.
	Now time.Time
	// AWSOptions, when set, has check read the AWS account too (check
	// --aws), with AWSSide.
	AWSOptions *AWSOptions
	// AWSSide reads and judges the account (package awscheck's Side): the
	// command that assembles check composes it in. Without it the AWS rules
	// give nothing, and AWSOptions are an error.
	AWSSide *AWSSide `json:"-"`
}

// Run checks one cluster: Collect, then Evaluate.
func Run(ctx context.Context, client kubernetes.Interface, in Input) (*Report, error) {
	start := time.Now()
	s, err := Collect(ctx, client, in)
	if err != nil {
		return nil, err
	}
	rep := Evaluate(s)
	rep.DurationMS = time.Since(start).Milliseconds()
	return rep, nil
}

func suggestDistro(detected string) string {
	if _, ok := distros.RecordOf(distros.Distro(detected)); ok {
		return detected
	}
	return string(distros.Auto)
}

func ownedBy(p *corev1.Pod, uid types.UID) bool {
	for _, o := range p.OwnerReferences {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// podNode is the node a pod is bound to, or, before the scheduler binds
// it, the node the DaemonSet controller pinned it to (a required node
// affinity on metadata.name).
func podNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

func podReport(p *corev1.Pod) *PodReport {
	pr := &PodReport{Name: p.Name, Phase: string(p.Status.Phase)}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			pr.Ready = true
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		pr.Restarts += cs.RestartCount
		if cs.State.Waiting != nil && pr.Waiting == "" {
			pr.Waiting = cs.State.Waiting.Reason
		}
	}
	return pr
}

// workloadBindsUser tells whether the manifests bind a (Cluster)Role to a
// user: how a migration lease grant not yet installed shows.
func workloadBindsUser(objs []runtime.Object, user string) string {
	for _, o := range objs {
		var subjects []rbacv1.Subject
		var id string
		switch b := o.(type) {
		case *rbacv1.RoleBinding:
			subjects, id = b.Subjects, "RoleBinding "+b.Namespace+"/"+b.Name
		case *rbacv1.ClusterRoleBinding:
			subjects, id = b.Subjects, "ClusterRoleBinding "+b.Name
		default:
			continue
		}
		for _, s := range subjects {
			if s.Kind == rbacv1.UserKind && s.Name == user {
				return id
			}
		}
	}
	return ""
}

func age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}
