// Package overlays generates kustomize components that reproduce the
// renderer's patches for places that run no executables (Fleet's
// kustomize.dir, Argo CD kustomize sources). They are read off what the
// renderer itself makes of the upstream chart's default output (package
// upstream), never written by hand: a patch has one home, its filter.
//
// A component cannot merge lists by flag name or key as the renderer does:
// its strategic-merge patch replaces the chart's tolerations and args whole,
// and its JSON patch appends RBAC rules. It therefore fits the upstream
// chart's output at its default names, args and tolerations (other values
// are fine), which is what the tests check for every chart version.
//
// Each component finds its targets so that a mismatch fails the build
// instead of passing the chart's output through unpatched: the DaemonSet
// patch names the chart's DaemonSet and namespace without a target selector
// (kustomize then requires exactly that object), and the JSON patch of the
// ClusterRole, which needs a selector, is paired with a strategic-merge
// patch that changes nothing but requires the ClusterRole to be there.
package overlays

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Names of the files of a component.
const (
	FileKustomization      = "kustomization.yaml"
	FileDaemonSet          = "daemonset.yaml"
	FileClusterRole        = "clusterrole.yaml"
	FileClusterRolePresent = "clusterrole-present.yaml"
	FileLeaderMigration    = "leader-migration.yaml"
	FileGuard              = "guard.yaml"
	FileReadme             = "README.md"
)

// Component returns the path, relative to the output directory, of the
// component of a distro and mode: "<distro>/<mode>".
func Component(d distros.Distro, m renderer.Mode) string { return string(d) + "/" + string(m) }

// Files returns every file the spec generates, by slash-separated path
// relative to the output directory: README.md and <distro>/<mode>/*.yaml.
func Files(s Spec) (map[string][]byte, error) {
	all, err := s.all()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{FileReadme: readme(s, all)}
	return files, s.addComponents(files, all, componentFiles)
}

// Write writes the overlays the spec selects under its Out directory and
// returns the component directories written. Each <distro>/<mode>
// directory the spec selects is replaced whole, so a file (or a
// component) a previous version wrote does not linger; other files under
// the directory are left alone.
func Write(s Spec) ([]string, error) {
	files, err := Files(s)
	if err != nil {
		return nil, err
	}
	return writeTree(s, files)
}

// writeTree replaces the spec's directories, and extra, under s.Out with
// files (safefile.Replace: a symbolic link where it would delete or write
// is an error), and returns the component directories written.
func writeTree(s Spec, files map[string][]byte, extra ...string) ([]string, error) {
	if err := safefile.Replace(s.Out, append(extra, s.Directories()...), files); err != nil {
		return nil, err
	}
	all, err := s.all()
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, c := range all {
		dirs = append(dirs, filepath.Join(s.Out, string(c.distro), string(c.mode)))
	}
	return dirs, nil
}

// componentFiles returns the files of one distro and mode, rendered with
// the CCM image tag pinned (none: the chart's).
func componentFiles(s Spec, r *upstream.Rendered, tag string) (map[string][]byte, error) {
	files := map[string][]byte{}
	h := s.header(FormatKustomize, r.Options, tag, "docs/overlays.md")

	ds, err := encode(daemonSetPatch(r, tag))
	if err != nil {
		return nil, err
	}
	files[FileDaemonSet] = []byte(h +
		"# Strategic-merge patch of the chart's DaemonSet, found by name and namespace: kustomize\n" +
		"# fails when it is not there. nodeSelector keys set to null are deleted; tolerations and\n" +
		"# the container's args are replaced whole (kustomize cannot merge them by key or flag name);\n" +
		"# the container, volumes and mounts are merged by name.\n" + pinnedNote(tag, "the container's image") + ds)
	present, err := encode(clusterRolePresent())
	if err != nil {
		return nil, err
	}
	files[FileClusterRolePresent] = []byte(h +
		"# Changes nothing: kustomize fails when the chart's ClusterRole is not in its input, where\n" +
		"# the JSON patch in clusterrole.yaml, which needs a target selector, would match nothing\n" +
		"# and be skipped without a word.\n" + present)

	rbac, err := encode(clusterRolePatch())
	if err != nil {
		return nil, err
	}
	files[FileClusterRole] = []byte(h +
		"# JSON patch of the chart's ClusterRole: rules for what the CCM needs on service accounts,\n" +
		"# appended. Permissions add up, so a verb the chart grants already changes nothing, and no\n" +
		"# list index of the chart's rules (which its versions and clusterRoleRules move) is used.\n" + rbac)

	names, err := generatedFiles(files, h, r, "# The objects the renderer adds in this mode (the leader migration ConfigMap the DaemonSet\n"+
		"# patch mounts; the Role and RoleBinding that let the in-tree controller manager hold the\n"+
		"# migration lease), as the renderer writes them.\n", guardComment)
	if err != nil {
		return nil, err
	}
	var resources []*yaml.Node
	for _, name := range names {
		resources = append(resources, str(name))
	}

	k := mapping("apiVersion", str("kustomize.config.k8s.io/v1alpha1"), "kind", str("Component"))
	if len(resources) > 0 {
		k = with(k, "resources", seq(resources...))
	}
	k = with(k, "patches", seq(
		mapping("path", str(FileDaemonSet)),
		mapping("path", str(FileClusterRolePresent)),
		mapping("path", str(FileClusterRole), "target", clusterRoleTarget()),
	))
	kb, err := encode(k)
	if err != nil {
		return nil, err
	}
	files[FileKustomization] = []byte(h + kb)
	return files, nil
}

