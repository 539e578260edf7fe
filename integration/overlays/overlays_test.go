// Package overlays tests the generated kustomize components in overlays/
// with the kustomize CLI and api: they mean what the post-renderer's output
// means for every chart version (internal/generated checks they are up to
// date).
package overlays

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/overlays"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// TestOverlaysCommand: `aws-ccm-renderer overlays` writes what the
// generator of the repository's copies (internal/generated) writes.
func TestOverlaysCommand(t *testing.T) {
	gen := t.TempDir()
	testtools.MustRun(t, testtools.HelmEnv(t), testtools.Renderer(t), "overlays", "--out", gen)
	files, err := overlays.Files()
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
func overlayDir(t *testing.T, chartOutput []byte, distro renderer.Distro, mode renderer.Mode) string {
	t.Helper()
	dir := t.TempDir()
	comp := "overlays/" + overlays.Component(distro, mode)
	src := filepath.Join(testtools.Root(), filepath.FromSlash(comp))
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
// evidence for the versions docs/overlays.md says the overlays fit. Where
// they cannot (migrate mode with a CCM too old to read the v1
// LeaderMigrationConfiguration the components carry), the test says how
// they differ.
func TestOverlaysMeanWhatTheRendererMeans(t *testing.T) {
	nodes := testtools.Fixtures(t)
	for _, version := range testtools.ChartVersions {
		plain := testtools.HelmTemplate(t, testtools.UpstreamChart(t, version), nil)
		for _, d := range renderer.Distros {
			for _, mode := range renderer.Modes {
				t.Run(version+"/"+string(d)+"-"+string(mode), func(t *testing.T) {
					t.Parallel()
					o := renderer.DefaultOptions()
					o.Distro, o.Mode = d, mode
					r, err := renderer.New(o)
					if err != nil {
						t.Fatal(err)
					}
					out, err := r.Render(plain)
					if version == "0.0.2" && mode == renderer.ModeMigrate {
						// The renderer refuses: the CCM (v1.20) has no leader
						// migration. A component cannot tell; docs/overlays.md
						// says so.
						if err == nil || !strings.Contains(err.Error(), "has no leader migration") {
							t.Errorf("the renderer accepts migrate mode for chart 0.0.2: %v", err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					rendered := out.Bytes()
					if mode == renderer.ModeMigrate && slices.Contains([]string{"0.0.4", "0.0.6"}, version) {
						// The components carry the v1 configuration of the
						// latest chart's CCM; these CCMs (v1.22, v1.23) read
						// v1beta1, which the renderer writes for them with
						// the resourceLock that v1 does not have.
						if !bytes.Contains(rendered, []byte("apiVersion: controllermanager.config.k8s.io/v1beta1")) ||
							!bytes.Contains(rendered, []byte("\n    resourceLock: leases\n")) {
							t.Fatalf("the renderer's configuration for chart %s is not v1beta1 with resourceLock: leases", version)
						}
						rendered = bytes.Replace(rendered, []byte("controllermanager.config.k8s.io/v1beta1"), []byte("controllermanager.config.k8s.io/v1"), 1)
						rendered = bytes.Replace(rendered, []byte("\n    resourceLock: leases\n"), []byte("\n"), 1)
					}
					want, err := manifest.Split(rendered)
					if err != nil {
						t.Fatal(err)
					}
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
		plain := values(t, `image: {tag: v1.34.0}
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
`)
		for _, mode := range renderer.Modes {
			want := testtools.PostRendered(t, plain, renderer.DistroRKE2, mode)
			for name, objs := range overlayBuilds(t, overlayDir(t, plain, renderer.DistroRKE2, mode)) {
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
		for name, objs := range overlayBuilds(t, overlayDir(t, plain, renderer.DistroRKE, renderer.ModeInstall)) {
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
				dir := overlayDir(t, plain, renderer.DistroRKE2, mode)
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
