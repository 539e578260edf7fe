package wrapperchart

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/downloader"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/provenance"
	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// servedRepo is the upstream chart repository as a Helm getter serves it
// to Helm's downloader, from files here: the tests have no network.
type servedRepo map[string][]byte

func (s servedRepo) Get(url string, _ ...getter.Option) (*bytes.Buffer, error) {
	b, ok := s[url]
	if !ok {
		return nil, fmt.Errorf("%s: not served", url)
	}
	return bytes.NewBuffer(b), nil
}

// TestChartLock: the wrapper chart pins its dependency in Chart.lock, at
// the chart version the tests run, in sync with Chart.yaml: Helm 3's own
// dependency build (downloader.Manager.Build, what `helm dependency build`
// runs) builds charts/ from it against the upstream repository, and refuses
// a Chart.yaml that no longer matches the lock.
func TestChartLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "aws-ccm-rancher")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(testtools.Root(), "charts", "aws-ccm-rancher"))); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "charts")); err != nil {
		t.Fatal(err)
	}
	lockFile, err := os.ReadFile(filepath.Join(dir, "Chart.lock"))
	if err != nil {
		t.Fatalf("no Chart.lock: %v", err)
	}
	var lock struct {
		Dependencies []struct{ Name, Repository, Version string }
	}
	if err := yaml.Unmarshal(lockFile, &lock); err != nil || len(lock.Dependencies) != 1 || lock.Dependencies[0].Version != testtools.LatestChartVersion {
		t.Fatalf("Chart.lock pins %+v (%v), want aws-cloud-controller-manager %s, the version the tests run", lock.Dependencies, err, testtools.LatestChartVersion)
	}
	dep := lock.Dependencies[0]

	pkg := testtools.UpstreamChart(t, dep.Version)
	ch, err := loader.Load(pkg)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := provenance.DigestFile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	index := repo.NewIndexFile()
	file := filepath.Base(pkg)
	if err := index.MustAdd(ch.Metadata, file, dep.Repository, digest); err != nil {
		t.Fatal(err)
	}
	indexYAML, err := yaml.Marshal(index)
	if err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	served := servedRepo{dep.Repository + "/index.yaml": indexYAML, dep.Repository + "/" + file: content}

	helmHome := t.TempDir()
	repositories := filepath.Join(helmHome, "repositories.yaml")
	rf := repo.NewFile()
	rf.Add(&repo.Entry{Name: "aws-cloud-provider", URL: dep.Repository})
	if err := rf.WriteFile(repositories, 0o644); err != nil {
		t.Fatal(err)
	}
	build := func() error {
		m := &downloader.Manager{
			Out: io.Discard, ChartPath: dir, RepositoryConfig: repositories, RepositoryCache: filepath.Join(helmHome, "cache"),
			Getters: getter.Providers{{Schemes: []string{"https"}, New: func(...getter.Option) (getter.Getter, error) { return served, nil }}},
		}
		return m.Build()
	}
	if err := build(); err != nil {
		t.Fatalf("helm dependency build from Chart.lock: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "charts", file)); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("charts/%s after the build: %d bytes, %v; want the upstream package", file, len(got), err)
	}

	// A Chart.yaml that asks for another version than the lock pins.
	chartYAML := filepath.Join(dir, "Chart.yaml")
	b, err := os.ReadFile(chartYAML)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(b), "version: "+dep.Version+"\n", "version: 0.0.10\n", 1)
	if moved == string(b) {
		t.Fatalf("Chart.yaml does not ask for %s:\n%s", dep.Version, b)
	}
	testtools.WriteFile(t, chartYAML, []byte(moved))
	if err := build(); err == nil || !strings.Contains(err.Error(), "out of sync") {
		t.Errorf("a Chart.yaml out of sync with Chart.lock: %v, want Helm to refuse it", err)
	}
}
