package check

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Snapshot is everything check knows of one cluster: what was asked, and
// what Collect read with every API call and SubjectAccessReview check
// makes, once. The rules judge a snapshot and read nothing else, so a test
// can write one as a literal.
type Snapshot struct {
	Input
	// Now is the time leases are judged at.
	Now               time.Time
	KubernetesVersion string
	// Nodes are the cluster's nodes, by name.
	Nodes []corev1.Node
	// Workload is the CCM's DaemonSet or Deployment, from the manifests or
	// the cluster; nil when there is none.
	Workload *candidate
	// OtherCCMs are the other AWS CCM workloads the cluster runs: the
	// ones --target left out, or, with manifests, those the manifests do
	// not describe.
	OtherCCMs []candidate
	// Installed is the workload as the cluster runs it; nil when it does
	// not run it.
	Installed metav1.Object
	// MigrationConfigMap is the ConfigMap the workload mounts its
	// LeaderMigrationConfiguration from, from the manifests or the
	// cluster; nil when neither has it.
	MigrationConfigMap *corev1.ConfigMap
	// Pods are the installed workload's pods, by the node they run on.
	Pods map[string]*corev1.Pod
	// Leases are the leases of the namespaces the workload's leases are
	// in, by NAMESPACE/NAME.
	Leases map[string]*coordinationv1.Lease
	// Access are the SubjectAccessReviews' answers, in the order asked.
	Access []Permission
	// PersistentVolumes are the cluster's PersistentVolumes.
	PersistentVolumes []corev1.PersistentVolume
	// PodsEverywhere are the pods of every namespace pinned, by
	// nodeSelector or required node affinity, to the
	// kubernetes.io/hostname label of a node whose label is not its name;
	// read only when there is such a node (nil otherwise), each with only
	// what the hostname rule reads (pinnedPart).
	PodsEverywhere []corev1.Pod
	// ControlPlanePods are the pods of kube-system labelled
	// component=kube-controller-manager, kube-apiserver or
	// cloud-controller-manager: the mirror pods of the control plane's
	// static pods on RKE2 and kubeadm (RKE2's own cloud controller among
	// them).
	ControlPlanePods []corev1.Pod
	// KubeadmConfig is kube-system/kubeadm-config, read on kubeadm
	// clusters; nil when it is not there or check may not read it
	// (KubeadmConfigUnread says so).
	KubeadmConfig       *corev1.ConfigMap
	KubeadmConfigUnread string
	// Events are the Warning events of Services and Nodes: where the
	// cloud controllers record what AWS refused them.
	Events []corev1.Event
	// LoadBalancers are the Services of type LoadBalancer, and
	// ServiceLBDaemonSets K3s's ServiceLB DaemonSets: read on K3s, with
	// --aws, and (the Services) while no CCM service controller runs
	// (both nil otherwise).
	LoadBalancers       []corev1.Service
	ServiceLBDaemonSets []appsv1.DaemonSet
	// CloudConfig is the file the CCM's --cloud-config names, where it is
	// mounted from a ConfigMap or Secret; nil otherwise.
	CloudConfig *CloudConfig
	// AWS is what check read of the AWS account (check --aws); nil
	// without --aws.
	AWS *AWSAccount
	// Webhooks are the mutating webhooks of Services, read with --aws
	// (the AWS Load Balancer Controller's makes it the owner of new
	// Services' load balancers); WebhooksUnread says why they could not
	// be read.
	Webhooks       []ServiceWebhook
	WebhooksUnread string
}

// Collect reads one cluster into a snapshot. It returns a *ClusterError when
// the cluster cannot be read, a renderer.UsageError when the workload is
// ambiguous, a renderer.InputError when the manifests hold no CCM.
func Collect(ctx context.Context, client kubernetes.Interface, in Input) (*Snapshot, error) {
	s := &Snapshot{Input: in, Now: in.Now, Pods: map[string]*corev1.Pod{}, Leases: map[string]*coordinationv1.Lease{}}
	if s.Now.IsZero() {
		s.Now = time.Now()
	}
	if s.KCMUser == "" {
		s.KCMUser = renderer.DefaultKCMUser
	}
	for _, step := range []func(context.Context, kubernetes.Interface) error{
		s.collectVersionAndNodes, s.collectWorkload, s.collectMigrationConfig, s.collectPods, s.collectLeases, s.collectAccess,
		s.collectPinned, s.collectControlPlane, s.collectKubeadmConfig, s.collectEvents, s.collectServices,
		s.collectCloudConfig, s.collectWebhooks,
	} {
		if err := step(ctx, client); err != nil {
			return nil, err
		}
	}
	if err := s.collectAWS(ctx); err != nil { // the AWS side (awsside.go)
		return nil, err
	}
	return s, nil
}

