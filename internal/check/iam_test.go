package check

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Messages of the kinds the cloud controllers record.
const (
	// aws-sdk-go-v2 (v1.35.3 against moto's IAM): the operation names the
	// action.
	msgSDKv2 = "Error syncing load balancer: failed to ensure load balancer: error get availability zone types: operation error EC2: DescribeAvailabilityZones, https response error StatusCode: 403, RequestID: 7a62c49f-347e-4fc4-9331-6e8eEXAMPLE, api error UnauthorizedOperation: You are not authorized to perform this operation."
	// IAM's own words, through aws-sdk-go (v1).
	msgIAMWords = "Error syncing load balancer: failed to ensure load balancer: error creating load balancer: \"AccessDenied: User: arn:aws:sts::123456789012:assumed-role/cp/i-0abc is not authorized to perform: elasticloadbalancing:CreateLoadBalancer\\n\\tstatus code: 403, request id: 0123\""
	// EC2 through aws-sdk-go (v1), the action only in the encoded part.
	msgEncoded = "Could not create route a 10.42.1.0/24 for node ip-10-0-1-11.us-west-2.compute.internal after 52ms: UnauthorizedOperation: You are not authorized to perform this operation. Encoded authorization failure message: 4GIOHlTkIaWHQD0Q0m6XSnuUMCm-abc\n\tstatus code: 403, request id: 0456"
	msgOther   = "Error syncing load balancer: failed to ensure load balancer: could not find any suitable subnets for creating the ELB"
)

func warningEvent(kind, ns, name, reason, msg string, ago time.Duration) corev1.Event {
	return corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name + "." + reason, Namespace: orPlaceholder(ns, "default")},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name}, Reason: reason, Message: msg, Type: corev1.EventTypeWarning,
		LastTimestamp: metav1.NewTime(testNow.Add(-ago))}
}

func TestDeniedIn(t *testing.T) {
	for _, c := range []struct {
		msg, code, action string
		encoded, ok       bool
	}{
		{msgSDKv2, "UnauthorizedOperation", "ec2:DescribeAvailabilityZones", false, true},
		{msgIAMWords, "AccessDenied", "elasticloadbalancing:CreateLoadBalancer", false, true},
		{msgEncoded, "UnauthorizedOperation", "", true, true},
		{"operation error Elastic Load Balancing: CreateLoadBalancer, https response error StatusCode: 403, api error AccessDenied: no", "AccessDenied", "elasticloadbalancing:CreateLoadBalancer", false, true},
		{"operation error EC2: DescribeInstances, https response error StatusCode: 500; operation error S3: GetObject, StatusCode: 403, api error AccessDenied", "AccessDenied", "", false, true},
		{msgOther, "", "", false, false},
		{"", "", "", false, false},
	} {
		d, ok := deniedIn(c.msg)
		if ok != c.ok || d.code != c.code || d.action != c.action || d.encoded != c.encoded {
			t.Errorf("%q: %+v %v", c.msg, d, ok)
		}
	}
}

