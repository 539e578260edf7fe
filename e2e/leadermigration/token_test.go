package leadermigration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// canToken asks the API server's authorizer whether a user may create a
// token for the service account ns/name (what k8s.io/controller-manager's
// DynamicControllerClientBuilder does for each controller of the CCM).
func canToken(t *testing.T, user string, groups []string, ns, name string) bool {
	return can(t, user, groups, authorizationv1.ResourceAttributes{Namespace: ns, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: name})
}

// can asks the API server's authorizer whether a user may do something.
func can(t *testing.T, user string, groups []string, attrs authorizationv1.ResourceAttributes) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: groups, ResourceAttributes: &attrs,
	}}
	res, err := cp.Client.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Status.Allowed
}

// TestTokenScopePermissions asks the real authorizer, for every chart
// version's output applied to the API server, for which service accounts
// the CCM's may create tokens: with the chart's grant (the default), any
// account in any namespace; with tokenScope: controllers (a RendererConfig
// file, --config), its controllers' accounts in kube-system and no other.
// Each version and scope gets names of its own, so that one's grants cannot
// stand in for another's.
func TestTokenScopePermissions(t *testing.T) {
	config := filepath.Join(t.TempDir(), "narrow.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: "+renderer.ConfigAPIVersion+"\nkind: "+renderer.ConfigKind+"\ntokenScope: controllers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Accounts the CCM has no business minting tokens for: another in
	// kube-system (a cluster-admin's, say), and a controller's name in
	// another namespace.
	foreign := []string{"kube-system/admin-robot", "default/node-controller", "apps/service-controller"}
	for _, version := range testtools.ChartVersions {
		for _, scope := range []string{"cluster", "controllers"} {
			t.Run(version+"/"+scope, func(t *testing.T) {
				name := "tk-" + scope[:4] + "-" + strings.ReplaceAll(version, ".", "-")
				set := "nameOverride=" + name + ",clusterRoleName=" + name + ",serviceAccountName=" + name + ",roleBindingName=" + name
				if version == "0.0.2" {
					set += ",image.tag=v1.21.0" // its default CCM (v1.20) is older than the renderer takes
				}
				flags := []string{"--distro=rke2"}
				if scope == "controllers" {
					flags = append(flags, "--config="+config)
				}
				objs := without(decode(t, render(t, version, []string{set}, flags...)), "DaemonSet")
				user, groups := serviceAccountUser("kube-system", name)
				apply(t, objs)
				t.Cleanup(func() { remove(t, objs) })

				var controllers, others []string
				poll(30*time.Second, func() bool {
					controllers, others = nil, nil
					for _, acct := range renderer.ControllerAccounts {
						// What the client builder does for each: get the
						// account, create it when missing, then its token.
						if !can(t, user, groups, authorizationv1.ResourceAttributes{Namespace: "kube-system", Verb: "get", Resource: "serviceaccounts", Name: acct}) ||
							!can(t, user, groups, authorizationv1.ResourceAttributes{Namespace: "kube-system", Verb: "create", Resource: "serviceaccounts"}) ||
							!canToken(t, user, groups, "kube-system", acct) {
							controllers = append(controllers, acct)
						}
					}
					for _, f := range foreign {
						ns, acct, _ := strings.Cut(f, "/")
						if canToken(t, user, groups, ns, acct) {
							others = append(others, f)
						}
					}
					want := 0
					if scope == "cluster" {
						want = len(foreign)
					}
					return len(controllers) == 0 && len(others) == want
				})
				if len(controllers) > 0 {
					t.Fatalf("chart %s, %s: %s may not get, create or create tokens for its controllers' accounts %q", version, scope, user, controllers)
				}
				switch {
				case scope == "cluster" && len(others) != len(foreign):
					t.Fatalf("chart %s: with the chart's grant %s may create tokens for %q only, want every account (the test shows the grant)", version, user, others)
				case scope == "controllers" && len(others) > 0:
					t.Fatalf("chart %s, tokenScope: controllers: %s may still create tokens for %q", version, user, others)
				}
				t.Logf("chart %s, %s: %s may create tokens for kube-system/{%s}, and for %s too: %v",
					version, scope, user, strings.Join(renderer.ControllerAccounts, ","), strings.Join(foreign, ", "), len(others) > 0)
			})
		}
	}
}
