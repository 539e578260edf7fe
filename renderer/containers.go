package renderer

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// workloadKinds are the kinds that can run the CCM.
var workloadKinds = map[string]bool{"DaemonSet": true, "Deployment": true}

// CCMBinary is the AWS cloud controller manager's executable, the
// entrypoint of its image.
const CCMBinary = "aws-cloud-controller-manager"

// IsCCMContainer reports whether a container runs the AWS cloud controller
// manager, by what only it has: with a command, the command's executable is
// aws-cloud-controller-manager; without one, the image's entrypoint runs,
// and the image is the AWS CCM's (IsCCMImage). A flag such as
// --cloud-provider=aws does not count: cluster-autoscaler and other tools
// take it too.
func IsCCMContainer(command []string, image string) bool {
	if len(command) > 0 {
		return path.Base(command[0]) == CCMBinary
	}
	return IsCCMImage(image)
}

// IsCCMImage reports whether an image reference names the AWS CCM's image,
// from its home registry or any mirror or private registry: the repository
// path, without tag or digest, is named aws-cloud-controller-manager, or
// cloud-controller-manager under a provider-aws project (registry.k8s.io's
// provider-aws/, the staging gcr.io/k8s-staging-provider-aws/). A string
// that is not an image reference (ParseImage) names no image.
func IsCCMImage(image string) bool {
	img, err := ParseImage(image)
	if err != nil {
		return false
	}
	parts := strings.Split(img.Repository, "/")
	name := parts[len(parts)-1]
	if name == CCMBinary {
		return true
	}
	project := ""
	if len(parts) > 1 {
		project = parts[len(parts)-2]
	}
	return name == "cloud-controller-manager" && (project == "provider-aws" || strings.HasSuffix(project, "-provider-aws"))
}

// ImageTag returns an image reference's tag, "" when it has none or is not
// an image reference (ParseImage).
func ImageTag(image string) string {
	img, _ := ParseImage(image)
	return img.Tag
}

// podSpec returns spec.template.spec of a workload, failing when the field
// or one above it has the wrong shape.
func podSpec(rn *yaml.RNode) (*yaml.RNode, error) {
	n, path := rn.YNode(), ""
	for _, field := range []string{"spec", "template", "spec"} {
		path = joinPath(path, field)
		v := mapGet(n, field)
		if v == nil || isNull(v) {
			return nil, fmt.Errorf("no pod template (spec.template.spec)")
		}
		if v.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s is a %s, not a map", path, KindName(v))
		}
		n = v
	}
	return yaml.NewRNode(n), nil
}

// containers returns the containers of a pod spec.
func containers(spec *yaml.RNode) ([]*yaml.RNode, error) {
	list, err := listField(spec.YNode(), "containers", "spec.template.spec.containers")
	if err != nil || list == nil {
		return nil, err
	}
	out := make([]*yaml.RNode, 0, len(list.Content))
	for _, c := range list.Content {
		if c.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("spec.template.spec.containers holds a %s, not a container", KindName(c))
		}
		out = append(out, yaml.NewRNode(c))
	}
	return out, nil
}

// containerName returns a container's name, "" when it has none.
func containerName(c *yaml.RNode) string {
	if v := mapGet(c.YNode(), "name"); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// containerImage returns a container's image, "" when it has none.
func containerImage(c *yaml.RNode) string {
	if v := mapGet(c.YNode(), "image"); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// isCCM applies IsCCMContainer to a parsed container.
func isCCM(c *yaml.RNode) bool {
	command, _ := stringList(c, "command")
	return IsCCMContainer(command, containerImage(c))
}

// Workload is the CCM's DaemonSet or Deployment as the workload filters
// see it: which of its containers run the CCM.
type Workload struct {
	Containers []string // names of the CCM's containers
}

// each runs apply on the pod spec of every workload and on its CCM
// containers (named in w): the loop of the filters that change containers.
func (w Workload) each(nodes []*yaml.RNode, apply func(rn, spec *yaml.RNode, ccm []*yaml.RNode) error) ([]*yaml.RNode, error) {
	return eachPodSpec(nodes, func(rn, spec *yaml.RNode) error {
		all, err := containers(spec)
		if err != nil {
			return err
		}
		ccm := slices.DeleteFunc(all, func(c *yaml.RNode) bool { return !slices.Contains(w.Containers, containerName(c)) })
		return apply(rn, spec, ccm)
	})
}

// eachPodSpec runs apply on the pod spec of every workload and names the
// workload in the errors apply returns: the loop of every workload filter.
func eachPodSpec(nodes []*yaml.RNode, apply func(rn, spec *yaml.RNode) error) ([]*yaml.RNode, error) {
	for _, rn := range nodes {
		spec, err := podSpec(rn)
		if err == nil {
			err = apply(rn, spec)
		}
		if err != nil {
			return nil, &patchError{Object: refOf(rn), Err: err}
		}
	}
	return nodes, nil
}

// patchError is a filter's error about one object; the renderer adds where
// the object is in the input.
type patchError struct {
	Object *ObjectRef
	Err    error
}

func (e *patchError) Error() string { return e.Object.String() + ": " + e.Err.Error() }
func (e *patchError) Unwrap() error { return e.Err }

// stringList reads a field holding a list of strings. A missing field is an
// empty list.
func stringList(rn *yaml.RNode, field string) ([]string, error) {
	list, err := listField(rn.YNode(), field, field)
	if err != nil {
		return nil, err
	}
	return scalarStrings(list, field)
}