// TestIAMRule: the actions refused, grouped with the objects that failed;
// the action to add, or how to find it; a refusal long past; and where it
// stays silent, or points at the CCM's log.
func TestIAMRule(t *testing.T) {
	uninitialisedWorker := rke2Agent("ip-10-0-3-1.us-west-2.compute.internal", providerID(""), uninit)
	for _, c := range []struct {
		name      string
		events    []corev1.Event
		nodes     []corev1.Node
		installed bool
		want      []want
	}{
		{"v1.35.3 under the Rancher policy: the Service's event names the action", []corev1.Event{
			warningEvent("Service", "default", "web", "SyncLoadBalancerFailed", msgSDKv2, time.Minute),
			warningEvent("Service", "shop", "api", "SyncLoadBalancerFailed", msgSDKv2, 2*time.Minute)}, nil, true,
			[]want{{"ec2:DescribeAvailabilityZones", Error, "AWS refused it to the cloud controllers (UnauthorizedOperation): SyncLoadBalancerFailed on Service default/web and Service shop/api, last 1m0s ago",
				"add ec2:DescribeAvailabilityZones to the IAM policy of the control-plane instances' role"}}},
		{"two actions, a node's route event without the action", []corev1.Event{
			warningEvent("Service", "default", "web", "SyncLoadBalancerFailed", msgIAMWords, time.Minute),
			warningEvent("Node", "", "ip-10-0-1-11.us-west-2.compute.internal", "FailedToCreateRoute", msgEncoded, time.Minute)}, nil, true,
			[]want{{"elasticloadbalancing:CreateLoadBalancer", Error, "(AccessDenied): SyncLoadBalancerFailed on Service default/web", "aws-ccm-renderer plan --distro rke2 --kube-version v1.34.10"},
				{"an action the message does not name", Error, "FailedToCreateRoute on Node ip-10-0-1-11.us-west-2.compute.internal", "aws sts decode-authorization-message"}}},
		{"a refusal not seen for an hour: fixed", []corev1.Event{warningEvent("Service", "default", "web", "SyncLoadBalancerFailed", msgSDKv2, time.Hour)}, nil, true,
			[]want{{"ec2:DescribeAvailabilityZones", Info, "and not since", ""}}},
		{"other failures: silent", []corev1.Event{warningEvent("Service", "default", "web", "SyncLoadBalancerFailed", msgOther, time.Minute)}, nil, true, nil},
		{"no events, every node initialised: silent", nil, nil, true, nil},
		{"no events, a node uninitialised, the CCM installed: where to look", nil, []corev1.Node{uninitialisedWorker}, true,
			[]want{{"", Info, "the CCM records no event when it cannot initialise a node", "kubectl logs -n kube-system daemonset/aws-cloud-controller-manager | grep -e 'error syncing' -e UnauthorizedOperation -e AccessDenied"}}},
		{"no events, a node uninitialised, not installed: silent", nil, []corev1.Node{uninitialisedWorker}, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, append([]corev1.Node{rke2Server("cp-1")}, c.nodes...), render(t, distros.RKE2, renderer.ModeInstall), c.installed)
			s.Now, s.Events = testNow, c.events
			expectArea(t, Evaluate(s), AreaIAM, c.want, true)
		})
	}
}

// TestCollectEvents: the Warning events of Services and Nodes, one list
// each; others are left out even when the server does not filter (the
// fake clientset does not).
func TestCollectEvents(t *testing.T) {
	cp := rke2Server("cp-1")
	in := []corev1.Event{
		warningEvent("Service", "default", "web", "SyncLoadBalancerFailed", msgSDKv2, time.Minute),
		warningEvent("Node", "", "cp-1", "FailedToCreateRoute", msgEncoded, time.Minute),
		warningEvent("Pod", "default", "web-1", "BackOff", "Back-off restarting failed container", time.Minute),
	}
	normal := warningEvent("Service", "default", "web", "EnsuringLoadBalancer", "Ensuring load balancer", time.Minute)
	normal.Type = corev1.EventTypeNormal
	cs := fake.NewSimpleClientset(&cp, &in[0], &in[1], &in[2], &normal)
	answerReviews(cs)
	s, err := Collect(context.Background(), cs, Input{Source: SourceManifests, Objects: render(t, distros.RKE2, renderer.ModeInstall), ManifestNamespace: "kube-system"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Events) != 2 || s.Events[0].InvolvedObject.Kind != "Service" || s.Events[1].InvolvedObject.Kind != "Node" {
		t.Errorf("%+v", s.Events)
	}
	var selectors []string
	for _, a := range cs.Actions() {
		if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == "events" {
			selectors = append(selectors, l.GetListRestrictions().Fields.String())
		}
	}
	if strings.Join(selectors, " ") != "involvedObject.kind=Service,type=Warning involvedObject.kind=Node,type=Warning" {
		t.Errorf("event lists: %q", selectors)
	}
}
