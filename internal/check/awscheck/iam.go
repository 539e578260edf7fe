package awscheck

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// principals simulates the policies of the principals the CCM calls AWS
// as (--aws-ccm-principal, else the control-plane instances' instance
// profile roles) against the actions of the CCM's release.
func (r *awsReader) principals(ctx context.Context) {
	type who struct{ arn, from string }
	var ps []who
	if p := r.s.AWSOptions.Principal; p != "" {
		ps = append(ps, who{p, "flag"})
	} else {
		var profiles []string
		for _, in := range r.controlPlaneInstances() {
			if in.Profile != "" && !slices.Contains(profiles, in.Profile) {
				profiles = append(profiles, in.Profile)
			}
		}
		sort.Strings(profiles)
		for _, arn := range profiles {
			_, name, _ := strings.Cut(arn, ":instance-profile/")
			if i := strings.LastIndexByte(name, '/'); i >= 0 {
				name = name[i+1:]
			}
			out, err := r.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
			if !r.done(check.AreaIAM, "iam:GetInstanceProfile", err) {
				continue
			}
			ip := check.AWSInstanceProfile{ARN: arn, Roles: []string{}}
			for _, role := range out.InstanceProfile.Roles {
				ip.Roles = append(ip.Roles, aws.ToString(role.Arn))
				ps = append(ps, who{aws.ToString(role.Arn), arn})
			}
			r.mu.Lock()
			r.acct.Profiles = append(r.acct.Profiles, ip)
			r.mu.Unlock()
		}
	}
	actions := releases.IAMPolicy(ccmRelease(r.s))
	for _, p := range ps {
		sim := check.AWSSimulation{Principal: p.arn, From: p.from, Decisions: map[string]string{}}
		pg := iam.NewSimulatePrincipalPolicyPaginator(r.iam, &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String(p.arn), ActionNames: actions})
		ok := true
		for pg.HasMorePages() {
			out, err := pg.NextPage(ctx)
			if ok = r.done(check.AreaIAM, "iam:SimulatePrincipalPolicy", err); !ok {
				break
			}
			for _, e := range out.EvaluationResults {
				sim.Decisions[aws.ToString(e.EvalActionName)] = string(e.EvalDecision)
			}
		}
		if ok {
			r.mu.Lock()
			r.acct.Simulations = append(r.acct.Simulations, sim)
			r.mu.Unlock()
		}
	}
}

// controlPlaneInstances are the instances of the control-plane nodes.
func (r *awsReader) controlPlaneInstances() []check.AWSInstance {
	var out []check.AWSInstance
	idx := indexInstances(r.acct.Instances)
	for i := range r.s.Nodes {
		n := &r.s.Nodes[i]
		if cp, _, _ := check.IsControlPlane(n); !cp {
			continue
		}
		if in, ok := idx.ofNode(n, true); ok {
			out = append(out, in)
		}
	}
	return out
}

// iamSimulationRule: the principals the CCM calls AWS as may do what the
// CCM release's policy lists (iam:SimulatePrincipalPolicy).
func iamSimulationRule(v *check.View) []check.Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	out := unreadFindings(v, check.AreaIAM)
	tag := ccmRelease(v.Snapshot)
	actions := releases.IAMPolicy(tag)
	for _, s := range a.Simulations {
		var denied []string
		for _, act := range actions {
			if d := s.Decisions[act]; d != "allowed" {
				denied = append(denied, act)
			}
		}
		subject := s.Principal
		if s.From != "flag" {
			subject += " (instance profile " + s.From + ")"
		}
		if len(denied) == 0 {
			out = append(out, check.Finding{Area: check.AreaIAM, Severity: check.OK, Subject: subject,
				Message: fmt.Sprintf("may do all %d actions of CCM %s's policy (simulated)", len(actions), tag)})
			continue
		}
		msg := fmt.Sprintf("may not %s (simulated against CCM %s's policy)", check.JoinAnd(denied), tag)
		if slices.Contains(denied, releases.ActionDescribeAZs) {
			switch {
			case releases.LabelsZoneID(ccmRelease(v.Snapshot)):
				msg += ": without " + releases.ActionDescribeAZs + " it initialises no node and ensures no load balancer"
			case releases.HasAction(ccmRelease(v.Snapshot), releases.ActionDescribeAZs):
				msg += ": without " + releases.ActionDescribeAZs + " it ensures no load balancer"
			}
		}
		f := check.Finding{Area: check.AreaIAM, Severity: check.Error, Subject: subject, Message: msg,
			Fix: "add " + check.Plural(len(denied), "it", "them") + " to the policy of " + s.Principal + "; " + v.IAMPolicyHint()}
		if len(denied) > 1 {
			f.Subjects, f.Count = denied, len(denied)
		}
		out = append(out, f)
	}
	if len(a.Simulations) == 0 && len(unread(a, check.AreaIAM)) == 0 && (v.AWSOptions == nil || v.AWSOptions.Principal == "") {
		cps := 0
		for _, ni := range nodeInstances(v) {
			if cp, _, _ := check.IsControlPlane(ni.node); cp {
				cps++
			}
		}
		if cps > 0 {
			out = append(out, check.Finding{Area: check.AreaIAM, Severity: check.Warning,
				Message: "no control-plane instance has an instance profile: the CCM has no AWS credentials there unless it is given others",
				Fix:     "attach an instance profile whose role has the CCM's policy; if the CCM gets credentials another way, name them with --aws-ccm-principal ARN"})
		}
	}
	return out
}
