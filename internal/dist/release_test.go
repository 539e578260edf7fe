package dist

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// fakeTools plays go, cyclonedx-gomod, Helm 3 and Helm 4 for Release: each
// writes what the real one would, named as the real one names it, from
// what it is given; the calls are recorded.
type fakeTools struct {
	t     *testing.T
	calls []string
	fail  string // a call that starts with this fails
}

func (f *fakeTools) exec(dir string, env []string, name string, args ...string) ([]byte, error) {
	call := name + " " + strings.Join(args, " ")
	f.calls = append(f.calls, call)
	if f.fail != "" && strings.HasPrefix(call, f.fail) {
		return nil, errors.New("failed as told")
	}
	after := func(flag string) string { return args[slices.Index(args, flag)+1] }
	write := func(p, data string) { testtools.WriteFile(f.t, p, []byte(data)) }
	switch {
	case name == "go":
		if dir != root {
			f.t.Errorf("go build in %q, not the repository", dir)
		}
		goos, goarch := env[len(env)-2], env[len(env)-1]
		write(after("-o"), args[len(args)-1]+" for "+goos+" "+goarch)
	case name == "cyclonedx-gomod":
		write(after("-output"), `{"bin": "`+filepath.Base(args[len(args)-1])+`"}`)
	case name == "helm4" && args[0] == "plugin":
		yaml, err := os.ReadFile(filepath.Join(args[2], "plugin.yaml"))
		if err != nil {
			return nil, err
		}
		version := regexp.MustCompile(`(?m)^version: (.*)$`).FindSubmatch(yaml)[1]
		tgz := filepath.Join(after("--destination"), "aws-ccm-"+string(version)+".tgz")
		write(tgz, string(yaml))
		if slices.Contains(args, "--sign") {
			write(tgz+".prov", "signed by "+after("--key"))
		}
	case name == "helm" && args[0] == "package":
		deps, _ := filepath.Glob(filepath.Join(args[1], "charts", "*.tgz"))
		if len(deps) != 1 {
			return nil, fmt.Errorf("the chart's dependencies: %q", deps)
		}
		write(filepath.Join(after("--destination"), "aws-ccm-rancher-1.0.0.tgz"), "chart with "+filepath.Base(deps[0]))
		if slices.Contains(args, "--sign") {
			write(filepath.Join(after("--destination"), "aws-ccm-rancher-1.0.0.tgz.prov"), "signed")
		}
	case name == "helm" && args[0] == "repo":
		write(filepath.Join(args[2], "index.yaml"), "entries: {}\n")
	case name == "helm" && args[0] == "dependency":
		write(filepath.Join(args[2], "charts", "downloaded.tgz"), "downloaded")
	default:
		return nil, fmt.Errorf("unexpected %s", call)
	}
	return nil, nil
}

// release is a Config of the tools of f, over the repository, with the
// wrapper chart's dependency in a directory of its own.
func release(t *testing.T, f *fakeTools, platforms ...Platform) *Config {
	lock, err := os.ReadFile(filepath.Join(root, ChartDir, "Chart.lock"))
	if err != nil {
		t.Fatal(err)
	}
	deps, err := ChartDependencies(lock)
	if err != nil {
		t.Fatal(err)
	}
	charts := stage(t, map[string]string{deps[0]: "the upstream chart"})
	return &Config{Version: "v1.2.3", Out: t.TempDir(), Platforms: platforms, Helm3: "helm", Helm4: "helm4", CycloneDX: "cyclonedx-gomod",
		Epoch: epoch, Charts: []string{t.TempDir(), charts}, Root: root, Exec: f.exec}
}

