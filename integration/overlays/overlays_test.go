// Package overlays tests the generated kustomize components in overlays/
// with the kustomize CLI and api: they mean what the post-renderer's output
// means for every chart version (internal/generated checks they are up to
// date).
package overlays

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/overlays"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestOverlaysCommand: `aws-ccm-renderer overlays` writes what the
// generator of the repository's copies (internal/generated) writes.
func TestOverlaysCommand(t *testing.T) {
	gen := t.TempDir()
	testtools.MustRun(t, testtools.HelmEnv(t), testtools.Renderer(t), "overlays", "--out", gen)
	files, err := overlays.Files(overlays.DefaultSpec(gen))
	if err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, gen); !reflect.DeepEqual(got, files) {
		t.Fatalf("the binary %s writes other overlays than this source generates: rebuild it", testtools.Renderer(t))
	}
}

// readTree reads every file under root, by slash-separated relative path.
func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// overlayDir lays out what docs/overlays.md tells a user to write: the
// chart's output as ccm.yaml, a copy of the checked-in component under
// overlays/, and a kustomization using both.
func overlayDir(t *testing.T, chartOutput []byte, distro distros.Distro, mode renderer.Mode) string {
	t.Helper()
	return overlayDirFrom(t, filepath.Join(testtools.Root(), "overlays"), chartOutput, distro, mode)
}

