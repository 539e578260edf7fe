package renderer

import (
	"slices"

	goyaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// GuardContainer is the name of the guard's init container.
const GuardContainer = "aws-ccm-renderer-guard"

// GuardCCMVersionFlag is the guard's flag for the CCM's release tag, and
// GuardAutoVersion its value that reads the tag from the guard's pod (for
// manifests whose image is set elsewhere: the overlays' unpinned install
// components).
const (
	GuardCCMVersionFlag = "--ccm-version"
	GuardAutoVersion    = "auto"
)

// GuardRead is one read of the guard (aws-ccm-renderer guard), for its
// Role: check.CollectGuard reads these and nothing else (beside /version).
type GuardRead struct {
	Verb, Resource, Group, Namespace string // Namespace "": cluster scope
}

// GuardReads are the guard's reads. The nodes the CCM's own ClusterRole
// grants it already (the chart's); GuardRBAC grants the others, in
// kube-system, to the CCM's service account alone.
var GuardReads = []GuardRead{
	{"list", "nodes", "", ""},
	{"list", "pods", "", "kube-system"},
	{"list", "leases", "coordination.k8s.io", "kube-system"},
}

// guardSuffix ends the name of GuardRBAC's Role and RoleBinding.
const guardSuffix = ":guard"

// GuardUID is the user the guard runs as, and its image's (999, as the
// Argo CD sidecar's); any non-root user would do, it writes nothing.
const GuardUID = 999

// GuardCommand is the guard's command in its init container: the program
// where the project's images hold it.
var GuardCommand = []string{"/usr/local/bin/aws-ccm-renderer", "guard"}

// Guard puts the guard first among the init containers of the CCM's pods:
// aws-ccm-renderer guard, with the CCM's mode and version, its pod's name
// and namespace from the downward API (for the Events it writes), as a
// non-root user, with a read-only root file system, no privilege
// escalation and no capabilities. The kubelet starts the CCM once it
// returned. Image "" removes it.
type Guard struct {
	Image      string
	Mode       Mode
	CCMVersion string
}

var _ kio.Filter = Guard{}

// guardSpec is the init container, as YAML.
type guardSpec struct {
	Name            string         `yaml:"name"`
	Image           string         `yaml:"image"`
	Command         []string       `yaml:"command"`
	Args            []string       `yaml:"args"`
	Env             []guardEnv     `yaml:"env"`
	Resources       map[string]any `yaml:"resources"`
	SecurityContext map[string]any `yaml:"securityContext"`
}

type guardEnv struct {
	Name      string         `yaml:"name"`
	ValueFrom map[string]any `yaml:"valueFrom"`
}

func fieldRef(path string) map[string]any {
	return map[string]any{"fieldRef": map[string]any{"fieldPath": path}}
}

// node is the init container's YAML node.
func (f Guard) node() (*yaml.Node, error) {
	spec := guardSpec{
		Name:    GuardContainer,
		Image:   f.Image,
		Command: slices.Clone(GuardCommand),
		Args:    []string{"--mode=" + string(f.Mode), GuardCCMVersionFlag + "=" + f.CCMVersion},
		Env:     []guardEnv{{"POD_NAME", fieldRef("metadata.name")}, {"POD_NAMESPACE", fieldRef("metadata.namespace")}},
		Resources: map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "32Mi"},
			"limits": map[string]any{"memory": "64Mi"}},
		SecurityContext: map[string]any{"runAsNonRoot": true, "runAsUser": GuardUID, "runAsGroup": GuardUID,
			"readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false,
			"capabilities": map[string]any{"drop": []string{"ALL"}}, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
	}
	var n goyaml.Node
	if err := n.Encode(spec); err != nil {
		return nil, err
	}
	return &n, nil
}

func (f Guard) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	return eachPodSpec(nodes, func(_, spec *yaml.RNode) error {
		inits := mapGet(spec.YNode(), "initContainers")
		if inits != nil && inits.Kind == yaml.SequenceNode {
			inits.Content = slices.DeleteFunc(inits.Content, func(c *yaml.Node) bool {
				name := mapGet(c, "name")
				return name != nil && name.Value == GuardContainer
			})
		}
		if f.Image == "" {
			if inits != nil && inits.Kind == yaml.SequenceNode && len(inits.Content) == 0 {
				mapDelete(spec.YNode(), "initContainers")
			}
			return nil
		}
		c, err := f.node()
		if err != nil {
			return err
		}
		if inits == nil || inits.Kind != yaml.SequenceNode {
			inits = seqNode()
		}
		inits.Content = append([]*yaml.Node{c}, inits.Content...)
		mapSetOrdered(spec.YNode(), "initContainers", inits, podSpecOrder)
		return nil
	})
}

// GuardRBAC generates, with the guard, a Role and a RoleBinding in
// kube-system that let the CCM's service account list what the guard reads
// there (GuardReads), and nobody else. Want false removes them. It is a
// generator (see generate).
type GuardRBAC struct {
	Want    bool
	Account ObjectRef // the CCM's ServiceAccount
}

var _ kio.Filter = GuardRBAC{}

func (f GuardRBAC) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	var want []*yaml.RNode
	if f.Want {
		sa := serviceAccount{namespace: f.Account.Namespace, name: f.Account.Name}
		var rules []*yaml.Node
		for _, r := range GuardReads {
			if r.Namespace != controllerNamespace {
				continue
			}
			rule := ruleNode(r.Resource, r.Verb)
			mapSet(rule, "apiGroups", seqNode(strNode(r.Group)))
			rules = append(rules, rule)
		}
		want = roleAndBinding("Role", controllerNamespace, accountRBACName(sa)+guardSuffix, rules, sa)
	}
	return generate(nodes, markGuardRBAC, want), nil
}

// IsGuardRBAC says whether an object is one GuardRBAC generated.
func IsGuardRBAC(rn *yaml.RNode) bool { return generatedMark(rn) == markGuardRBAC }

// regenerateGuardRBAC returns what GuardRBAC makes for the account rn
// names.
func regenerateGuardRBAC(rn *yaml.RNode) []*yaml.RNode {
	account, ok := accountOf(rn.GetName(), guardSuffix)
	if !ok {
		return nil
	}
	out, _ := GuardRBAC{Want: true, Account: account}.Filter(nil)
	return out
}
