// Package upstream holds the upstream aws-cloud-controller-manager chart's
// default output as facts (names, args, tolerations, RBAC rules of its latest
// release) and renders it with the renderer: the generated kustomize overlays
// and the wrapper chart's presets are read off that output, so every patch
// has one home, the renderer's filters.
package upstream

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The chart's default names.
const (
	Workload       = ChartName                         // DaemonSet name (nameOverride)
	Container      = ChartName                         // container name (the chart's name, fixed)
	Namespace      = "kube-system"                     // namespace value
	ClusterRole    = "system:cloud-controller-manager" // clusterRoleName value
	ServiceAccount = "cloud-controller-manager"        // serviceAccountName value
)

// Image is the CCM image of LatestChartVersion's defaults.
var Image = func() string {
	tag, _ := releases.DefaultImageTag(LatestChartVersion)
	return releases.ImageRepository + ":" + tag
}()

// Args are the args the chart writes at its defaults (every version: fixed
// in the template in 0.0.2, the args value from 0.0.4).
var Args = []string{"--v=2", "--cloud-provider=aws"}

// Tolerations are the tolerations the chart writes at its defaults from
// 0.0.8 on; 0.0.2 to 0.0.6 lack the control-plane one.
var Tolerations = []distros.Toleration{
	{Key: distros.TaintUninitialized, Value: "true", Effect: "NoSchedule"},
	{Key: distros.LabelMaster, Effect: "NoSchedule"},
	{Key: distros.LabelControlPlane, Effect: "NoSchedule"},
}

// NodeSelector is the chart's default nodeSelector (0.0.7 on).
var NodeSelector = map[string]string{distros.LabelControlPlane: ""}

// Rule is one RBAC rule.
type Rule struct {
	APIGroups []string `yaml:"apiGroups"`
	Resources []string `yaml:"resources"`
	Verbs     []string `yaml:"verbs"`
}

// ClusterRoleRules are the chart's default clusterRoleRules (0.0.11, a
// superset of earlier versions'): the service account rules hold only
// create.
var ClusterRoleRules = []Rule{
	{[]string{""}, []string{"events"}, []string{"create", "patch", "update"}},
	{[]string{""}, []string{"nodes"}, []string{"*"}},
	{[]string{""}, []string{"nodes/status"}, []string{"patch"}},
	{[]string{""}, []string{"services"}, []string{"list", "patch", "update", "watch"}},
	{[]string{""}, []string{"services/status"}, []string{"list", "patch", "update", "watch"}},
	{[]string{""}, []string{"serviceaccounts"}, []string{"create"}},
	{[]string{""}, []string{"persistentvolumes"}, []string{"get", "list", "update", "watch"}},
	{[]string{""}, []string{"endpoints"}, []string{"create", "get", "list", "watch", "update"}},
	{[]string{"coordination.k8s.io"}, []string{"leases"}, []string{"create", "get", "list", "watch", "update"}},
	{[]string{""}, []string{"serviceaccounts/token"}, []string{"create"}},
	{[]string{"authentication.k8s.io"}, []string{"tokenreviews"}, []string{"create"}},
	{[]string{"authorization.k8s.io"}, []string{"subjectaccessreviews"}, []string{"create"}},
}

