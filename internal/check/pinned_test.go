package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/reach"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// pagedPods answers a fake clientset's lists of the pods of every
// namespace as the API server does: with a limit and resourceVersion ""
// a page of at most limit pods, and a continue token while more remain;
// with resourceVersion "0" (served from the API server's cache) every pod,
// whatever the limit; a continue token with a resourceVersion is refused.
// Pod i is pod(i), made anew for every answer, as decoding a response
// makes it. Lists of one namespace go on to the clientset's tracker.
type pagedPods struct {
	n   int
	pod func(i int) corev1.Pod
	// fail fails the list of that number (from 1) with its error.
	fail map[int]error

	mu    sync.Mutex
	lists []metav1.ListOptions // the options of every list, in order
}

func (p *pagedPods) react(a k8stesting.Action) (bool, runtime.Object, error) {
	if a.GetNamespace() != "" {
		return false, nil, nil
	}
	o := a.(k8stesting.ListActionImpl).ListOptions
	p.mu.Lock()
	p.lists = append(p.lists, o)
	err := p.fail[len(p.lists)]
	p.mu.Unlock()
	if err != nil {
		return true, nil, err
	}
	if o.Continue != "" && o.ResourceVersion != "" {
		return true, nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	start, end := 0, p.n
	if o.Continue != "" {
		var err error
		if start, err = strconv.Atoi(o.Continue); err != nil || start > p.n {
			return true, nil, apierrors.NewBadRequest("continue key is not valid")
		}
	}
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	if o.Limit > 0 && o.ResourceVersion != "0" && start+int(o.Limit) < end {
		end = start + int(o.Limit)
		list.Continue = strconv.Itoa(end)
	}
	list.Items = make([]corev1.Pod, 0, end-start)
	for i := start; i < end; i++ {
		list.Items = append(list.Items, p.pod(i))
	}
	return true, list, nil
}

// listed are the options of the lists of every namespace's pods so far.
func (p *pagedPods) listed() []metav1.ListOptions {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]metav1.ListOptions(nil), p.lists...)
}

// pagedCluster is a cluster of two nodes, cp-1 labelled host-a and w-1
// labelled w-1, whose pods of every namespace p serves.
func pagedCluster(p *pagedPods) *fake.Clientset {
	cp, w := rke2Server("cp-1", label(corev1.LabelHostname, "host-a")), rke2Agent("w-1", label(corev1.LabelHostname, "w-1"))
	cs := fake.NewSimpleClientset(&cp, &w)
	answerReviews(cs)
	cs.PrependReactor("list", "pods", p.react)
	return cs
}

// mixedPods are n pods of every kind the hostname rule tells apart: most
// pinned to nothing, some pinned to host-a (by nodeSelector or by required
// node affinity, of a Deployment, a StatefulSet, a DaemonSet or none), some
// to w-1 (a label that is its node's name) or to a label no node carries.
func mixedPods(n int) []corev1.Pod {
	out := make([]corev1.Pod, 0, n)
	for i := range n {
		var p corev1.Pod
		switch i % 97 {
		case 3:
			p = pinnedPod(fmt.Sprintf("web-5d4f8c-%d", i), "web-5d4f8c", "ReplicaSet", "host-a", false)
		case 17:
			p = pinnedPod(fmt.Sprintf("db-%d", i), fmt.Sprintf("db%d", i%3), "StatefulSet", "host-a", true)
		case 29:
			p = pinnedPod(fmt.Sprintf("bare-%d", i), "", "", "host-a", i%2 == 0)
		case 41:
			p = pinnedPod(fmt.Sprintf("agent-%d", i), "agent", "DaemonSet", "w-1", false)
		case 53:
			p = pinnedPod(fmt.Sprintf("gone-%d", i), "gone", "StatefulSet", "old-host", true)
		default:
			p = corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("free-%d", i), Namespace: "apps", Labels: map[string]string{"app": "free"}},
				Spec: corev1.PodSpec{NodeName: "w-1", Containers: []corev1.Container{{Name: "c", Image: "registry.example/free:1"}}}}
		}
		p.Namespace = fmt.Sprintf("ns-%d", i%7)
		out = append(out, p)
	}
	return out
}

