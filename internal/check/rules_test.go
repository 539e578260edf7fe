package check

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestMain holds every rule to its area in every test of the package: a
// finding of another area than its rule's fails the run.
func TestMain(m *testing.M) {
	var mu sync.Mutex
	var strays []string
	for i := range Rules {
		r := Rules[i]
		if r.Check == nil { // the AWS rules: awscheck's
			continue
		}
		Rules[i].Check = func(v *View) []Finding {
			fs := r.Check(v)
			for _, f := range fs {
				if f.Area != r.Area {
					mu.Lock()
					strays = append(strays, fmt.Sprintf("rule %s (area %s) gave a finding of area %q: %s", r.Name, r.Area, f.Area, f.Message))
					mu.Unlock()
				}
			}
			return fs
		}
	}
	code := m.Run()
	for _, s := range strays {
		fmt.Fprintln(os.Stderr, "FAIL:", s)
		code = 1
	}
	os.Exit(code)
}

// TestRuleSymptoms: every rule says what an operator sees when it finds an
// error and what to do (docs/troubleshooting.md), each in one line.
func TestRuleSymptoms(t *testing.T) {
	for _, r := range Rules {
		if strings.TrimSpace(r.Symptom) == "" || strings.TrimSpace(r.Fix) == "" {
			t.Errorf("rule %s: symptom %q, fix %q; want both", r.Name, r.Symptom, r.Fix)
		}
		if strings.Contains(r.Symptom+r.Fix, "\n") {
			t.Errorf("rule %s: a symptom or fix of more than one line", r.Name)
		}
	}
}

// TestAreas: the areas come from Rules, each once, in the order of their
// first rules; an AWS area is one of AWS rules alone (iam has the
// cluster's rule of the events' denials too).
func TestAreas(t *testing.T) {
	areas := Areas()
	if !slices.Equal(areaOrder, areas) || areas[0] != Rules[0].Area {
		t.Errorf("areaOrder %q, Areas() %q", areaOrder, areas)
	}
	for i, a := range areas {
		if slices.Contains(areas[i+1:], a) {
			t.Errorf("area %s twice", a)
		}
	}
	if !AWSArea(AreaInstance) || AWSArea(AreaIAM) || AWSArea(AreaWorkload) || AWSArea("nothing") {
		t.Error("awsArea: instance is an AWS area; iam, workload and an area without rules are not")
	}
}

// TestRules: every rule of the registry has a name of its own and gives
// findings of its area; on a snapshot written out whole (what a new
// rule's test looks like), each rule alone says what it should.
func TestRules(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ccm", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "ccm", Image: "registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.0",
				Args: []string{"--cloud-provider=gce"}}},
		}}}}
	s := &Snapshot{
		Input:             Input{Source: SourceManifests, Objects: []runtime.Object{ds}, KCMUser: renderer.DefaultKCMUser},
		Now:               testNow,
		KubernetesVersion: "v1.34.1",
		Nodes:             []corev1.Node{rke2Server("cp-1"), node("w-1", providerID("gce://p/z/w-1"))},
		Workload:          &candidates([]runtime.Object{ds}, "kube-system")[0],
	}
	v := NewView(s)
	want := map[string]struct {
		area, subject string
		sev           Severity
		says          string
	}{
		"workload":     {AreaWorkload, "container ccm", Error, `--cloud-provider is "gce", not aws`},
		"distribution": {AreaDistribution, "DaemonSet kube-system/ccm", Warning, "not rendered by aws-ccm-renderer"},
		"placement":    {AreaPlacement, "cp-1", Error, "taint node-role.kubernetes.io/control-plane:NoSchedule is not tolerated"},
		"node":         {AreaNode, "w-1", Error, "providerID gce://p/z/w-1: initialised by another cloud controller"},
		"rbac":         {AreaRBAC, "ServiceAccount kube-system/default", Info, "not checked"},
		"lease":        {AreaLease, "", "", ""},
		"version":      {AreaVersion, "image registry.k8s.io/provider-aws/cloud-controller-manager:v1.33.0", Warning, "one minor older"},
	}
	var names []string
	for _, r := range Rules {
		if slices.Contains(names, r.Name) {
			t.Errorf("two rules named %s", r.Name)
		}
		names = append(names, r.Name)
		if r.Check == nil {
			if r.Kind != AWSRule {
				t.Errorf("rule %s has no Check", r.Name)
			}
			continue
		}
		fs := r.Check(v)
		for _, f := range fs {
			if f.Area != r.Area {
				t.Errorf("%s: a finding of area %q, not its own %s", r.Name, f.Area, r.Area)
			}
		}
		w, ok := want[r.Name]
		if !ok {
			continue
		}
		found := w.sev == "" && len(fs) == 0
		for _, f := range fs {
			if f.Area == w.area && f.Subject == w.subject && f.Severity == w.sev && strings.Contains(f.Message, w.says) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: %+v, want %s %q about %q", r.Name, fs, w.sev, w.says, w.subject)
		}
	}
	// Without a workload in the cluster: one finding says so; the rules
	// of the workload's parts say nothing.
	s = &Snapshot{Input: Input{Source: SourceCluster}, Now: testNow, KubernetesVersion: "v1.34.1", Nodes: []corev1.Node{rke2Server("cp-1")}}
	r := Evaluate(s)
	if f := one(t, r, AreaWorkload, ""); f.Severity != Error || !strings.Contains(f.Fix, "--distro="+string(distros.RKE2)) {
		t.Errorf("no workload: %+v", f)
	}
	for _, area := range []string{AreaPlacement, AreaRBAC, AreaLease} {
		for _, f := range r.Findings {
			if f.Area == area {
				t.Errorf("no workload, yet a %s finding: %+v", area, f)
			}
		}
	}
}

