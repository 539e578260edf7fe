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

	// GeneratedAnnotation marks objects the renderer adds to the stream.
	GeneratedAnnotation = "aws-ccm-renderer.io/generated"
	leaderMigrationMark = "leader-migration-config"
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

// LeaderMigrationConfiguration returns the configuration file's text.
func LeaderMigrationConfiguration(leaderName string) string {
	var b strings.Builder
	b.WriteString("apiVersion: controllermanager.config.k8s.io/v1\n")
	b.WriteString("kind: LeaderMigrationConfiguration\n")
	b.WriteString("leaderName: " + strconv.Quote(leaderName) + "\n")
	b.WriteString("controllerLeaders:\n")
	for _, c := range LeaderMigrationControllers {
		b.WriteString("  - name: " + c + "\n    component: \"*\"\n")
	}
	return b.String()
}

// LeaderMigrationConfigMap returns the ConfigMap document (without a
// separator line) that holds the configuration for a workload.
func LeaderMigrationConfigMap(workload, namespace, leaderName string) []byte {
	return leaderMigrationConfigMap(workload, namespace, leaderName)
}

func leaderMigrationConfigMap(workload, namespace, leaderName string) []byte {
	var b strings.Builder
	b.WriteString("# Source: aws-ccm-renderer/leader-migration-config.yaml\n")
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n")
	b.WriteString("  name: " + strconv.Quote(LeaderMigrationConfigMapName(workload)) + "\n")
	if namespace != "" {
		b.WriteString("  namespace: " + strconv.Quote(namespace) + "\n")
	}
	b.WriteString("  annotations:\n    " + GeneratedAnnotation + ": " + leaderMigrationMark + "\n")
	b.WriteString("data:\n  " + LeaderMigrationFile + ": |\n")
	for _, line := range strings.SplitAfter(LeaderMigrationConfiguration(leaderName), "\n") {
		if line != "" {
			b.WriteString("    " + line)
		}
	}
	return []byte(b.String())
}

// LeaderMigration mounts the rendered LeaderMigrationConfiguration into every
// CCM container (Mount true), or removes that volume and its mounts.
// The --leader-migration-config flag itself is the Args filter's.
type LeaderMigration struct {
	Mount bool
}

var _ kio.Filter = LeaderMigration{}

func (f LeaderMigration) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	return eachPodSpec(nodes, func(rn, spec *yaml.RNode) error { return f.apply(rn.GetName(), spec) })
}

func (f LeaderMigration) apply(workload string, spec *yaml.RNode) error {
	containers, err := ccmContainers(spec)
	if err != nil {
		return err
	}
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
			mapSet(m, field, seqNode(item))
		}
		return nil
	}
	for i, n := range list.Content {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s holds a %s, not a map", path, kindName(n))
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
