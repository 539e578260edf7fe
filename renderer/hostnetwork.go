package renderer

import (
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// HostNetwork runs a workload's pods in the host's network namespace: the
// CCM must reach the API server and AWS before the pod network is up, since
// nodes are not initialised until it runs. Enabled false removes the field
// (the pod network).
type HostNetwork struct {
	Enabled bool
}

var _ kio.Filter = HostNetwork{}

func (f HostNetwork) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	return eachPodSpec(nodes, func(_, spec *yaml.RNode) error {
		if f.Enabled {
			mapSetOrdered(spec.YNode(), "hostNetwork", boolNode(true), podSpecOrder)
		} else {
			mapDelete(spec.YNode(), "hostNetwork")
		}
		return nil
	})
}
