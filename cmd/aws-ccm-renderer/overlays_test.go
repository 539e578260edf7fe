package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/overlays"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// TestOverlaysUpToDate fails when the checked-in overlays/ differ from what
// `aws-ccm-renderer overlays` generates (run `make overlays`).
func TestOverlaysUpToDate(t *testing.T) {
	for _, dir := range []string{"overlays", filepath.Join("examples", "fleet", "overlays")} {
		t.Run(dir, func(t *testing.T) { checkOverlaysDir(t, filepath.Join(testtools.Root(), dir)) })
	}
}

func checkOverlaysDir(t *testing.T, root string) {
	files, err := overlays.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, files[name]) {
			t.Errorf("%s/%s is stale or missing (run make overlays)", root, name)
		}
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if _, ok := files[filepath.ToSlash(rel)]; !ok && filepath.Base(path) != "README.md" {
			t.Errorf("%s/%s is not generated any more (run make overlays)", root, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// overlayDir lays out what Fleet and Argo CD see: the chart's output and a
// kustomization that uses one component.
func overlayDir(t *testing.T, chartOutput []byte, distro renderer.Distro, mode renderer.Mode) string {
	t.Helper()
	dir := t.TempDir()
	files, err := overlays.Files()
	if err != nil {
		t.Fatal(err)
	}
	prefix := string(distro) + "/" + string(mode) + "/"
	for name, b := range files {
		if rest, ok := cutPrefix(name, prefix); ok {
			writeFile(t, filepath.Join(dir, "component", rest), b)
		}
	}
	writeFile(t, filepath.Join(dir, "ccm.yaml"), chartOutput)
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), []byte("resources:\n- ccm.yaml\ncomponents:\n- component\n"))
	return dir
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
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
	k := krusty.MakeKustomizer(&krusty.Options{LoadRestrictions: kustypes.LoadRestrictionsRootOnly, PluginConfig: kustypes.DisabledPluginConfig()})
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("krusty: %v", err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOverlaysMeanWhatTheRendererMeans applies every overlay with the real
// kustomize CLI and with the api library to every chart version's default
// output, and checks the result like the post-renderer's: placement on the
// fixture nodes, tolerations, args, RBAC, host network, leader migration.
func TestOverlaysMeanWhatTheRendererMeans(t *testing.T) {
	nodes := fixtures(t)
	for _, version := range testtools.ChartVersions {
		plain := helmTemplate(t, testtools.UpstreamChart(t, version), nil)
		for _, d := range renderer.Distros {
			for _, mode := range renderer.Modes {
				t.Run(version+"/"+string(d)+"-"+string(mode), func(t *testing.T) {
					dir := overlayDir(t, plain, d, mode)
					cli := testtools.MustRun(t, os.Environ(), testtools.Kustomize(t), "build", dir)
					lib := krustyBuild(t, dir)
					for name, out := range map[string][]byte{"kustomize CLI": cli, "api library": lib} {
						objs, err := manifest.Split(out)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						checkMeaning(t, objs, nodes, d, mode)
					}
				})
			}
		}
	}
}
