package renderer

import (
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// LeaderMigrationConfigMap generates the ConfigMap that holds the CCM's
// LeaderMigrationConfiguration, named after the workload
// (LeaderMigrationConfigMapName) in its namespace, which LeaderMigrationMount
// mounts. Want false removes it. It is a generator: the nodes it gets are the
// objects earlier renders generated (see generate).
type LeaderMigrationConfigMap struct {
	Want       bool
	Workload   ObjectRef // the CCM's workload
	LeaderName string
	APIVersion string // of the LeaderMigrationConfiguration (see migrationAPI)
}

var _ kio.Filter = LeaderMigrationConfigMap{}

func (f LeaderMigrationConfigMap) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	var want []*yaml.RNode
	if f.Want {
		want = append(want, f.ConfigMap())
	}
	return generate(nodes, markMigrationConfig, want), nil
}

// ConfigMap returns the ConfigMap.
func (f LeaderMigrationConfigMap) ConfigMap() *yaml.RNode {
	cm := newObject("v1", "ConfigMap", f.Workload.Namespace, LeaderMigrationConfigMapName(f.Workload.Name))
	_ = setAnnotation(cm, GeneratedAnnotation, markMigrationConfig)
	text := strNode(LeaderMigrationConfiguration(f.LeaderName, f.APIVersion))
	text.Style = yaml.LiteralStyle
	mapSet(cm.YNode(), "data", &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: []*yaml.Node{strNode(LeaderMigrationFile), text}})
	return cm
}
