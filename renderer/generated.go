package renderer

import (
	"strings"

	goyaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// GeneratedAnnotation marks the objects the renderer adds to a stream; its
// value says which filter added it. A later render over the same stream
// finds them by it and keeps, replaces or removes them: they are the
// renderer's, never the user's.
const GeneratedAnnotation = "aws-ccm-renderer.io/generated"

// The marks of the generators.
const (
	markMigrationConfig = "leader-migration-config" // LeaderMigrationConfigMap
	markMigrationLease  = "leader-migration-rbac"   // MigrationLeaseRBAC
	markAccountRBAC     = "serviceaccount-rbac"     // AccountRBAC
	markTokenRBAC       = "serviceaccount-token"    // TokenRBAC
	markGuardRBAC       = "guard-rbac"              // GuardRBAC
)

// generatedMark returns the value of an object's GeneratedAnnotation.
func generatedMark(rn *yaml.RNode) string {
	return rn.GetAnnotations()[GeneratedAnnotation]
}

// generate is what the generator filters share. The nodes they get are the
// objects earlier renders generated; generate keeps exactly the objects in
// want among those carrying mark. An object already there keeps its node
// (and so its bytes) when it is what is wanted, and its place when it is
// replaced; wanted objects not there are added after the others. Objects
// with other marks pass through.
func generate(nodes []*yaml.RNode, mark string, want []*yaml.RNode) []*yaml.RNode {
	for _, w := range want {
		_ = setAnnotation(w, GeneratedAnnotation, mark) // a new object: metadata is a map
	}
	placed := make([]bool, len(want))
	out := make([]*yaml.RNode, 0, len(nodes)+len(want))
	for _, n := range nodes {
		if generatedMark(n) != mark {
			out = append(out, n)
			continue
		}
		i := indexOfObject(want, n)
		if i < 0 || placed[i] {
			continue // no longer wanted, or a duplicate
		}
		placed[i] = true
		keepForeign(want[i], n, "labels")
		keepForeign(want[i], n, "annotations")
		if !sameNode(n.YNode(), want[i].YNode()) {
			n.SetYNode(want[i].YNode())
		}
		out = append(out, n)
	}
	for i, w := range want {
		if !placed[i] {
			out = append(out, w)
		}
	}
	return out
}

// keepForeign copies into want the entries of the metadata map field
// (labels, annotations) that old has and want does not: what other tools
// added to a generated object (kustomize's commonLabels, a KRM
// orchestrator's bookkeeping) stays when the renderer replaces it.
func keepForeign(want, old *yaml.RNode, field string) {
	from, _ := old.Pipe(yaml.Lookup("metadata", field))
	if from == nil || from.YNode().Kind != yaml.MappingNode {
		return
	}
	meta := mapGet(want.YNode(), "metadata")
	to, err := mapField(meta, field, "metadata."+field)
	if err != nil {
		return
	}
	c := from.YNode().Content
	for i := 0; i+1 < len(c); i += 2 {
		if mapGet(to, c[i].Value) == nil {
			to.Content = append(to.Content, c[i], c[i+1])
		}
	}
	if len(to.Content) == 0 {
		mapDelete(meta, field)
	}
}

// indexOfObject returns the index in list of the object with n's kind,
// namespace and name, or -1.
func indexOfObject(list []*yaml.RNode, n *yaml.RNode) int {
	for i, w := range list {
		if w.GetKind() == n.GetKind() && w.GetNamespace() == n.GetNamespace() && w.GetName() == n.GetName() {
			return i
		}
	}
	return -1
}

// newObject builds the skeleton of a generated object.
func newObject(apiVersion, kind, namespace, name string) *yaml.RNode {
	meta := pairsNode("name", name, "namespace", namespace)
	return yaml.NewRNode(&yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: []*yaml.Node{
		strNode("apiVersion"), strNode(apiVersion),
		strNode("kind"), strNode(kind),
		strNode("metadata"), meta,
	}})
}

// setAnnotation sets an annotation in place, appending it when new.
func setAnnotation(rn *yaml.RNode, key, value string) error {
	meta, err := mapField(rn.YNode(), "metadata", "metadata")
	if err != nil {
		return err
	}
	annotations, err := mapField(meta, "annotations", "metadata.annotations")
	if err != nil {
		return err
	}
	if v := mapGet(annotations, key); v != nil && v.Kind == yaml.ScalarNode && v.Value == value {
		return nil
	}
	mapSet(annotations, key, strNode(value))
	return nil
}

// removeAnnotation removes an annotation, and metadata.annotations when it
// becomes empty.
func removeAnnotation(rn *yaml.RNode, key string) error {
	meta := mapGet(rn.YNode(), "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		return nil
	}
	annotations := mapGet(meta, "annotations")
	if annotations == nil || annotations.Kind != yaml.MappingNode || !mapDelete(annotations, key) {
		return nil
	}
	if len(annotations.Content) == 0 {
		mapDelete(meta, "annotations")
	}
	return nil
}

