package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestHold: each reason to hold the CCM back, in each mode, and where it
// is safe to start.
func TestHold(t *testing.T) {
	k3sServer := node("k-s", kubelet("v1.33.4+k3s1"), label(distros.LabelControlPlane, "true"), annotation(annotationK3sNodeArgs, `["server"]`))
	k3sDisabled := node("k-s", kubelet("v1.33.4+k3s1"), label(distros.LabelControlPlane, "true"), annotation(annotationK3sNodeArgs, `["server","--disable-cloud-controller"]`))
	for _, c := range []struct {
		name   string
		kube   string
		nodes  []corev1.Node
		pods   []corev1.Pod
		leases []*coordinationv1.Lease
		in     GuardInput
		want   []string // area: subject: part of the message, in order
	}{
		{"in-tree without leader migration, install", "v1.26.15", []corev1.Node{kubeadmCP("cp-1")},
			[]corev1.Pod{kcmPod("cp-1", false, "--cloud-provider=aws")}, nil,
			GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.26.14"}},
			[]string{"in-tree: kube-controller-manager on cp-1: --cloud-provider=aws, no leader migration: it runs the in-tree cloud controllers whatever the CCM does"}},
		{"in-tree without leader migration, migrate", "v1.26.15", []corev1.Node{kubeadmCP("cp-1")},
			[]corev1.Pod{kcmPod("cp-1", false, "--cloud-provider=aws")}, nil,
			GuardInput{Mode: renderer.ModeMigrate, CCMVersions: []string{"v1.26.14"}},
			[]string{"in-tree: kube-controller-manager on cp-1: --cloud-provider=aws, no leader migration"}},
		{"in-tree with leader migration, install", "v1.26.15", []corev1.Node{kubeadmCP("cp-1")},
			[]corev1.Pod{kcmPod("cp-1", false, "--cloud-provider=aws", "--enable-leader-migration")}, nil,
			GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.26.14"}},
			[]string{"in-tree: kube-controller-manager on cp-1: --cloud-provider=aws, --enable-leader-migration: it runs the cloud controllers under the migration lease, which the CCM in install mode ignores"}},
		{"in-tree with leader migration, migrate: safe", "v1.26.15", []corev1.Node{kubeadmCP("cp-1")},
			[]corev1.Pod{kcmPod("cp-1", false, "--cloud-provider=aws", "--enable-leader-migration")}, nil,
			GuardInput{Mode: renderer.ModeMigrate, CCMVersions: []string{"v1.26.14"}}, nil},
		{"switched to external: safe", "v1.26.15", []corev1.Node{kubeadmCP("cp-1")},
			[]corev1.Pod{kcmPod("cp-1", false, "--cloud-provider=external")}, nil,
			GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.26.14"}}, nil},
		{"a CCM newer than the API server", "v1.34.2", []corev1.Node{kubeadmCP("cp-1")}, nil, nil,
			GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.35.0"}},
			[]string{"version: CCM v1.35.0: it is newer than the API server v1.34.2"}},
		{"a CCM two minors older", "v1.34.2", []corev1.Node{kubeadmCP("cp-1")}, nil, nil,
			GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.32.8"}},
			[]string{"version: CCM v1.32.8: it is 2 minors older than the API server v1.34.2"}},
		{"a CCM one minor older: safe", "v1.34.2", []corev1.Node{kubeadmCP("cp-1")}, nil, nil,
			GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.33.4"}}, nil},
		{"RKE2's cloud controller", "v1.34.2", []corev1.Node{rke2Server("s-1")}, []corev1.Pod{rke2CCMPod("s-1")}, nil,
			GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.34.3"}},
			[]string{"controllers: RKE2's cloud controller: it runs (its pod cloud-controller-manager-s-1 in kube-system)"}},
		{"K3s's embedded cloud controller", "v1.33.4+k3s1", []corev1.Node{k3sServer}, nil,
			[]*coordinationv1.Lease{lease("k3s-cloud-controller-manager", "k-s_abc", 0)},
			GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.33.4"}},
			[]string{"controllers: K3s's cloud controller: it runs (Lease kube-system/k3s-cloud-controller-manager held by k-s_abc)"}},
		{"K3s's lease, its cloud controller disabled: safe", "v1.33.4+k3s1", []corev1.Node{k3sDisabled}, nil,
			[]*coordinationv1.Lease{lease("k3s-cloud-controller-manager", "k-s_abc", 0)},
			GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.33.4"}}, nil},
		{"K3s's lease lapsed: safe", "v1.33.4+k3s1", []corev1.Node{k3sServer}, nil,
			[]*coordinationv1.Lease{lease("k3s-cloud-controller-manager", "k-s_abc", time.Hour)},
			GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.33.4"}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Snapshot{Now: testNow, KubernetesVersion: c.kube, Nodes: c.nodes, ControlPlanePods: c.pods, Leases: map[string]*coordinationv1.Lease{}}
			for _, l := range c.leases {
				s.Leases[l.Namespace+"/"+l.Name] = l
			}
			got := Hold(s, c.in)
			if len(got) != len(c.want) {
				t.Fatalf("%d reasons, want %d: %+v", len(got), len(c.want), got)
			}
			for i, f := range got {
				line := f.Area + ": " + f.Subject + ": " + f.Message
				if !strings.HasPrefix(line, c.want[i]) || f.Severity != Error || f.Fix == "" {
					t.Errorf("reason %d: %s (%s; fix %q), want one starting %q", i, line, f.Severity, f.Fix, c.want[i])
				}
			}
		})
	}
}

// TestCollectGuard: it reads what GuardReads lists and nothing else, and a
// refused read is an error that names the permission.
func TestCollectGuard(t *testing.T) {
	client := fake.NewSimpleClientset(&corev1.Node{}, &corev1.Pod{})
	if _, err := CollectGuard(context.Background(), client, GuardInput{}); err != nil {
		t.Fatal(err)
	}
	var reads []renderer.GuardRead
	for _, a := range client.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "version" {
			continue // /version
		}
		reads = append(reads, renderer.GuardRead{Verb: a.GetVerb(), Resource: a.GetResource().Resource, Group: a.GetResource().Group, Namespace: a.GetNamespace()})
	}
	if len(reads) != len(renderer.GuardReads) {
		t.Fatalf("reads %+v, GuardReads %+v", reads, renderer.GuardReads)
	}
	for i := range reads {
		if reads[i] != renderer.GuardReads[i] {
			t.Errorf("read %d: %+v, GuardReads says %+v", i, reads[i], renderer.GuardReads[i])
		}
	}
	client = fake.NewSimpleClientset()
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
	})
	_, err := CollectGuard(context.Background(), client, GuardInput{})
	if err == nil || !strings.Contains(err.Error(), `"list" on pods in namespace kube-system`) {
		t.Errorf("a refused list of pods: %v", err)
	}
}

// TestGuardDoc: docs/check.md's table of the guard's reads is renderer.GuardReads.
func TestGuardDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "check.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "<!-- guard reads -->\n| verb | resource | namespace |\n|---|---|---|\n")
	if !ok {
		t.Fatal("docs/check.md has no table of the guard's reads")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	var want []string
	for _, r := range renderer.GuardReads {
		res, ns := r.Resource, r.Namespace
		if r.Group != "" {
			res += "." + r.Group
		}
		if ns == "" {
			ns = "(cluster)"
		}
		want = append(want, "| "+r.Verb+" | "+res+" | "+ns+" |")
	}
	if got := strings.TrimSpace(table); got != strings.Join(want, "\n") {
		t.Errorf("docs/check.md lists the guard's reads as\n%s\nGuardReads are\n%s", got, strings.Join(want, "\n"))
	}
}