// overlayDirFrom is overlayDir with the overlays of another directory.
func overlayDirFrom(t *testing.T, overlaysDir string, chartOutput []byte, distro distros.Distro, mode renderer.Mode) string {
	t.Helper()
	dir := t.TempDir()
	comp := "overlays/" + overlays.Component(distro, mode)
	src := filepath.Join(overlaysDir, filepath.FromSlash(overlays.Component(distro, mode)))
	if err := os.CopyFS(filepath.Join(dir, filepath.FromSlash(comp)), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	testtools.WriteFile(t, filepath.Join(dir, "ccm.yaml"), chartOutput)
	testtools.WriteFile(t, filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n  - ccm.yaml\ncomponents:\n  - "+comp+"\n"))
	return dir
}

// krustyBuild runs the kustomize api library the way Fleet does: root-only
// loading, plugins off.
func krustyBuild(t *testing.T, dir string) []byte {
	t.Helper()
	out, err := testtools.KrustyRun(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("krusty: %v", err)
	}
	return out
}

// overlayBuilds builds a kustomization with the kustomize CLI and with the
// api library, by name.
func overlayBuilds(t *testing.T, dir string) map[string][]manifest.Object {
	t.Helper()
	builds := map[string][]manifest.Object{}
	for name, out := range map[string][]byte{
		"kustomize CLI": testtools.MustRun(t, testtools.HelmEnv(t), testtools.Kustomize(t), "build", dir),
		"api library":   krustyBuild(t, dir),
	} {
		objs, err := manifest.Split(out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		builds[name] = objs
	}
	return builds
}

// TestOverlaysMeanWhatTheRendererMeans applies every overlay with the real
// kustomize CLI and with the api library to every chart version's default
// `helm template` output, and checks that the result means what the
// post-renderer's output for that distro and mode means. This is the
// evidence for the versions docs/overlays.md says the overlays fit. A
// migrate component pins the CCM of the last minor that migrates whatever
// the chart deploys by default (0.0.2's CCM has no leader migration, 0.0.4's
// and 0.0.6's read only v1beta1): its result is the renderer's for the
// chart with that image.
func TestOverlaysMeanWhatTheRendererMeans(t *testing.T) {
	nodes := testtools.Fixtures(t)
	for _, version := range testtools.ChartVersions {
		chart := testtools.UpstreamChart(t, version)
		plain := testtools.HelmTemplate(t, chart, nil)
		pinned := testtools.HelmTemplate(t, chart, nil, pinnedImage(releases.Pin(releases.Tag(releases.LastInTreeMinor)))...)
		for _, d := range distros.All {
			p, _ := distros.RecordOf(d)
			for _, mode := range renderer.ModesOf(p) {
				t.Run(version+"/"+string(d)+"-"+string(mode), func(t *testing.T) {
					t.Parallel()
					input := plain
					if mode == renderer.ModeMigrate {
						input = pinned
					}
					want := testtools.PostRendered(t, input, d, mode)
					for name, objs := range overlayBuilds(t, overlayDir(t, plain, d, mode)) {
						t.Run(name, func(t *testing.T) {
							testtools.CheckMeaning(t, objs, nodes, d, mode)
							testtools.SameAsRenderer(t, objs, want, nodes)
						})
					}
				})
			}
		}
	}
}

// pinnedImage are the helm flags that set the chart's image to the CCM
// release of a tag, whatever repository the chart version's defaults name.
func pinnedImage(tag string) []string {
	return []string{"--set", "image.repository=" + releases.ImageRepository, "--set", "image.tag=" + tag}
}

// TestOverlaysPerMinor: `overlays --kube-version` writes the migrate
// component of each minor that migrates, whose CCM and leader migration
// configuration are the renderer's for the chart with that CCM and the
// cluster's version, on the chart versions whose CCMs read each API
// version; and the configuration is the one that minor's reader accepts
// (integration/lmreader reads it).
func TestOverlaysPerMinor(t *testing.T) {
	nodes := testtools.Fixtures(t)
	for minor := 22; minor <= releases.LastInTreeMinor; minor++ {
		kube := fmt.Sprintf("v1.%d.3", minor)
		gen := filepath.Join(t.TempDir(), "overlays")
		testtools.MustRun(t, testtools.HelmEnv(t), testtools.Renderer(t), "overlays", "--out", gen, "--distro=rke", "--mode=migrate", "--kube-version="+kube)
		for _, version := range []string{"0.0.4", testtools.LatestChartVersion} {
			t.Run(fmt.Sprintf("1.%d/%s", minor, version), func(t *testing.T) {
				chart := testtools.UpstreamChart(t, version)
				plain := testtools.HelmTemplate(t, chart, nil)
				pinned := testtools.HelmTemplate(t, chart, nil, pinnedImage(releases.Pin(releases.Tag(minor)))...)
				// What the renderer writes for that CCM (the cluster's version
				// changes only what it checks).
				want := testtools.PostRendered(t, pinned, distros.RKE, renderer.ModeMigrate)
				for name, objs := range overlayBuilds(t, overlayDirFrom(t, gen, plain, distros.RKE, renderer.ModeMigrate)) {
					t.Run(name, func(t *testing.T) {
						testtools.CheckMeaning(t, objs, nodes, distros.RKE, renderer.ModeMigrate)
						testtools.SameAsRenderer(t, objs, want, nodes)
					})
				}
			})
		}
	}
}

// TestOverlaysChartValues shows what docs/overlays.md says about values, on
// the latest chart: values that leave the chart's names, args and
// tolerations alone fit; args and tolerations from values are replaced by
// the component's lists; other names make kustomize fail instead of
// passing the chart's output through unpatched.
func TestOverlaysChartValues(t *testing.T) {
	nodes := testtools.Fixtures(t)
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	values := func(t *testing.T, v string) []byte {
		path := filepath.Join(t.TempDir(), "values.yaml")
		testtools.WriteFile(t, path, []byte(v))
		return testtools.HelmTemplate(t, chart, nil, "--values", path)
	}

	t.Run("other values fit", func(t *testing.T) {
		const others = `image: {tag: v1.34.0}
podAnnotations: {team: platform}
resources: {requests: {cpu: 100m, memory: 128Mi}}
dnsPolicy: ClusterFirstWithHostNet
hostNetworking: true
serviceAccountName: aws-ccm
nodeSelector: {node-pool: system}
clusterRoleRules:
- {apiGroups: [""], resources: [serviceaccounts], verbs: [create]}
- {apiGroups: [""], resources: [nodes, services], verbs: ["*"]}
- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, create, update]}
extraVolumes: [{name: cloud-config, hostPath: {path: /etc/kubernetes/cloud-config}}]
extraVolumeMounts: [{name: cloud-config, mountPath: /etc/kubernetes/cloud-config, readOnly: true}]
`
		plain := values(t, others)
		for _, mode := range renderer.Modes {
			input := plain
			if mode == renderer.ModeMigrate {
				// The migrate component pins the CCM of the last minor that
				// migrates over the image of the values.
				input = values(t, strings.Replace(others, "v1.34.0", releases.Pin(releases.Tag(releases.LastInTreeMinor)), 1))
			}
			want := testtools.PostRendered(t, input, distros.RKE2, mode)
			for name, objs := range overlayBuilds(t, overlayDir(t, plain, distros.RKE2, mode)) {
				t.Run(string(mode)+"/"+name, func(t *testing.T) {
					testtools.SameAsRenderer(t, objs, want, nodes)
					ccm, _ := manifest.CCM(objs)
					sel, _ := manifest.Get(ccm.Doc, "spec", "template", "spec", "nodeSelector").(map[string]any)
					if sel["node-pool"] != "system" {
						t.Errorf("nodeSelector %v lost the key from values", sel)
					}
					var vols []string
					for _, v := range manifest.Get(ccm.Doc, "spec", "template", "spec", "volumes").([]any) {
						vols = append(vols, v.(map[string]any)["name"].(string))
					}
					if want := map[renderer.Mode]int{renderer.ModeInstall: 1, renderer.ModeMigrate: 2}[mode]; len(vols) != want || !slices.Contains(vols, "cloud-config") {
						t.Errorf("volumes %q: the chart's extraVolumes are not kept beside the component's", vols)
					}
				})
			}
		}
	})

	t.Run("args and tolerations from values are replaced", func(t *testing.T) {
		plain := values(t, `args: [--v=4, --cloud-provider=aws, --cluster-name=prod]
tolerations: [{key: dedicated, value: ccm, effect: NoSchedule}]
`)
		patch, err := os.ReadFile(filepath.Join(testtools.Root(), "overlays", "rke", "install", overlays.FileDaemonSet))
		if err != nil {
			t.Fatal(err)
		}
		patchObjs, err := manifest.Split(patch)
		if err != nil {
			t.Fatal(err)
		}
		wantSpec, _ := manifest.PodSpec(patchObjs[0])
		for name, objs := range overlayBuilds(t, overlayDir(t, plain, distros.RKE, renderer.ModeInstall)) {
			t.Run(name, func(t *testing.T) {
				ccm, _ := manifest.CCM(objs)
				if args, want := manifest.Args(ccm), manifest.Args(patchObjs[0]); !slices.Equal(args, want) {
					t.Errorf("args %q, want the component's whole list %q", args, want)
				}
				if spec, _ := manifest.PodSpec(ccm); !slices.Equal(spec.Tolerations, wantSpec.Tolerations) {
					t.Errorf("tolerations %+v, want the component's whole list %+v", spec.Tolerations, wantSpec.Tolerations)
				}
			})
		}
	})

	for _, c := range []struct{ set, want string }{
		{"nameOverride=my-ccm", "no matches for Id DaemonSet.v1.apps/aws-cloud-controller-manager.kube-system"},
		{"namespace=cloud", "no matches for Id DaemonSet.v1.apps/aws-cloud-controller-manager.kube-system"},
		{"clusterRoleName=my-ccm", "no matches for Id ClusterRole.v1.rbac.authorization.k8s.io/system:cloud-controller-manager"},
	} {
		t.Run(c.set+" fails the build", func(t *testing.T) {
			plain := testtools.HelmTemplate(t, chart, nil, "--set", c.set)
			for _, mode := range renderer.Modes {
				dir := overlayDir(t, plain, distros.RKE2, mode)
				out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), testtools.Kustomize(t), "build", dir)
				if err == nil || len(out) != 0 || !strings.Contains(string(errOut), c.want) {
					t.Errorf("%s: kustomize CLI: err %v, %d bytes on stdout, stderr %s", mode, err, len(out), errOut)
				}
				if _, err := testtools.KrustyRun(filesys.MakeFsOnDisk(), dir); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: api library: %v", mode, err)
				}
			}
		})
	}
}