// collectVersionAndNodes reads the API server's version and the nodes.
func (s *Snapshot) collectVersionAndNodes(ctx context.Context, client kubernetes.Interface) error {
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return clusterError("get", "/version", "", err)
	}
	s.KubernetesVersion = v.GitVersion
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return clusterError("list", "nodes", "", err)
	}
	s.Nodes = nodes.Items
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Name < s.Nodes[j].Name })
	return nil
}

// collectWorkload picks the CCM workload from the manifests or the
// cluster, and reads whether (and as what) it is installed.
func (s *Snapshot) collectWorkload(ctx context.Context, client kubernetes.Interface) error {
	var cands []candidate
	where := s.where()
	if s.Source == SourceCluster {
		ns := s.SearchNamespace
		dss, err := client.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return clusterError("list", "daemonsets.apps", ns, err)
		}
		deps, err := client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return clusterError("list", "deployments.apps", ns, err)
		}
		var objs []runtime.Object
		for i := range dss.Items {
			objs = append(objs, &dss.Items[i])
		}
		for i := range deps.Items {
			objs = append(objs, &deps.Items[i])
		}
		cands = candidates(objs, "")
	} else {
		cands = candidates(s.Objects, s.manifestNamespace())
	}
	w, err := pick(cands, s.Target, where)
	if err != nil {
		return err
	}
	if s.Source == SourceCluster {
		s.OtherCCMs = others(cands, w)
	}
	if w == nil {
		if s.Source != SourceCluster {
			return &renderer.InputError{Err: fmt.Errorf("no AWS CCM DaemonSet or Deployment in %s (a container whose command is aws-cloud-controller-manager, or whose image is .../provider-aws/cloud-controller-manager)", where)}
		}
		return nil // a finding: nothing initialises the nodes
	}
	s.Workload = w
	if s.Source == SourceCluster {
		s.Installed = w.object()
		return nil
	}
	// Is what the manifests describe installed?
	var err2 error
	if w.kind == "DaemonSet" {
		var ds *appsv1.DaemonSet
		if ds, err2 = client.AppsV1().DaemonSets(w.namespace).Get(ctx, w.name, metav1.GetOptions{}); err2 == nil {
			s.Installed = ds
		}
	} else {
		var d *appsv1.Deployment
		if d, err2 = client.AppsV1().Deployments(w.namespace).Get(ctx, w.name, metav1.GetOptions{}); err2 == nil {
			s.Installed = d
		}
	}
	if err2 != nil && !apierrors.IsNotFound(err2) {
		return clusterError("get", strings.ToLower(w.kind)+"s.apps", w.namespace, err2)
	}
	// A CCM the cluster runs under another name: a second install.
	dss, err := client.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return clusterError("list", "daemonsets.apps", "", err)
	}
	deps, err := client.AppsV1().Deployments("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return clusterError("list", "deployments.apps", "", err)
	}
	var objs []runtime.Object
	for i := range dss.Items {
		objs = append(objs, &dss.Items[i])
	}
	for i := range deps.Items {
		objs = append(objs, &deps.Items[i])
	}
	s.OtherCCMs = others(candidates(objs, ""), w)
	return nil
}

// others are the candidates that are not w.
func others(cands []candidate, w *candidate) []candidate {
	var out []candidate
	for _, c := range cands {
		if w == nil || c.id() != w.id() {
			out = append(out, c)
		}
	}
	return out
}

// collectMigrationConfig finds the ConfigMap the workload mounts its
// leader migration configuration from: in the manifests, else, when the
// workload is installed, in the cluster.
func (s *Snapshot) collectMigrationConfig(ctx context.Context, client kubernetes.Interface) error {
	w := describeWorkload(s)
	if w == nil || w.configMap == "" {
		return nil
	}
	if s.MigrationConfigMap = migrationConfigIn(s.Objects, s.Workload.namespace, w.configMap); s.MigrationConfigMap != nil || s.Installed == nil {
		return nil
	}
	cm, err := client.CoreV1().ConfigMaps(s.Workload.namespace).Get(ctx, w.configMap, metav1.GetOptions{})
	switch {
	case err == nil:
		s.MigrationConfigMap = cm
	case !apierrors.IsNotFound(err):
		return clusterError("get", "configmaps", s.Workload.namespace, err)
	}
	return nil
}

// migrationConfigIn is the ConfigMap of that name among the manifests'
// objects, in the workload's namespace (or none named); nil when there is
// none.
func migrationConfigIn(objs []runtime.Object, namespace, name string) *corev1.ConfigMap {
	var found *corev1.ConfigMap
	for _, o := range objs {
		if m, ok := o.(*corev1.ConfigMap); ok && m.Name == name && (m.Namespace == namespace || m.Namespace == "") {
			found = m
		}
	}
	return found
}

