package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// someone is any authenticated user: a user of no group but
// system:authenticated.
func someone(verb, resource, subresource, ns, name string, allowed bool) harness.AccessExpectation {
	return harness.AccessExpectation{User: "someone", Groups: []string{"system:authenticated"},
		Verb: verb, Resource: resource, Subresource: subresource, Namespace: ns, Name: name, Allowed: allowed}
}

// ccmAccount is the expectation that the service account of ccm.yaml may
// (allowed) or may not do a verb to a resource.
func ccmAccount(verb, resource, ns string, allowed bool) harness.AccessExpectation {
	return harness.AccessExpectation{ServiceAccount: "kube-system/ccm", Verb: verb, Resource: resource, Namespace: ns, Allowed: allowed}
}

// TestOneReadingWithHelm installs, with the real Helm 3 CLI into the real
// API server, a chart made of the CCM's release and one of the ways of
// writing a binding of its ClusterRole to system:authenticated that once
// hid it from the renderer (renderer/testdata/hidden): without the renderer,
// Helm applies the binding; with it, Helm's install fails with the
// renderer's refusal, or installs a ClusterRole that no authenticated user
// may mint tokens through.
func TestOneReadingWithHelm(t *testing.T) {
	dir := filepath.Join(testtools.Root(), "renderer", "testdata", "hidden")
	base, err := os.ReadFile(filepath.Join(dir, "ccm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := filepath.Glob(filepath.Join(dir, "[0-9][0-9]-*.yaml"))
	if err != nil || len(rows) == 0 {
		t.Fatalf("no rows in %s: %v", dir, err)
	}
	for _, row := range rows {
		name := strings.TrimSuffix(filepath.Base(row), ".yaml")
		t.Run(name, func(t *testing.T) {
			hidden, err := os.ReadFile(row)
			if err != nil {
				t.Fatal(err)
			}
			chart := filepath.Join(t.TempDir(), "hidden")
			testtools.WriteFile(t, filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: hidden\nversion: 0.1.0\n"))
			testtools.WriteFile(t, filepath.Join(chart, "templates", "ccm.yaml"), base)
			testtools.WriteFile(t, filepath.Join(chart, "templates", "hidden.yaml"), hidden)
			release := "hidden-" + name[:2]
			install := func(args ...string) ([]byte, []byte, error) {
				return helmRun(t, append([]string{"install", release, chart, "--namespace", "kube-system", "--wait=false"}, args...)...)
			}
			uninstall := func() {
				helm(t, "uninstall", release, "--namespace", "kube-system")
				harness.WaitFor(t, 30*time.Second, "ClusterRoleBinding everyone to go with the release", func() bool {
					_, err := cp.Client.RbacV1().ClusterRoleBindings().Get(context.Background(), "everyone", metav1.GetOptions{})
					return apierrors.IsNotFound(err)
				})
				// And from the authorizer's view, which takes it a moment
				// later: the next install's grants are then its own.
				harness.WaitAccess(t, cp.Client, 30*time.Second, []harness.AccessExpectation{
					someone("get", "nodes", "", "", "", false),
					ccmAccount("get", "nodes", "", false),
				})
			}

			// What Helm 3 does with the row on its own.
			if _, errOut, err := install(); err != nil {
				t.Fatalf("helm install without the renderer: %v\n%s", err, errOut)
			}
			crb, err := cp.Client.RbacV1().ClusterRoleBindings().Get(context.Background(), "everyone", metav1.GetOptions{})
			if err != nil || crb.RoleRef.Name != "ccm" || len(crb.Subjects) != 1 || crb.Subjects[0].Name != "system:authenticated" {
				t.Fatalf("Helm did not apply the binding of ClusterRole ccm to system:authenticated: %v %+v", err, crb)
			}
			uninstall()

			// With the renderer as its post-renderer.
			_, errOut, err := install(rendererArgs(t, "--distro=rke2")...)
			if err != nil {
				if !strings.Contains(string(errOut), "error while running post render on files") {
					t.Fatalf("helm install failed, not in the renderer: %v\n%s", err, errOut)
				}
				if _, err := cp.Client.RbacV1().ClusterRoleBindings().Get(context.Background(), "everyone", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Fatalf("the renderer refused the chart, yet its binding is on the server: %v", err)
				}
				t.Logf("refused: %s", strings.TrimSpace(string(errOut)))
				return
			}
			defer uninstall()
			// The release as a whole in the authorizer's view before its
			// answer on tokens counts: the CCM's account may get nodes
			// (ClusterRole ccm, its binding) and get service accounts (the
			// renderer's Role), any authenticated user may get nodes
			// through the binding everyone when it is on the server; and no
			// authenticated user may create tokens for kube-system's
			// service accounts.
			want := []harness.AccessExpectation{
				ccmAccount("get", "nodes", "", true),
				ccmAccount("get", "serviceaccounts", "kube-system", true),
				someone("create", "serviceaccounts", "token", "kube-system", "admin-robot", false),
			}
			if crb, err := cp.Client.RbacV1().ClusterRoleBindings().Get(context.Background(), "everyone", metav1.GetOptions{}); err == nil && crb.RoleRef.Name == "ccm" {
				want = append(want, someone("get", "nodes", "", "", "", true))
			} else {
				t.Logf("no ClusterRoleBinding everyone of ClusterRole ccm on the server (%v)", err)
			}
			harness.WaitAccess(t, cp.Client, 30*time.Second, want)
			t.Log("installed; the shared ClusterRole ccm was left alone, and no authenticated user may create tokens through it")
		})
	}
}
