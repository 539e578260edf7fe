// Package testtools gives tests the real tools they run: the renderer
// binary, Helm 3 and 4 and kustomize, built from pinned Go modules by the
// Makefile, and the upstream chart packages.
package testtools

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

// Root returns the repository's top directory: the nearest directory up
// from the test's working directory (its package's directory) whose go.mod
// declares this module. It reads no source path from the binary, which
// -trimpath (the Makefile's GOFLAGS) leaves relative.
func Root() string {
	rootOnce.Do(func() { rootDir = findRoot() })
	return rootDir
}

var (
	rootOnce sync.Once
	rootDir  string
)

const modulePath = "github.com/aws-ccm-renderer/aws-ccm-renderer"

func findRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic("testtools: " + err.Error())
	}
	for {
		if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			for line := range strings.Lines(string(mod)) {
				if strings.TrimSpace(line) == "module "+modulePath {
					return dir
				}
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("testtools: no go.mod of " + modulePath + " above the working directory")
		}
		dir = parent
	}
}

var makeMu sync.Mutex

// tool returns the path in env, or builds target with make and returns it.
// It fails the test when neither works: a missing tool is never a skip.
func tool(t testing.TB, env, target string) string {
	t.Helper()
	return toolAt(t, os.Getenv(env), env, target)
}

// toolAt returns p when it exists, else builds target with make; env names
// the variable p comes from, for the message.
func toolAt(t testing.TB, p, env, target string) string {
	t.Helper()
	if p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	makeMu.Lock()
	defer makeMu.Unlock()
	path := filepath.Join(Root(), target)
	cmd := exec.Command("make", "-s", "-C", Root(), path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s (set %s to use another): %v\n%s", target, env, err, out)
	}
	return path
}

// Renderer returns the aws-ccm-renderer binary; aws-ccm-renderer-helm, which
// it runs for the chart wrapper commands, is built beside it.
func Renderer(t testing.TB) string {
	t.Helper()
	p := tool(t, "AWS_CCM_RENDERER", "bin/aws-ccm-renderer")
	if _, err := os.Stat(filepath.Join(filepath.Dir(p), "aws-ccm-renderer-helm")); err != nil {
		makeMu.Lock()
		defer makeMu.Unlock()
		if out, err := exec.Command("make", "-s", "-C", Root(), "build").CombinedOutput(); err != nil {
			t.Fatalf("make build: %v\n%s", err, out)
		}
	}
	return p
}

// Images returns the directory of the images' OCI layouts: $AWS_CCM_IMAGES
// when set, else dist/images, built (or brought up to date) with make
// images.
func Images(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("AWS_CCM_IMAGES"); dir != "" {
		return dir
	}
	makeMu.Lock()
	defer makeMu.Unlock()
	if out, err := exec.Command("make", "-s", "-C", Root(), "images").CombinedOutput(); err != nil {
		t.Fatalf("make images (set AWS_CCM_IMAGES to use built ones): %v\n%s", err, out)
	}
	return filepath.Join(Root(), "dist", "images")
}

// ImagesTool returns hack/images, built as bin/aws-ccm-images.
func ImagesTool(t testing.TB) string { return tool(t, "AWS_CCM_IMAGES_TOOL", "bin/aws-ccm-images") }

// SignTool returns hack/sign (a module of its own), built as
// bin/aws-ccm-sign.
func SignTool(t testing.TB) string { return tool(t, "AWS_CCM_SIGN", "bin/aws-ccm-sign") }

// Helm3 returns the Helm 3 CLI.
func Helm3(t testing.TB) string { return tool(t, "HELM3", "bin/helm") }

// Helm4 returns the Helm 4 CLI.
func Helm4(t testing.TB) string { return tool(t, "HELM4", "bin/helm4") }

// Kustomize returns the kustomize CLI.
func Kustomize(t testing.TB) string { return tool(t, "KUSTOMIZE", "bin/kustomize") }

// CycloneDX returns cyclonedx-gomod, the SBOM generator make dist runs.
func CycloneDX(t testing.TB) string { return tool(t, "CYCLONEDX", "bin/cyclonedx-gomod") }

// Crane returns crane, go-containerregistry's CLI, with which a plan reads
// the digest of an image the promotion list does not give.
func Crane(t testing.TB) string { return tool(t, "CRANE", "bin/crane") }

// Helmfile returns the helmfile CLI.
func Helmfile(t testing.TB) string { return tool(t, "HELMFILE", "bin/helmfile") }

// Kubectl returns kubectl of the control plane's release (e2e/tools/kube).
func Kubectl(t testing.TB) string { return tool(t, "KUBECTL", "bin/kubectl") }

// ArgoCDAppSet returns argocd-appset-generate (e2e/tools/argocd): the
// ApplicationSet controller's generation, from Argo CD's own code.
func ArgoCDAppSet(t testing.TB) string { return tool(t, "ARGOCD_APPSET", "bin/argocd-appset-generate") }

// ArgoCDTrack returns argocd-track (e2e/tools/argocd): marks manifests as
// Argo CD's application controller does before it applies them, with its
// own resource tracking code.
func ArgoCDTrack(t testing.TB) string { return tool(t, "ARGOCD_TRACK", "bin/argocd-track") }

