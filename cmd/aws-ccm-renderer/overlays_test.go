package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/nodefit"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/overlays"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// overlayCopies are the checked-in copies of the generated overlays: the
// repository's, and the Fleet bundle's own (a bundle sees only its files).
var overlayCopies = []string{"overlays", filepath.Join("examples", "fleet", "overlays")}

// TestOverlaysUpToDate regenerates the overlays with `aws-ccm-renderer
// overlays` into a temporary directory and fails when a checked-in copy
// differs from it: a file changed, missing or no longer generated.
func TestOverlaysUpToDate(t *testing.T) {
	gen := t.TempDir()
	testtools.MustRun(t, os.Environ(), testtools.Renderer(t), "overlays", "--out", gen)
	want := readTree(t, gen)
	files, err := overlays.Files()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, files) {
		t.Fatalf("the binary %s writes other overlays than this source generates: rebuild it", testtools.Renderer(t))
	}
	for _, dir := range overlayCopies {
		t.Run(filepath.ToSlash(dir), func(t *testing.T) {
			got := readTree(t, filepath.Join(testtools.Root(), dir))
			for _, name := range slices.Sorted(maps.Keys(want)) {
				if b, ok := got[name]; !ok {
					t.Errorf("%s/%s is missing (run make overlays)", dir, name)
				} else if !bytes.Equal(b, want[name]) {
					t.Errorf("%s/%s is stale (run make overlays)", dir, name)
				}
			}
			for _, name := range slices.Sorted(maps.Keys(got)) {
				if _, ok := want[name]; !ok {
					t.Errorf("%s/%s is not generated any more (run make overlays)", dir, name)
				}
			}
		})
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
	writeFile(t, filepath.Join(dir, "ccm.yaml"), chartOutput)
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n  - ccm.yaml\ncomponents:\n  - "+comp+"\n"))
	return dir
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// krustyBuild runs the kustomize api library the way Fleet does: root-only
// loading, plugins off.
func krustyBuild(t *testing.T, dir string) []byte {
	t.Helper()
	out, err := krustyRun(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("krusty: %v", err)
	}
	return out
}

func krustyRun(fs filesys.FileSystem, dir string) ([]byte, error) {
	k := krusty.MakeKustomizer(&krusty.Options{LoadRestrictions: kustypes.LoadRestrictionsRootOnly, PluginConfig: kustypes.DisabledPluginConfig()})
	res, err := k.Run(fs, dir)
	if err != nil {
		return nil, err
	}
	return res.AsYaml()
}

// overlayBuilds builds a kustomization with the kustomize CLI and with the
// api library, by name.
func overlayBuilds(t *testing.T, dir string) map[string][]manifest.Object {
	t.Helper()
	builds := map[string][]manifest.Object{}
	for name, out := range map[string][]byte{
		"kustomize CLI": testtools.MustRun(t, os.Environ(), testtools.Kustomize(t), "build", dir),
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

// postRendered is the post-renderer's output for a chart output, distro and
// mode.
func postRendered(t *testing.T, chartOutput []byte, distro renderer.Distro, mode renderer.Mode) []manifest.Object {
	t.Helper()
	o := renderer.DefaultOptions()
	o.Distro, o.Mode = distro, mode
	r, err := renderer.New(o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Render(chartOutput)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Split(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestOverlaysMeanWhatTheRendererMeans applies every overlay with the real
// kustomize CLI and with the api library to every chart version's default
// `helm template` output, and checks that the result means what the
// post-renderer's output for that distro and mode means. This is the
// evidence for the versions docs/overlays.md says the overlays fit.
func TestOverlaysMeanWhatTheRendererMeans(t *testing.T) {
	nodes := fixtures(t)
	for _, version := range testtools.ChartVersions {
		plain := helmTemplate(t, testtools.UpstreamChart(t, version), nil)
		for _, d := range renderer.Distros {
			for _, mode := range renderer.Modes {
				t.Run(version+"/"+string(d)+"-"+string(mode), func(t *testing.T) {
					t.Parallel()
					want := postRendered(t, plain, d, mode)
					for name, objs := range overlayBuilds(t, overlayDir(t, plain, d, mode)) {
						t.Run(name, func(t *testing.T) {
							checkMeaning(t, objs, nodes, d, mode)
							sameAsRenderer(t, objs, want, nodes, overlayExtraTolerations(version, d)...)
						})
					}
				})
			}
		}
	}
}

// overlayExtraTolerations are the tolerations an overlay's output has and
// the post-renderer's lacks, by chart version and distro (docs/overlays.md).
// The components replace the chart's tolerations with what the renderer
// makes of the latest chart's defaults, which keeps the chart's
// control-plane toleration (operator Equal) beside the rke profile's; charts
// 0.0.2 to 0.0.6 have no such toleration, so the renderer keeps none. No
// RKE1 node carries that taint: placement is the same, as the test checks.
func overlayExtraTolerations(version string, d renderer.Distro) []nodefit.Toleration {
	if d == renderer.DistroRKE && slices.Contains([]string{"0.0.2", "0.0.4", "0.0.6"}, version) {
		return []nodefit.Toleration{{Key: renderer.LabelControlPlane, Effect: "NoSchedule"}}
	}
	return nil
}

// sameAsRenderer: an overlay's output means what the post-renderer's output
// means. The same objects; the same nodes of every fixture admitted; the
// same tolerations (but extra) and args, as sets (kustomize and the
// renderer order them their own way); the same RBAC grants, however the
// rules are cut; everything else equal field by field.
func sameAsRenderer(t *testing.T, got, want []manifest.Object, nodes map[string][]nodefit.Node, extra ...nodefit.Toleration) {
	t.Helper()
	ids := func(objs []manifest.Object) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.ID())
		}
		slices.Sort(out)
		return out
	}
	if g, w := ids(got), ids(want); !slices.Equal(g, w) {
		t.Fatalf("objects %q, the post-renderer's %q", g, w)
	}
	byID := map[string]manifest.Object{}
	for _, o := range want {
		byID[o.ID()] = o
	}
	for _, g := range got {
		w := byID[g.ID()]
		gd, wd := normalized(g), normalized(w)
		switch g.Kind {
		case "DaemonSet":
			sameWorkload(t, g, w, nodes, extra)
			// Compared above; and a strategic merge puts the patch's
			// volumes and mounts first, the renderer appends them: their
			// order means nothing.
			for _, doc := range []map[string]any{gd, wd} {
				pod := manifest.Get(doc, "spec", "template", "spec").(map[string]any)
				delete(pod, "tolerations")
				sortByName(pod["volumes"])
				for _, c := range pod["containers"].([]any) {
					delete(c.(map[string]any), "args")
					sortByName(c.(map[string]any)["volumeMounts"])
				}
			}
		case "ClusterRole", "Role":
			if gr, wr := roleGrants(g), roleGrants(w); !slices.Equal(gr, wr) {
				t.Errorf("%s grants %q, the post-renderer's %q", g.ID(), gr, wr)
			}
			delete(gd, "rules")
			delete(wd, "rules")
		}
		if !reflect.DeepEqual(gd, wd) {
			gj, _ := json.MarshalIndent(gd, "", "  ")
			wj, _ := json.MarshalIndent(wd, "", "  ")
			t.Errorf("%s differs:\n%s\nthe post-renderer's:\n%s", g.ID(), gj, wj)
		}
	}
}

// sameWorkload compares placement, tolerations and args.
func sameWorkload(t *testing.T, got, want manifest.Object, nodes map[string][]nodefit.Node, extra []nodefit.Toleration) {
	t.Helper()
	gs, err := manifest.PodSpec(got)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := manifest.PodSpec(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range slices.Sorted(maps.Keys(nodes)) {
		for _, n := range nodes[d] {
			g, why := gs.Admits(n)
			if w, wwhy := ws.Admits(n); g != w {
				t.Errorf("%s node %s: admitted %v (%s), by the post-renderer's output %v (%s)", d, n.Name, g, why, w, wwhy)
			}
		}
	}
	key := func(tol nodefit.Toleration) string { return fmt.Sprintf("%+v", tol) }
	if g, w := sortedBy(gs.Tolerations, key), sortedBy(append(ws.Tolerations, extra...), key); !slices.Equal(g, w) {
		t.Errorf("tolerations %q, the post-renderer's %q", g, w)
	}
	ga, wa := manifest.Args(got), manifest.Args(want)
	if g, w := sortedBy(ga, nil), sortedBy(wa, nil); !slices.Equal(g, w) {
		t.Errorf("args %q, the post-renderer's %q", ga, wa)
	}
	if len(slices.Compact(sortedBy(ga, nil))) != len(ga) {
		t.Errorf("args repeat a flag: %q", ga)
	}
}

// sortByName sorts a list of named items in place.
func sortByName(v any) {
	list, _ := v.([]any)
	slices.SortStableFunc(list, func(a, b any) int {
		an, _ := a.(map[string]any)["name"].(string)
		bn, _ := b.(map[string]any)["name"].(string)
		return strings.Compare(an, bn)
	})
}

// sortedBy returns a sorted copy of a list, as strings.
func sortedBy[T any](list []T, key func(T) string) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		if key == nil {
			out = append(out, fmt.Sprint(x))
		} else {
			out = append(out, key(x))
		}
	}
	slices.Sort(out)
	return out
}

// roleGrants lists what a role grants, one "groups resources names verb"
// line per verb, sorted and without repeats: rules cut differently that
// grant the same compare equal.
func roleGrants(o manifest.Object) []string {
	var out []string
	rules, _ := o.Doc["rules"].([]any)
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		for _, g := range manifest.Strings(rule["apiGroups"]) {
			for _, res := range manifest.Strings(rule["resources"]) {
				for _, v := range manifest.Strings(rule["verbs"]) {
					out = append(out, fmt.Sprintf("%q %s %v %s", g, res, manifest.Strings(rule["resourceNames"]), v))
				}
			}
		}
		for _, u := range manifest.Strings(rule["nonResourceURLs"]) {
			for _, v := range manifest.Strings(rule["verbs"]) {
				out = append(out, u+" "+v)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// normalized is an object as JSON values, without what differs between two
// writers of the same object: empty maps and lists (kustomize keeps an
// emptied nodeSelector, the renderer drops it) and null fields.
func normalized(o manifest.Object) map[string]any {
	b, err := json.Marshal(o.Doc)
	if err != nil {
		panic(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(err)
	}
	prune(doc)
	return doc
}

func prune(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if prune(e) {
				delete(x, k)
			}
		}
		return len(x) == 0
	case []any:
		for _, e := range x {
			prune(e)
		}
		return len(x) == 0
	case nil:
		return true
	}
	return false
}

// TestOverlaysChartValues shows what docs/overlays.md says about values, on
// the latest chart: values that leave the chart's names, args and
// tolerations alone fit; args and tolerations from values are replaced by
// the component's lists; other names make kustomize fail instead of
// passing the chart's output through unpatched.
func TestOverlaysChartValues(t *testing.T) {
	nodes := fixtures(t)
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	values := func(t *testing.T, v string) []byte {
		path := filepath.Join(t.TempDir(), "values.yaml")
		writeFile(t, path, []byte(v))
		return helmTemplate(t, chart, nil, "--values", path)
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
			want := postRendered(t, plain, renderer.DistroRKE2, mode)
			for name, objs := range overlayBuilds(t, overlayDir(t, plain, renderer.DistroRKE2, mode)) {
				t.Run(string(mode)+"/"+name, func(t *testing.T) {
					sameAsRenderer(t, objs, want, nodes)
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
			plain := helmTemplate(t, chart, nil, "--set", c.set)
			for _, mode := range renderer.Modes {
				dir := overlayDir(t, plain, renderer.DistroRKE2, mode)
				out, errOut, err := testtools.Run(t, os.Environ(), testtools.Kustomize(t), "build", dir)
				if err == nil || len(out) != 0 || !strings.Contains(string(errOut), c.want) {
					t.Errorf("%s: kustomize CLI: err %v, %d bytes on stdout, stderr %s", mode, err, len(out), errOut)
				}
				if _, err := krustyRun(filesys.MakeFsOnDisk(), dir); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: api library: %v", mode, err)
				}
			}
		})
	}
}
