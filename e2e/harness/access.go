package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// AccessExpectation is an answer the API server's authorizer is expected
// to give a SubjectAccessReview: whether a subject may do a verb to a
// resource.
//
// The RBAC authorizer answers from informer caches of roles and bindings,
// one per kind, each taking an update on its own time: a moment after a
// change is written the authorizer may see part of it (a new Role, not yet
// the ClusterRole that lost a rule). A test that changed RBAC waits with
// WaitAccess for the whole state it expects before it asserts or starts a
// program that depends on it.
type AccessExpectation struct {
	// The subject: User and Groups as the authenticator reports them; or
	// ServiceAccount, "namespace/name", for the user and groups a token of
	// that account authenticates as (it wins over User and Groups).
	User           string
	Groups         []string
	ServiceAccount string
	// The request, as a SubjectAccessReview's resource attributes. Group ""
	// is the core group; Namespace "" is cluster-wide (and cluster-scoped
	// resources); Name "" is a request without a name (create, list, or
	// any object of the resource).
	Verb, Group, Resource, Subresource, Namespace, Name string
	// Allowed is the answer expected: allowed, or not.
	Allowed bool
}

// ServiceAccountUser returns the user name and groups the API server
// authenticates a service account's token as.
func ServiceAccountUser(namespace, name string) (user string, groups []string) {
	return "system:serviceaccount:" + namespace + ":" + name,
		[]string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
}

// subject returns the expectation's user and groups.
func (e AccessExpectation) subject() (string, []string, error) {
	if e.ServiceAccount == "" {
		if e.User == "" && len(e.Groups) == 0 {
			return "", nil, fmt.Errorf("access expectation %s names no subject", e)
		}
		return e.User, e.Groups, nil
	}
	ns, name, ok := strings.Cut(e.ServiceAccount, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", nil, fmt.Errorf("access expectation %s: ServiceAccount %q is not namespace/name", e, e.ServiceAccount)
	}
	user, groups := ServiceAccountUser(ns, name)
	return user, groups, nil
}

// String says what the expectation is, as check says it: "ServiceAccount
// kube-system/ccm may create serviceaccounts/token aws-cloud-provider in
// namespace kube-system".
func (e AccessExpectation) String() string {
	var b strings.Builder
	switch {
	case e.ServiceAccount != "":
		b.WriteString("ServiceAccount " + e.ServiceAccount)
	case strings.HasPrefix(e.User, "system:serviceaccount:"):
		b.WriteString("ServiceAccount " + strings.Replace(strings.TrimPrefix(e.User, "system:serviceaccount:"), ":", "/", 1))
	case e.User != "":
		b.WriteString("User " + e.User)
		if len(e.Groups) > 0 {
			b.WriteString(" (groups " + strings.Join(e.Groups, ", ") + ")")
		}
	default:
		b.WriteString("Groups " + strings.Join(e.Groups, ", "))
	}
	if e.Allowed {
		b.WriteString(" may ")
	} else {
		b.WriteString(" may not ")
	}
	b.WriteString(e.Verb + " " + e.Resource)
	if e.Subresource != "" {
		b.WriteString("/" + e.Subresource)
	}
	if e.Group != "" {
		b.WriteString("." + e.Group)
	}
	if e.Name != "" {
		b.WriteString(" " + e.Name)
	}
	if e.Namespace != "" {
		b.WriteString(" in namespace " + e.Namespace)
	} else {
		b.WriteString(" cluster-wide")
	}
	return b.String()
}

// review asks the authorizer about the expectation's request and returns
// whether it allowed it and how it answered, in words.
func review(client kubernetes.Interface, e AccessExpectation) (bool, string, error) {
	user, groups, err := e.subject()
	if err != nil {
		return false, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sar, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: e.Namespace, Verb: e.Verb, Group: e.Group, Resource: e.Resource, Subresource: e.Subresource, Name: e.Name,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, "no answer: " + err.Error(), nil
	}
	s := sar.Status
	answer := "not allowed (no authorizer had an opinion)"
	switch {
	case s.Allowed:
		answer = "allowed"
	case s.Denied:
		answer = "denied"
	}
	if s.Reason != "" {
		answer += ": " + s.Reason
	}
	if s.EvaluationError != "" {
		answer += " (evaluation error: " + s.EvaluationError + ")"
	}
	return s.Allowed, answer, nil
}

