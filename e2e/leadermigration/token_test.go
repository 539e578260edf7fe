package leadermigration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

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

				// The whole answer at once: the grants the output gives
				// present, and under tokenScope: controllers the chart's
				// grant for every account gone.
				var want []harness.AccessExpectation
				access := func(verb, subresource, ns, name string, allowed bool) harness.AccessExpectation {
					return harness.AccessExpectation{User: user, Groups: groups, Verb: verb, Resource: "serviceaccounts", Subresource: subresource,
						Namespace: ns, Name: name, Allowed: allowed}
				}
				// What the client builder does for each of the controllers'
				// accounts: get the account, create it when missing, then
				// its token.
				want = append(want, access("create", "", "kube-system", "", true))
				for _, acct := range renderer.ControllerAccounts {
					want = append(want, access("get", "", "kube-system", acct, true), access("create", "token", "kube-system", acct, true))
				}
				for _, f := range foreign {
					ns, acct, _ := strings.Cut(f, "/")
					want = append(want, access("create", "token", ns, acct, scope == "cluster"))
				}
				harness.WaitAccess(t, cp.Client, 30*time.Second, want)
				t.Logf("chart %s, %s: %s may create tokens for kube-system/{%s}, and for %s too: %v",
					version, scope, user, strings.Join(renderer.ControllerAccounts, ","), strings.Join(foreign, ", "), scope == "cluster")
			})
		}
	}
}
