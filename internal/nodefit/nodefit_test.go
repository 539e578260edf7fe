package nodefit

import (
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFixtures(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, d := range []string{"rke", "rke2", "k3s", "kubeadm"} {
		nodes, err := LoadFixture(root, d)
		if err != nil || len(nodes) < 3 {
			t.Fatalf("%s: %d nodes, %v", d, len(nodes), err)
		}
		cp := 0
		for _, n := range nodes {
			if n.ControlPlane() {
				cp++
			}
			if n.Taints[len(n.Taints)-1].Key != "node.cloudprovider.kubernetes.io/uninitialized" {
				t.Errorf("%s is not tainted uninitialized", n.Name)
			}
		}
		if cp == 0 || cp == len(nodes) {
			t.Errorf("%s: %d of %d nodes are control-plane", d, cp, len(nodes))
		}
	}
}

func TestAdmits(t *testing.T) {
	n := Node{Name: "n", Labels: map[string]string{"role": "cp", "n": "5"},
		Taints: []Taint{{Key: "a", Value: "true", Effect: "NoSchedule"}, {Key: "p", Effect: "PreferNoSchedule"}}}
	tol := []Toleration{{Key: "a", Operator: "Exists"}}
	cases := []struct {
		name string
		spec PodSpec
		want bool
	}{
		{"tolerated and selected", PodSpec{NodeSelector: map[string]string{"role": "cp"}, Tolerations: tol}, true},
		{"selector value differs", PodSpec{NodeSelector: map[string]string{"role": ""}, Tolerations: tol}, false},
		{"taint not tolerated", PodSpec{}, false},
		{"Equal with the wrong value", PodSpec{Tolerations: []Toleration{{Key: "a", Value: "false"}}}, false},
		{"Equal with the right value", PodSpec{Tolerations: []Toleration{{Key: "a", Value: "true", Effect: "NoSchedule"}}}, true},
		{"wrong effect", PodSpec{Tolerations: []Toleration{{Key: "a", Operator: "Exists", Effect: "NoExecute"}}}, false},
	}
	for _, c := range cases {
		if got, why := c.spec.Admits(n); got != c.want {
			t.Errorf("%s: Admits = %v (%s), want %v", c.name, got, why, c.want)
		}
	}
	var aff PodSpec
	aff.Tolerations = tol
	aff.Affinity.NodeAffinity.Required = &struct {
		Terms []struct {
			MatchExpressions []Requirement `yaml:"matchExpressions"`
			MatchFields      []Requirement `yaml:"matchFields"`
		} `yaml:"nodeSelectorTerms"`
	}{}
	aff.Affinity.NodeAffinity.Required.Terms = append(aff.Affinity.NodeAffinity.Required.Terms, struct {
		MatchExpressions []Requirement `yaml:"matchExpressions"`
		MatchFields      []Requirement `yaml:"matchFields"`
	}{MatchExpressions: []Requirement{{Key: "n", Operator: "Gt", Values: []string{"3"}}}})
	if ok, why := aff.Admits(n); !ok {
		t.Errorf("affinity Gt 3 on n=5: %s", why)
	}
	aff.Affinity.NodeAffinity.Required.Terms[0].MatchExpressions[0].Operator = "DoesNotExist"
	if ok, _ := aff.Admits(n); ok {
		t.Error("DoesNotExist matched an existing label")
	}
}

func TestExclude(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "cp-1", Labels: map[string]string{"node-role.kubernetes.io/control-plane": "true", "zone": "a"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule},
			{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule},
			{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule},
		}},
	}
	tolCP := corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists}
	affinity := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	exists := func(key string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpExists}}}
	}
	cases := []struct {
		name   string
		spec   corev1.PodSpec
		daemon bool
		want   string // "" admits
	}{
		{"a daemon pod tolerates unschedulable", corev1.PodSpec{Tolerations: []corev1.Toleration{tolCP}}, true, ""},
		{"a plain pod does not", corev1.PodSpec{Tolerations: []corev1.Toleration{tolCP}}, false, "taint node.kubernetes.io/unschedulable:NoSchedule is not tolerated"},
		{"role taint", corev1.PodSpec{}, true, "taint node-role.kubernetes.io/control-plane:NoSchedule is not tolerated"},
		{"Equal with an empty value tolerates an empty-valued taint", corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}}, true, ""},
		{"Equal true misses an empty-valued taint", corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Value: "true"}}}, true, "taint node-role.kubernetes.io/control-plane:NoSchedule is not tolerated"},
		{"selector value", corev1.PodSpec{NodeSelector: map[string]string{"node-role.kubernetes.io/control-plane": ""}, Tolerations: []corev1.Toleration{tolCP}}, true,
			`nodeSelector node-role.kubernetes.io/control-plane="": the node has "true"`},
		{"selector key", corev1.PodSpec{NodeSelector: map[string]string{"zone": "a", "node-role.kubernetes.io/controlplane": "true"}, Tolerations: []corev1.Toleration{tolCP}}, true,
			`nodeSelector node-role.kubernetes.io/controlplane="true": the node has no such label`},
		{"one affinity term matches", corev1.PodSpec{Affinity: affinity(exists("node-role.kubernetes.io/controlplane"), exists("node-role.kubernetes.io/control-plane")), Tolerations: []corev1.Toleration{tolCP}}, true, ""},
		{"no affinity term matches", corev1.PodSpec{Affinity: affinity(exists("node-role.kubernetes.io/controlplane"), corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}, {Key: "gpu", Operator: corev1.NodeSelectorOpExists}}})}, true,
			"affinity no required node affinity term matches: node-role.kubernetes.io/controlplane Exists; zone In a, gpu Exists (fails gpu Exists)"},
		{"an empty term matches nothing", corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorTerm{})}, true,
			"affinity no required node affinity term matches: (an empty term, which matches no node)"},
		{"matchFields on the node name", corev1.PodSpec{Affinity: affinity(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"cp-1"}}}}), Tolerations: []corev1.Toleration{tolCP}}, true, ""},
		{"template node name", corev1.PodSpec{NodeName: "other", Tolerations: []corev1.Toleration{tolCP}}, true, "nodeName the pod template names node other"},
	}
	for _, c := range cases {
		ex := Exclude(&c.spec, node, c.daemon)
		got := ""
		if ex != nil {
			got = ex.String()
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDaemonTolerations(t *testing.T) {
	spec := &corev1.PodSpec{HostNetwork: true, Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}}
	got := DaemonPodSpec(spec)
	if len(spec.Tolerations) != 1 {
		t.Fatal("DaemonPodSpec changed its input")
	}
	if len(got.Tolerations) != 7 {
		t.Errorf("host network daemon pod: %d tolerations, want 7 (no duplicate not-ready): %v", len(got.Tolerations), got.Tolerations)
	}
	if n := len(DaemonTolerations(false)); n != 6 {
		t.Errorf("pod network: %d tolerations, want 6", n)
	}
	taint := corev1.Taint{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}
	if _, found := UntoleratedTaint([]corev1.Taint{taint}, DaemonTolerations(false)); !found {
		t.Error("a pod-network daemon pod tolerates network-unavailable")
	}
	if _, found := UntoleratedTaint([]corev1.Taint{taint}, got.Tolerations); found {
		t.Error("a host-network daemon pod does not tolerate network-unavailable")
	}
}
