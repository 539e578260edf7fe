package check

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/reach"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// cluster is client-go's fake clientset holding a cluster with the
// renderer's migrate-mode output for RKE2 installed: two servers, an agent,
// the CCM's pod on cp-1, and the leases of a migration the in-tree
// controller manager leads. Every SubjectAccessReview is allowed but
// create on serviceaccounts/token.
func cluster(t *testing.T) (*fake.Clientset, []runtime.Object) {
	t.Helper()
	objs := render(t, distros.RKE2, renderer.ModeMigrate)
	var in []runtime.Object
	for _, n := range []corev1.Node{rke2Server("cp-2"), rke2Server("cp-1"), rke2Agent("w-1")} {
		in = append(in, &n)
	}
	for _, o := range objs {
		if ds, ok := o.(*appsv1.DaemonSet); ok {
			ds.UID = types.UID("ds-uid")
		}
		in = append(in, o)
	}
	ds := objs[len(objs)-1].(*appsv1.DaemonSet)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ccm-a", Namespace: "kube-system", Labels: ds.Spec.Selector.MatchLabels,
		OwnerReferences: []metav1.OwnerReference{{UID: "ds-uid"}}}, Spec: corev1.PodSpec{NodeName: "cp-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	other := pod.DeepCopy() // another owner's pod with the same labels
	other.Name, other.OwnerReferences, other.Spec.NodeName = "stray", nil, "cp-2"
	in = append(in, pod, other,
		lease("kube-controller-manager", "cp-1_kcm", 0), lease("cloud-controller-manager", "cp-1_ccm", 0), lease(renderer.DefaultLeaderName, "cp-1_kcm", 0))
	cs := fake.NewSimpleClientset(in...)
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.34.2"}
	answerReviews(cs)
	return cs, objs
}

// answerReviews has the fake clientset answer SubjectAccessReviews: all
// allowed but create on serviceaccounts/token.
func answerReviews(cs *fake.Clientset) {
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		sar.Status.Allowed = sar.Spec.ResourceAttributes.Subresource != "token"
		return true, sar, nil
	})
}