// generatedFiles adds to files the objects the renderer generates for a
// component, headed by h and each file's comment, and returns their names:
// the leader migration's (FileLeaderMigration, migrate mode) and the
// guard's Role and RoleBinding (FileGuard, with --guard-image).
func generatedFiles(files map[string][]byte, h string, r *upstream.Rendered, migrationComment, guardComment string) ([]string, error) {
	var names []string
	for _, f := range []struct {
		name, comment string
		keep          func(*yaml.RNode) bool
	}{
		{FileLeaderMigration, migrationComment, func(rn *yaml.RNode) bool { return !renderer.IsGuardRBAC(rn) }},
		{FileGuard, guardComment, renderer.IsGuardRBAC},
	} {
		docs, err := r.GeneratedYAML(f.keep)
		if err != nil {
			return nil, err
		}
		if docs == "" {
			continue
		}
		files[f.name] = []byte(h + f.comment + docs)
		names = append(names, f.name)
	}
	return names, nil
}

// guardComment heads FileGuard.
const guardComment = "# The Role and RoleBinding that let the CCM's service account, and nobody else, list the pods\n" +
	"# and leases of kube-system, which the guard (the DaemonSet's first init container) reads.\n"

// daemonSetPatch is the strategic-merge patch of the DaemonSet: the fields
// the renderer writes, as it writes them for the chart's defaults. Every
// control-plane key the renderer's placement owns and does not write is
// nulled, so the chart's selector of any version goes. With a tag, the
// container's image is the CCM's release of that tag, whatever the chart's
// version and values say.
func daemonSetPatch(r *upstream.Rendered, tag string) *yaml.Node {
	spec := mapping()
	if aff := r.PodSpec("affinity"); aff != nil {
		spec = with(spec, "affinity", aff.YNode())
	}
	sel := mapping()
	have := r.PodSpec("nodeSelector")
	for _, key := range distros.ControlPlaneLabels {
		if have == nil || have.Field(key) == nil {
			sel = with(sel, key, null())
		}
	}
	if have != nil {
		sel.Content = append(sel.Content, have.YNode().Content...)
	}
	spec = with(spec, "nodeSelector", sel)
	spec = with(spec, "tolerations", r.PodSpec("tolerations").YNode())
	if hn := r.PodSpec("hostNetwork"); hn != nil {
		spec = with(spec, "hostNetwork", hn.YNode())
	}
	// The guard (--guard-image): the chart has no init containers, so the
	// list merged by name is the guard alone.
	if ic := r.PodSpec("initContainers"); ic != nil {
		spec = with(spec, "initContainers", ic.YNode())
	}
	container := mapping("name", str(upstream.Container))
	if tag != "" {
		container = with(container, "image", r.Container("image").YNode())
	}
	container = with(container, "args", r.Container("args").YNode())
	if vm := r.Container("volumeMounts"); vm != nil {
		container = with(container, "volumeMounts", vm.YNode())
	}
	spec = with(spec, "containers", seq(container))
	if v := r.PodSpec("volumes"); v != nil {
		spec = with(spec, "volumes", v.YNode())
	}
	meta := mapping("name", str(upstream.Workload), "namespace", str(upstream.Namespace))
	if a, _ := r.DaemonSet.Pipe(yaml.Lookup("metadata", "annotations")); a != nil {
		meta = with(meta, "annotations", a.YNode())
	}
	return mapping("apiVersion", str("apps/v1"), "kind", str("DaemonSet"),
		"metadata", meta, "spec", mapping("template", mapping("spec", spec)))
}

// clusterRolePresent is the strategic-merge patch that changes nothing
// but makes kustomize fail when the chart's ClusterRole is not there.
func clusterRolePresent() *yaml.Node {
	return mapping("apiVersion", str("rbac.authorization.k8s.io/v1"), "kind", str("ClusterRole"),
		"metadata", mapping("name", str(upstream.ClusterRole)))
}

