package helmcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// TestGuardFlags: what guard refuses, each with one line on stderr,
// nothing on stdout and exit 2.
func TestGuardFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"guard", "--ccm-version=v1.34.3"}, `--mode "": give the CCM's mode, install or migrate`},
		{[]string{"guard", "--mode=upgrade", "--ccm-version=v1.34.3"}, `--mode "upgrade"`},
		{[]string{"guard", "--mode=install"}, `--ccm-version "": give the CCM's release tag`},
		{[]string{"guard", "--mode=install", "--ccm-version=latest"}, `--ccm-version "latest"`},
		{[]string{"guard", "--mode=install", "--ccm-version=v1.34.3", "--interval=0s"}, "--interval 0s: give a positive duration"},
		{[]string{"guard", "--mode=install", "--ccm-version=v1.34.3", "extra"}, "unknown command"},
		{[]string{"guard", "--mode=install", "--ccm-version=auto"}, "--ccm-version auto reads the CCM's image from the guard's pod, which POD_NAME and POD_NAMESPACE name"},
		{[]string{"guard", "--mode=install", "--ccm-version=v1.37.1", "--once"}, "guard needs a cluster, and no kubeconfig names one"},
	} {
		t.Setenv("POD_NAME", "")
		t.Setenv("KUBECONFIG", "")
		t.Setenv("HOME", t.TempDir())
		t.Setenv("KUBERNETES_SERVICE_HOST", "")
		code, out, errOut := run(t, "", c.args...)
		if code != cli.ExitUsage || out != "" || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, one line with %q", c.args, code, out, errOut, c.want)
		}
	}
}

// kcm is the mirror pod of a kube-controller-manager with the flags.
func kcm(flags ...string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-controller-manager-cp-1", Namespace: "kube-system",
		Labels: map[string]string{"component": "kube-controller-manager"}, Annotations: map[string]string{"kubernetes.io/config.mirror": "x"}},
		Spec: corev1.PodSpec{NodeName: "cp-1", Containers: []corev1.Container{{Name: "kube-controller-manager",
			Command: append([]string{"kube-controller-manager"}, flags...)}}}}
}

// TestGuardHoldsThenReleases: with the in-tree provider running without
// leader migration the guard holds (one line, one Event on its pod, not
// repeated while nothing changes); once the controller manager runs with
// --cloud-provider=external it returns. --once says held with exit 1.
func TestGuardHoldsThenReleases(t *testing.T) {
	client := fake.NewSimpleClientset(kcm("--cloud-provider=aws"))
	client.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.26.15"}
	in := check.GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.26.14"}}
	var log bytes.Buffer
	g := &guard{client: client, in: in, log: &log, pod: "ccm-abcde", namespace: "kube-system"}
	if err := g.run(context.Background(), time.Millisecond, true); err != errHeld {
		t.Fatalf("--once while the in-tree provider runs: %v, want held", err)
	}
	var reads atomic.Int32
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if reads.Add(1) == 4 { // the controller manager switched by the fourth read
			if _, err := client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), "kube-system", "kube-controller-manager-cp-1"); err == nil {
				_ = client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), kcm("--cloud-provider=external"), "kube-system")
			}
		}
		return false, nil, nil
	})
	log.Reset()
	g.last = ""
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.run(ctx, time.Millisecond, false); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())

	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "aws-ccm-renderer guard: holding the CCM back: kube-controller-manager on cp-1: --cloud-provider=aws, no leader migration") ||
		!strings.HasPrefix(lines[1], "aws-ccm-renderer guard: the CCM (v1.26.14, install mode) may start") {
		t.Errorf("the guard's log, over %d reads:\n%s", reads.Load(), log.String())
	}
	events, err := client.CoreV1().Events("kube-system").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// One from --once, one from the run: each says why, on the pod.
	if len(events.Items) != 2 {
		t.Fatalf("%d Events, want 2", len(events.Items))
	}
	for _, e := range events.Items {
		if e.Reason != "CCMHeldBack" || e.Type != corev1.EventTypeWarning || e.InvolvedObject.Name != "ccm-abcde" || !strings.Contains(e.Message, "no leader migration") {
			t.Errorf("Event %+v", e)
		}
	}
}

// TestGuardCannotRead: a refused read holds, naming the permission.
func TestGuardCannotRead(t *testing.T) {
	client := fake.NewSimpleClientset()
	client.PrependReactor("list", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "", nil)
	})
	var log bytes.Buffer
	g := &guard{client: client, in: check.GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.34.3"}}, log: &log}
	if err := g.run(context.Background(), time.Millisecond, true); err != errHeld {
		t.Fatalf("a refused read: %v, want held", err)
	}
	if !strings.Contains(log.String(), `holding the CCM back: cannot read the cluster:`) || !strings.Contains(log.String(), `"list" on leases.coordination.k8s.io in namespace kube-system`) {
		t.Errorf("log: %s", log.String())
	}
}