// TestCollect: what Collect reads of a cluster, each thing once, and what
// the rules make of it.
func TestCollect(t *testing.T) {
	cs, _ := cluster(t)
	s, err := Collect(context.Background(), cs, Input{Source: SourceCluster, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if s.KubernetesVersion != "v1.34.2" || len(s.Nodes) != 3 || s.Nodes[0].Name != "cp-1" || s.Workload == nil || s.Workload.name != "aws-cloud-controller-manager" ||
		s.Installed == nil || s.MigrationConfigMap == nil || len(s.Pods) != 1 || s.Pods["cp-1"] == nil || len(s.Leases) != 3 || s.KCMUser != renderer.DefaultKCMUser {
		t.Fatalf("snapshot: %+v", s)
	}
	// The CCM's 24 (a token for each of its 3 controllers' accounts) and
	// check's 2 about its token scope; the controller manager's 3.
	if len(s.Access) != 24+2+3 || s.Access[0].Subject != "ServiceAccount kube-system/cloud-controller-manager" || s.Access[len(s.Access)-1].Subject != "User "+renderer.DefaultKCMUser {
		t.Errorf("%d answers: %+v", len(s.Access), s.Access)
	}
	// Read once: every list and get of the collection, no two alike (two
	// lists of pods in kube-system, the CCM's and the control plane's, and
	// two of events, told apart by their selectors).
	seen := map[string]bool{}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "create" {
			continue
		}
		key := a.GetVerb() + " " + a.GetResource().Resource + " " + a.GetNamespace()
		if l, ok := a.(k8stesting.ListAction); ok {
			key += " " + l.GetListRestrictions().Labels.String() + " " + l.GetListRestrictions().Fields.String()
		}
		if seen[key] {
			t.Errorf("%s twice", key)
		}
		seen[key] = true
	}
	r := Evaluate(s)
	if f := one(t, r, AreaRBAC, "ServiceAccount kube-system/cloud-controller-manager"); f.Severity != Error || !strings.Contains(f.Message, "may not create serviceaccounts/token for aws-cloud-provider, node-controller and service-controller in namespace kube-system") {
		t.Errorf("rbac: %+v", f)
	}
	if f := one(t, r, AreaLease, "Lease kube-system/"+renderer.DefaultLeaderName); f.Severity != OK || !strings.Contains(f.Message, "the in-tree kube-controller-manager") {
		t.Errorf("migration lease: %+v", f)
	}
	if f := one(t, r, AreaPlacement, "cp-1"); f.Severity != OK || !strings.Contains(f.Message, "CCM pod ccm-a running and ready") {
		t.Errorf("cp-1: %+v", f)
	}
	if f := one(t, r, AreaPlacement, "cp-2"); f.Severity != Warning || !strings.Contains(f.Message, "no CCM pod yet") {
		t.Errorf("cp-2, with another owner's pod: %+v", f)
	}
	// Evaluate reads the snapshot only: the same report again.
	if again := Evaluate(s); len(again.Findings) != len(r.Findings) || !reflect.DeepEqual(again.Findings, r.Findings) {
		t.Errorf("evaluated twice: %d and %d findings", len(r.Findings), len(again.Findings))
	}

	// Looking in another namespace: no workload, a finding that says where.
	s, err = Collect(context.Background(), cs, Input{Source: SourceCluster, SearchNamespace: "elsewhere"})
	if err != nil || s.Workload != nil || len(s.Access) != 0 {
		t.Fatalf("elsewhere: %+v %v", s, err)
	}
	if f := one(t, Evaluate(s), AreaWorkload, ""); f.Severity != Error || !strings.Contains(f.Fix, "only namespace elsewhere was searched") {
		t.Errorf("no workload: %+v", f)
	}
}

// TestCollectManifests: the manifests' workload, the cluster asked only
// whether it is installed; without a CCM in them, an input error.
func TestCollectManifests(t *testing.T) {
	objs := render(t, distros.RKE2, renderer.ModeMigrate)
	cp := rke2Server("cp-1")
	cs := fake.NewSimpleClientset(&cp)
	answerReviews(cs)
	s, err := Collect(context.Background(), cs, Input{Source: SourceManifests, Objects: objs, ManifestNamespace: "kube-system"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Installed != nil || s.MigrationConfigMap == nil || len(s.Pods) != 0 || len(s.Access) != 3 {
		t.Errorf("not installed: %+v", s)
	}
	for _, a := range cs.Actions() {
		l, list := a.(k8stesting.ListAction)
		IsControlPlane := list && strings.HasPrefix(l.GetListRestrictions().Labels.String(), "component in ")
		if a.GetResource().Resource == "pods" && !IsControlPlane || a.GetResource().Resource == "configmaps" {
			t.Errorf("read %s of a workload not installed", a.GetResource().Resource)
		}
	}
	var none []runtime.Object
	for _, o := range objs {
		if _, ok := o.(*appsv1.DaemonSet); !ok {
			none = append(none, o)
		}
	}
	if _, err := Collect(context.Background(), cs, Input{Source: SourceManifests, Objects: none}); !renderer.IsInputError(err) ||
		!strings.Contains(err.Error(), "no AWS CCM DaemonSet or Deployment in the manifests") {
		t.Errorf("no CCM: %v", err)
	}
}

// TestCollectErrors: what the cluster refuses or cannot answer names the
// permission check needs, or says it cannot be reached.
func TestCollectErrors(t *testing.T) {
	for _, c := range []struct {
		verb, resource string
		err            error
		want           ClusterError
		unreachable    bool
	}{
		{"list", "leases", apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "", errors.New("no")),
			ClusterError{Forbidden: true, Verb: "list", Resource: "leases.coordination.k8s.io", Namespace: "kube-system"}, false},
		{"create", "subjectaccessreviews", apierrors.NewForbidden(schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, "", errors.New("no")),
			ClusterError{Forbidden: true, Verb: "create", Resource: "subjectaccessreviews.authorization.k8s.io"}, false},
		{"list", "nodes", context.DeadlineExceeded, ClusterError{Verb: "list", Resource: "nodes"}, true},
	} {
		cs, _ := cluster(t)
		cs.PrependReactor(c.verb, c.resource, func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, c.err })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := Collect(ctx, cs, Input{Source: SourceCluster})
		cancel()
		var ce *ClusterError
		if !errors.As(err, &ce) || ce.Forbidden != c.want.Forbidden || ce.Verb != c.want.Verb || ce.Resource != c.want.Resource || ce.Namespace != c.want.Namespace ||
			reach.Unreachable(err) != c.unreachable {
			t.Errorf("%s %s: %v (%+v)", c.verb, c.resource, err, ce)
		}
	}
}
