package releases

import (
	"regexp"
	"slices"
	"testing"
)

var actionPattern = regexp.MustCompile(`^(ec2|elasticloadbalancing|autoscaling|kms|iam|sts):[A-Z][A-Za-z0-9]+$`)

// TestCodeCalls: every pinned release has its calls, each an IAM action
// with a site in the CCM's source, sorted.
func TestCodeCalls(t *testing.T) {
	for _, tag := range CallTags() {
		calls, ok := CodeCalls[tag]
		if !ok || len(calls) < 30 {
			t.Errorf("%s: %d calls", tag, len(calls))
		}
		if !slices.IsSortedFunc(calls, func(a, b CodeCall) int { return cmpString(a.Action, b.Action) }) {
			t.Errorf("%s: not sorted", tag)
		}
		for _, c := range calls {
			if !actionPattern.MatchString(c.Action) || !regexp.MustCompile(`^(pkg|cmd)/\S+\.go \S`).MatchString(c.Site) {
				t.Errorf("%s: %+v", tag, c)
			}
		}
	}
	if len(CodeCalls) != len(CallTags()) {
		t.Errorf("%d releases with calls, %d pinned", len(CodeCalls), len(CallTags()))
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestIAMPolicy: the policy is the calls and their dependencies; the
// target-group attributes calls of the load balancer code are in the
// policy of the releases that make them and not in the docs' policy;
// the volume actions the docs list and no controller calls are not.
func TestIAMPolicy(t *testing.T) {
	tg := []string{"elasticloadbalancing:DescribeTargetGroupAttributes", "elasticloadbalancing:ModifyTargetGroupAttributes"}
	for _, c := range []struct {
		tag  string
		want bool
	}{{"v1.26.0", false}, {"v1.31.9", false}, {"v1.32.5", false}, {"v1.32.6", true}, {"v1.32.8", true}, {"v1.33.2", false}, {"v1.33.3", true},
		{"v1.34.0", true}, {"v1.34.1", false}, {"v1.34.2", true}, {"v1.36.2", true}, {"v1.37.1", true}, {"v1.38.0", true}} {
		p, docs := IAMPolicy(c.tag), IAMControlPlane(c.tag)
		for _, a := range tg {
			if slices.Contains(p, a) != c.want || slices.Contains(docs, a) {
				t.Errorf("%s %s: in the policy %v, in the docs' %v", c.tag, a, slices.Contains(p, a), slices.Contains(docs, a))
			}
		}
		if slices.Contains(p, "ec2:AttachVolume") || !slices.Contains(docs, "ec2:AttachVolume") {
			t.Errorf("%s: ec2:AttachVolume in the policy %v, in the docs' %v", c.tag, slices.Contains(p, "ec2:AttachVolume"), slices.Contains(docs, "ec2:AttachVolume"))
		}
		if !slices.Contains(p, "iam:CreateServiceLinkedRole") {
			t.Errorf("%s: the policy lacks the dependency iam:CreateServiceLinkedRole", c.tag)
		}
		if !slices.IsSorted(p) || len(slices.Compact(slices.Clone(p))) != len(p) {
			t.Errorf("%s: not sorted or repeated: %v", c.tag, p)
		}
	}
	// The data read from each release's source agrees with the releases
	// TargetGroupAttributes names.
	for _, tag := range CallTags() {
		for _, a := range tg {
			called := slices.ContainsFunc(CodeCalls[tag], func(c CodeCall) bool { return c.Action == a })
			if called != ReadsTargetGroupAttributes(tag) {
				t.Errorf("%s: CodeCalls has %s %v, TargetGroupAttributes says %v", tag, a, called, ReadsTargetGroupAttributes(tag))
			}
		}
	}
	for _, tag := range CallTags() {
		var calls []string
		for _, c := range Calls(tag) {
			calls = append(calls, c.Action)
		}
		for _, a := range IAMPolicy(tag) {
			if !slices.Contains(calls, a) && !slices.ContainsFunc(IAMDependencies, func(d IAMDependency) bool { return d.Action == a }) {
				t.Errorf("%s: %s in the policy, neither called nor a dependency", tag, a)
			}
		}
		onlyCode, onlyDocs := IAMDiff(tag)
		if len(IAMControlPlane(tag))+len(onlyCode)-len(onlyDocs) != len(IAMPolicy(tag)) {
			t.Errorf("%s: docs %d + code only %d - docs only %d != policy %d", tag, len(IAMControlPlane(tag)), len(onlyCode), len(onlyDocs), len(IAMPolicy(tag)))
		}
	}
}

// TestCallsOf: a tag without data takes its minor's pinned release; a minor
// past the table the newest; no version the newest.
func TestCallsOf(t *testing.T) {
	for tag, want := range map[string]string{"v1.32.7": "v1.32.8", "v1.40.0": Newest(), "v1.10.0": CCM[0].Latest, "latest": Newest(), "v1.37.1": "v1.37.1"} {
		if !slices.Equal(Calls(tag), CodeCalls[want]) {
			t.Errorf("Calls(%s) are not those of %s", tag, want)
		}
	}
	// Before its minor's first release that reads the target-group-attributes
	// annotation: the Latest's calls without its two actions.
	if got, want := len(Calls("v1.32.1")), len(CodeCalls["v1.32.8"])-2; got != want || slices.ContainsFunc(Calls("v1.32.1"), func(c CodeCall) bool {
		return c.Action == ActionDescribeTargetGroupAttributes || c.Action == ActionModifyTargetGroupAttributes
	}) {
		t.Errorf("Calls(v1.32.1): %d calls (want %d), the target group attribute actions among them", got, want)
	}
}