// TestGuardEscapes: what the guard quotes of the cluster (here an API
// error with an escape sequence and a line break) reaches its log and the
// Event escaped, on one line.
func TestGuardEscapes(t *testing.T) {
	client := fake.NewSimpleClientset()
	client.PrependReactor("list", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("refused \x1b[31mred\nsecond line\u2028")
	})
	var log bytes.Buffer
	g := &guard{client: client, in: check.GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.34.3"}}, log: &log, pod: "ccm-x", namespace: "kube-system"}
	if err := g.run(context.Background(), time.Millisecond, true); err != errHeld {
		t.Fatalf("a refused read: %v, want held", err)
	}
	if got := log.String(); strings.Count(got, "\n") != 1 || safetext.HasControl(strings.TrimSuffix(got, "\n")) || !strings.Contains(got, `refused \x1b[31mred\nsecond line\u2028`) {
		t.Errorf("log: %q", got)
	}
	events, err := client.CoreV1().Events("kube-system").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(events.Items) != 1 || safetext.HasControl(events.Items[0].Message) {
		t.Errorf("Events: %v, %+v", err, events)
	}
}

// TestGuardUnreadableVersion: an API server whose version the guard
// cannot read holds the CCM (exit 1 with --once), saying so.
func TestGuardUnreadableVersion(t *testing.T) {
	for _, v := range []string{"garbage", "", "v2.0.0", "v1.34.x"} {
		client := fake.NewSimpleClientset(kcm("--cloud-provider=external"))
		client.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: v}
		var log bytes.Buffer
		g := &guard{client: client, in: check.GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.34.3"}}, log: &log}
		if err := g.run(context.Background(), time.Millisecond, true); err != errHeld {
			t.Fatalf("API server version %q: %v, want held\n%s", v, err, log.String())
		}
		if want := fmt.Sprintf("holding the CCM back: the API server's version: its /version says %q", v); !strings.Contains(log.String(), want) || strings.Count(log.String(), "\n") != 1 {
			t.Errorf("API server version %q: log %q, want one line with %q", v, log.String(), want)
		}
	}
}

// TestGuardAutoVersion: with --ccm-version auto the guard judges the CCM
// its own pod runs, by its image's tag: a release of the API server's
// minor may start, one two minors older is held for the skew, and a pod
// without the CCM's image holds, saying what to give instead.
func TestGuardAutoVersion(t *testing.T) {
	pod := func(images ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ccm-abcde", Namespace: "kube-system"}}
		for i, img := range images {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprint("c", i), Image: img})
		}
		return p
	}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		held bool
		want string
	}{
		{"the API server's minor", pod("registry.k8s.io/provider-aws/cloud-controller-manager:v1.37.1"), false, "the CCM (v1.37.1, install mode) may start"},
		{"pinned by digest too", pod("mirror.example/aws-cloud-controller-manager:v1.36.2@sha256:" + strings.Repeat("a", 64)), false, "the CCM (v1.36.2, install mode) may start"},
		{"two minors older", pod("registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.2"), true, "CCM v1.35.2: it is 2 minors older than the API server v1.37.2"},
		{"no CCM image", pod("busybox:1.36"), true, "the CCM's version: no container of pod kube-system/ccm-abcde runs the AWS CCM's image (busybox:1.36): give the guard --ccm-version"},
		{"a CCM image without a release tag", pod("registry.k8s.io/provider-aws/cloud-controller-manager:latest"), true, "whose tag names no CCM release"},
		{"two CCMs, the second two minors older", pod("registry.k8s.io/provider-aws/cloud-controller-manager:v1.37.1", "registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.2"), true, "CCM v1.35.2: it is 2 minors older than the API server v1.37.2"},
		{"two CCMs, the first two minors older", pod("registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.2", "registry.k8s.io/provider-aws/cloud-controller-manager:v1.37.1"), true, "CCM v1.35.2: it is 2 minors older than the API server v1.37.2"},
		{"two CCMs that fit", pod("registry.k8s.io/provider-aws/cloud-controller-manager:v1.37.1", "busybox:1.36", "mirror.example/aws-cloud-controller-manager:v1.36.2"), false, "the CCM (v1.37.1, v1.36.2, install mode) may start"},
		{"the CCM run from another image", func() *corev1.Pod {
			p := pod("registry.k8s.io/provider-aws/cloud-controller-manager:v1.37.1", "example.com/tools:1")
			p.Spec.Containers[1].Command = []string{"sh", "-c", "exec aws-cloud-controller-manager --v=2"}
			return p
		}(), true, "container c1 of pod kube-system/ccm-abcde runs the CCM from image example.com/tools:1, whose tag names no CCM release"},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := fake.NewSimpleClientset(kcm("--cloud-provider=external"), c.pod)
			client.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.37.2"}
			var log bytes.Buffer
			g := &guard{client: client, in: check.GuardInput{Mode: renderer.ModeInstall}, log: &log, pod: "ccm-abcde", namespace: "kube-system"}
			err := g.run(context.Background(), time.Millisecond, true)
			if held := err == errHeld; held != c.held || (err != nil && err != errHeld) {
				t.Fatalf("run: %v, want held %v\n%s", err, c.held, log.String())
			}
			if !strings.Contains(log.String(), c.want) {
				t.Errorf("log %q lacks %q", log.String(), c.want)
			}
		})
	}
}
