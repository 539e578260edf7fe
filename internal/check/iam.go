package check

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// What check can see of AWS refusing the cloud controllers: the Warning
// events they record. The service controller records one on a Service
// whenever it fails to ensure, update or delete its load balancer
// (SyncLoadBalancerFailed, UpdateLoadBalancerFailed, DeleteLoadBalancerFailed:
// k8s.io/cloud-provider controllers/service/controller.go, v0.26.0 and
// v0.35.0), the route controller one on a Node for each route it cannot
// create (FailedToCreateRoute), the node lifecycle controller one when it
// cannot delete a node (v0.35.0). The cloud node controller records none
// when it cannot initialise a node (only Synced when it has): an IAM
// denial there shows in the CCM's log alone.

// eventKinds are the objects whose Warning events check reads.
var eventKinds = []string{"Service", "Node"}

// collectEvents lists the Warning events of Services and Nodes, one list
// per kind.
func (s *Snapshot) collectEvents(ctx context.Context, client kubernetes.Interface) error {
	for _, kind := range eventKinds {
		list, err := client.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=" + kind + ",type=" + corev1.EventTypeWarning, ResourceVersion: "0"})
		if err != nil {
			return clusterError("list", "events", "", err)
		}
		for _, e := range list.Items {
			// A field selector the server ignores (or a fake) must not let
			// other events in.
			if e.InvolvedObject.Kind == kind && e.Type == corev1.EventTypeWarning {
				s.Events = append(s.Events, e)
			}
		}
	}
	return nil
}

// denial is an AWS authorisation failure an event's message carries.
type denial struct {
	code string // UnauthorizedOperation, AccessDenied, ...
	// action is the IAM action refused, "" when the message does not name
	// it.
	action string
	// encoded: the message carries an encoded authorization failure
	// message, which aws sts decode-authorization-message reads.
	encoded bool
}

var (
	deniedCode = regexp.MustCompile(`\b(UnauthorizedOperation|AccessDenied(?:Exception)?|UnauthorizedAccess)\b`)
	// IAM's own words: "User: arn:... is not authorized to perform:
	// ec2:DescribeAvailabilityZones ...".
	performAction = regexp.MustCompile(`not authorized to perform:? ([a-z0-9-]+:[A-Za-z0-9]+)`)
	// aws-sdk-go-v2's operation error: "operation error EC2:
	// DescribeAvailabilityZones, https response error StatusCode: 403".
	sdkV2Operation = regexp.MustCompile(`operation error ([A-Za-z0-9 ]+?): ([A-Za-z0-9]+),`)
)

// deniedIn reads an AWS authorisation failure out of an event's message:
// the error code, and the action from IAM's words or aws-sdk-go-v2's
// operation error (its service ID mapped to the IAM prefix,
// upstream.AWSServices). ok is false when the message carries none.
func deniedIn(msg string) (d denial, ok bool) {
	m := deniedCode.FindStringSubmatch(msg)
	if m == nil {
		return d, false
	}
	d.code = m[1]
	d.encoded = strings.Contains(msg, "Encoded authorization failure message")
	if a := performAction.FindStringSubmatch(msg); a != nil {
		d.action = a[1]
		return d, true
	}
	// The operation whose error carries the code: the last one named
	// before it.
	before := msg[:strings.Index(msg, m[1])]
	if ops := sdkV2Operation.FindAllStringSubmatch(before, -1); len(ops) > 0 {
		op := ops[len(ops)-1]
		if s, ok := upstream.ServiceOfID(op[1]); ok {
			d.action = s.IAMPrefix + ":" + op[2]
		}
	}
	return d, true
}

// eventTime is when an event was last seen.
func eventTime(e *corev1.Event) time.Time {
	t := e.LastTimestamp.Time
	if e.EventTime.After(t) {
		t = e.EventTime.Time
	}
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	if t.IsZero() {
		t = e.CreationTimestamp.Time
	}
	return t
}

// staleAfter: a denial not seen again for this long has been fixed. The
// service controller retries a failed Service at least every 5 minutes
// (its maxRetryDelay), the route controller every 10 seconds.
const staleAfter = 10 * time.Minute

