package overlays

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// The Flux format: per distro and mode a HelmRelease of the upstream chart
// whose spec.postRenderers carry the component's patches, for Flux's
// helm-controller to apply to the chart's output with the kustomize api,
// and a kustomization that a Flux Kustomization applies: the HelmRelease,
// a HelmRepository (source/), and in migrate mode the objects the renderer
// adds, which a post-renderer patch cannot create.

// Names of the Flux format's files.
const (
	FileHelmRelease    = "helmrelease.yaml"
	FileHelmRepository = "helmrepository.yaml"
	FluxSourceDir      = "source"
)

// FluxFiles returns every file of the Flux format the spec selects, by
// slash-separated path relative to the output directory.
func FluxFiles(s Spec) (map[string][]byte, error) {
	all, err := s.all()
	if err != nil {
		return nil, err
	}
	h := s.header(FormatFlux, renderer.Options{}, "", "docs/flux.md")
	files := map[string][]byte{"README.md": fluxReadme(s, all)}
	repo, err := encode(mapping(
		"apiVersion", str("source.toolkit.fluxcd.io/v1"), "kind", str("HelmRepository"),
		"metadata", mapping("name", str(upstream.Workload), "namespace", str(upstream.Namespace)),
		"spec", mapping("interval", str("12h"), "url", str(upstream.ChartRepo))))
	if err != nil {
		return nil, err
	}
	files[FluxSourceDir+"/"+FileHelmRepository] = []byte(h + repo)
	src, err := encode(kustomization(FileHelmRepository))
	if err != nil {
		return nil, err
	}
	files[FluxSourceDir+"/"+FileKustomization] = []byte(h + src)
	return files, s.addComponents(files, all, fluxDir)
}

func kustomization(resources ...string) *yaml.Node {
	var res []*yaml.Node
	for _, r := range resources {
		res = append(res, str(r))
	}
	return mapping("apiVersion", str("kustomize.config.k8s.io/v1beta1"), "kind", str("Kustomization"),
		"resources", seq(res...))
}

// literal is a string written as a YAML literal block.
func literal(s string) *yaml.Node {
	n := str(s)
	n.Style = yaml.LiteralStyle
	return n
}

// fluxDir returns the files of one distro and mode; a tag pins the CCM's
// image through the chart's image.tag value.
func fluxDir(s Spec, r *upstream.Rendered, tag string) (map[string][]byte, error) {
	h := s.header(FormatFlux, r.Options, tag, "docs/flux.md")
	files := map[string][]byte{}
	ds, err := encode(daemonSetPatch(r, ""))
	if err != nil {
		return nil, err
	}
	present, err := encode(clusterRolePresent())
	if err != nil {
		return nil, err
	}
	rbac, err := encode(clusterRolePatch())
	if err != nil {
		return nil, err
	}
	spec := mapping(
		"interval", str("30m"),
		"chart", mapping("spec", mapping(
			"chart", str(upstream.Workload),
			"version", str(upstream.LatestChartVersion),
			"sourceRef", mapping("kind", str("HelmRepository"), "name", str(upstream.Workload)),
			"interval", str("12h"))))
	if tag != "" {
		spec = with(spec, "values", mapping("image", mapping("tag", str(tag))))
	}
	spec = with(spec, "postRenderers", seq(mapping("kustomize", mapping("patches", seq(
		mapping("patch", literal(ds)),
		mapping("patch", literal(present)),
		mapping("target", clusterRoleTarget(), "patch", literal(rbac)),
	)))))
	release := mapping(
		"apiVersion", str("helm.toolkit.fluxcd.io/v2"), "kind", str("HelmRelease"),
		"metadata", mapping("name", str(upstream.Workload), "namespace", str(upstream.Namespace)),
		"spec", spec)
	rel, err := encode(release)
	if err != nil {
		return nil, err
	}
	files[FileHelmRelease] = []byte(h +
		"# The upstream chart, patched after rendering by helm-controller's kustomize post-renderer:\n" +
		"# the DaemonSet by a strategic merge found by name and namespace (tolerations and args\n" +
		"# replaced whole; kustomize fails when the DaemonSet is not there), the ClusterRole's\n" +
		"# service account rules appended by a JSON patch, guarded by a patch that requires it.\n" +
		pinnedNote(tag, "spec.values.image.tag") + rel)
	resources := []string{"../../" + FluxSourceDir, FileHelmRelease}
	names, err := generatedFiles(files, h, r, "# The objects the renderer adds in this mode (the leader migration ConfigMap the DaemonSet\n"+
		"# patch mounts; the Role and RoleBinding that let the in-tree controller manager hold the\n"+
		"# migration lease). A post-renderer patch cannot create them: the Flux Kustomization\n"+
		"# applies them beside the HelmRelease, and prunes them when it moves to install mode.\n",
		guardComment+"# The Flux Kustomization applies them beside the HelmRelease.\n")
	if err != nil {
		return nil, err
	}
	resources = append(resources, names...)
	k, err := encode(kustomization(resources...))
	if err != nil {
		return nil, err
	}
	files[FileKustomization] = []byte(h + k)
	return files, nil
}

// WriteFlux writes the Flux format the spec selects under its Out
// directory and returns the directories written. The source directory and
// each <distro>/<mode> directory the spec selects are replaced whole;
// other files under the directory are left alone.
func WriteFlux(s Spec) ([]string, error) {
	files, err := FluxFiles(s)
	if err != nil {
		return nil, err
	}
	return writeTree(s, files, FluxSourceDir)
}

func fluxReadme(s Spec, all []component) []byte {
	var b strings.Builder
	b.WriteString(htmlComment("Generated by aws-ccm-renderer; regenerate rather than edit: " + s.Command(FormatFlux)))
	b.WriteString("# Flux HelmReleases for the aws-cloud-controller-manager chart\n\n")
	b.WriteString("One directory per distribution and mode, read off the renderer's output: a `HelmRelease` of the\n")
	fmt.Fprintf(&b, "upstream chart %s whose `spec.postRenderers` patch the chart's output as the renderer does,\n", upstream.LatestChartVersion)
	b.WriteString("the `HelmRepository` it comes from (`source/`), and in migrate mode the leader migration\n")
	b.WriteString("objects. Point a Flux `Kustomization` at one directory. What the patches fit (chart versions,\n")
	b.WriteString("values), how to use them and how to regenerate them with other options: docs/flux.md in the\n")
	b.WriteString("aws-ccm-renderer repository.\n\n")
	b.WriteString("| directory | distribution | mode | CCM image |\n|---|---|---|---|\n")
	for _, c := range all {
		image := "the chart's"
		if tag, err := s.tag(c); err == nil && tag != "" {
			image = "`" + tag + "` (`spec.values.image.tag`)"
		}
		fmt.Fprintf(&b, "| [`%s`](%s) | %s | %s | %s |\n", c.path(), c.path(), c.distro, c.mode, image)
	}
	return []byte(b.String())
}
