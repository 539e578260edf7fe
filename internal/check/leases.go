package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Lease roles.
const (
	LeaseCCM       = "ccm"
	LeaseMigration = "migration"
	LeaseKCM       = "kube-controller-manager"
)

// checkLeases reads the CCM's leader-election lease, the in-tree
// controller manager's, and the migration lease, with one list per
// namespace, and judges who holds them against the workload's mode.
func (c *checker) checkLeases(ctx context.Context) error {
	w := c.rep.Workload
	if w == nil {
		return nil
	}
	wants := []leaseWant{{LeaseKCM, DefaultLeaseNS + "/" + KCMLease}}
	if w.LeaderElect {
		wants = append(wants, leaseWant{LeaseCCM, w.Lease})
	}
	migration := w.MigrationLease
	if migration == "" {
		// Install mode: a migration lease still in use means the in-tree
		// side has not finished.
		ns, _, _ := strings.Cut(w.Lease, "/")
		if ns == "" {
			ns = DefaultLeaseNS
		}
		migration = ns + "/" + defaultMigrationName
	}
	wants = append(wants, leaseWant{LeaseMigration, migration})

	c.leases = map[string]*coordinationv1.Lease{}
	var namespaces []string
	for _, wt := range wants {
		ns, _, _ := strings.Cut(wt.ref, "/")
		if !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	for _, ns := range namespaces {
		list, err := c.client.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return clusterError("list", "leases.coordination.k8s.io", ns, err)
		}
		for i := range list.Items {
			l := &list.Items[i]
			c.leases[l.Namespace+"/"+l.Name] = l
		}
	}
	c.judgeLeases(wants)
	return nil
}

// leaseWant is a lease check looks for: its role and NAMESPACE/NAME.
type leaseWant struct{ role, ref string }

// judgeLeases reports the leases read and who holds them.
func (c *checker) judgeLeases(wants []leaseWant) {
	list := make([]LeaseReport, len(wants))
	reports := map[string]*LeaseReport{}
	for i, wt := range wants {
		ns, name, _ := strings.Cut(wt.ref, "/")
		lr := LeaseReport{Role: wt.role, Namespace: ns, Name: name}
		if l := c.leases[wt.ref]; l != nil {
			lr.Exists = true
			if l.Spec.HolderIdentity != nil {
				lr.Holder = *l.Spec.HolderIdentity
			}
			if t := l.Spec.AcquireTime; t != nil {
				lr.Acquired, lr.acquiredAt = t.UTC().Format(time.RFC3339), t.Time
			}
			if t := l.Spec.RenewTime; t != nil {
				lr.Renewed, lr.renewedAt = t.UTC().Format(time.RFC3339), t.Time
			}
			lr.Expired = c.expired(l)
		}
		list[i] = lr
		reports[wt.role] = &list[i]
	}
	ccm, kcm, mig := reports[LeaseCCM], reports[LeaseKCM], reports[LeaseMigration]
	if mig.Holder != "" {
		switch {
		case ccm != nil && ccm.Holder == mig.Holder:
			mig.Side = LeaseCCM
		case kcm.Holder == mig.Holder:
			mig.Side = LeaseKCM
		default:
			mig.Side = "unknown"
		}
	}
	c.rep.Leases = append(c.rep.Leases, list...)
	if ccm != nil {
		c.ccmLeaseFinding(ccm)
	}
	c.migrationLeaseFinding(mig)
}

// expired tells whether a lease's holder has stopped renewing it: its
// last renewal is more than its duration ago. A lease without a holder is
// free.
func (c *checker) expired(l *coordinationv1.Lease) bool {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil {
		return true
	}
	d := 15 * time.Second
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return c.now.After(l.Spec.RenewTime.Add(d))
}

func (c *checker) since(t time.Time) string { return age(c.now.Sub(t)) }

func (c *checker) held(l *LeaseReport) string {
	s := "held by " + l.Holder
	if l.Acquired != "" {
		s += " since " + c.since(l.acquiredAt) + " ago"
	}
	return s
}

func (c *checker) lapsed(l *LeaseReport) string {
	if l.Holder == "" {
		return "held by no one"
	}
	return fmt.Sprintf("last renewed %s ago by %s, expired", c.since(l.renewedAt), l.Holder)
}

