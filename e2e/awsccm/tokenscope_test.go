package awsccm_test

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

const ccmUser = "system:serviceaccount:kube-system:" + ccmAccount

// otherNamespace holds a service account outside the CCM's controllers'.
const otherNamespace = "tokenscope-other"

// TestTokenScope runs each CCM release as the renderer renders the chart
// with --token-scope=controllers: the chart's cluster-wide create on
// serviceaccounts/token is gone and a Role in kube-system grants it for the
// CCM's controllers' accounts by name. The CCM, with
// --use-service-account-credentials=true, mints its controllers' tokens
// under that grant, initialises every node named by its instance and
// ensures a load balancer; every TokenRequest it sends is for an account of
// the list and none is refused. As the control, the same account is
// refused a token for kube-system/default and for another namespace's
// account, which the chart's grant (the rendering without the option)
// allows.
func TestTokenScope(t *testing.T) {
	renders(t)
	ctx := context.Background()
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	narrowed := testtools.MustRun(t, testtools.HelmEnv(t), testtools.Helm3(t), "template", "ccm", chart, "--namespace", "kube-system",
		"--post-renderer", testtools.Renderer(t), "--post-renderer-args=--token-scope=controllers")
	otherAccount(t)
	t.Cleanup(func() {
		// The next test starts from the rendering without the option.
		var extra []*unstructured.Unstructured
		for _, o := range rbac(t, narrowed) {
			if !slices.ContainsFunc(rbac(t, rendered), func(r *unstructured.Unstructured) bool { return harness.ID(r) == harness.ID(o) }) {
				extra = append(extra, o)
			}
		}
		if err := cp.Remove(ctx, extra); err != nil {
			t.Error(err)
		}
		applyRBAC(t, rendered, mintAccess(true)...)
	})

	// The control: the chart's grant lets the CCM's account mint a token
	// for any account.
	applyRBAC(t, rendered, mintAccess(true)...)

	for _, r := range releases {
		t.Run(r.Version, func(t *testing.T) {
			registerNodes(t)
			// The narrowed grant as a whole in the authorizer's view before
			// anything asks it: the Role's tokens for the controllers'
			// accounts there, the ClusterRole's for every account gone
			// (applyRBAC). Then the control, so that the audit log's
			// TokenRequests from here on are the CCM's.
			applyRBAC(t, narrowed, mintAccess(false)...)
			checkNarrowed(t)
			before, err := cp.TokenRequests()
			if err != nil {
				t.Fatal(err)
			}
			c := startCCM(t, r, prerequisites(r), narrowed)

			took := c.waitInitialised(t)
			for _, n := range ec2Named() {
				checkInitialised(t, r, n)
			}
			t.Logf("AWS CCM %s under --token-scope=controllers initialised %d nodes in %s", r.Version, len(ec2Named()), took.Round(10*time.Millisecond))
			c.ensuresLoadBalancer(t, fmt.Sprintf("scoped-%d", r.Minor()))
			c.alive(t)

			all, err := cp.TokenRequests()
			if err != nil {
				t.Fatal(err)
			}
			perAccount := map[string]int{}
			for _, q := range all[len(before):] {
				if q.User != ccmUser {
					continue
				}
				id := fmt.Sprintf("%s/%s %d", q.Namespace, q.Name, q.Code)
				perAccount[id]++
				if q.Namespace != "kube-system" || !slices.Contains(renderer.ControllerAccounts, q.Name) || q.Code != 201 {
					t.Errorf("the AWS CCM %s asked for a token of %s/%s, answered %d: want only kube-system's %v, granted", r.Version, q.Namespace, q.Name, q.Code, renderer.ControllerAccounts)
				}
			}
			if len(perAccount) == 0 {
				t.Errorf("the API server's audit log has no TokenRequest of %s: the CCM did not use its controllers' accounts", ccmUser)
			}
			t.Logf("TokenRequests of %s during the run (account, status: count): %v", ccmUser, sortedCounts(perAccount))
			if lines := forbidden(c.proc.Log()); len(lines) > 0 {
				t.Errorf("the AWS CCM %s was refused under --token-scope=controllers:\n%s", r.Version, strings.Join(lines, "\n"))
			} else {
				t.Logf("AWS CCM %s log: no forbidden line", r.Version)
			}
		})
	}
}

// outsideAccounts are service accounts the CCM never uses, as namespace
// and name: kube-system's default and another namespace's.
func outsideAccounts() [][2]string {
	return [][2]string{{"kube-system", "default"}, {otherNamespace, "admin"}}
}

// otherAccount creates a namespace with a service account in it.
func otherAccount(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	_, err := cp.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: otherNamespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	_, err = cp.Client.CoreV1().ServiceAccounts(otherNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "admin"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, ns := range []string{"kube-system"} {
		_, err = cp.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// mintAccess is what the authorizer answers on the CCM's account creating
// tokens: for its controllers' accounts in kube-system, allowed; for the
// outsideAccounts, allowed under the chart's grant (outside) and refused
// under --token-scope=controllers.
func mintAccess(outside bool) []harness.AccessExpectation {
	mint := func(ns, name string, allowed bool) harness.AccessExpectation {
		return harness.AccessExpectation{ServiceAccount: "kube-system/" + ccmAccount,
			Verb: "create", Resource: "serviceaccounts", Subresource: "token", Namespace: ns, Name: name, Allowed: allowed}
	}
	var out []harness.AccessExpectation
	for _, name := range renderer.ControllerAccounts {
		out = append(out, mint("kube-system", name, true))
	}
	for _, ref := range outsideAccounts() {
		out = append(out, mint(ref[0], ref[1], outside))
	}
	return out
}

// checkNarrowed asserts, with the narrowed RBAC applied and in the
// authorizer's view (applyRBAC with mintAccess(false): the CCM's account
// may mint tokens for its controllers' accounts only), that TokenRequests
// sent as that account for the outsideAccounts are refused.
func checkNarrowed(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	kubeconfig, err := cp.ServiceAccountKubeconfig(ctx, "kube-system", ccmAccount)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	as, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range outsideAccounts() {
		_, err := as.CoreV1().ServiceAccounts(ref[0]).CreateToken(ctx, ref[1],
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("a TokenRequest for %s/%s as %s: %v, want forbidden", ref[0], ref[1], ccmUser, err)
		} else {
			t.Logf("a TokenRequest for %s/%s as %s: %v", ref[0], ref[1], ccmUser, err)
		}
	}
}

// forbidden returns the lines of a CCM's log that say a request was
// forbidden.
func forbidden(log string) []string {
	return regexp.MustCompile(`(?m)^.*\bis forbidden\b.*$`).FindAllString(log, -1)
}

func sortedCounts(m map[string]int) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}
