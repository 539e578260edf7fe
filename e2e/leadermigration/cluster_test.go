package leadermigration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// What the renderer marks the objects it adds in --mode=migrate with
// (annotation renderer.GeneratedAnnotation): the CCM's
// LeaderMigrationConfiguration, and the Role and RoleBinding that let the
// in-tree kube-controller-manager hold the migration lease.
const (
	generatedConfig = "leader-migration-config"
	generatedRBAC   = "leader-migration-rbac"
)

// render runs `helm template` on an upstream chart version into
// kube-system with aws-ccm-renderer as the post-renderer, and returns the
// output.
func render(t *testing.T, version string, values []string, flags ...string) []byte {
	t.Helper()
	args := []string{"template", "ccm", testtools.UpstreamChart(t, version), "--namespace", "kube-system",
		"--post-renderer", testtools.Renderer(t)}
	for _, v := range values {
		args = append(args, "--set", v)
	}
	for _, f := range flags {
		args = append(args, "--post-renderer-args="+f)
	}
	return testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), args...)
}

// decode reads the objects of a manifest stream.
func decode(t *testing.T, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := harness.Decode(stream)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func generated(u *unstructured.Unstructured) string {
	return u.GetAnnotations()[renderer.GeneratedAnnotation]
}

// split separates the objects the renderer generated with the given mark
// from the rest.
func split(objs []*unstructured.Unstructured, mark string) (marked, rest []*unstructured.Unstructured) {
	for _, o := range objs {
		if generated(o) == mark {
			marked = append(marked, o)
		} else {
			rest = append(rest, o)
		}
	}
	return marked, rest
}

func ids(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, harness.ID(o))
	}
	slices.Sort(out)
	return out
}

// apply creates or replaces objects by server-side apply.
func apply(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	if err := cp.Apply(context.Background(), objs); err != nil {
		t.Fatal(err)
	}
}

// remove deletes objects; those already gone are fine.
func remove(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	if err := cp.Remove(context.Background(), objs); err != nil {
		t.Fatal(err)
	}
}

// leaseAccess is what the real authorizer answers a SubjectAccessReview on
// one Lease for each verb.
type leaseAccess map[string]bool

func (a leaseAccess) String() string {
	var parts []string
	for _, v := range leaseVerbs {
		parts = append(parts, fmt.Sprintf("%s=%v", v, a[v]))
	}
	return strings.Join(parts, " ")
}

// leaseVerbs are what client-go's leader election does to its Lease.
var leaseVerbs = []string{"get", "update", "create"}

// canLease asks the API server's authorizer what a user may do to a Lease
// in kube-system.
func canLease(t *testing.T, user string, groups []string, lease string) leaseAccess {
	t.Helper()
	out := leaseAccess{}
	for _, verb := range leaseVerbs {
		attrs := &authorizationv1.ResourceAttributes{
			Namespace: "kube-system", Verb: verb, Group: "coordination.k8s.io", Resource: "leases", Name: lease,
		}
		if verb == "create" {
			attrs.Name = "" // a create request carries no name for RBAC
		}
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups, ResourceAttributes: attrs,
		}}
		res, err := cp.Client.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out[verb] = res.Status.Allowed
	}
	return out
}

func (a leaseAccess) all() bool  { return a["get"] && a["update"] && a["create"] }
func (a leaseAccess) none() bool { return !a["get"] && !a["update"] && !a["create"] }

// serviceAccountUser is how the API server names a service account.
func serviceAccountUser(ns, name string) (string, []string) {
	return "system:serviceaccount:" + ns + ":" + name,
		[]string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
}
