package leadermigration

import (
	"context"
	"slices"
	"testing"

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

// leaseVerbs are what client-go's leader election does to its Lease.
var leaseVerbs = []string{"get", "update", "create"}

// leaseAccess is the expectation that a user may (allowed) or may not do
// each of verbs to a Lease in kube-system, as the authorizer answers a
// SubjectAccessReview on it.
func leaseAccess(user string, groups []string, lease string, allowed bool, verbs ...string) []harness.AccessExpectation {
	var out []harness.AccessExpectation
	for _, verb := range verbs {
		e := harness.AccessExpectation{User: user, Groups: groups, Verb: verb, Group: "coordination.k8s.io", Resource: "leases",
			Namespace: "kube-system", Name: lease, Allowed: allowed}
		if verb == "create" {
			e.Name = "" // a create request carries no name for RBAC
		}
		out = append(out, e)
	}
	return out
}

// serviceAccountUser is how the API server names a service account.
func serviceAccountUser(ns, name string) (string, []string) {
	return harness.ServiceAccountUser(ns, name)
}