// WaitAccess asks the API server's authorizer, by a SubjectAccessReview
// through client for each, about every expectation until all of them hold
// at once (the grants expected present and the refusals expected), and
// fails the test when they still do not after timeout, naming each
// expectation that did not hold and what the authorizer last answered for
// it. It is WaitFor's poller: a timeout of 0 asks once. An empty want, which
// would prove nothing, fails the test.
func WaitAccess(t testing.TB, client kubernetes.Interface, timeout time.Duration, want []AccessExpectation) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("WaitAccess: no expectation to wait for")
	}
	for _, e := range want {
		if _, _, err := e.subject(); err != nil {
			t.Fatal(err)
		}
	}
	start, polls := time.Now(), 0
	WaitForState(t, timeout, fmt.Sprintf("the authorizer to answer %d access reviews as expected", len(want)), func() (bool, string) {
		polls++
		var off []string
		for _, e := range want {
			allowed, answer, err := review(client, e)
			if err != nil {
				t.Fatal(err)
			}
			if allowed != e.Allowed {
				off = append(off, fmt.Sprintf("%s; the authorizer: %s", e, answer))
			}
		}
		if len(off) == 0 {
			return true, ""
		}
		return false, fmt.Sprintf("%d of %d expectations did not hold:\n\t%s", len(off), len(want), strings.Join(off, "\n\t"))
	})
	if polls > 1 {
		t.Logf("the authorizer answered %d access reviews as expected after %s (%d rounds)", len(want), time.Since(start).Round(time.Millisecond), polls)
	}
}

// Grants returns, as expectations that the authorizer allows them, the
// requests the RBAC objects among objs grant a user of some groups: each
// verb on each resource (and each of its resourceNames, if it names any)
// of each rule of a ClusterRole or Role in objs that a ClusterRoleBinding
// or RoleBinding in objs binds to the user, one of the groups, or the
// service account the user is; cluster-wide through a ClusterRoleBinding,
// in its namespace through a RoleBinding. A binding to a role not in objs
// (one of the API server's bootstrap roles, say) and non-resource rules
// give none. Namespaced objects without a namespace are in kube-system, as
// Apply places them.
func Grants(objs []*unstructured.Unstructured, user string, groups []string) ([]AccessExpectation, error) {
	set, err := readRBAC(objs)
	if err != nil {
		return nil, err
	}
	var out []AccessExpectation
	for _, s := range set.scopes(user, groups) {
		out = append(out, RuleGrants(user, groups, s.namespace, s.rules)...)
	}
	return dedupe(out), nil
}

// Revoked returns, as expectations that the authorizer does not allow
// them, the grants of before (see Grants) that after does not give the
// user: what a change from before to after takes away. It assumes that
// nothing but after grants the user what before did, which holds for the
// chart's grants and the API server's bootstrap policy for service
// accounts, but not for every user (the bootstrap policy lets
// system:kube-controller-manager create any Lease, for one).
func Revoked(before, after []*unstructured.Unstructured, user string, groups []string) ([]AccessExpectation, error) {
	had, err := Grants(before, user, groups)
	if err != nil {
		return nil, err
	}
	set, err := readRBAC(after)
	if err != nil {
		return nil, err
	}
	scopes := set.scopes(user, groups)
	var out []AccessExpectation
	for _, e := range had {
		if !slices.ContainsFunc(scopes, func(s scopedRules) bool { return s.allows(e) }) {
			e.Allowed = false
			out = append(out, e)
		}
	}
	return out, nil
}

// RuleGrants returns, as expectations that the authorizer allows them,
// the requests rules grant a user of some groups in a namespace ("":
// cluster-wide, as a ClusterRoleBinding grants them): each verb on each
// resource, and on each of its resourceNames if the rule names any.
// Non-resource rules give none.
func RuleGrants(user string, groups []string, namespace string, rules []rbacv1.PolicyRule) []AccessExpectation {
	var out []AccessExpectation
	for _, r := range rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				resource, sub, _ := strings.Cut(res, "/")
				for _, verb := range r.Verbs {
					for _, name := range names {
						out = append(out, AccessExpectation{User: user, Groups: groups, Verb: verb, Group: group,
							Resource: resource, Subresource: sub, Namespace: namespace, Name: name, Allowed: true})
					}
				}
			}
		}
	}
	return dedupe(out)
}

