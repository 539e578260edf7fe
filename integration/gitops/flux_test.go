package gitops

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"sigs.k8s.io/kustomize/api/builtins"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resmap"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/overlays"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Flux's origin labels, which helm-controller puts on every object of a
// HelmRelease after its post-renderers.
var fluxOriginLabels = []string{"helm.toolkit.fluxcd.io/name", "helm.toolkit.fluxcd.io/namespace"}

// readHelmRelease decodes a generated HelmRelease into Flux's own API type,
// strictly: a field Flux does not know fails the test.
func readHelmRelease(t *testing.T, path string) *helmv2.HelmRelease {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rel helmv2.HelmRelease
	if err := sigsyaml.UnmarshalStrict(b, &rel); err != nil {
		t.Fatalf("%s is not a HelmRelease as Flux reads it: %v", path, err)
	}
	return &rel
}

// fluxPostRender does to a chart's output what helm-controller does with a
// HelmRelease's post-renderers: each kustomize post-renderer builds, with
// the kustomize api in memory, a kustomization whose one resource is the
// output and whose patches (and images) are the post-renderer's, loading
// without restrictions and with plugins off; then the origin labels go on
// every object's metadata.
func fluxPostRender(rel *helmv2.HelmRelease, chartOutput []byte) ([]byte, error) {
	out := chartOutput
	for _, pr := range rel.Spec.PostRenderers {
		if pr.Kustomize == nil {
			continue
		}
		fs := filesys.MakeFsInMemory()
		cfg := kustypes.Kustomization{}
		cfg.APIVersion, cfg.Kind = kustypes.KustomizationVersion, kustypes.KustomizationKind
		for _, im := range pr.Kustomize.Images {
			cfg.Images = append(cfg.Images, kustypes.Image{Name: im.Name, NewName: im.NewName, NewTag: im.NewTag, Digest: im.Digest})
		}
		const input = "helm-output.yaml"
		cfg.Resources = append(cfg.Resources, input)
		if err := fs.WriteFile(input, out); err != nil {
			return nil, err
		}
		for _, p := range pr.Kustomize.Patches {
			cfg.Patches = append(cfg.Patches, kustypes.Patch{Patch: p.Patch, Target: fluxSelector(p.Target)})
		}
		k, err := json.Marshal(cfg)
		if err != nil {
			return nil, err
		}
		if err := fs.WriteFile("kustomization.yaml", k); err != nil {
			return nil, err
		}
		res, err := krusty.MakeKustomizer(&krusty.Options{
			LoadRestrictions: kustypes.LoadRestrictionsNone,
			PluginConfig:     kustypes.DisabledPluginConfig(),
		}).Run(fs, ".")
		if err != nil {
			return nil, err
		}
		if out, err = res.AsYaml(); err != nil {
			return nil, err
		}
	}
	resMap, err := resmap.NewFactory(provider.NewDefaultDepProvider().GetResourceFactory()).NewResMapFromBytes(out)
	if err != nil {
		return nil, err
	}
	labels := builtins.LabelTransformerPlugin{
		Labels:     map[string]string{fluxOriginLabels[0]: rel.Name, fluxOriginLabels[1]: rel.Namespace},
		FieldSpecs: []kustypes.FieldSpec{{Path: "metadata/labels", CreateIfNotPresent: true}},
	}
	if err := labels.Transform(resMap); err != nil {
		return nil, err
	}
	return resMap.AsYaml()
}

func fluxSelector(s *kustomize.Selector) *kustypes.Selector {
	if s == nil {
		return nil
	}
	out := &kustypes.Selector{LabelSelector: s.LabelSelector, AnnotationSelector: s.AnnotationSelector}
	out.Name, out.Namespace = s.Name, s.Namespace
	out.Gvk.Group, out.Gvk.Version, out.Gvk.Kind = s.Group, s.Version, s.Kind
	return out
}

