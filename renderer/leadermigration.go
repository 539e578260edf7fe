package renderer

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Where the rendered LeaderMigrationConfiguration lives.
const (
	LeaderMigrationVolume    = "aws-ccm-leader-migration"
	LeaderMigrationMountPath = "/etc/kubernetes/aws-ccm-leader-migration"
	LeaderMigrationFile      = "leader-migration.yaml"
	// LeaderMigrationConfigPath is the value of --leader-migration-config.
	LeaderMigrationConfigPath = LeaderMigrationMountPath + "/" + LeaderMigrationFile
)

// LeaderMigrationControllers are the controllers the rendered configuration
// puts under the migration lock: the names a CCM built on Kubernetes >= 1.28
// libraries registers, and the older names. A name the running CCM does not
// register never matches, so listing both is safe for every CCM version.
var LeaderMigrationControllers = []string{
	"cloud-node-lifecycle-controller", "service-lb-controller", "node-route-controller",
	"cloud-node-lifecycle", "service", "route",
}

// LeaderMigrationConfigMapName names the ConfigMap after the workload, so
// renamed charts and several releases in one namespace do not collide.
func LeaderMigrationConfigMapName(workload string) string {
	return workload + "-leader-migration"
}

// LeaderMigrationConfiguration returns the configuration file's text, in
// the API version the CCM reads (see migrationAPI).
func LeaderMigrationConfiguration(leaderName, apiVersion string) string {
	var b strings.Builder
	b.WriteString("apiVersion: " + apiVersion + "\n")
	b.WriteString("kind: LeaderMigrationConfiguration\n")
	b.WriteString("leaderName: " + strconv.Quote(leaderName) + "\n")
	if api, _ := MigrationAPIOf(apiVersion); api.ResourceLock {
		b.WriteString("resourceLock: leases\n")
	}
	b.WriteString("controllerLeaders:\n")
	for _, c := range LeaderMigrationControllers {
		b.WriteString("  - name: " + c + "\n    component: \"*\"\n")
	}
	return b.String()
}

// LeaderMigrationMount mounts the rendered LeaderMigrationConfiguration
// (LeaderMigrationConfigMap) into the CCM's containers (Mount true), or
// removes that volume and its mounts. The --leader-migration-config flag
// itself is the Args filter's.
type LeaderMigrationMount struct {
	Workload
	Mount bool
}

var _ kio.Filter = LeaderMigrationMount{}

func (f LeaderMigrationMount) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	return f.each(nodes, func(rn, spec *yaml.RNode, ccm []*yaml.RNode) error { return f.apply(rn.GetName(), spec, ccm) })
}

func (f LeaderMigrationMount) apply(workload string, spec *yaml.RNode, containers []*yaml.RNode) error {
	var volume *yaml.Node
	if f.Mount {
		volume = &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: []*yaml.Node{
			strNode("name"), strNode(LeaderMigrationVolume),
			strNode("configMap"), pairsNode("name", LeaderMigrationConfigMapName(workload)),
		}}
	}
	if err := setNamed(spec.YNode(), "volumes", "spec.template.spec.volumes", LeaderMigrationVolume, volume); err != nil {
		return err
	}
	for _, c := range containers {
		var mount *yaml.Node
		if f.Mount {
			mount = pairsNode("name", LeaderMigrationVolume, "mountPath", LeaderMigrationMountPath)
			mount.Content = append(mount.Content, strNode("readOnly"), boolNode(true))
		}
		if err := setNamed(c.YNode(), "volumeMounts", "volumeMounts", LeaderMigrationVolume, mount); err != nil {
			return err
		}
	}
	return nil
}

// setNamed puts item in the list field under its name, replacing an entry of
// the same name in its place, or removes that entry when item is nil (and
// the list when it becomes empty).
func setNamed(m *yaml.Node, field, path, name string, item *yaml.Node) error {
	list, err := listField(m, field, path)
	if err != nil {
		return err
	}
	if list == nil {
		if item != nil {
			mapSetOrdered(m, field, seqNode(item), podSpecOrder)
		}
		return nil
	}
	for i, n := range list.Content {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s holds a %s, not a map", path, KindName(n))
		}
		if v := mapGet(n, "name"); v == nil || v.Value != name {
			continue
		}
		if item != nil {
			list.Content[i] = item
			return nil
		}
		list.Content = append(list.Content[:i], list.Content[i+1:]...)
		if len(list.Content) == 0 {
			mapDelete(m, field)
		}
		return nil
	}
	if item != nil {
		list.Content = append(list.Content, item)
	}
	return nil
}
