package check

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// localPV is a local volume pinned to a hostname label value, bound to a
// claim unless phase says otherwise.
func localPV(name string, phase corev1.PersistentVolumePhase, hosts ...string) corev1.PersistentVolume {
	return corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{ClaimRef: &corev1.ObjectReference{Namespace: "db", Name: "data-" + name},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: hosts}}}}}}},
		Status: corev1.PersistentVolumeStatus{Phase: phase}}
}

// pinnedPod is a pod of a workload pinned to a hostname value by its
// nodeSelector (or, with affinity, by a required node affinity).
func pinnedPod(name, owner, kind, host string, affinity bool) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: owner, Controller: new(true)}}
		if kind == "ReplicaSet" {
			p.Labels = map[string]string{"pod-template-hash": "5d4f8c"}
		}
	}
	if affinity {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{host}}}}}}}}
	} else {
		p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: host}
	}
	return p
}

// TestHostnameRule: nodes whose hostname label is not their name, what is
// pinned to the label, PVs pinned to a label no node carries; and where it
// stays silent.
func TestHostnameRule(t *testing.T) {
	const name1, name2 = "ip-10-0-1-10.us-west-2.compute.internal", "ip-10-0-1-11.us-west-2.compute.internal"
	relabelled := func(name, host string) corev1.Node { return rke2Agent(name, label(corev1.LabelHostname, host)) }
	for _, c := range []struct {
		name  string
		nodes []corev1.Node
		pvs   []corev1.PersistentVolume
		pods  []corev1.Pod
		want  []string // subject: message part, in order; none: silent
		fix   string   // in the first finding's fix
	}{
		{"label is the name: silent", []corev1.Node{relabelled(name1, name1), relabelled(name2, name2)},
			[]corev1.PersistentVolume{localPV("pv-1", corev1.VolumeBound, name1)}, nil, nil, ""},
		{"no label at all: silent", []corev1.Node{rke2Agent(name1)}, nil, nil, nil, ""},
		{"a released PV pinned to a gone host: silent", []corev1.Node{relabelled(name1, name1)},
			[]corev1.PersistentVolume{localPV("pv-old", corev1.VolumeReleased, "gone")}, nil, nil, ""},
		{"a PV without node affinity: silent", []corev1.Node{relabelled(name1, name1)},
			[]corev1.PersistentVolume{{ObjectMeta: metav1.ObjectMeta{Name: "ebs"}, Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}}}, nil, nil, ""},
		{"two nodes differ, nothing pinned: one finding", []corev1.Node{relabelled(name1, "host-a"), relabelled(name2, "host-b")}, nil, nil,
			[]string{"2 nodes: " + name1 + " and " + name2 + ": its kubernetes.io/hostname label is not its name"},
			"RKE2: before the switch set node-name: <its NAME> in each node's RKE2 configuration (" + name1 + " (label host-a) and " + name2 + " (label host-b))"},
		{"one node differs, a PV and workloads pinned to its label", []corev1.Node{relabelled(name1, "host-a"), relabelled(name2, name2)},
			[]corev1.PersistentVolume{localPV("pv-b", corev1.VolumeBound, "host-a"), localPV("pv-a", corev1.VolumeBound, "host-a"), localPV("pv-other", corev1.VolumeBound, name2)},
			[]corev1.Pod{pinnedPod("web-5d4f8c-x1", "web-5d4f8c", "ReplicaSet", "host-a", false), pinnedPod("web-5d4f8c-x2", "web-5d4f8c", "ReplicaSet", "host-a", false),
				pinnedPod("db-0", "db", "StatefulSet", "host-a", true), pinnedPod("bare", "", "", "host-a", false), pinnedPod("elsewhere", "x", "DaemonSet", name2, false)},
			[]string{name1 + ": its kubernetes.io/hostname label is host-a, not its name: the kubelet set the label from the host's name, while the node was named after its instance; after the switch to the external provider the kubelet names the node and its label alike, so one of them changes; pinned to host-a: PersistentVolumes pv-a and pv-b; Deployment apps/web, Pod apps/bare and StatefulSet apps/db, which lose the node when the label changes"},
			"persistentVolumeReclaimPolicy to Retain"},
		{"a bound PV pinned to a label no node carries", []corev1.Node{relabelled(name1, name1)},
			[]corev1.PersistentVolume{localPV("pv-gone", corev1.VolumeBound, "old-host")}, nil,
			[]string{"PersistentVolume pv-gone: bound (claim db/data-pv-gone), and pinned to kubernetes.io/hostname old-host, which no node carries"}, "create the PV again"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := snapshotOf(t, c.nodes, render(t, distros.RKE2, renderer.ModeInstall), false)
			s.PersistentVolumes, s.PodsEverywhere = c.pvs, c.pods
			var got []string
			var fs []Finding
			for _, f := range Evaluate(s).Findings {
				if f.Area == AreaHostname {
					got = append(got, f.Subject+": "+f.Message)
					fs = append(fs, f)
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d findings, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
			for i, w := range c.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("finding %d:\n%s\nwant it to start\n%s", i, got[i], w)
				}
			}
			if len(fs) > 0 && !strings.Contains(fs[0].Fix, c.fix) {
				t.Errorf("fix %q lacks %q", fs[0].Fix, c.fix)
			}
		})
	}
}

// TestKeepNameFix: each distribution's own way to keep the name.
func TestKeepNameFix(t *testing.T) {
	for distro, want := range map[string]string{
		"kubeadm": "--hostname-override=<its NAME> in /var/lib/kubelet/kubeadm-flags.env",
		"rke2":    "node-name: <its NAME> in the node's RKE2 configuration",
		"rke":     "hostname_override to its NAME with useInstanceMetadataHostname: false",
		"k3s":     "node-name: <its NAME> in the node's /etc/rancher/k3s/config.yaml",
		"unknown": "start the node's kubelet with --hostname-override=<its NAME>",
	} {
		if got := keepNameFix(distro, []string{"n (label h)"}); !strings.Contains(got, want) || !strings.Contains(got, "(n (label h))") {
			t.Errorf("%s: %q lacks %q", distro, got, want)
		}
	}
}

// TestCollectPinned: PersistentVolumes are read always, the pods of every
// namespace only when a node's hostname label is not its name.
func TestCollectPinned(t *testing.T) {
	for _, c := range []struct {
		name     string
		label    string
		wantPods bool
	}{{"label is the name", "cp-1", false}, {"label differs", "host-a", true}} {
		t.Run(c.name, func(t *testing.T) {
			n := rke2Server("cp-1", label(corev1.LabelHostname, c.label))
			pv := localPV("pv-1", corev1.VolumeBound, c.label)
			pod := pinnedPod("p", "", "", c.label, false)
			cs := fake.NewSimpleClientset(&n, &pv, &pod)
			answerReviews(cs)
			s, err := Collect(context.Background(), cs, Input{Source: SourceManifests, Objects: render(t, distros.RKE2, renderer.ModeInstall), ManifestNamespace: "kube-system"})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.PersistentVolumes) != 1 || (s.PodsEverywhere != nil) != c.wantPods || c.wantPods && len(s.PodsEverywhere) != 1 {
				t.Errorf("PVs %d, pods %v", len(s.PersistentVolumes), s.PodsEverywhere)
			}
			listed := false
			for _, a := range cs.Actions() {
				if a.GetVerb() == "list" && a.GetResource().Resource == "pods" && a.GetNamespace() == "" {
					listed = true
				}
			}
			if listed != c.wantPods {
				t.Errorf("listed the pods of every namespace: %v", listed)
			}
		})
	}
}
