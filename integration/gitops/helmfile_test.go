package gitops

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/termtest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// helmfileEnv is a machine with helmfile's tools on PATH (helm, Helm 3;
// kustomize; aws-ccm-renderer) and Helm's directories of its own.
func helmfileEnv(t *testing.T) []string {
	t.Helper()
	bin := t.TempDir()
	for name, target := range map[string]string{"helm": testtools.Helm3(t), "kustomize": testtools.Kustomize(t), "aws-ccm-renderer": testtools.Renderer(t)} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return append(testtools.HelmEnv(t), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// helmfile runs the real helmfile on one of the example files.
func helmfile(t *testing.T, env []string, file string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	return testtools.Run(t, env, testtools.Helmfile(t), append([]string{"--file", file}, args...)...)
}

// TestHelmfilePostRenderer: helmfile template of the example, for its
// environments and state values, runs helm with the renderer as the
// post-renderer: the output is byte for byte what helm template with the
// same --post-renderer-args prints, and means what the renderer means.
func TestHelmfilePostRenderer(t *testing.T) {
	url := testtools.LoopbackChartRepo(t)
	nodes := testtools.Fixtures(t)
	file := exampleDir("helmfile", "helmfile.yaml.gotmpl")
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	extra := filepath.Join(t.TempDir(), "extra.yaml")
	testtools.WriteFile(t, extra, []byte("distro: k3s\nrendererArgs:\n  - --set-arg=cluster-name=prod two\n"))
	for _, c := range []struct {
		name     string
		args     []string
		distro   distros.Distro
		mode     renderer.Mode
		renderer []string // the post-renderer args helmfile passes
		helm     []string // helm's own extra args
	}{
		{"default", nil, distros.Auto, renderer.ModeInstall, []string{"--distro=auto", "--mode=install"}, nil},
		{"environment rke2", []string{"--environment", "rke2"}, distros.RKE2, renderer.ModeInstall, []string{"--distro=rke2", "--mode=install"}, nil},
		{"environment rke-migrate", []string{"--environment", "rke-migrate"}, distros.RKE, renderer.ModeMigrate,
			[]string{"--distro=rke", "--mode=migrate", "--kube-version=v1.26.15"}, []string{"--set", "image.tag=" + releases.Pin("v1.26.14")}},
		{"state values file", []string{"--state-values-file", extra}, distros.K3s, renderer.ModeInstall,
			[]string{"--distro=k3s", "--mode=install", "--set-arg=cluster-name=prod two"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{}, c.args...), "--state-values-set", "repo="+url, "template")
			out, errOut, err := helmfile(t, helmfileEnv(t), file, args...)
			if err != nil {
				t.Fatalf("helmfile %v: %v\n%s", args, err, errOut)
			}
			want := testtools.HelmTemplate(t, chart, c.renderer, append([]string{"--version", testtools.LatestChartVersion}, c.helm...)...)
			if !bytes.Equal(bytes.TrimSpace(out), bytes.TrimSpace(want)) {
				t.Errorf("differs from helm template --post-renderer aws-ccm-renderer %v:\n%s\nwant:\n%s", c.renderer, out, want)
			}
			objs, err := manifest.Split(out)
			if err != nil {
				t.Fatal(err)
			}
			testtools.CheckMeaning(t, objs, nodes, c.distro, c.mode)
		})
	}
	// The renderer's error fails helmfile, with the renderer's message.
	_, errOut, err := helmfile(t, helmfileEnv(t), file, "--state-values-set", "repo="+url+",distro=rke3", "template")
	if err == nil || !strings.Contains(string(errOut), `--distro "rke3" is unknown`) {
		t.Errorf("unknown distro: %v\n%s", err, errOut)
	}
}

// TestHelmfileWarningOnTerminal: helmfile runs helm, which shows the
// post-renderer's stderr only when it fails; a warning reaches the person
// who runs helmfile in a terminal there, and is lost in a CI job without
// one, where --strict (in postRendererArgs) fails the release instead.
func TestHelmfileWarningOnTerminal(t *testing.T) {
	url := testtools.LoopbackChartRepo(t)
	file := exampleDir("helmfile", "helmfile.yaml.gotmpl")
	extra := filepath.Join(t.TempDir(), "extra.yaml")
	testtools.WriteFile(t, extra, []byte("distro: rke2\nrendererArgs:\n  - --set-arg=configure-cloud-routes=true\n"))
	args := []string{"--file", file, "--state-values-file", extra, "--state-values-set", "repo=" + url, "template"}
	env := helmfileEnv(t)
	termtest.CheckTerminalWarning(t, env, testtools.Helmfile(t), args, testtools.RiskWarning, false)

	testtools.WriteFile(t, extra, []byte("distro: rke2\nrendererArgs:\n  - --set-arg=configure-cloud-routes=true\n  - --strict\n"))
	out, errOut, err := testtools.Run(t, env, testtools.Helmfile(t), args...)
	if err == nil || bytes.Contains(out, []byte("kind: DaemonSet")) || !strings.Contains(string(errOut), "(--strict: warnings are errors)") {
		t.Errorf("--strict: %v, stdout %d bytes\n%s", err, len(out), errOut)
	}
}

// TestHelmfileOverlays: the overlays example (no executable post-renderer:
// strategicMergePatches and jsonPatches of the generated components, which
// helmfile applies with kustomize) gives, for every distribution, what the
// post-renderer's output means; with other names it fails instead of
// installing the chart unpatched.
func TestHelmfileOverlays(t *testing.T) {
	url := testtools.LoopbackChartRepo(t)
	nodes := testtools.Fixtures(t)
	file := exampleDir("helmfile", "overlays", "helmfile.yaml.gotmpl")
	plain := testtools.HelmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), nil)
	for _, d := range distros.All {
		t.Run(string(d), func(t *testing.T) {
			out, errOut, err := helmfile(t, helmfileEnv(t), file, "--state-values-set", "repo="+url+",distro="+string(d), "template")
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			objs, err := manifest.Split(out)
			if err != nil {
				t.Fatal(err)
			}
			testtools.CheckMeaning(t, objs, nodes, d, renderer.ModeInstall)
			testtools.SameAsRenderer(t, objs, testtools.PostRendered(t, plain, d, renderer.ModeInstall), nodes)
		})
	}
	// A copy whose chart values rename the DaemonSet.
	renamed := filepath.Join(t.TempDir(), "renamed.yaml")
	testtools.WriteFile(t, renamed, []byte("repo: "+url+"\ndistro: rke2\noverlays: "+filepath.Join(testtools.Root(), "overlays")+"\n"))
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	copyFile := filepath.Join(t.TempDir(), "helmfile.yaml.gotmpl")
	testtools.WriteFile(t, copyFile, bytes.Replace(b, []byte("    version: "), []byte("    values:\n      - nameOverride: ccm\n    version: "), 1))
	out, errOut, err := helmfile(t, helmfileEnv(t), copyFile, "--state-values-file", renamed, "template")
	if err == nil || len(out) != 0 && bytes.Contains(out, []byte("kind: DaemonSet")) || !strings.Contains(string(errOut), "no matches for Id DaemonSet") {
		t.Errorf("renamed DaemonSet: %v\n%s\n%s", err, out, errOut)
	}
}