// generatedBy reports whether rn is exactly an object one of the renderer's
// generators makes, given the parameters rn names itself (the workload or
// account its name is made from, the lease, user, permissions or
// configuration it holds), labels and annotations other tools added aside
// (generate keeps those). An object that merely carries the annotation is
// not the renderer's: it could bind anything to anyone.
func generatedBy(rn *yaml.RNode) bool {
	var want []*yaml.RNode
	switch generatedMark(rn) {
	case markMigrationConfig:
		want = regenerateMigrationConfig(rn)
	case markMigrationLease:
		want = regenerateMigrationLease(rn)
	case markAccountRBAC:
		want = regenerateAccountRBAC(rn)
	case markTokenRBAC:
		want = regenerateTokenRBAC(rn)
	case markGuardRBAC:
		want = regenerateGuardRBAC(rn)
	}
	for _, w := range want {
		if sameGenerated(rn, w) {
			return true
		}
	}
	return false
}

func regenerateMigrationConfig(rn *yaml.RNode) []*yaml.RNode {
	workload, ok := strings.CutSuffix(rn.GetName(), LeaderMigrationConfigMapName(""))
	data := mapGet(rn.YNode(), "data")
	if !ok || rn.GetKind() != "ConfigMap" || data == nil {
		return nil
	}
	text := mapGet(data, LeaderMigrationFile)
	if text == nil {
		return nil
	}
	var cfg struct {
		APIVersion string `yaml:"apiVersion"`
		LeaderName string `yaml:"leaderName"`
	}
	if goyaml.Unmarshal([]byte(text.Value), &cfg) != nil {
		return nil
	}
	out, _ := LeaderMigrationConfigMap{Want: true, Workload: ObjectRef{Namespace: rn.GetNamespace(), Name: workload},
		LeaderName: cfg.LeaderName, APIVersion: cfg.APIVersion}.Filter(nil)
	return out
}

func regenerateMigrationLease(rn *yaml.RNode) []*yaml.RNode {
	workload, ok := strings.CutSuffix(rn.GetName(), MigrationLeaseRBACName(""))
	if !ok {
		return nil
	}
	f := MigrationLeaseRBAC{Want: true, Workload: ObjectRef{Name: workload}, Namespace: rn.GetNamespace()}
	first := func(field, key string) string { // of the first item of a list field
		if l := mapGet(rn.YNode(), field); l != nil && l.Kind == yaml.SequenceNode && len(l.Content) > 0 && l.Content[0].Kind == yaml.MappingNode {
			if v := mapGet(l.Content[0], key); v != nil && v.Kind == yaml.SequenceNode && len(v.Content) > 0 {
				return v.Content[0].Value
			} else if v != nil {
				return v.Value
			}
		}
		return ""
	}
	f.LeaderName, f.User = first("rules", "resourceNames"), first("subjects", "name")
	out, _ := f.Filter(nil)
	return out
}

// sameGenerated reports whether have is want, but for labels and
// annotations want does not have.
func sameGenerated(have, want *yaml.RNode) bool {
	c := have.Copy()
	if meta := mapGet(c.YNode(), "metadata"); meta != nil && meta.Kind == yaml.MappingNode {
		for _, field := range []string{"labels", "annotations"} {
			m := mapGet(meta, field)
			if m == nil || m.Kind != yaml.MappingNode {
				continue
			}
			var own *yaml.Node
			if wm := mapGet(mapGet(want.YNode(), "metadata"), field); wm != nil {
				own = wm
			}
			for i := 0; i+1 < len(m.Content); {
				if own == nil || mapGet(own, m.Content[i].Value) == nil {
					m.Content = append(m.Content[:i], m.Content[i+2:]...)
					continue
				}
				i += 2
			}
			if len(m.Content) == 0 && own == nil {
				mapDelete(meta, field)
			}
		}
	}
	return sameContent(c.YNode(), want.YNode())
}

// sameContent reports whether two trees hold the same data as Kubernetes
// reads it: mappings compared whatever the order of their keys (kustomize
// writes them sorted), sequences in order, scalars by tag and value.
func sameContent(a, b *yaml.Node) bool {
	a, b = deref(a), deref(b)
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return false
	}
	switch a.Kind {
	case yaml.ScalarNode:
		return a.Value == b.Value && a.ShortTag() == b.ShortTag()
	case yaml.MappingNode:
		for i := 0; i+1 < len(a.Content); i += 2 {
			v := mapGet(b, a.Content[i].Value)
			if v == nil || !sameContent(a.Content[i+1], v) {
				return false
			}
		}
		return true
	}
	for i := range a.Content {
		if !sameContent(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
