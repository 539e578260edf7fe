package check

import (
	"fmt"
	"strings"
)

// access is one thing a subject must be allowed to do.
type access struct {
	verb, group, resource, subresource, namespace, name string
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
	if v, ok := w.flags["use-service-account-credentials"]; ok && isTrue(v) {
		list = append(list,
			access{verb: "get", resource: "serviceaccounts", namespace: ServiceAccountsNS},
			access{verb: "create", resource: "serviceaccounts", namespace: ServiceAccountsNS},
			access{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: ServiceAccountsNS})
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
	for _, p := range perms {
		if p.Allowed {
			continue
		}
		k := key{p.Resource, p.Group, p.Namespace, p.Name}
		if _, ok := missing[k]; !ok {
			order = append(order, k)
		}
		missing[k] = append(missing[k], p.Verb)
	}
	if len(order) == 0 {
		return []Finding{{Area: AreaRBAC, Severity: OK, Subject: who.label,
			Message: fmt.Sprintf("allowed all %d requests it needs (SubjectAccessReview)", len(perms))}}
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
		where := "cluster-wide"
		if k.namespace != "" {
			where = "in namespace " + k.namespace
		}
		f := Finding{Area: AreaRBAC, Severity: Error, Subject: who.label,
			Message: fmt.Sprintf("may not %s %s %s", joinAnd(missing[k]), what, where)}
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
