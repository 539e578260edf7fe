package nodefit

import (
	"path/filepath"
	"testing"
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