// collectPaged collects the cluster of pagedCluster(p) from the rendered
// RKE2 manifests.
func collectPaged(t *testing.T, p *pagedPods) (*Snapshot, error) {
	t.Helper()
	return Collect(context.Background(), pagedCluster(p), Input{Source: SourceManifests, Objects: render(t, distros.RKE2, renderer.ModeInstall),
		ManifestNamespace: "kube-system", Now: testNow})
}

// TestCollectPinnedPages: the pods of every namespace are read in pages of
// 500 with limit and continue (not with resourceVersion "0", which the API
// server answers whole), and the snapshot, and the report, are what one
// unpaged list of every pod gives.
func TestCollectPinnedPages(t *testing.T) {
	pods := mixedPods(1203)
	paged := &pagedPods{n: len(pods), pod: func(i int) corev1.Pod { return *pods[i].DeepCopy() }}
	s, err := collectPaged(t, paged)
	if err != nil {
		t.Fatal(err)
	}
	lists := paged.listed()
	if len(lists) != 3 {
		t.Fatalf("%d lists of every namespace's pods, want 3 pages: %+v", len(lists), lists)
	}
	for i, o := range lists {
		if o.Limit != 500 || o.ResourceVersion != "" || (o.Continue == "") != (i == 0) {
			t.Errorf("list %d: %+v, want limit 500, resourceVersion \"\" and a continue token after the first", i+1, o)
		}
	}

	// The same cluster answered in one list, whatever the limit.
	whole := &pagedPods{n: len(pods), pod: paged.pod}
	cs := pagedCluster(whole)
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if l, ok := a.(k8stesting.ListActionImpl); ok && a.GetNamespace() == "" {
			l.ListOptions.Limit, l.ListOptions.Continue = 0, ""
			return whole.react(l)
		}
		return false, nil, nil
	})
	s1, err := Collect(context.Background(), cs, Input{Source: SourceManifests, Objects: s.Objects, ManifestNamespace: "kube-system", Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.listed()) != 1 {
		t.Fatalf("%d lists, want 1", len(whole.listed()))
	}
	if !equalJSON(t, s.PodsEverywhere, s1.PodsEverywhere) {
		t.Errorf("paged pods differ from the unpaged ones:\n%d pods\n%d pods", len(s.PodsEverywhere), len(s1.PodsEverywhere))
	}

	// The report is the one of a snapshot that holds every pod, as one
	// list of them all read before.
	all := *s
	all.PodsEverywhere = pods
	got, want := Evaluate(s), Evaluate(&all)
	if !equalJSON(t, got, want) {
		t.Errorf("report of the paged snapshot differs from the one of every pod:\n%s\nwant\n%s", mustJSON(t, got.Findings), mustJSON(t, want.Findings))
	}
	pinned := findings(got, AreaHostname, "cp-1")
	if len(pinned) != 1 || !strings.Contains(pinned[0].Message, "pinned to host-a: Deployment ns-0/web, Deployment ns-1/web, Deployment ns-2/web and 30 more, which") {
		t.Errorf("cp-1's finding: %+v", pinned)
	}
}

// TestCollectPinnedPageFails: a page that fails after the first fails the
// collection as one list of every pod failing did: a ClusterError for list
// on pods at cluster scope, wrapping the API server's error, and no
// snapshot; no other page is asked for.
func TestCollectPinnedPageFails(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))
	expired := apierrors.NewResourceExpired("the continue token expired")
	for _, c := range []struct {
		name        string
		err         error
		forbidden   bool
		unreachable bool
	}{
		{"forbidden", forbidden, true, false},
		{"timeout", context.DeadlineExceeded, false, true},
		{"continue expired", expired, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			pods := mixedPods(1203)
			paged := &pagedPods{n: len(pods), pod: func(i int) corev1.Pod { return *pods[i].DeepCopy() }, fail: map[int]error{2: c.err}}
			s, err := collectPaged(t, paged)
			var ce *ClusterError
			if s != nil || !errors.As(err, &ce) || ce.Forbidden != c.forbidden || ce.Verb != "list" || ce.Resource != "pods" || ce.Namespace != "" ||
				!errors.Is(err, c.err) || reach.Unreachable(err) != c.unreachable {
				t.Fatalf("snapshot %v, error %v (%+v)", s != nil, err, ce)
			}
			if n := len(paged.listed()); n != 2 {
				t.Errorf("%d lists, want 2 (the failing page the last)", n)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	return string(mustJSON(t, a)) == string(mustJSON(t, b))
}
