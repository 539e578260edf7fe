// Package manifest reads rendered manifest streams for tests: which objects
// there are, and what the CCM's workload and RBAC mean.
package manifest

import (
	"fmt"
	"slices"

	yaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/nodefit"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// Object is one document of a stream.
type Object struct {
	Kind, Name, Namespace string
	Doc                   map[string]any
	Raw                   []byte // the document's text, from its "---" line
}

// ID names the object: "DaemonSet kube-system/x".
func (o Object) ID() string {
	if o.Namespace != "" {
		return o.Kind + " " + o.Namespace + "/" + o.Name
	}
	return o.Kind + " " + o.Name
}

// Split decodes a stream into its objects, cut into documents by the
// renderer's byte layer; empty documents are skipped.
func Split(data []byte) ([]Object, error) {
	var out []Object
	for _, d := range stream.Split([][]byte{data}) {
		raw := d.Raw
		var m map[string]any
		if err := yaml.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("%w in:\n%s", err, raw)
		}
		if m == nil {
			continue
		}
		o := Object{Doc: m, Raw: raw}
		o.Kind, _ = m["kind"].(string)
		md, _ := m["metadata"].(map[string]any)
		o.Name, _ = md["name"].(string)
		o.Namespace, _ = md["namespace"].(string)
		out = append(out, o)
	}
	return out, nil
}

// Get walks a path of map keys.
func Get(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// CCM returns the one DaemonSet or Deployment of the stream.
func CCM(objs []Object) (Object, error) {
	var found []Object
	for _, o := range objs {
		if o.Kind == "DaemonSet" || o.Kind == "Deployment" {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		return Object{}, fmt.Errorf("%d workloads, want 1", len(found))
	}
	return found[0], nil
}

// PodSpec decodes a workload's pod spec for placement questions.
func PodSpec(o Object) (nodefit.PodSpec, error) {
	var spec nodefit.PodSpec
	b, err := yaml.Marshal(Get(o.Doc, "spec", "template", "spec"))
	if err != nil {
		return spec, err
	}
	return spec, yaml.Unmarshal(b, &spec)
}

// Containers returns a workload's containers.
func Containers(o Object) []map[string]any {
	var out []map[string]any
	list, _ := Get(o.Doc, "spec", "template", "spec", "containers").([]any)
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Args returns the first container's args.
func Args(o Object) []string {
	cs := Containers(o)
	if len(cs) == 0 {
		return nil
	}
	return Strings(cs[0]["args"])
}

// Strings converts a decoded list of scalars to strings.
func Strings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// Grants reports whether the (Cluster)Roles bound to a service account in
// the stream allow a verb on a core-group resource, and with which rules.
func Grants(objs []Object, namespace, sa, resource, verb string) bool {
	var roles []string
	for _, o := range objs {
		if o.Kind != "ClusterRoleBinding" && o.Kind != "RoleBinding" {
			continue
		}
		subjects, _ := o.Doc["subjects"].([]any)
		for _, s := range subjects {
			sm, _ := s.(map[string]any)
			if sm["kind"] == "ServiceAccount" && sm["name"] == sa && (sm["namespace"] == namespace || sm["namespace"] == nil) {
				roles = append(roles, fmt.Sprint(Get(o.Doc, "roleRef", "kind"))+"/"+fmt.Sprint(Get(o.Doc, "roleRef", "name")))
			}
		}
	}
	for _, o := range objs {
		if !slices.Contains(roles, o.Kind+"/"+o.Name) {
			continue
		}
		rules, _ := o.Doc["rules"].([]any)
		for _, r := range rules {
			rm, _ := r.(map[string]any)
			if rm["resourceNames"] != nil {
				continue
			}
			g, res, v := Strings(rm["apiGroups"]), Strings(rm["resources"]), Strings(rm["verbs"])
			if (slices.Contains(g, "") || slices.Contains(g, "*")) &&
				(slices.Contains(res, resource) || slices.Contains(res, "*")) &&
				(slices.Contains(v, verb) || slices.Contains(v, "*")) {
				return true
			}
		}
	}
	return false
}

// Flag returns the value of --name in a CCM container's args, as the
// renderer reads its command line, and whether it is there.
func Flag(args []string, name string) (string, bool) {
	return renderer.ParseCommandLine(nil, args).Value(name)
}