// Defaults returns the objects the chart renders with its default values
// that the renderer reads or patches.
func Defaults() ([]*yaml.RNode, error) {
	var tols []map[string]string
	for _, t := range Tolerations {
		tols = append(tols, map[string]string{"key": t.Key, "operator": t.Operator, "value": t.Value, "effect": t.Effect})
	}
	for _, t := range tols {
		for k, v := range t {
			if v == "" {
				delete(t, k)
			}
		}
	}
	objs := []any{
		map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": ServiceAccount, "namespace": Namespace}},
		map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": ClusterRole}, "rules": ClusterRoleRules},
		map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": ClusterRole},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ClusterRole},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": ServiceAccount, "namespace": Namespace}}},
		map[string]any{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": map[string]any{"name": Workload, "namespace": Namespace},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"tolerations": tols, "nodeSelector": NodeSelector, "serviceAccountName": ServiceAccount,
				"containers": []any{map[string]any{"name": Container, "image": Image, "args": Args}},
			}}}},
	}
	out := make([]*yaml.RNode, len(objs))
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		if out[i], err = yaml.Parse(string(b)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Rendered is the chart's default output as the renderer patches it.
type Rendered struct {
	Options     renderer.Options
	DaemonSet   *yaml.RNode
	ClusterRole *yaml.RNode
	Generated   []*yaml.RNode // the objects the renderer adds, in order
}

// Render renders the chart's defaults with options.
func Render(o renderer.Options) (*Rendered, error) { return RenderTag(o, "") }

// RenderTag renders the chart's defaults with options and the CCM image
// tag the user pins (image.tag), or the chart's default image when tag is
// "".
func RenderTag(o renderer.Options, tag string) (*Rendered, error) {
	in, err := DefaultsTagged(tag)
	if err != nil {
		return nil, err
	}
	return RenderObjects(o, in)
}

// DefaultsTagged returns Defaults with the CCM image of the tag; the
// chart's default image when tag is "".
func DefaultsTagged(tag string) ([]*yaml.RNode, error) {
	in, err := Defaults()
	if err != nil || tag == "" {
		return in, err
	}
	return in, in[len(in)-1].PipeE(yaml.Lookup("spec", "template", "spec", "containers", "[name="+Container+"]"),
		yaml.SetField("image", yaml.NewStringRNode(releases.ImageRepository+":"+tag)))
}

// GeneratedYAML returns the generated objects keep selects (nil: all) as
// one YAML stream, "" when it selects none.
func (r *Rendered) GeneratedYAML(keep func(*yaml.RNode) bool) (string, error) {
	var docs []string
	for _, n := range r.Generated {
		if keep != nil && !keep(n) {
			continue
		}
		s, err := n.String()
		if err != nil {
			return "", err
		}
		docs = append(docs, s)
	}
	return strings.Join(docs, "---\n"), nil
}

// PodSpec returns a field of the rendered DaemonSet's pod spec, nil when
// absent.
func (r *Rendered) PodSpec(field string) *yaml.RNode {
	n, _ := r.DaemonSet.Pipe(yaml.Lookup("spec", "template", "spec", field))
	return n
}

// Container returns a field of the rendered CCM container, nil when absent.
func (r *Rendered) Container(field string) *yaml.RNode {
	n, _ := r.DaemonSet.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name="+Container+"]", field))
	return n
}

// RemovedSelectorKeys are the chart's default nodeSelector keys the
// rendered output no longer has: a values file or a strategic merge must
// set them to null.
func (r *Rendered) RemovedSelectorKeys() []string {
	sel := r.PodSpec("nodeSelector")
	var keys []string
	for k := range NodeSelector {
		if sel == nil || sel.Field(k) == nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// AddedGrants are what the rendered ClusterRole grants beyond the chart's
// defaults, as rules of one resource each, in the order of the first grant.
func (r *Rendered) AddedGrants() ([]Rule, error) {
	var rules []Rule
	s, err := r.ClusterRole.Pipe(yaml.Lookup("rules"))
	if err != nil || s == nil {
		return nil, fmt.Errorf("the rendered ClusterRole has no rules: %v", err)
	}
	var have []Rule
	if err := s.YNode().Decode(&have); err != nil {
		return nil, err
	}
	for _, h := range have {
		for _, g := range h.APIGroups {
			for _, res := range h.Resources {
				for _, v := range h.Verbs {
					if grants(ClusterRoleRules, g, res, v) || grants(rules, g, res, v) {
						continue
					}
					i := slices.IndexFunc(rules, func(x Rule) bool { return x.APIGroups[0] == g && x.Resources[0] == res })
					if i < 0 {
						rules = append(rules, Rule{APIGroups: []string{g}, Resources: []string{res}})
						i = len(rules) - 1
					}
					rules[i].Verbs = append(rules[i].Verbs, v)
				}
			}
		}
	}
	return rules, nil
}

func grants(rules []Rule, group, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r Rule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}

// RenderObjects renders objects (Defaults, changed) with options.
func RenderObjects(o renderer.Options, in []*yaml.RNode) (*Rendered, error) {
	r, err := renderer.New(o)
	if err != nil {
		return nil, err
	}
	out, _, err := r.RenderNodes(in)
	if err != nil {
		return nil, err
	}
	res := &Rendered{Options: o}
	for _, n := range out {
		switch {
		case n.GetAnnotations()[renderer.GeneratedAnnotation] != "":
			res.Generated = append(res.Generated, n)
		case n.GetKind() == "DaemonSet":
			res.DaemonSet = n
		case n.GetKind() == "ClusterRole":
			res.ClusterRole = n
		}
	}
	if res.DaemonSet == nil || res.ClusterRole == nil {
		return nil, fmt.Errorf("the rendered defaults lack the DaemonSet or the ClusterRole")
	}
	return res, nil
}

// EnforcedArgs returns the flags the renderer writes into a container that
// has none: those it enforces with these options, for the CCM image tag
// (none: the chart's default image).
func EnforcedArgs(o renderer.Options, tag string) ([]string, error) {
	in, err := DefaultsTagged(tag)
	if err != nil {
		return nil, err
	}
	ds := in[len(in)-1]
	if err := ds.PipeE(yaml.Lookup("spec", "template", "spec", "containers", "[name="+Container+"]"), yaml.Clear("args")); err != nil {
		return nil, err
	}
	r, err := RenderObjects(o, in)
	if err != nil {
		return nil, err
	}
	var args []string
	err = r.Container("args").YNode().Decode(&args)
	return args, err
}
