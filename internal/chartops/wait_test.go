package chartops

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/reach"
)

// TestNotReady: after a wait that timed out, the objects Helm's readiness
// rule finds not ready are named, a DaemonSet with how many of its pods
// are; the error says so and how to learn why, typed as the timeout it
// wraps.
func TestNotReady(t *testing.T) {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "kube-system", Generation: 1}
	}
	// As the API server defaults it: a rolling update, one pod unavailable.
	one := intstr.FromInt32(1)
	rolling := appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &one}}}
	ds := &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"}, ObjectMeta: meta("ccm"), Spec: rolling,
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, NumberReady: 1, UpdatedNumberScheduled: 3, ObservedGeneration: 1}}
	readyDS := &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"}, ObjectMeta: meta("other"), Spec: rolling,
		Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 2, NumberReady: 2, UpdatedNumberScheduled: 2, ObservedGeneration: 1}}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta("cfg")}
	cs := fake.NewClientset(ds, readyDS, cm)
	var list kube.ResourceList
	for _, o := range []runtime.Object{cm, ds, readyDS} {
		m := o.(metav1.Object)
		list = append(list, &resource.Info{Name: m.GetName(), Namespace: m.GetNamespace(), Object: o})
	}
	got := notReady(context.Background(), cs, list)
	if want := []string{"DaemonSet kube-system/ccm (1 of 3 pods ready)"}; !slices.Equal(got, want) {
		t.Errorf("not ready: %q, want %q", got, want)
	}

	c := &Client{ready: &readiness{notReady: got}}
	timeout := context.DeadlineExceeded
	in := Install{Release: "ccm", Namespace: "kube-system", Timeout: 3 * time.Second}
	err := c.waitError(timeout, in, false)
	if !errors.Is(err, timeout) || !reach.Unreachable(err) || err.Error() != "context deadline exceeded; not ready after 3s: DaemonSet kube-system/ccm (1 of 3 pods ready); "+
		"aws-ccm-renderer check --release ccm --namespace kube-system says why" {
		t.Errorf("waitError: %v", err)
	}
	if err := c.waitError(timeout, in, false); err != timeout {
		t.Errorf("a second error got the first one's objects: %v", err)
	}
	c.ready.notReady, in.Atomic = got, true
	if err := c.waitError(timeout, in, false); err == nil || !reach.Unreachable(err) ||
		err.Error() != "context deadline exceeded; not ready after 3s: DaemonSet kube-system/ccm (1 of 3 pods ready); --atomic uninstalled it: "+
			"aws-ccm-renderer template ccm ... | aws-ccm-renderer check -f - says why, with the same flags" {
		t.Errorf("waitError after --atomic: %v", err)
	}
	if err := (&Client{}).waitError(timeout, in, true); err != timeout {
		t.Errorf("without a kube client that noted: %v", err)
	}
}
