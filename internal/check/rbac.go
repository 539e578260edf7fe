package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// access is one thing a subject must be allowed to do, or, with a
// purpose, one thing check asks about for another reason.
type access struct {
	verb, group, resource, subresource, namespace, name string
	purpose                                             string
}

// Purposes of questions that are no permission the subject needs.
const (
	// purposeTokenScope: how far the CCM's account may create tokens.
	purposeTokenScope = "token-scope"
)

// controllerAccounts are the service accounts in kube-system the CCM asks
// tokens for with --use-service-account-credentials=true: the clients of
// its controllers (k8s.io/cloud-provider app/controllermanager.go at
// v0.26.0 and v0.35.0: node-controller for cloud-node and
// cloud-node-lifecycle, service-controller, route-controller, the last
// only with --configure-cloud-routes, app/core.go startRouteController),
// the AWS provider's own client (cloud-provider-aws pkg/providers/v1/aws.go
// Initialize, "aws-cloud-provider") and the tagging controller's
// (pkg/controllers/tagging, off unless --controllers names it: main.go
// ControllersDisabledByDefault), at v1.26.0 and v1.35.3. The clients of
// the shared informers and of discovery are the CCM's own
// (options.go, controllermanager.go run). The renderer's
// --token-scope=controllers grants all five (renderer.ControllerAccounts).
func (w *workloadView) controllerAccounts() []string {
	names := []string{"aws-cloud-provider", "node-controller"}
	controllers := strings.Split(w.flags["controllers"], ",")
	if !slices.Contains(controllers, "-service") && !slices.Contains(controllers, "-service-lb-controller") {
		names = append(names, "service-controller")
	}
	if !isFalse(w.flags["configure-cloud-routes"]) {
		names = append(names, "route-controller")
	}
	if slices.Contains(controllers, "tagging") {
		names = append(names, "tagging-controller")
	}
	sort.Strings(names)
	return names
}

func (a access) resourceString() string {
	if a.subresource != "" {
		return a.resource + "/" + a.subresource
	}
	return a.resource
}

// subject is who a SubjectAccessReview asks about.
type subject struct {
	label  string // as reports name it
	user   string
	groups []string
}