// TestOverlaysGuard: with --guard-image, a component puts the guard first
// among the CCM's init containers, judging the CCM the component pins, and
// adds the Role and RoleBinding it reads with (guard.yaml); built by the
// kustomize CLI and api on the latest chart, it is what the post-renderer
// writes with the same options. Flux's format lists guard.yaml beside the
// HelmRelease.
func TestOverlaysGuard(t *testing.T) {
	const image = "registry.example/aws-ccm-renderer@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	nodes := testtools.Fixtures(t)
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	for _, c := range []struct {
		distro distros.Distro
		mode   renderer.Mode
		kube   string
	}{
		{distros.RKE2, renderer.ModeInstall, "v1.37.2"},
		{distros.RKE, renderer.ModeMigrate, "v1.26.15"},
	} {
		t.Run(string(c.distro)+"-"+string(c.mode), func(t *testing.T) {
			v, err := version.ParseGeneric(c.kube)
			if err != nil {
				t.Fatal(err)
			}
			// The CCM the component pins: by the promotion list's digest,
			// or for a release it does not give yet, the one given with
			// --image-tag (a digest read from the registry).
			tag := releases.Tag(int(v.Minor()))
			pin, flags := releases.Pin(tag), []string{"--kube-version=" + c.kube, "--guard-image=" + image}
			if _, promoted := releases.Digest(tag); !promoted {
				pin = tag + "@sha256:" + strings.Repeat("4d", 32)
				flags = append(flags, "--image-tag="+pin)
			}
			gen := filepath.Join(t.TempDir(), "overlays")
			testtools.MustRun(t, testtools.HelmEnv(t), testtools.Renderer(t), append([]string{"overlays", "--out", gen,
				"--distro=" + string(c.distro), "--mode=" + string(c.mode)}, flags...)...)
			comp := filepath.Join(gen, filepath.FromSlash(overlays.Component(c.distro, c.mode)))
			kust, err := os.ReadFile(filepath.Join(comp, overlays.FileKustomization))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(kust), "- "+overlays.FileGuard+"\n") {
				t.Errorf("%s does not list %s:\n%s", overlays.FileKustomization, overlays.FileGuard, kust)
			}
			plain := testtools.HelmTemplate(t, chart, nil)
			pinned := testtools.HelmTemplate(t, chart, nil, pinnedImage(pin)...)
			o := renderer.DefaultOptions()
			o.Distro, o.Mode, o.KubeVersion, o.GuardImage = c.distro, c.mode, c.kube, image
			want := testtools.PostRenderedWith(t, pinned, o)
			for name, objs := range overlayBuilds(t, overlayDirFrom(t, gen, plain, c.distro, c.mode)) {
				t.Run(name, func(t *testing.T) {
					testtools.CheckMeaning(t, objs, nodes, c.distro, c.mode)
					testtools.SameAsRenderer(t, objs, want, nodes)
					ccm, err := manifest.CCM(objs)
					if err != nil {
						t.Fatal(err)
					}
					inits, _ := manifest.Get(ccm.Doc, "spec", "template", "spec", "initContainers").([]any)
					if len(inits) != 1 || manifest.Get(inits[0].(map[string]any), "image") != image ||
						!slices.Contains(manifest.Get(inits[0].(map[string]any), "args").([]any), any("--ccm-version="+tag)) {
						t.Errorf("the init containers are %v, want the guard alone, of %s, judging the CCM %s", inits, image, tag)
					}
				})
			}
			flux := filepath.Join(t.TempDir(), "flux")
			testtools.MustRun(t, testtools.HelmEnv(t), testtools.Renderer(t), append([]string{"overlays", "--format=flux", "--out", flux,
				"--distro=" + string(c.distro), "--mode=" + string(c.mode)}, flags...)...)
			fk, err := os.ReadFile(filepath.Join(flux, filepath.FromSlash(overlays.Component(c.distro, c.mode)), overlays.FileKustomization))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(fk), overlays.FileGuard) {
				t.Errorf("the Flux kustomization does not list %s:\n%s", overlays.FileGuard, fk)
			}
		})
	}
}