// want is a finding a rule's table row expects: its subject and severity
// exactly, a part of its message and of its fix ("": any fix, or with
// noFix none).
type want struct {
	subject string
	sev     Severity
	says    string
	fix     string
}

// expectArea asserts a report's findings of one area, in order.
func expectArea(t *testing.T, r *Report, area string, wants []want, noFix bool) {
	t.Helper()
	var got []Finding
	for _, f := range r.Findings {
		if f.Area == area {
			got = append(got, f)
		}
	}
	if len(got) != len(wants) {
		t.Fatalf("%d %s findings, want %d: %+v", len(got), area, len(wants), got)
	}
	for i, w := range wants {
		f := got[i]
		if f.Subject != w.subject || f.Severity != w.sev || !strings.Contains(f.Message, w.says) || !strings.Contains(f.Fix, w.fix) || noFix && w.fix == "" && f.Fix != "" {
			t.Errorf("finding %d: %+v\nwant %q %s %q, fix %q", i, f, w.subject, w.sev, w.says, w.fix)
		}
	}
}

// TestReleaseStatus: a release's last revision that failed is named as
// failed, with Helm's words; pending is a warning; deployed, and other
// sources, say nothing of it.
func TestReleaseStatus(t *testing.T) {
	for _, c := range []struct {
		name, source, status, description string
		want                              []want
	}{
		{"failed", SourceRelease, "failed", "Upgrade \"aws-ccm\" failed: context deadline exceeded", []want{
			{"release aws-ccm revision 3", Error, "failed: Upgrade \"aws-ccm\" failed: context deadline exceeded; the cluster runs what of it was applied", "helm rollback aws-ccm -n kube-system"}}},
		{"pending", SourceRelease, "pending-upgrade", "Preparing upgrade", []want{{"release aws-ccm revision 3", Warning, "pending-upgrade: an install, upgrade or rollback runs", "helm rollback aws-ccm -n kube-system"}}},
		{"superseded", SourceRelease, "superseded", "", []want{{"release aws-ccm revision 3", Warning, "its last revision is superseded", "helm history aws-ccm -n kube-system"}}},
		{"deployed: silent", SourceRelease, "deployed", "Upgrade complete", nil},
		{"manifests: silent", SourceManifests, "failed", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, nil, render(t, distros.RKE2, renderer.ModeInstall), true)
			s.Source, s.Release, s.ReleaseStatus, s.ReleaseDescription = c.source, "aws-ccm revision 3", c.status, c.description
			var r Report
			for _, f := range Evaluate(s).Findings {
				if strings.HasPrefix(f.Subject, "release ") {
					r.Findings = append(r.Findings, f)
				}
			}
			expectArea(t, &r, AreaWorkload, c.want, false)
		})
	}
}