// TestRelease: what a release writes and prints, from what the tools
// write; earlier releases' files replaced, others kept.
func TestRelease(t *testing.T) {
	f := &fakeTools{t: t}
	c := release(t, f, Platform{"linux", "arm64"}, Platform{"windows", "amd64"})
	testtools.WriteFile(t, filepath.Join(c.Out, "aws-ccm-renderer_v0.1.0_linux_arm64.tar.gz"), []byte("old"))
	testtools.WriteFile(t, filepath.Join(c.Out, "images", "index.json"), []byte("{}"))
	var stdout, stderr bytes.Buffer
	if err := c.Release(&stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if stderr.String() != Unsigned+"\n" {
		t.Errorf("stderr: %q", stderr.String())
	}
	var printed []string
	for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
		size, name, _ := strings.Cut(strings.TrimLeft(line, " "), "  ")
		st, err := os.Stat(filepath.Join(c.Out, name))
		if err != nil || fmt.Sprint(st.Size()) != size || len(line) != 12+len(name) {
			t.Errorf("%q: %v", line, err)
		}
		printed = append(printed, name)
	}
	want := []string{
		"aws-ccm-renderer_v1.2.3_linux_arm64.tar.gz", "aws-ccm-renderer_v1.2.3_linux_arm64.sbom.cdx.json", "aws-ccm-1.2.3+linux.arm64.tgz",
		"aws-ccm-renderer_v1.2.3_windows_amd64.zip", "aws-ccm-renderer_v1.2.3_windows_amd64.sbom.cdx.json", "aws-ccm-1.2.3+windows.amd64.tgz",
		"aws-ccm-1.2.3.tar.gz", "checksums.txt", "charts/aws-ccm-rancher-1.0.0.tgz", "charts/index.yaml",
	}
	if !slices.Equal(printed, want) {
		t.Errorf("printed:\n%s\nwant:\n%s", strings.Join(printed, "\n"), strings.Join(want, "\n"))
	}
	left, _ := filepath.Glob(filepath.Join(c.Out, "*"))
	// The files at the top, charts/, and images/, which is not dist's.
	if len(left) != len(want)-2+2 || !slices.Contains(left, filepath.Join(c.Out, "images")) {
		t.Errorf("in the output: %q", left)
	}

	// The archives hold the programs go built, for their platform.
	var members []string
	for _, m := range testtools.TarGz(t, filepath.Join(c.Out, want[0])) {
		members = append(members, m.Header.Name+": "+string(m.Data))
	}
	if !slices.Equal(members, []string{"aws-ccm-renderer: ./cmd/aws-ccm-renderer for GOOS=linux GOARCH=arm64",
		"aws-ccm-renderer-helm: ./cmd/aws-ccm-renderer-helm for GOOS=linux GOARCH=arm64"}) {
		t.Errorf("linux archive: %q", members)
	}
	// The Helm 3 plugin is the repository's, with the version.
	members = nil
	for _, m := range testtools.TarGz(t, filepath.Join(c.Out, "aws-ccm-1.2.3.tar.gz")) {
		members = append(members, m.Header.Name)
		if m.Header.Name == "plugin.yaml" && !bytes.Contains(m.Data, []byte("\nversion: 1.2.3\n")) {
			t.Errorf("helm 3 plugin.yaml:\n%s", m.Data)
		}
	}
	if !slices.Equal(members, []string{"plugin.yaml", "install-binary.sh"}) {
		t.Errorf("helm 3 plugin: %q", members)
	}
	// The SBOM describes aws-ccm-renderer-helm; the Helm 4 plugin runs the
	// platform's program.
	if b, _ := os.ReadFile(filepath.Join(c.Out, want[4])); string(b) != `{"bin": "aws-ccm-renderer-helm.exe"}` {
		t.Errorf("windows SBOM: %s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(c.Out, want[5])); !bytes.Contains(b, []byte("${HELM_PLUGIN_DIR}/aws-ccm-renderer.exe\n")) {
		t.Errorf("windows plugin:\n%s", b)
	}
	// checksums.txt: every file before it.
	sums, _ := os.ReadFile(filepath.Join(c.Out, "checksums.txt"))
	for _, name := range want[:7] {
		if !bytes.Contains(sums, []byte("  "+name+"\n")) {
			t.Errorf("checksums.txt has no %s:\n%s", name, sums)
		}
	}
	if n := bytes.Count(sums, []byte("\n")); n != 7 {
		t.Errorf("checksums.txt has %d lines:\n%s", n, sums)
	}
	// The chart's dependency came from the directory that has it.
	if b, _ := os.ReadFile(filepath.Join(c.Out, want[8])); !strings.HasPrefix(string(b), "chart with aws-cloud-controller-manager-") {
		t.Errorf("chart: %s", b)
	}
	for _, call := range f.calls {
		if strings.Contains(call, "--sign") && !strings.Contains(call, "--sign=false") || strings.HasPrefix(call, "helm dependency") {
			t.Errorf("unsigned, the dependency at hand: %s", call)
		}
	}
}

// TestReleaseSigned: with a key the tools sign, and the signatures are
// listed but not summed.
func TestReleaseSigned(t *testing.T) {
	f := &fakeTools{t: t}
	c := release(t, f, Platform{"linux", "amd64"})
	c.SignKey, c.Keyring = "Release Key", "secring.gpg"
	var stdout, stderr bytes.Buffer
	if err := c.Release(&stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 || !strings.Contains(stdout.String(), "  aws-ccm-1.2.3+linux.amd64.tgz.prov\n") || !strings.Contains(stdout.String(), "  charts/aws-ccm-rancher-1.0.0.tgz.prov\n") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", &stdout, &stderr)
	}
	sums, _ := os.ReadFile(filepath.Join(c.Out, "checksums.txt"))
	if bytes.Contains(sums, []byte(".prov")) || !bytes.Contains(sums, []byte("  aws-ccm-1.2.3+linux.amd64.tgz\n")) {
		t.Errorf("checksums.txt:\n%s", sums)
	}
	signed := 0
	for _, call := range f.calls {
		if strings.HasSuffix(call, " --sign --key Release Key --keyring secring.gpg") {
			signed++
		}
	}
	if signed != 2 {
		t.Errorf("%d signing calls, want the plugin's and the chart's:\n%s", signed, strings.Join(f.calls, "\n"))
	}
}

// TestReleaseFailures: a tool's failure stops the release, naming the
// platform when it was a platform's, and nothing is printed on stdout; a
// dependency in no directory is downloaded, and its failure says where it
// was looked for.
func TestReleaseFailures(t *testing.T) {
	for _, tc := range []struct{ fail, want string }{
		{"go build", "linux_amd64: failed as told"},
		{"cyclonedx-gomod bin", "linux_amd64: failed as told"},
		{"helm4 plugin package", "linux_amd64: failed as told"},
		{"helm package", "failed as told"},
		{"helm repo index", "failed as told"},
	} {
		f := &fakeTools{t: t, fail: tc.fail}
		c := release(t, f, Platform{"linux", "amd64"})
		var stdout bytes.Buffer
		if err := c.Release(&stdout, new(bytes.Buffer)); err == nil || err.Error() != tc.want || stdout.Len() > 0 {
			t.Errorf("%s: %v, stdout %q", tc.fail, err, &stdout)
		}
	}

	f := &fakeTools{t: t}
	c := release(t, f, Platform{"linux", "amd64"})
	c.Charts = c.Charts[:1]
	if err := c.Release(new(bytes.Buffer), new(bytes.Buffer)); err != nil || !slices.ContainsFunc(f.calls, func(s string) bool { return strings.HasPrefix(s, "helm dependency build ") }) {
		t.Errorf("no local dependency: %v\n%s", err, strings.Join(f.calls, "\n"))
	}
	f.fail = "helm dependency build"
	err := c.Release(new(bytes.Buffer), new(bytes.Buffer))
	if err == nil || !strings.Contains(err.Error(), "is in none of [\""+c.Charts[0]+"\"] and downloading it failed (set AWS_CCM_CHARTS to a directory holding it): failed as told") {
		t.Errorf("download failed: %v", err)
	}
}