// iamRule names the actions AWS refused the cloud controllers, from the
// events of Services and Nodes, with the objects that failed and the
// action to add; without a denial, when the CCM runs and nodes stay
// uninitialised, it says where to look instead.
func iamRule(v *View) []Finding {
	type seen struct {
		d        denial
		objects  []string
		reasons  []string
		last     time.Time
		encoded  bool
		messages int
	}
	var order []string
	byAction := map[string]*seen{}
	for i := range v.Events {
		e := &v.Events[i]
		d, ok := deniedIn(e.Message)
		if !ok {
			continue
		}
		s := byAction[d.action]
		if s == nil {
			s = &seen{d: d}
			byAction[d.action] = s
			order = append(order, d.action)
		}
		obj := e.InvolvedObject.Kind + " " + e.InvolvedObject.Name
		if e.InvolvedObject.Namespace != "" {
			obj = e.InvolvedObject.Kind + " " + e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		}
		if !slices.Contains(s.objects, obj) {
			s.objects = append(s.objects, obj)
		}
		if !slices.Contains(s.reasons, e.Reason) {
			s.reasons = append(s.reasons, e.Reason)
		}
		if t := eventTime(e); t.After(s.last) {
			s.last = t
		}
		s.encoded = s.encoded || d.encoded
		s.messages++
	}
	var out []Finding
	for _, action := range order {
		s := byAction[action]
		sort.Strings(s.objects)
		f := Finding{Area: AreaIAM, Severity: Error, Subject: action,
			Message: fmt.Sprintf("AWS refused it to the cloud controllers (%s): %s on %s, last %s ago", s.d.code, strings.Join(s.reasons, ", "), SomeOf(s.objects), v.since(s.last))}
		if len(s.objects) > 1 {
			f.Subjects, f.Count = s.objects, len(s.objects)
		}
		if action == "" {
			f.Subject = "an action the message does not name"
			f.Fix = "find the action: "
			if s.encoded {
				f.Fix += "decode the message's encoded authorization failure message (aws sts decode-authorization-message --encoded-message <it> --query DecodedMessage --output text) or "
			}
			f.Fix += "look the refusal up in CloudTrail (errorCode " + s.d.code + "), then add it to the control-plane instances' IAM role; " + v.IAMPolicyHint()
		} else {
			f.Fix = "add " + action + " to the IAM policy of the control-plane instances' role (the CCM runs there and calls AWS with it); " + v.IAMPolicyHint()
		}
		if v.Now.Sub(s.last) > staleAfter {
			f.Severity = Info
			f.Message += fmt.Sprintf(", and not since: the controllers retry within %s, so it has been fixed", staleAfter/2)
			f.Fix = ""
		}
		out = append(out, f)
	}
	// With check --aws the CCM's role was simulated: that says more than
	// the absence of an event.
	simulated := v.AWS != nil && len(v.AWS.Simulations) > 0
	if len(out) == 0 && !simulated && v.Workload != nil && v.Workload.Installed && v.uninitialised() > 0 {
		out = append(out, Finding{Area: AreaIAM, Severity: Info,
			Message: "no AWS refusal in the events of Services and nodes; the CCM records no event when it cannot initialise a node (from v1.30 it needs ec2:DescribeAvailabilityZones there, which the Rancher docs' policy lacks), so a refusal of that shows in its log alone",
			Fix:     v.readLog()})
	}
	return out
}

// uninitialised counts the nodes tainted uninitialized.
func (v *View) uninitialised() int {
	n := 0
	for _, nv := range v.Nodes {
		if nv.Uninitialized {
			n++
		}
	}
	return n
}

// IAMPolicyHint says where the whole policy of the CCM's release is.
func (v *View) IAMPolicyHint() string {
	hint := "the CCM's release needs the actions its code calls, which kubernetes/cloud-provider-aws docs/prerequisites.md at its tag lists only in part"
	d := v.Distribution.Detected
	if _, ok := distros.RecordOf(distros.Distro(d)); !ok || d == string(distros.Auto) {
		return hint
	}
	cmd := "aws-ccm-renderer plan --distro " + d
	if v.KubernetesVersion != "" {
		cmd += " --kube-version " + v.KubernetesVersion
		// Past the in-tree provider the plan asks what runs the cloud
		// controllers now; before.iam is the same step whatever the
		// answer.
		if m, ok := minorOf(v.KubernetesVersion); ok && m > releases.LastInTreeMinor {
			cmd += " --from none"
		}
	}
	if w := v.Workload; w != nil {
		tag := renderer.ImageTag(w.Image)
		ccm, ok1 := minorOf(tag)
		server, ok2 := minorOf(v.KubernetesVersion)
		if ok1 && ok2 && ccm == server {
			cmd += " --ccm-version " + tag
		}
	}
	return hint + ", which " + cmd + " --step before.iam prints"
}
