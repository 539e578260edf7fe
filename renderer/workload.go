package renderer

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// workloadKinds are the kinds that can run the CCM.
var workloadKinds = map[string]bool{"DaemonSet": true, "Deployment": true}

// podSpec returns spec.template.spec of a workload, failing when the object
// is not a workload or the field has the wrong shape.
func podSpec(rn *yaml.RNode) (*yaml.RNode, error) {
	if !workloadKinds[rn.GetKind()] {
		return nil, fmt.Errorf("%s is not a DaemonSet or Deployment", objectName(rn))
	}
	spec, err := rn.Pipe(yaml.Lookup("spec", "template", "spec"))
	if err != nil {
		return nil, fmt.Errorf("%s: spec.template.spec: %w", objectName(rn), err)
	}
	if spec == nil || spec.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s has no pod template (spec.template.spec)", objectName(rn))
	}
	return spec, nil
}

// eachPodSpec runs apply on the pod spec of every workload and names the
// workload in the errors apply returns: the loop of every workload filter.
func eachPodSpec(nodes []*yaml.RNode, apply func(rn, spec *yaml.RNode) error) ([]*yaml.RNode, error) {
	for _, rn := range nodes {
		spec, err := podSpec(rn)
		if err != nil {
			return nil, err
		}
		if err := apply(rn, spec); err != nil {
			return nil, fmt.Errorf("%s: %w", objectName(rn), err)
		}
	}
	return nodes, nil
}

// ccmContainers returns the containers of a pod spec that run the AWS cloud
// controller manager.
func ccmContainers(spec *yaml.RNode) ([]*yaml.RNode, error) {
	list := spec.Field("containers")
	if list == nil {
		return nil, nil
	}
	if list.Value.YNode().Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("spec.template.spec.containers is not a list")
	}
	var out []*yaml.RNode
	for _, c := range list.Value.Content() {
		if c.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("spec.template.spec.containers holds a %s, not a container", kindName(c))
		}
		if isCCMContainer(yaml.NewRNode(c)) {
			out = append(out, yaml.NewRNode(c))
		}
	}
	return out, nil
}

// isCCMContainer recognises the AWS cloud controller manager by meaning:
// its flags select the aws cloud provider, or its image is the AWS CCM.
func isCCMContainer(c *yaml.RNode) bool {
	for _, field := range []string{"args", "command"} {
		list, _ := stringList(c, field)
		for i, a := range list {
			name, value, hasValue := splitFlag(a)
			if name != "cloud-provider" {
				continue
			}
			if !hasValue && i+1 < len(list) {
				value = list[i+1]
			}
			if value == "aws" {
				return true
			}
		}
	}
	image := ""
	if f := c.Field("image"); f != nil && f.Value.YNode().Kind == yaml.ScalarNode {
		image = f.Value.YNode().Value
	}
	return isCCMImage(image)
}

// isCCMImage reports whether an image reference names the AWS CCM, e.g.
// registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0.
func isCCMImage(image string) bool {
	repo := image
	if i := strings.IndexByte(repo, '@'); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo = repo[:i]
	}
	last := repo[strings.LastIndexByte(repo, '/')+1:]
	switch last {
	case "aws-cloud-controller-manager":
		return true
	case "cloud-controller-manager":
		return strings.Contains(repo, "aws")
	}
	return false
}

// stringList reads a field holding a list of strings. A missing field is an
// empty list.
func stringList(rn *yaml.RNode, field string) ([]string, error) {
	f := rn.Field(field)
	if f == nil || isNull(f.Value.YNode()) {
		return nil, nil
	}
	if f.Value.YNode().Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s is a %s, not a list", field, kindName(f.Value.YNode()))
	}
	var out []string
	for _, n := range f.Value.Content() {
		if n.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s holds a %s, not a string", field, kindName(n))
		}
		out = append(out, n.Value)
	}
	return out, nil
}

// objectName names an object for messages: "DaemonSet kube-system/ccm".
func objectName(rn *yaml.RNode) string {
	name := rn.GetName()
	if ns := rn.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	if name == "" {
		name = "(unnamed)"
	}
	return rn.GetKind() + " " + name
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "node"
}