// withoutOriginLabels checks that every object carries Flux's origin
// labels and returns the objects without them, to compare with the
// post-renderer's output.
func withoutOriginLabels(t *testing.T, rel *helmv2.HelmRelease, objs []manifest.Object) []manifest.Object {
	t.Helper()
	for _, o := range objs {
		labels, _ := manifest.Get(o.Doc, "metadata", "labels").(map[string]any)
		if labels[fluxOriginLabels[0]] != rel.Name || labels[fluxOriginLabels[1]] != rel.Namespace {
			t.Errorf("%s: no origin labels: %v", o.ID(), labels)
		}
		for _, l := range fluxOriginLabels {
			delete(labels, l)
		}
		if len(labels) == 0 {
			delete(manifest.Get(o.Doc, "metadata").(map[string]any), "labels")
		}
	}
	return objs
}

// TestFluxHelmReleaseMeansWhatTheRendererMeans renders every chart version
// with each generated HelmRelease's values and applies its post-renderers
// to the output as helm-controller does, adds the leader migration objects
// of migrate mode (applied beside it by the Flux Kustomization), and checks
// that the result means what the post-renderer's output for that distro and
// mode means, where docs/overlays.md says the patches fit. In migrate mode
// the values pin the CCM of the cluster's minor, whose leader migration
// configuration the generated file carries, whatever CCM the chart version
// deploys by default (0.0.2's has none, 0.0.4's and 0.0.6's read only
// v1beta1).
func TestFluxHelmReleaseMeansWhatTheRendererMeans(t *testing.T) {
	nodes := testtools.Fixtures(t)
	if upstream.LatestChartVersion != testtools.LatestChartVersion {
		t.Errorf("the HelmReleases pin chart %s, the newest tested is %s", upstream.LatestChartVersion, testtools.LatestChartVersion)
	}
	for _, version := range testtools.ChartVersions {
		chart := testtools.UpstreamChart(t, version)
		for _, d := range distros.All {
			p, _ := distros.RecordOf(d)
			for _, mode := range renderer.ModesOf(p) {
				t.Run(version+"/"+string(d)+"-"+string(mode), func(t *testing.T) {
					t.Parallel()
					rel := readHelmRelease(t, exampleDir("flux", string(d), string(mode), overlays.FileHelmRelease))
					if s := rel.Spec.Chart.Spec; s.Chart != "aws-cloud-controller-manager" || s.Version != upstream.LatestChartVersion ||
						s.SourceRef.Kind != "HelmRepository" || rel.Namespace != "kube-system" || rel.Name != "aws-cloud-controller-manager" {
						t.Errorf("chart %+v, release %s/%s", s, rel.Namespace, rel.Name)
					}
					plain := helmTemplateRelease(t, chart, rel)
					out, err := fluxPostRender(rel, plain)
					if err != nil {
						t.Fatal(err)
					}
					objs, err := manifest.Split(out)
					if err != nil {
						t.Fatal(err)
					}
					objs = withoutOriginLabels(t, rel, objs)
					if mode == renderer.ModeMigrate {
						b, err := os.ReadFile(exampleDir("flux", string(d), string(mode), overlays.FileLeaderMigration))
						if err != nil {
							t.Fatal(err)
						}
						extra, err := manifest.Split(b)
						if err != nil {
							t.Fatal(err)
						}
						objs = append(objs, extra...)
						ccm, _ := manifest.CCM(objs)
						if image, _ := manifest.Containers(ccm)[0]["image"].(string); !strings.HasSuffix(image, ":"+releases.Pin(releases.Tag(releases.LastInTreeMinor))) {
							t.Errorf("migrate mode runs %s, not the CCM of the last minor that migrates", image)
						}
					}
					testtools.CheckMeaning(t, objs, nodes, d, mode)
					testtools.SameAsRenderer(t, objs, testtools.PostRendered(t, plain, d, mode), nodes)
				})
			}
		}
	}
}

// helmTemplateRelease renders a chart with a HelmRelease's values, as
// helm-controller does before it post-renders.
func helmTemplateRelease(t *testing.T, chart string, rel *helmv2.HelmRelease) []byte {
	t.Helper()
	if rel.Spec.Values == nil {
		return testtools.HelmTemplate(t, chart, nil)
	}
	values := filepath.Join(t.TempDir(), "values.json")
	testtools.WriteFile(t, values, rel.Spec.Values.Raw)
	return testtools.HelmTemplate(t, chart, nil, "--values", values)
}

