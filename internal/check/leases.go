package check

import (
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Lease roles.
const (
	LeaseCCM       = "ccm"
	LeaseMigration = "migration"
	LeaseKCM       = "kube-controller-manager"
)

// leaseWants are the leases the workload uses: the in-tree controller
// manager's, its own leader-election lease, and the migration lease (in
// install mode too: one still in use means the in-tree side has not
// finished).
func (w *workloadView) leaseWants() []leaseWant {
	wants := []leaseWant{{LeaseKCM, releases.LeaseNamespace + "/" + releases.KCMLease}}
	if w.LeaderElect {
		wants = append(wants, leaseWant{LeaseCCM, w.Lease})
	}
	migration := w.MigrationLease
	if migration == "" {
		ns, _, _ := strings.Cut(w.Lease, "/")
		if ns == "" {
			ns = releases.LeaseNamespace
		}
		migration = ns + "/" + renderer.DefaultLeaderName
	}
	return append(wants, leaseWant{LeaseMigration, migration})
}

// leaseWant is a lease check looks for: its role and NAMESPACE/NAME.
type leaseWant struct{ role, ref string }

// judgeLeases reports the leases wanted: whether they exist, who holds
// them, and which side holds the migration lease.
func judgeLeases(s *Snapshot, wants []leaseWant) []LeaseReport {
	list := make([]LeaseReport, len(wants))
	reports := map[string]*LeaseReport{}
	for i, wt := range wants {
		ns, name, _ := strings.Cut(wt.ref, "/")
		lr := LeaseReport{Role: wt.role, Namespace: ns, Name: name}
		if l := s.Leases[wt.ref]; l != nil {
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
			lr.Expired = expired(l, s.Now)
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
	return list
}

// leaseRule reports who holds the CCM's lease and the migration lease,
// against the workload's mode.
func leaseRule(v *View) []Finding {
	if v.Workload == nil {
		return nil
	}
	var out []Finding
	for i := range v.Leases {
		switch l := &v.Leases[i]; l.Role {
		case LeaseCCM:
			out = append(out, v.ccmLeaseFinding(l)...)
		case LeaseMigration:
			out = append(out, v.migrationLeaseFinding(l)...)
		}
	}
	return out
}

// expired tells whether a lease's holder has stopped renewing it: its
// last renewal is more than its duration ago. A lease without a holder is
// free.
func expired(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil {
		return true
	}
	d := 15 * time.Second
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return now.After(l.Spec.RenewTime.Add(d))
}

func (v *View) since(t time.Time) string { return age(v.Now.Sub(t)) }

func (v *View) held(l *LeaseReport) string {
	s := "held by " + l.Holder
	if l.Acquired != "" {
		s += " since " + v.since(l.acquiredAt) + " ago"
	}
	return s
}

func (v *View) lapsed(l *LeaseReport) string {
	if l.Holder == "" {
		return "held by no one"
	}
	return fmt.Sprintf("last renewed %s ago by %s, expired", v.since(l.renewedAt), l.Holder)
}

func (v *View) ccmLeaseFinding(l *LeaseReport) []Finding {
	w := v.Workload
	subject := "Lease " + l.Namespace + "/" + l.Name
	logs := "see the placement findings, and the CCM's log: kubectl logs -n " + w.Namespace + " " + strings.ToLower(w.Kind) + "/" + w.Name
	switch {
	case !w.Installed && l.Exists && !l.Expired:
		return []Finding{{Area: AreaLease, Severity: Warning, Subject: subject,
			Message: v.held(l) + ": another cloud controller manager with this lease name already runs; this one would wait behind it",
			Fix:     "remove the other CCM first, or give this one another --leader-elect-resource-name"}}
	case !w.Installed:
	case !l.Exists:
		return []Finding{{Area: AreaLease, Severity: Error, Subject: subject,
			Message: "no CCM instance has taken its leader-election lease: none is running, or none may write leases", Fix: logs}}
	case l.Expired:
		return []Finding{{Area: AreaLease, Severity: Error, Subject: subject,
			Message: v.lapsed(l) + ": no CCM instance leads", Fix: logs}}
	default:
		return []Finding{{Area: AreaLease, Severity: OK, Subject: subject, Message: v.held(l) + " (the CCM's leader)"}}
	}
	return nil
}

func (v *View) migrationLeaseFinding(l *LeaseReport) []Finding {
	w := v.Workload
	subject := "Lease " + l.Namespace + "/" + l.Name
	active := l.Exists && !l.Expired
	if w.Mode == string(renderer.ModeMigrate) {
		f := Finding{Area: AreaLease, Subject: subject}
		switch {
		case !active && v.kcmMigrates():
			f.Severity = Warning
			f.Message = "the migration lease is " + map[bool]string{true: v.lapsed(l), false: "missing"}[l.Exists] +
				", although the in-tree kube-controller-manager runs with --enable-leader-migration (its mirror pod): it may not take the lease, or does not lead"
			f.Fix = "let it get and update the lease (plan step before.grant-kcm-lease; the rbac findings ask), and read its log"
		case !active:
			f.Severity = Warning
			f.Message = "the migration lease is " + map[bool]string{true: v.lapsed(l), false: "missing"}[l.Exists] +
				": the in-tree controller manager does not run with leader migration, so nothing keeps it and the CCM from running the same cloud controllers"
			f.Fix = "start the in-tree kube-controller-manager with --enable-leader-migration (RKE1/RKE2: kube-controller-manager-arg enable-leader-migration) before the CCM, or render the CCM with --mode=install once the controller manager runs with --cloud-provider=external"
		case l.Side == LeaseKCM:
			f.Severity = OK
			f.Message = v.held(l) + ", the in-tree kube-controller-manager: the CCM's migrated controllers wait until it lets go (next: move the controller manager to --cloud-provider=external)"
		case l.Side == LeaseCCM:
			f.Severity = OK
			f.Message = v.held(l) + ", the CCM's leader: the cloud controllers have moved (next, once no controller manager runs the in-tree provider: render with --mode=install)"
		default:
			f.Severity = Warning
			f.Message = v.held(l) + ", which leads neither the CCM's lease nor " + releases.LeaseNamespace + "/" + releases.KCMLease
			f.Fix = "find the component with this identity; only the in-tree controller manager and the CCM should hold the migration lease"
		}
		return []Finding{v.expectHolder(f, active, l.Side)}
	}
	if !active {
		return nil
	}
	switch l.Side {
	case LeaseKCM:
		return []Finding{{Area: AreaLease, Severity: Error, Subject: subject,
			Message: v.held(l) + ", the in-tree kube-controller-manager: it still runs cloud controllers under leader migration, while this CCM (install mode) runs them without the lock, so both act on the same nodes and load balancers",
			Fix:     "finish moving the controller manager to --cloud-provider=external without --enable-leader-migration, or render the CCM with --mode=migrate until then"}}
	case LeaseCCM:
		return []Finding{{Area: AreaLease, Severity: Warning, Subject: subject,
			Message: v.held(l) + ", the CCM's leader, although the workload runs in install mode: an instance with leader migration still leads",
			Fix:     "wait for the rollout to finish: kubectl rollout status -n " + w.Namespace + " " + strings.ToLower(w.Kind) + "/" + w.Name}}
	default:
		return []Finding{{Area: AreaLease, Severity: Warning, Subject: subject,
			Message: v.held(l) + ": a component still runs leader migration, while this CCM runs in install mode",
			Fix:     "find the component with this identity and switch its leader migration off"}}
	}
}

// kcmMigrates tells whether a controller manager the API shows runs the
// in-tree provider with leader migration.
func (v *View) kcmMigrates() bool {
	for _, k := range v.controlPlaneProcesses(programKCM) {
		if k.flags["cloud-provider"] == "aws" && IsTrue(k.flags["enable-leader-migration"]) {
			return true
		}
	}
	return false
}

// expectHolder makes a migration lease finding an error when the side
// that should hold the lease at this step (--migration-lease-holder) does
// not.
func (v *View) expectHolder(f Finding, active bool, side string) Finding {
	want := v.MigrationHolder
	if want == "" || active && side == want {
		return f
	}
	f.Severity = Error
	switch want {
	case LeaseKCM:
		f.Message += "; at this step the in-tree kube-controller-manager should hold it (--migration-lease-holder=" + want + ")"
		if f.Fix == "" {
			f.Fix = "the in-tree kube-controller-manager must run with --enable-leader-migration and may take the lease (plan steps before.grant-kcm-lease and before.kcm-leader-migration): roll the last step back"
		}
	default:
		f.Message += "; at this step the CCM's leader should hold it (--migration-lease-holder=" + want + ")"
		if f.Fix == "" {
			f.Fix = "a controller manager still runs the in-tree provider with leader migration, or the CCM may not take the lease: finish the switch on every control-plane node (plan step during.switch) and read the CCM's log"
		}
	}
	return f
}