func dedupe(in []AccessExpectation) []AccessExpectation {
	seen := map[string]bool{}
	var out []AccessExpectation
	for _, e := range in {
		k := strings.Join([]string{e.Verb, e.Group, e.Resource, e.Subresource, e.Namespace, e.Name, fmt.Sprint(e.Allowed)}, "\x00")
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// rbacSet is the roles and bindings among some objects.
type rbacSet struct {
	clusterRoles map[string][]rbacv1.PolicyRule
	roles        map[string][]rbacv1.PolicyRule // by namespace/name
	crbs         []rbacv1.ClusterRoleBinding
	rbs          []rbacv1.RoleBinding
}

// scopedRules are rules that apply in a namespace ("": cluster-wide).
type scopedRules struct {
	namespace string
	rules     []rbacv1.PolicyRule
}

func readRBAC(objs []*unstructured.Unstructured) (rbacSet, error) {
	set := rbacSet{clusterRoles: map[string][]rbacv1.PolicyRule{}, roles: map[string][]rbacv1.PolicyRule{}}
	for _, o := range objs {
		if o.GroupVersionKind().Group != rbacv1.GroupName {
			continue
		}
		ns := o.GetNamespace()
		if ns == "" {
			ns = defaultNamespace
		}
		var err error
		switch o.GetKind() {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r)
			set.clusterRoles[r.Name] = r.Rules
		case "Role":
			var r rbacv1.Role
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r)
			set.roles[ns+"/"+r.Name] = r.Rules
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b)
			set.crbs = append(set.crbs, b)
		case "RoleBinding":
			var b rbacv1.RoleBinding
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b)
			b.Namespace = ns
			set.rbs = append(set.rbs, b)
		}
		if err != nil {
			return set, fmt.Errorf("%s: %w", ID(o), err)
		}
	}
	return set, nil
}

// scopes returns the rules the set's bindings give a user, by where they
// apply.
func (s rbacSet) scopes(user string, groups []string) []scopedRules {
	var out []scopedRules
	for _, b := range s.crbs {
		if rules, ok := s.clusterRoles[b.RoleRef.Name]; ok && b.RoleRef.Kind == "ClusterRole" && bindsTo(b.Subjects, "", user, groups) {
			out = append(out, scopedRules{"", rules})
		}
	}
	for _, b := range s.rbs {
		if !bindsTo(b.Subjects, b.Namespace, user, groups) {
			continue
		}
		var rules []rbacv1.PolicyRule
		var ok bool
		switch b.RoleRef.Kind {
		case "ClusterRole":
			rules, ok = s.clusterRoles[b.RoleRef.Name]
		case "Role":
			rules, ok = s.roles[b.Namespace+"/"+b.RoleRef.Name]
		}
		if ok {
			out = append(out, scopedRules{b.Namespace, rules})
		}
	}
	return out
}

// bindsTo reports whether a binding's subjects name the user, one of its
// groups, or the service account the user is (a subject without a
// namespace is in the binding's).
func bindsTo(subjects []rbacv1.Subject, bindingNamespace, user string, groups []string) bool {
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			if s.Name == user {
				return true
			}
		case rbacv1.GroupKind:
			if slices.Contains(groups, s.Name) {
				return true
			}
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = bindingNamespace
			}
			if u, _ := ServiceAccountUser(ns, s.Name); u == user {
				return true
			}
		}
	}
	return false
}

// allows reports whether the rules grant the expectation's request, as
// the RBAC authorizer matches them (k8s.io/kubernetes
// pkg/apis/rbac/v1/evaluation_helpers.go): cluster-wide rules any request,
// a namespace's only requests in it.
func (s scopedRules) allows(e AccessExpectation) bool {
	if s.namespace != "" && s.namespace != e.Namespace {
		return false
	}
	resource := e.Resource
	if e.Subresource != "" {
		resource += "/" + e.Subresource
	}
	for _, r := range s.rules {
		if (slices.Contains(r.Verbs, rbacv1.VerbAll) || slices.Contains(r.Verbs, e.Verb)) &&
			(slices.Contains(r.APIGroups, rbacv1.APIGroupAll) || slices.Contains(r.APIGroups, e.Group)) &&
			slices.ContainsFunc(r.Resources, func(x string) bool {
				return x == rbacv1.ResourceAll || x == resource ||
					e.Subresource != "" && x == rbacv1.ResourceAll+"/"+e.Subresource
			}) &&
			(len(r.ResourceNames) == 0 || e.Name != "" && slices.Contains(r.ResourceNames, e.Name)) {
			return true
		}
	}
	return false
}