// TestFluxKustomization builds each generated directory as a Flux
// Kustomization does (the kustomize api, root-only loading, plugins off):
// the HelmRepository the HelmRelease refers to, the HelmRelease, and in
// migrate mode the leader migration objects.
func TestFluxKustomization(t *testing.T) {
	for _, d := range distros.All {
		p, _ := distros.RecordOf(d)
		for _, mode := range renderer.ModesOf(p) {
			out, err := testtools.KrustyRun(filesys.MakeFsOnDisk(), exampleDir("flux", string(d), string(mode)))
			if err != nil {
				t.Fatalf("%s/%s: %v", d, mode, err)
			}
			objs, err := manifest.Split(out)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			var repoURL, repoName string
			for _, o := range objs {
				kinds = append(kinds, o.Kind)
				if o.Kind == "HelmRepository" {
					repoURL, _ = manifest.Get(o.Doc, "spec", "url").(string)
					repoName = o.Name
				}
			}
			slices.Sort(kinds)
			want := []string{"HelmRelease", "HelmRepository"}
			if mode == renderer.ModeMigrate {
				want = []string{"ConfigMap", "HelmRelease", "HelmRepository", "Role", "RoleBinding"}
			}
			rel := readHelmRelease(t, exampleDir("flux", string(d), string(mode), overlays.FileHelmRelease))
			if !slices.Equal(kinds, want) || repoURL != upstream.ChartRepo || repoName != rel.Spec.Chart.Spec.SourceRef.Name {
				t.Errorf("%s/%s: kinds %v, repository %s %s", d, mode, kinds, repoName, repoURL)
			}
		}
	}
}

// TestFluxFailsOnOtherNames: with chart values that rename the DaemonSet,
// helm-controller's post-render fails (the release is not installed)
// instead of installing the chart unpatched.
func TestFluxFailsOnOtherNames(t *testing.T) {
	rel := readHelmRelease(t, exampleDir("flux", "rke2", "install", overlays.FileHelmRelease))
	renamed := testtools.HelmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), nil, "--set", "nameOverride=ccm")
	out, err := fluxPostRender(rel, renamed)
	if err == nil || !strings.Contains(err.Error(), "no matches for Id DaemonSet.v1.apps/aws-cloud-controller-manager.kube-system") || out != nil {
		t.Errorf("renamed DaemonSet: %v", err)
	}
	// The same HelmRelease on the chart's defaults post-renders.
	if _, err := fluxPostRender(rel, testtools.HelmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), nil)); err != nil {
		t.Error(err)
	}
	if bytes.Contains(renamed, []byte("hostNetwork: true")) {
		t.Error("the chart's own output has hostNetwork: this test no longer shows that nothing was patched")
	}
}

// TestNoWarningAtDeployTime: under Flux no renderer runs when it deploys,
// so nothing could show a warning then; what the post-renderer
// warns about in a chart's args from values (--configure-cloud-routes=true,
// --use-service-account-credentials=false, which it replaces) is replaced
// by the generated patches as well, whatever the values say: the safe
// flags reach the cluster, and there is nothing left to warn about.
func TestNoWarningAtDeployTime(t *testing.T) {
	risky := testtools.HelmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), nil,
		"--set", "args={--v=2,--cloud-provider=aws,--configure-cloud-routes=true,--use-service-account-credentials=false}")
	if _, args := testtools.CCMOf(t, risky); !slices.Contains(args, "--configure-cloud-routes=true") {
		t.Fatalf("the chart's output lacks the values' args %q: this test no longer shows anything", args)
	}
	check := func(what string, out []byte) {
		t.Helper()
		_, args := testtools.CCMOf(t, out)
		if !slices.Contains(args, "--configure-cloud-routes=false") || !slices.Contains(args, "--use-service-account-credentials=true") ||
			slices.Contains(args, "--configure-cloud-routes=true") || slices.Contains(args, "--use-service-account-credentials=false") {
			t.Errorf("%s: args %q", what, args)
		}
	}
	for _, mode := range []string{"install", "migrate"} {
		rel := readHelmRelease(t, exampleDir("flux", "rke2", mode, overlays.FileHelmRelease))
		out, err := fluxPostRender(rel, risky)
		if err != nil {
			t.Fatalf("flux %s: %v", mode, err)
		}
		check("flux rke2/"+mode, out)
	}
}