// TestAppliedBy: the tool that applied the CCM, by the marks it leaves:
// Argo CD's tracking annotation before its labels, Fleet's object set
// annotation with or without Helm's release, Helm's release alone before
// Argo CD's default label; none without marks. The workload finding says it.
func TestAppliedBy(t *testing.T) {
	helm := map[string]string{helmReleaseName: "aws-ccm", helmReleaseNamespace: "kube-system"}
	with := func(a map[string]string, more ...string) map[string]string {
		out := map[string]string{}
		for k, v := range a {
			out[k] = v
		}
		for i := 0; i+1 < len(more); i += 2 {
			out[more[i]] = more[i+1]
		}
		return out
	}
	for _, c := range []struct {
		annotations, labels map[string]string
		want                string
	}{
		{with(nil, argoTrackingAnnotation, "aws-ccm-prod-eu:apps/DaemonSet:kube-system/aws-cloud-controller-manager"), map[string]string{argoInstanceLabel: "other"}, "Argo CD (Application aws-ccm-prod-eu)"},
		{nil, map[string]string{argoInstanceLabel: "aws-ccm-prod-us"}, "Argo CD (Application aws-ccm-prod-us)"},
		{with(helm, fleetObjectSetID, "default-aws-ccm"), nil, "Fleet (Helm release kube-system/aws-ccm)"},
		{with(nil, fleetObjectSetID, "default-aws-ccm"), nil, "Fleet"},
		{helm, nil, "Helm (release kube-system/aws-ccm)"},
		{nil, map[string]string{"app.kubernetes.io/instance": "aws-ccm-c"}, "Argo CD (Application aws-ccm-c, by its tracking label app.kubernetes.io/instance)"},
		{helm, map[string]string{"app.kubernetes.io/instance": "aws-ccm"}, "Helm (release kube-system/aws-ccm)"},
		{nil, nil, ""},
	} {
		if got := appliedBy(metav1.ObjectMeta{Annotations: c.annotations, Labels: c.labels}); got != c.want {
			t.Errorf("annotations %v, labels %v: %q, want %q", c.annotations, c.labels, got, c.want)
		}
	}
	w := &workloadView{Workload: &Workload{Installed: true, AppliedBy: "Argo CD (Application a)", Image: "i", ServiceAccount: "s", Mode: "install"},
		c: &candidate{}, ctr: corev1.Container{Image: "i"}, flags: map[string]string{"cloud-provider": "aws"}, spec: corev1.PodSpec{HostNetwork: true}}
	f := workloadRule(&View{Snapshot: &Snapshot{Input: Input{Source: SourceCluster}}, Workload: w})
	if len(f) == 0 || !strings.Contains(f[0].Message, "found in the cluster, installed by Argo CD (Application a): image i") {
		t.Errorf("the workload finding: %+v", f)
	}
}

// TestWithoutAWSSide: without package awscheck's side the AWS rules give
// nothing and --aws is one error; a side whose rules are not Rules' AWS
// rules is refused before it reads anything.
func TestWithoutAWSSide(t *testing.T) {
	s := &Snapshot{Input: Input{AWSOptions: &AWSOptions{Region: "us-west-2"}}}
	var ae *AWSError
	if err := s.collectAWS(t.Context()); !errors.As(err, &ae) || !strings.Contains(err.Error(), "without the AWS side") {
		t.Errorf("collectAWS without a side: %v", err)
	}
	for _, r := range Rules {
		if r.Kind == AWSRule && (r.Check != nil || s.check(r) != nil) {
			t.Errorf("rule %s has a Check without a side", r.Name)
		}
	}
	noop := func(*View) []Finding { return nil }
	all := map[string]func(*View) []Finding{}
	for _, r := range Rules {
		if r.Kind == AWSRule {
			all[r.Name] = noop
		}
	}
	missing := maps.Clone(all)
	delete(missing, "subnet")
	extra := maps.Clone(all)
	extra["nothing"] = noop
	for name, rules := range map[string]map[string]func(*View) []Finding{`no rule "subnet"`: missing, `rule "nothing" is no AWS rule`: extra} {
		read := false
		s.AWSSide = &AWSSide{Rules: rules, Collect: func(context.Context, *Snapshot) error { read = true; return nil }}
		if err := s.collectAWS(t.Context()); err == nil || !strings.Contains(err.Error(), name) || read {
			t.Errorf("collectAWS with a side that has %s: %v (read: %v)", name, err, read)
		}
	}
	s.AWSSide = &AWSSide{Rules: all, Collect: func(context.Context, *Snapshot) error { return nil }}
	if err := s.collectAWS(t.Context()); err != nil {
		t.Errorf("collectAWS with a side of every AWS rule: %v", err)
	}
}
