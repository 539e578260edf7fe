// Package nodefit answers, for tests, which nodes a pod spec admits: its
// nodeSelector, its required node affinity and its tolerations against the
// nodes' labels and NoSchedule/NoExecute taints, as the scheduler and the
// DaemonSet controller decide it. The real-cluster tests check the same
// answers against a real DaemonSet controller.
package nodefit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Node is what placement depends on.
type Node struct {
	Name   string
	Roles  []string // from the fixture's roles annotation
	Labels map[string]string
	Taints []Taint
}

// Taint is a node taint.
type Taint struct {
	Key    string `yaml:"key"`
	Value  string `yaml:"value"`
	Effect string `yaml:"effect"`
}

// ControlPlane reports whether the fixture says the node has the
// control-plane role.
func (n Node) ControlPlane() bool { return slices.Contains(n.Roles, "controlplane") }

// RolesAnnotation is the fixture annotation listing a node's roles.
const RolesAnnotation = "fixture.aws-ccm-renderer.io/roles"

// LoadFixture reads testdata/nodes/<distro>.yaml.
func LoadFixture(root, distro string) ([]Node, error) {
	data, err := os.ReadFile(filepath.Join(root, "testdata", "nodes", distro+".yaml"))
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var nodes []Node
	for {
		var obj struct {
			Metadata struct {
				Name        string            `yaml:"name"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec struct {
				Taints []Taint `yaml:"taints"`
			} `yaml:"spec"`
		}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return nodes, nil
		}
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, Node{
			Name:   obj.Metadata.Name,
			Roles:  strings.Split(obj.Metadata.Annotations[RolesAnnotation], ","),
			Labels: obj.Metadata.Labels,
			Taints: obj.Spec.Taints,
		})
	}
}

// PodSpec is the part of a pod spec placement depends on.
type PodSpec struct {
	NodeSelector map[string]string `yaml:"nodeSelector"`
	Affinity     struct {
		NodeAffinity struct {
			Required *struct {
				Terms []struct {
					MatchExpressions []Requirement `yaml:"matchExpressions"`
					MatchFields      []Requirement `yaml:"matchFields"`
				} `yaml:"nodeSelectorTerms"`
			} `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
		} `yaml:"nodeAffinity"`
	} `yaml:"affinity"`
	Tolerations []Toleration `yaml:"tolerations"`
}

// Requirement is a node selector requirement.
type Requirement struct {
	Key      string   `yaml:"key"`
	Operator string   `yaml:"operator"`
	Values   []string `yaml:"values"`
}

// Toleration is a pod toleration.
type Toleration struct {
	Key      string `yaml:"key"`
	Operator string `yaml:"operator"`
	Value    string `yaml:"value"`
	Effect   string `yaml:"effect"`
}

// Admits reports whether a pod with this spec may run on the node, and why
// not when it may not.
func (p PodSpec) Admits(n Node) (bool, string) {
	for k, v := range p.NodeSelector {
		if got, ok := n.Labels[k]; !ok || got != v {
			return false, fmt.Sprintf("nodeSelector %s=%q", k, v)
		}
	}
	if req := p.Affinity.NodeAffinity.Required; req != nil {
		ok := false
		for _, term := range req.Terms {
			if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
				continue // an empty term matches no node
			}
			match := true
			for _, r := range term.MatchExpressions {
				match = match && r.matches(n.Labels)
			}
			for _, r := range term.MatchFields {
				match = match && r.Key == "metadata.name" && r.matches(map[string]string{"metadata.name": n.Name})
			}
			ok = ok || match
		}
		if !ok {
			return false, "required node affinity"
		}
	}
	for _, taint := range n.Taints {
		if taint.Effect != "NoSchedule" && taint.Effect != "NoExecute" {
			continue
		}
		if !slices.ContainsFunc(p.Tolerations, func(t Toleration) bool { return t.tolerates(taint) }) {
			return false, fmt.Sprintf("taint %s=%s:%s", taint.Key, taint.Value, taint.Effect)
		}
	}
	return true, ""
}

func (r Requirement) matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Operator {
	case "In":
		return ok && slices.Contains(r.Values, v)
	case "NotIn":
		return !ok || !slices.Contains(r.Values, v)
	case "Exists":
		return ok
	case "DoesNotExist":
		return !ok
	case "Gt", "Lt":
		if !ok || len(r.Values) != 1 {
			return false
		}
		a, err1 := strconv.ParseInt(v, 10, 64)
		b, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		return (r.Operator == "Gt" && a > b) || (r.Operator == "Lt" && a < b)
	}
	return false
}

func (t Toleration) tolerates(taint Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "Exists":
		return true
	case "", "Equal":
		return t.Key != "" && t.Value == taint.Value
	}
	return false
}