// Fleet returns the Fleet CLI (e2e/tools/fleet): apply, target and deploy.
func Fleet(t testing.TB) string { return tool(t, "FLEET", "bin/fleet") }

// FleetController returns Fleet's controller (e2e/tools/fleet), whose
// bundle controller rolls bundles out.
func FleetController(t testing.TB) string { return tool(t, "FLEET_CONTROLLER", "bin/fleetcontroller") }

// LMReader returns the LeaderMigrationConfiguration reader of the
// Kubernetes minor 1.<minor>: lmreader-1.<minor> in the directory
// $LMREADERS, else built with make (tools.mk, e2e/tools/lmreader).
func LMReader(t testing.TB, minor int) string {
	t.Helper()
	name := fmt.Sprintf("lmreader-1.%d", minor)
	p := ""
	if dir := os.Getenv("LMREADERS"); dir != "" {
		p = filepath.Join(dir, name)
	}
	return toolAt(t, p, "LMREADERS", filepath.Join("bin", name))
}

// LMReaderMinors are the minors of 1.x with a reader, one module file
// e2e/tools/lmreader/go.1.<minor>.mod each, in order.
func LMReaderMinors(t testing.TB) []int {
	t.Helper()
	mods, err := filepath.Glob(filepath.Join(Root(), "e2e", "tools", "lmreader", "go.1.*.mod"))
	if err != nil || len(mods) == 0 {
		t.Fatalf("no reader module files in e2e/tools/lmreader: %v", err)
	}
	var minors []int
	for _, m := range mods {
		var minor int
		if _, err := fmt.Sscanf(filepath.Base(m), "go.1.%d.mod", &minor); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		minors = append(minors, minor)
	}
	slices.Sort(minors)
	return minors
}

// ChartVersions are the upstream chart releases the tests cover, oldest
// first: the last is the newest the project knows (upstream.LatestChartVersion,
// which TestLatestChartVersion holds them to).
var ChartVersions = []string{"0.0.2", "0.0.4", "0.0.6", "0.0.8", "0.0.9", "0.0.10", "0.0.11"}

// LatestChartVersion is the newest of ChartVersions.
var LatestChartVersion = ChartVersions[len(ChartVersions)-1]

var chartMu sync.Mutex

// UpstreamChart returns the path of the upstream chart package of a version:
// from $AWS_CCM_CHARTS or ../shared/charts when present, else downloaded
// once from the official repository into .cache/charts.
func UpstreamChart(t testing.TB, version string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%s.tgz", upstream.ChartName, version)
	dirs := []string{os.Getenv("AWS_CCM_CHARTS"), filepath.Join(Root(), "..", "shared", "charts")}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, name); fileExists(p) {
			return p
		}
	}
	chartMu.Lock()
	defer chartMu.Unlock()
	cache := filepath.Join(Root(), ".cache", "charts")
	p := filepath.Join(cache, name)
	if fileExists(p) {
		return p
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Helm3(t), "pull", upstream.ChartName, "--repo", upstream.ChartRepo, "--version", version, "--destination", cache)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chart %s is not in ../shared/charts and downloading it failed: %v\n%s", version, err, out)
	}
	return p
}

// SampleChart returns the project's own sample chart directory.
func SampleChart() string { return filepath.Join(Root(), "testdata", "charts", "aws-ccm-sample") }

// WrapperChart returns a copy of charts/aws-ccm-rancher with its
// dependency, the upstream chart, in charts/ (never committed).
func WrapperChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "aws-ccm-rancher")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(Root(), "charts", "aws-ccm-rancher"))); err != nil {
		t.Fatal(err)
	}
	dep := UpstreamChart(t, LatestChartVersion)
	b, err := os.ReadFile(dep)
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(dir, "charts", filepath.Base(dep)), b)
	return dir
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// ChartPackage returns the regular files of a chart package (.tgz) by their
// slash-separated paths in it (aws-cloud-controller-manager/values.yaml).
func ChartPackage(t testing.TB, tgz string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, m := range TarGz(t, tgz) {
		if m.Header.Typeflag == tar.TypeReg {
			files[m.Header.Name] = m.Data
		}
	}
	return files
}

// TarMember is an entry of a .tar.gz: its header, and its contents.
type TarMember struct {
	Header *tar.Header
	Data   []byte
}

// TarGz reads every entry of a .tar.gz, in order.
func TarGz(t testing.TB, path string) []TarMember {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var members []TarMember
	ReadTar(t, gz, func(h *tar.Header, content []byte) { members = append(members, TarMember{h, content}) })
	return members
}

// ReadTar calls entry with each entry of a tar stream and its content.
func ReadTar(t testing.TB, r io.Reader, entry func(h *tar.Header, content []byte)) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entry(h, content)
	}
}

// ShellWords has the POSIX shell sh split a command line into words.
func ShellWords(t testing.TB, sh, line string) []string {
	t.Helper()
	out, err := exec.Command(sh, "-c", `set -- `+line+`; for w do printf '%s\0' "$w"; done`).Output()
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}