// clusterRoleTarget selects the chart's ClusterRole for the JSON patch.
func clusterRoleTarget() *yaml.Node {
	return mapping("group", str("rbac.authorization.k8s.io"), "version", str("v1"),
		"kind", str("ClusterRole"), "name", str(upstream.ClusterRole))
}

// clusterRolePatch is the JSON patch appending one rule per resource of
// renderer.CCMServiceAccountPermissions, with its verbs.
func clusterRolePatch() *yaml.Node {
	var resources []string
	verbs := map[string][]*yaml.Node{}
	for _, p := range renderer.CCMServiceAccountPermissions {
		if _, ok := verbs[p.Resource]; !ok {
			resources = append(resources, p.Resource)
		}
		verbs[p.Resource] = append(verbs[p.Resource], str(p.Verb))
	}
	var ops []*yaml.Node
	for _, res := range resources {
		ops = append(ops, mapping("op", str("add"), "path", str("/rules/-"), "value", mapping(
			"apiGroups", seq(str("")), "resources", seq(str(res)), "verbs", seq(verbs[res]...))))
	}
	return seq(ops...)
}

// pinnedNote says, in a generated file's comment, where the CCM's image is
// pinned; nothing when it is not.
func pinnedNote(tag, where string) string {
	if tag == "" {
		return ""
	}
	return comment(strings.ToUpper(where[:1]) + where[1:] + " pins the CCM " + tag + ": the release of the cluster's minor this was generated for.")
}

func readme(s Spec, all []component) []byte {
	var b strings.Builder
	b.WriteString(htmlComment("Generated by aws-ccm-renderer; regenerate rather than edit: " + s.Command(FormatKustomize)))
	b.WriteString("# Kustomize components for the aws-cloud-controller-manager chart\n\n")
	b.WriteString("One kustomize `Component` per distribution and mode, read off the renderer's output, for\n")
	b.WriteString("places that run no executables (Fleet's `kustomize.dir`, Argo CD kustomize sources). Each\n")
	b.WriteString("patches the upstream chart's output at its default names, args and tolerations, and makes\n")
	b.WriteString("`kustomize build` fail when the chart's DaemonSet or ClusterRole is not there. Which chart\n")
	b.WriteString("versions and values they fit, how to use them and how to regenerate them with other\n")
	b.WriteString("options (your own CCM flags, the cluster's version): docs/overlays.md in the\n")
	b.WriteString("aws-ccm-renderer repository.\n\n")
	b.WriteString("| component | placement | leader migration | CCM image |\n|---|---|---|---|\n")
	for _, c := range all {
		p, _ := distros.RecordOf(c.distro)
		place := "node affinity: any of " + "`" + strings.Join(p.AffinityLabels, "`, `") + "`"
		if len(p.NodeSelector) > 0 {
			var kv []string
			for _, k := range slices.Sorted(maps.Keys(p.NodeSelector)) {
				kv = append(kv, fmt.Sprintf("`%s: %q`", k, p.NodeSelector[k]))
			}
			place = "nodeSelector " + strings.Join(kv, ", ")
		}
		lm := "off"
		if c.mode == renderer.ModeMigrate {
			lm = "on: ConfigMap `" + renderer.LeaderMigrationConfigMapName(upstream.Workload) + "`, lease Role and RoleBinding `" +
				renderer.MigrationLeaseRBACName(upstream.Workload) + "`"
		}
		image := "the chart's"
		if tag, err := s.tag(c); err == nil && tag != "" {
			image = "`" + tag + "`"
		}
		fmt.Fprintf(&b, "| [`%s`](%s) | %s | %s | %s |\n", c.path(), c.path(), place, lm, image)
	}
	return []byte(b.String())
}

// htmlComment writes text as a Markdown file's HTML comment line, with
// its control characters escaped and "--" that would end it broken up:
// Command quotes a word with "-->" so that it holds none, this is the
// fence in case anything else ever does.
func htmlComment(text string) string {
	return "<!-- " + strings.ReplaceAll(safetext.Escape(text), "-->", "--\\>") + " -->\n"
}

// YAML node builders: the generated files keep the order they are written
// in, not the sorted order of a marshalled map.

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s}
}

func null() *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"}
}

func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: items}
}

// mapping builds a map from key, value pairs.
func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for i := 0; i+1 < len(kv); i += 2 {
		n = with(n, kv[i].(string), kv[i+1].(*yaml.Node))
	}
	return n
}

func with(m *yaml.Node, key string, v *yaml.Node) *yaml.Node {
	m.Content = append(m.Content, str(key), v)
	return m
}

func encode(n *yaml.Node) (string, error) {
	return yaml.NewRNode(n).String()
}