func serviceAccountSubject(ns, name string) subject {
	return subject{
		label:  "ServiceAccount " + ns + "/" + name,
		user:   "system:serviceaccount:" + ns + ":" + name,
		groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
}

// ccmAccess lists what the CCM's service account must be allowed: the
// service accounts and tokens of --use-service-account-credentials, its
// leader-election lease, nodes, services and events, and in migrate mode
// the migration lease.
func (w *workloadView) ccmAccess() []access {
	var list []access
	if v, ok := w.flags["use-service-account-credentials"]; ok && IsTrue(v) {
		list = append(list,
			access{verb: "get", resource: "serviceaccounts", namespace: ServiceAccountsNS},
			access{verb: "create", resource: "serviceaccounts", namespace: ServiceAccountsNS})
		// By name: a grant narrowed to these accounts is enough.
		for _, name := range w.controllerAccounts() {
			list = append(list, access{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: ServiceAccountsNS, name: name})
		}
	}
	leases := func(ref string) {
		ns, name, _ := strings.Cut(ref, "/")
		list = append(list,
			access{verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: ns, name: name},
			access{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: ns, name: name},
			access{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: ns})
	}
	if w.LeaderElect {
		leases(w.Lease)
	}
	if w.MigrationLease != "" {
		leases(w.MigrationLease)
	}
	for _, v := range []string{"get", "list", "watch", "update", "patch"} {
		list = append(list, access{verb: v, resource: "nodes"})
	}
	list = append(list, access{verb: "patch", resource: "nodes", subresource: "status"})
	for _, v := range []string{"list", "watch", "update", "patch"} {
		list = append(list, access{verb: v, resource: "services"})
	}
	list = append(list, access{verb: "patch", resource: "services", subresource: "status"})
	for _, v := range []string{"create", "update", "patch"} {
		list = append(list, access{verb: v, resource: "events"})
	}
	return dedupe(list)
}

// tokenScopeAccess asks how far the CCM's account may create tokens: for
// any account of kube-system, for any account of any namespace.
func tokenScopeAccess() []access {
	return []access{
		{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: ServiceAccountsNS, purpose: purposeTokenScope},
		{verb: "create", resource: "serviceaccounts", subresource: "token", purpose: purposeTokenScope},
	}
}

func dedupe(list []access) []access {
	seen := map[access]bool{}
	var out []access
	for _, a := range list {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// rbacRule judges the SubjectAccessReviews' answers: the CCM's service
// account's once installed (before, its roles are not in the cluster yet),
// and in migrate mode the in-tree controller manager's on the migration
// lease.
func rbacRule(v *View) []Finding {
	w := v.Workload
	if w == nil {
		return nil
	}
	var out []Finding
	sa := w.serviceAccount()
	if w.Installed {
		out = append(out, v.rbacFindings(sa, v.answers(sa), false)...)
	} else {
		out = append(out, Finding{Area: AreaRBAC, Severity: Info, Subject: sa.label,
			Message: "not checked: the workload is not installed, so its roles are not in the cluster yet"})
	}
	if w.MigrationLease != "" {
		kcm := kcmSubject(v.KCMUser)
		out = append(out, v.rbacFindings(kcm, v.answers(kcm), true)...)
	}
	return out
}

// rbacFindings writes one line when everything is allowed, else one line
// per resource with the verbs missing.
func (v *View) rbacFindings(who subject, perms []Permission, isKCM bool) []Finding {
	type key struct{ resource, group, namespace, name string }
	var order []key
	missing := map[key][]string{}
	tokensFor := map[key][]string{} // the accounts of the tokens it may not create
	for _, p := range perms {
		if p.Allowed || p.Purpose != "" {
			continue
		}
		k := key{p.Resource, p.Group, p.Namespace, p.Name}
		if p.Resource == "serviceaccounts/token" {
			k.name = ""
			tokensFor[k] = append(tokensFor[k], p.Name)
		}
		if _, ok := missing[k]; !ok {
			order = append(order, k)
		}
		if !slices.Contains(missing[k], p.Verb) {
			missing[k] = append(missing[k], p.Verb)
		}
	}
	if len(order) == 0 {
		needed := 0
		for _, p := range perms {
			if p.Purpose == "" {
				needed++
			}
		}
		return []Finding{{Area: AreaRBAC, Severity: OK, Subject: who.label,
			Message: fmt.Sprintf("allowed all %d requests it needs (SubjectAccessReview)", needed)}}
	}
	var out []Finding
	for _, k := range order {
		what := k.resource
		if k.group != "" {
			what += "." + k.group
		}
		if k.name != "" {
			what += " " + k.name
		}
		if names := slices.DeleteFunc(tokensFor[k], func(n string) bool { return n == "" }); len(names) > 0 {
			what += " for " + JoinAnd(names)
		}
		where := "cluster-wide"
		if k.namespace != "" {
			where = "in namespace " + k.namespace
		}
		f := Finding{Area: AreaRBAC, Severity: Error, Subject: who.label,
			Message: fmt.Sprintf("may not %s %s %s", JoinAnd(missing[k]), what, where)}
		switch {
		case isKCM:
			f.Message += ": the in-tree controller manager cannot take part in leader migration"
			f.Fix = fmt.Sprintf("grant it get and update on Lease %s/%s and create on leases (a Role and RoleBinding for %s in %s); before Kubernetes 1.31 its own roles cover only its own lease", k.namespace, k.name, who.label, k.namespace)
			if b := workloadBindsUser(v.Objects, v.KCMUser); b != "" && !v.Workload.Installed {
				f.Severity = Warning
				f.Fix = "install the workload: the manifests' " + b + " grants it"
			}
		case k.resource == "serviceaccounts" || k.resource == "serviceaccounts/token":
			f.Message += ": with --use-service-account-credentials=true the CCM cannot start its controllers"
			f.Fix = "render the chart through aws-ccm-renderer, which adds get and create on serviceaccounts and create on serviceaccounts/token to the role bound to the CCM's service account"
		default:
			f.Fix = "grant it in the ClusterRole bound to " + who.label + " (the chart's clusterRoleRules value)"
		}
		out = append(out, f)
	}
	return out
}

// tokenScopeRule reports how far the CCM's account may create tokens, once
// installed: it needs them for its controllers' accounts in kube-system
// alone; a grant for any account lets code running as the CCM act as any
// account of that scope, a cluster administrator's included.
func tokenScopeRule(v *View) []Finding {
	w := v.Workload
	if w == nil || !w.Installed {
		return nil
	}
	sa := w.serviceAccount()
	var anyKubeSystem, anyNamespace, asked, named bool
	for _, p := range v.answers(sa) {
		if p.Purpose != purposeTokenScope {
			named = named || p.Resource == "serviceaccounts/token" && p.Allowed
			continue
		}
		asked = true
		switch p.Namespace {
		case "":
			anyNamespace = p.Allowed
		case ServiceAccountsNS:
			anyKubeSystem = p.Allowed
		}
	}
	if !asked {
		return nil
	}
	f := Finding{Area: AreaRBAC, Subject: sa.label}
	needs := "it needs tokens only for its controllers' accounts in " + ServiceAccountsNS + " (" + JoinAnd(w.controllerAccounts()) + ")"
	switch {
	case anyNamespace:
		f.Severity = Warning
		f.Message = "may create a token for any service account in any namespace (create serviceaccounts/token cluster-wide, as the upstream chart grants it): code running as the CCM can act as any account, a cluster administrator's included; " + needs
		f.Fix = tokenScopeFix(w)
	case anyKubeSystem:
		f.Severity = Warning
		f.Message = "may create a token for any service account in " + ServiceAccountsNS + ", the controller manager's among them: code running as the CCM can act as any of them; " + needs
		f.Fix = tokenScopeFix(w)
	case named:
		f.Severity = OK
		f.Message = "may create tokens only for named accounts, not for any account of " + ServiceAccountsNS + " or any namespace"
	default:
		return nil // no token at all: the rbac findings say so
	}
	return []Finding{f}
}

// tokenScopeFix says how to narrow the token grant: the renderer's
// --token-scope=controllers (renderer.ControllerAccounts by resourceNames,
// kept across upgrades by the chart wrapper), or by hand.
func tokenScopeFix(w *workloadView) string {
	sa := w.serviceAccount()
	ns, name, _ := strings.Cut(strings.TrimPrefix(sa.user, "system:serviceaccount:"), ":")
	var names []string
	for _, n := range w.controllerAccounts() {
		names = append(names, "--resource-name="+n)
	}
	return fmt.Sprintf("render the CCM with --token-scope=controllers (aws-ccm-renderer upgrade keeps it on every later upgrade), which narrows the grant to its controllers' accounts by name; "+
		"or by hand: kubectl -n %s create role ccm-tokens --verb=create --resource=serviceaccounts/token %s; "+
		"kubectl -n %s create rolebinding ccm-tokens --role=ccm-tokens --serviceaccount=%s:%s; then take serviceaccounts/token out of every rule of the roles bound to %s that grants it for every account "+
		"(the chart's ClusterRole; a helm upgrade puts it back, so again after each)",
		ServiceAccountsNS, strings.Join(names, " "), ServiceAccountsNS, ns, name, sa.label)
}
