// Package nodefit answers which nodes a pod spec admits, with the
// Kubernetes libraries' own rules: the required node affinity (nodeSelector
// and affinity terms) from k8s.io/component-helpers, and taint/toleration
// matching from k8s.io/api, filtered to the NoSchedule and NoExecute
// effects as the DaemonSet controller filters them. For a DaemonSet it adds
// the tolerations the controller gives every daemon pod. The renderer's
// tests and `aws-ccm-renderer check` share these answers; the real-cluster
// tests check them against a real DaemonSet controller.
package nodefit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// Node is what placement depends on, as the test fixtures give it.
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

// PodSpec is the part of a pod spec placement depends on, as YAML decodes it.
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
// not when it may not. It applies the spec as written, without the
// tolerations the DaemonSet controller adds (the fixtures carry none of the
// taints those tolerate).
func (p PodSpec) Admits(n Node) (bool, string) {
	ex := Exclude(p.Typed(), n.Typed(), false)
	if ex == nil {
		return true, ""
	}
	return false, ex.String()
}

// Typed converts the spec to the Kubernetes type.
func (p PodSpec) Typed() *corev1.PodSpec {
	spec := &corev1.PodSpec{NodeSelector: p.NodeSelector}
	if req := p.Affinity.NodeAffinity.Required; req != nil {
		ns := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{}}
		for _, t := range req.Terms {
			ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, corev1.NodeSelectorTerm{
				MatchExpressions: requirements(t.MatchExpressions),
				MatchFields:      requirements(t.MatchFields),
			})
		}
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: ns}}
	}
	for _, t := range p.Tolerations {
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{
			Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect),
		})
	}
	return spec
}

func requirements(rs []Requirement) []corev1.NodeSelectorRequirement {
	var out []corev1.NodeSelectorRequirement
	for _, r := range rs {
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOperator(r.Operator), Values: r.Values})
	}
	return out
}

// Typed converts the fixture node to the Kubernetes type.
func (n Node) Typed() *corev1.Node {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}}
	for _, t := range n.Taints {
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return node
}

// Exclusion says which rule keeps a pod off a node.
type Exclusion struct {
	// Rule is "nodeName", "nodeSelector", "affinity" or "taint".
	Rule string
	// Detail names the part of the rule: the selector key and value, the
	// affinity terms, the taint.
	Detail string
	// Taint is the untolerated taint (Rule "taint").
	Taint *corev1.Taint
}

func (e *Exclusion) String() string { return e.Rule + " " + e.Detail }

// Exclude returns why a pod with this spec may not run on the node, or nil
// when it may. With daemon, the spec gets the tolerations the DaemonSet
// controller adds to every daemon pod, and a node name in the template must
// be this node's, as the controller decides it.
func Exclude(spec *corev1.PodSpec, node *corev1.Node, daemon bool) *Exclusion {
	if daemon {
		spec = DaemonPodSpec(spec)
		if spec.NodeName != "" && spec.NodeName != node.Name {
			return &Exclusion{Rule: "nodeName", Detail: fmt.Sprintf("the pod template names node %s", spec.NodeName)}
		}
	}
	pod := &corev1.Pod{Spec: *spec}
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok || err != nil {
		return explainAffinity(spec, node)
	}
	if taint, found := UntoleratedTaint(node.Spec.Taints, spec.Tolerations); found {
		return &Exclusion{Rule: "taint", Detail: TaintString(taint) + " is not tolerated", Taint: &taint}
	}
	return nil
}

// explainAffinity names the nodeSelector key, or the affinity terms, that
// the node does not match; each part is asked of the same library matcher.
func explainAffinity(spec *corev1.PodSpec, node *corev1.Node) *Exclusion {
	keys := make([]string, 0, len(spec.NodeSelector))
	for k := range spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		one := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: map[string]string{k: spec.NodeSelector[k]}}}
		if ok, _ := nodeaffinity.GetRequiredNodeAffinity(one).Match(node); !ok {
			detail := fmt.Sprintf("%s=%q: ", k, spec.NodeSelector[k])
			if v, has := node.Labels[k]; has {
				detail += fmt.Sprintf("the node has %q", v)
			} else {
				detail += "the node has no such label"
			}
			return &Exclusion{Rule: "nodeSelector", Detail: detail}
		}
	}
	var terms []string
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			terms = append(terms, termString(t, node))
		}
	}
	if len(terms) == 0 {
		return &Exclusion{Rule: "affinity", Detail: "required node affinity has no term a node can match"}
	}
	return &Exclusion{Rule: "affinity", Detail: "no required node affinity term matches: " + strings.Join(terms, "; ")}
}

