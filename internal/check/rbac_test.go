package check

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// tokenGrant is how far an answering fake API server lets the CCM's
// account create tokens.
type tokenGrant int

const (
	noTokens      tokenGrant = iota
	namedTokens              // for the controllers' accounts, by name (tokenScope: controllers)
	kubeSystemAny            // for any account of kube-system (a Role there)
	anyAccount               // for any account anywhere (the chart's ClusterRole)
)

// answerTokens has the fake clientset answer SubjectAccessReviews as RBAC
// would with the grant: everything else allowed.
func answerTokens(cs *fake.Clientset, g tokenGrant) {
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		r := sar.Spec.ResourceAttributes
		allowed := true
		if r.Subresource == "token" {
			switch g {
			case noTokens:
				allowed = false
			case namedTokens:
				allowed = r.Namespace == "kube-system" && r.Name != ""
			case kubeSystemAny:
				allowed = r.Namespace == "kube-system"
			}
		}
		sar.Status.Allowed = allowed
		return true, sar, nil
	})
}

// TestTokenScope: what the CCM needs (a token per controller account, by
// name) and how far it may go beyond, asked by SubjectAccessReview, for
// each grant; nothing asked before the install.
func TestTokenScope(t *testing.T) {
	for _, c := range []struct {
		name      string
		grant     tokenGrant
		setArgs   []string
		installed bool
		want      []want
	}{
		{"the chart's grant: any account anywhere", anyAccount, nil, true, []want{
			{"ServiceAccount kube-system/cloud-controller-manager", OK, "allowed all 22 requests it needs", ""},
			{"ServiceAccount kube-system/cloud-controller-manager", Warning, "may create a token for any service account in any namespace", "render the CCM with --token-scope=controllers (aws-ccm-renderer upgrade keeps it on every later upgrade), which narrows the grant to its controllers' accounts by name; or by hand: kubectl -n kube-system create role ccm-tokens --verb=create --resource=serviceaccounts/token --resource-name=aws-cloud-provider --resource-name=node-controller --resource-name=service-controller"}}},
		{"a Role in kube-system for any account", kubeSystemAny, nil, true, []want{
			{"ServiceAccount kube-system/cloud-controller-manager", OK, "allowed all 22 requests it needs", ""},
			{"ServiceAccount kube-system/cloud-controller-manager", Warning, "may create a token for any service account in kube-system, the controller manager's among them", "create rolebinding ccm-tokens"}}},
		{"by name: least privilege", namedTokens, nil, true, []want{
			{"ServiceAccount kube-system/cloud-controller-manager", OK, "allowed all 22 requests it needs", ""},
			{"ServiceAccount kube-system/cloud-controller-manager", OK, "may create tokens only for named accounts", ""}}},
		{"by name, with routes and tagging: five accounts", namedTokens, []string{"configure-cloud-routes=true", "cluster-cidr=10.42.0.0/16", "controllers=*,tagging"}, true, []want{
			{"ServiceAccount kube-system/cloud-controller-manager", OK, "allowed all 24 requests it needs", ""},
			{"ServiceAccount kube-system/cloud-controller-manager", OK, "may create tokens only for named accounts", ""}}},
		{"no token at all: the missing permission, no scope", noTokens, nil, true, []want{
			{"ServiceAccount kube-system/cloud-controller-manager", Error, "may not create serviceaccounts/token for aws-cloud-provider, node-controller and service-controller in namespace kube-system", "aws-ccm-renderer"}}},
		{"not installed: nothing asked", anyAccount, nil, false, []want{
			{"ServiceAccount kube-system/cloud-controller-manager", Info, "not checked", ""}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := renderer.DefaultOptions()
			o.Distro, o.SetArgs = distros.RKE2, c.setArgs
			objs := renderWith(t, o)
			n := rke2Server("cp-1")
			in := []runtime.Object{&n}
			if c.installed {
				for _, obj := range objs {
					if _, ok := obj.(*appsv1.DaemonSet); ok {
						in = append(in, obj)
					}
				}
			}
			cs := fake.NewSimpleClientset(in...)
			answerTokens(cs, c.grant)
			s, err := Collect(context.Background(), cs, Input{Source: SourceManifests, Objects: objs, ManifestNamespace: "kube-system"})
			if err != nil {
				t.Fatal(err)
			}
			scope := 0
			for _, p := range s.Access {
				if p.Purpose == purposeTokenScope {
					scope++
				}
			}
			if c.installed != (scope == 2) {
				t.Errorf("%d token scope questions", scope)
			}
			expectArea(t, Evaluate(s), AreaRBAC, c.want, false)
		})
	}
}

// TestControllerAccounts: the accounts the CCM asks tokens for, by its
// flags.
func TestControllerAccounts(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "aws-cloud-provider node-controller route-controller service-controller"},
		{[]string{"--configure-cloud-routes=false"}, "aws-cloud-provider node-controller service-controller"},
		{[]string{"--configure-cloud-routes=false", "--controllers=*,-service"}, "aws-cloud-provider node-controller"},
		{[]string{"--controllers=*,-service-lb-controller,tagging"}, "aws-cloud-provider node-controller route-controller tagging-controller"},
	} {
		w := &workloadView{flags: flags(corev1.Container{Args: c.args})}
		if got := strings.Join(w.controllerAccounts(), " "); got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
		// The renderer's --token-scope=controllers grants each of them.
		for _, a := range w.controllerAccounts() {
			if !slices.Contains(renderer.ControllerAccounts, a) {
				t.Errorf("%q: %s is not among the renderer's controller accounts %v", c.args, a, renderer.ControllerAccounts)
			}
		}
	}
}