// collectPods lists the installed workload's pods, once, and files them by
// node.
func (s *Snapshot) collectPods(ctx context.Context, client kubernetes.Interface) error {
	if s.Workload == nil || s.Installed == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s.Workload.selector)
	if err != nil || s.Workload.selector == nil {
		return nil
	}
	pods, err := client.CoreV1().Pods(s.Workload.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String(), ResourceVersion: "0"})
	if err != nil {
		return clusterError("list", "pods", s.Workload.namespace, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if s.Workload.kind == "DaemonSet" && !ownedBy(p, s.Installed.GetUID()) {
			continue
		}
		if node := podNode(p); node != "" {
			s.Pods[node] = p
		}
	}
	return nil
}

// collectLeases reads the leases the workload's leases are among, with one
// list per namespace.
func (s *Snapshot) collectLeases(ctx context.Context, client kubernetes.Interface) error {
	// kube-system's, where the distributions' cloud controllers lead,
	// and those of every CCM workload's leases.
	namespaces := []string{metav1.NamespaceSystem}
	var wants []leaseWant
	if w := describeWorkload(s); w != nil {
		wants = w.leaseWants()
	}
	for _, c := range s.OtherCCMs {
		wants = append(wants, leaseWant{LeaseCCM, otherLease(&c)})
	}
	for _, wt := range wants {
		ns, _, _ := strings.Cut(wt.ref, "/")
		if !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	for _, ns := range namespaces {
		list, err := client.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return clusterError("list", "leases.coordination.k8s.io", ns, err)
		}
		for i := range list.Items {
			l := &list.Items[i]
			s.Leases[l.Namespace+"/"+l.Name] = l
		}
	}
	return nil
}

// collectAccess asks the API server, by SubjectAccessReview, whether the
// CCM's service account (once installed) and, in migrate mode, the in-tree
// controller manager may do what they must: every question concurrently,
// the answers in the order asked.
func (s *Snapshot) collectAccess(ctx context.Context, client kubernetes.Interface) error {
	w := describeWorkload(s)
	if w == nil {
		return nil
	}
	var asks []struct {
		who subject
		a   access
	}
	for _, q := range w.questions(s.KCMUser) {
		for _, a := range q.what {
			asks = append(asks, struct {
				who subject
				a   access
			}{q.who, a})
		}
	}
	perms := make([]Permission, len(asks))
	errs := make([]error, len(asks))
	var wg sync.WaitGroup
	for i, q := range asks {
		wg.Go(func() {
			a := q.a
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: q.who.user, Groups: q.who.groups,
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: a.namespace, Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Name: a.name,
				},
			}}
			got, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
			if err != nil {
				errs[i] = clusterError("create", "subjectaccessreviews.authorization.k8s.io", "", err)
				return
			}
			perms[i] = Permission{Subject: q.who.label, Verb: a.verb, Group: a.group, Resource: a.resourceString(), Namespace: a.namespace, Name: a.name, Allowed: got.Status.Allowed, Purpose: a.purpose}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	s.Access = perms
	return nil
}

// where names what the workload was looked for in.
func (s *Snapshot) where() string {
	switch s.Source {
	case SourceManifests:
		return "the manifests"
	case SourceRelease:
		return "release " + s.Release
	}
	return "the cluster"
}

// manifestNamespace is the namespace of the manifests' objects that name
// none.
func (s *Snapshot) manifestNamespace() string {
	if s.ManifestNamespace == "" {
		return metav1.NamespaceDefault
	}
	return s.ManifestNamespace
}

// ManifestSnapshot is a snapshot of manifests judged against the nodes
// given, without reading a cluster (the tests of check and of its AWS side
// write clusters so): the manifests' workload in kube-system and its
// migration ConfigMap, and, when installed, the workload as the cluster
// runs it. The caller sets what else the cluster holds (Now,
// KubernetesVersion, Pods, ...).
func ManifestSnapshot(objs []runtime.Object, nodes []corev1.Node, installed bool) (*Snapshot, error) {
	s := &Snapshot{Input: Input{Source: SourceManifests, Objects: objs, KCMUser: renderer.DefaultKCMUser, ManifestNamespace: "kube-system"},
		Nodes: nodes, Pods: map[string]*corev1.Pod{}, Leases: map[string]*coordinationv1.Lease{}}
	w, err := pick(candidates(objs, "kube-system"), "", "the manifests")
	if err != nil {
		return nil, err
	}
	s.Workload = w
	if installed && w != nil {
		s.Installed = w.object()
	}
	if d := describeWorkload(s); d != nil && d.configMap != "" {
		s.MigrationConfigMap = migrationConfigIn(objs, w.namespace, d.configMap)
	}
	return s, nil
}