func (c *checker) ccmLeaseFinding(l *LeaseReport) {
	w := c.rep.Workload
	subject := "Lease " + l.Namespace + "/" + l.Name
	logs := "see the placement findings, and the CCM's log: kubectl logs -n " + w.Namespace + " " + strings.ToLower(w.Kind) + "/" + w.Name
	switch {
	case !w.Installed && l.Exists && !l.Expired:
		c.rep.add(Finding{Area: AreaLease, Severity: Warning, Subject: subject,
			Message: c.held(l) + ": another cloud controller manager with this lease name already runs; this one would wait behind it",
			Fix:     "remove the other CCM first, or give this one another --leader-elect-resource-name"})
	case !w.Installed:
	case !l.Exists:
		c.rep.add(Finding{Area: AreaLease, Severity: Error, Subject: subject,
			Message: "no CCM instance has taken its leader-election lease: none is running, or none may write leases", Fix: logs})
	case l.Expired:
		c.rep.add(Finding{Area: AreaLease, Severity: Error, Subject: subject,
			Message: c.lapsed(l) + ": no CCM instance leads", Fix: logs})
	default:
		c.rep.add(Finding{Area: AreaLease, Severity: OK, Subject: subject, Message: c.held(l) + " (the CCM's leader)"})
	}
}

func (c *checker) migrationLeaseFinding(l *LeaseReport) {
	w := c.rep.Workload
	subject := "Lease " + l.Namespace + "/" + l.Name
	active := l.Exists && !l.Expired
	if w.Mode == string(renderer.ModeMigrate) {
		f := Finding{Area: AreaLease, Subject: subject}
		switch {
		case !active:
			f.Severity = Warning
			f.Message = "the migration lease is " + map[bool]string{true: c.lapsed(l), false: "missing"}[l.Exists] +
				": the in-tree controller manager does not run with leader migration, so nothing keeps it and the CCM from running the same cloud controllers"
			f.Fix = "start the in-tree kube-controller-manager with --enable-leader-migration (RKE1/RKE2: kube-controller-manager-arg enable-leader-migration) before the CCM, or render the CCM with --mode=install once the controller manager runs with --cloud-provider=external"
		case l.Side == LeaseKCM:
			f.Severity = OK
			f.Message = c.held(l) + ", the in-tree kube-controller-manager: the CCM's migrated controllers wait until it lets go (next: move the controller manager to --cloud-provider=external)"
		case l.Side == LeaseCCM:
			f.Severity = OK
			f.Message = c.held(l) + ", the CCM's leader: the cloud controllers have moved (next, once no controller manager runs the in-tree provider: render with --mode=install)"
		default:
			f.Severity = Warning
			f.Message = c.held(l) + ", which leads neither the CCM's lease nor " + DefaultLeaseNS + "/" + KCMLease
			f.Fix = "find the component with this identity; only the in-tree controller manager and the CCM should hold the migration lease"
		}
		c.rep.add(f)
		return
	}
	if !active {
		return
	}
	switch l.Side {
	case LeaseKCM:
		c.rep.add(Finding{Area: AreaLease, Severity: Error, Subject: subject,
			Message: c.held(l) + ", the in-tree kube-controller-manager: it still runs cloud controllers under leader migration, while this CCM (install mode) runs them without the lock, so both act on the same nodes and load balancers",
			Fix:     "finish moving the controller manager to --cloud-provider=external without --enable-leader-migration, or render the CCM with --mode=migrate until then"})
	case LeaseCCM:
		c.rep.add(Finding{Area: AreaLease, Severity: Warning, Subject: subject,
			Message: c.held(l) + ", the CCM's leader, although the workload runs in install mode: an instance with leader migration still leads",
			Fix:     "wait for the rollout to finish: kubectl rollout status -n " + w.Namespace + " " + strings.ToLower(w.Kind) + "/" + w.Name})
	default:
		c.rep.add(Finding{Area: AreaLease, Severity: Warning, Subject: subject,
			Message: c.held(l) + ": a component still runs leader migration, while this CCM runs in install mode",
			Fix:     "find the component with this identity and switch its leader migration off"})
	}
}