// termString writes a term with its first requirement the node fails.
func termString(t corev1.NodeSelectorTerm, node *corev1.Node) string {
	var parts []string
	failed := ""
	each := func(rs []corev1.NodeSelectorRequirement, fields bool) {
		for _, r := range rs {
			s := requirementString(r)
			if fields {
				s = "field " + s
			}
			parts = append(parts, s)
			term := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{r}}
			if fields {
				term = corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{r}}
			}
			ok, err := nodeaffinity.NewLazyErrorNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}).Match(node)
			if (!ok || err != nil) && failed == "" {
				failed = s
			}
		}
	}
	each(t.MatchExpressions, false)
	each(t.MatchFields, true)
	if len(parts) == 0 {
		return "(an empty term, which matches no node)"
	}
	s := strings.Join(parts, ", ")
	if failed != "" && len(parts) > 1 {
		s += " (fails " + failed + ")"
	}
	return s
}

func requirementString(r corev1.NodeSelectorRequirement) string {
	switch r.Operator {
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		return r.Key + " " + string(r.Operator)
	}
	return fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(r.Values, ","))
}

// TaintString writes a taint as kubectl does: key=value:Effect, or
// key:Effect without a value.
func TaintString(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// UntoleratedTaint returns the first NoSchedule or NoExecute taint no
// toleration tolerates: the taints the DaemonSet controller and the
// scheduler refuse a pod for.
func UntoleratedTaint(taints []corev1.Taint, tolerations []corev1.Toleration) (corev1.Taint, bool) {
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool { return tolerates(&tol, t) }) {
			return *t, true
		}
	}
	return corev1.Taint{}, false
}

// tolerates asks k8s.io/api's own rule (Toleration.ToleratesTaint), which
// component-helpers' FindMatchingUntoleratedTaint calls in turn. Its
// signature changed in v0.35 (a logger, and a switch for the alpha Lt/Gt
// operators, which stay off as in a cluster without that feature gate);
// this package is built against v0.37 here and against v0.34 in the e2e
// module, whose control plane is 1.34, so the method is found by its
// shape.
func tolerates(tol *corev1.Toleration, taint *corev1.Taint) bool {
	switch m := any(tol).(type) {
	case interface {
		ToleratesTaint(klog.Logger, *corev1.Taint, bool) bool
	}:
		return m.ToleratesTaint(klog.Background(), taint, false)
	case interface{ ToleratesTaint(*corev1.Taint) bool }:
		return m.ToleratesTaint(taint)
	}
	panic("k8s.io/api: Toleration.ToleratesTaint has an unknown signature")
}

// DaemonTolerations are the tolerations the DaemonSet controller gives
// every daemon pod (k8s.io/kubernetes pkg/controller/daemon/util): all with
// operator Exists, so that node problems and cordoning neither keep a daemon
// pod off a node nor evict it: not-ready and unreachable (NoExecute);
// disk-, memory- and PID-pressure and unschedulable (NoSchedule); and, for
// pods in the host network, network-unavailable (NoSchedule).
func DaemonTolerations(hostNetwork bool) []corev1.Toleration {
	exists := func(key string, effect corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
	}
	tols := []corev1.Toleration{
		exists(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute),
		exists(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute),
		exists(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoSchedule),
		exists(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule),
		exists(corev1.TaintNodePIDPressure, corev1.TaintEffectNoSchedule),
		exists(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule),
	}
	if hostNetwork {
		tols = append(tols, exists(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule))
	}
	return tols
}

// DaemonPodSpec returns a copy of a DaemonSet's pod template spec with the
// controller's tolerations added where the template lacks them.
func DaemonPodSpec(spec *corev1.PodSpec) *corev1.PodSpec {
	out := spec.DeepCopy()
	for _, t := range DaemonTolerations(spec.HostNetwork) {
		if !slices.ContainsFunc(out.Tolerations, func(have corev1.Toleration) bool { return have.MatchToleration(&t) }) {
			out.Tolerations = append(out.Tolerations, t)
		}
	}
	return out
}
