// Package dist tests the release make dist writes (hack/dist over
// internal/dist, dist.mk) with the tools that consume it: the archives
// unpacked and their programs run, checksums.txt checked by sha256sum, the
// SBOMs held to the modules Go recorded in the programs, two builds
// compared byte for byte, the Helm 4 plugin installed (and refused when
// changed) by the real Helm 4, the Helm 3 plugin installed by the real Helm
// 3, and the wrapper chart's repository used by both. internal/dist's own
// tests hold each piece to its rules without the tools.
//
// The tests build the host's platform and linux/arm64 (one
// cross-compiled), as make test must stay quick; make dist builds every
// platform.
package dist

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"cmp"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/dist"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// version is the release version the tests build.
const version = "v0.9.0"

// helm3PluginArchive is the release's Helm 3 plugin.
const helm3PluginArchive = "aws-ccm-0.9.0.tar.gz"

// platforms are the ones the tests build: the host's, and linux/arm64
// cross-compiled (linux/amd64 when the host is linux/arm64).
func platforms() []string {
	host := runtime.GOOS + "/" + runtime.GOARCH
	if host == "linux/arm64" {
		return []string{host, "linux/amd64"}
	}
	return []string{host, "linux/arm64"}
}

// release is one make dist run: its directory, and what it printed.
type release struct {
	dir    string
	stdout string
	epoch  time.Time
}

var (
	unsigned    *release
	unsignedErr error
	buildMu     sync.Mutex
	tmpRoot     string
)

func TestMain(m *testing.M) {
	var err error
	if tmpRoot, err = os.MkdirTemp("", "dist-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

// makeDist runs make dist-files (make dist without the images, which
// integration/images builds) into a directory of its own, the tools the tests
// are given (TEST_ENV) passed to make, with more make variables in extra.
func makeDist(t testing.TB, dir string, extra ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	args := []string{"-s", "-C", testtools.Root(), "dist-files", "VERSION=" + version, "DIST=" + dir,
		"PLATFORMS=" + strings.Join(platforms(), ","),
		"HELM3=" + testtools.Helm3(t), "HELM4=" + testtools.Helm4(t), "CYCLONEDX=" + testtools.CycloneDX(t)}
	cmd := exec.Command("make", append(args, extra...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err = cmd.Run()
	t.Logf("make dist %s (%s): %s", strings.Join(extra, " "), strings.Join(platforms(), ", "), time.Since(start).Round(time.Second))
	return o.Bytes(), e.Bytes(), err
}

// build returns the unsigned build of the test binary's run, made once.
func build(t *testing.T) *release {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if unsigned == nil && unsignedErr == nil {
		dir := filepath.Join(tmpRoot, "unsigned")
		stdout, stderr, err := makeDist(t, dir)
		if err != nil {
			unsignedErr = fmt.Errorf("make dist: %v\n%s%s", err, stdout, stderr)
		} else if !strings.Contains(string(stderr), "unsigned build") {
			unsignedErr = fmt.Errorf("an unsigned make dist does not say so on stderr: %q", stderr)
		} else {
			epoch, err := gitEpoch()
			unsigned, unsignedErr = &release{dir: dir, stdout: string(stdout), epoch: epoch}, err
		}
	}
	if unsignedErr != nil {
		t.Fatal(unsignedErr)
	}
	return unsigned
}

func gitEpoch() (time.Time, error) {
	out, err := exec.Command("git", "-C", testtools.Root(), "log", "-1", "--format=%ct").Output()
	if err != nil {
		return time.Time{}, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	return time.Unix(n, 0), err
}

// archiveName is a platform's archive.
func archiveName(p string) string {
	goos, goarch, _ := strings.Cut(p, "/")
	name := fmt.Sprintf("aws-ccm-renderer_%s_%s_%s", version, goos, goarch)
	if goos == "windows" {
		return name + ".zip"
	}
	return name + ".tar.gz"
}

// member is a file in an archive.
type member struct {
	mode    fs.FileMode
	modTime time.Time
	data    []byte
}

// unpack reads an archive's members by name.
func unpack(t *testing.T, path string) map[string]member {
	t.Helper()
	files := map[string]member{}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			files[f.Name] = member{f.Mode(), f.Modified, b}
		}
		return files
	}
	for _, m := range testtools.TarGz(t, path) {
		h := m.Header
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeDir || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: %s is of type %c, owner %d:%d, want a regular file or directory of 0:0", filepath.Base(path), h.Name, h.Typeflag, h.Uid, h.Gid)
		}
		if h.Typeflag == tar.TypeReg {
			files[h.Name] = member{h.FileInfo().Mode(), h.ModTime, m.Data}
		}
	}
	return files
}

// TestArchives: each platform's archive holds both programs and nothing
// else, executable, dated at the commit; they are static, built with
// -trimpath for their platform, stamped with the version; the host's run.
func TestArchives(t *testing.T) {
	r := build(t)
	for _, p := range platforms() {
		goos, goarch, _ := strings.Cut(p, "/")
		files := unpack(t, filepath.Join(r.dir, archiveName(p)))
		exe := func(n string) string {
			if goos == "windows" {
				return n + ".exe"
			}
			return n
		}
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range files {
				if !yield(n) {
					return
				}
			}
		})
		if want := []string{exe("aws-ccm-renderer"), exe("aws-ccm-renderer-helm")}; !slices.Equal(names, want) {
			t.Fatalf("%s holds %q, want %q", archiveName(p), names, want)
		}
		dir := t.TempDir()
		for name, m := range files {
			if m.mode.Perm() != 0o755 {
				t.Errorf("%s: %s has mode %v, want 0755", p, name, m.mode)
			}
			if !m.modTime.Equal(r.epoch) {
				t.Errorf("%s: %s is dated %v, want the commit's time %v", p, name, m.modTime, r.epoch)
			}
			path := filepath.Join(dir, name)
			testtools.WriteFile(t, path, m.data)
			if err := os.Chmod(path, 0o755); err != nil {
				t.Fatal(err)
			}
			bi, err := buildinfo.ReadFile(path)
			if err != nil {
				t.Fatalf("%s: %s: %v", p, name, err)
			}
			settings := map[string]string{}
			for _, s := range bi.Settings {
				settings[s.Key] = s.Value
			}
			for k, want := range map[string]string{"GOOS": goos, "GOARCH": goarch, "CGO_ENABLED": "0", "-trimpath": "true"} {
				if settings[k] != want {
					t.Errorf("%s: %s was built with %s=%q, want %q", p, name, k, settings[k], want)
				}
			}
			// Go records no -ldflags with -trimpath; the version is in the
			// data (and the host's programs print it, below).
			if !bytes.Contains(m.data, []byte(version)) {
				t.Errorf("%s: %s holds no %s", p, name, version)
			}
			if goos == "linux" {
				f, err := elf.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
				if f.Machine != machine {
					t.Errorf("%s: %s is for %v", p, name, f.Machine)
				}
				for _, prog := range f.Progs {
					if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
						t.Errorf("%s: %s is dynamically linked (%v)", p, name, prog.Type)
					}
				}
				f.Close()
			}
		}
		if p != runtime.GOOS+"/"+runtime.GOARCH {
			continue
		}
		for _, prog := range []string{"aws-ccm-renderer", "aws-ccm-renderer-helm"} {
			out := testtools.MustRun(t, nil, filepath.Join(dir, exe(prog)), "version")
			if want := "aws-ccm-renderer " + version + " ("; !strings.HasPrefix(string(out), want) {
				t.Errorf("%s version: %q, want %q...", prog, out, want)
			}
		}
		// The archive's programs work together: the lean one hands the
		// chart commands to the other, found beside it.
		out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), filepath.Join(dir, exe("aws-ccm-renderer")), "template", "ccm",
			testtools.UpstreamChart(t, testtools.LatestChartVersion), "--namespace", "kube-system", "--distro=rke2")
		if err != nil || !bytes.Contains(out, []byte("kind: DaemonSet")) {
			t.Errorf("aws-ccm-renderer template from the archive: %v\n%s\n%s", err, errOut, out)
		}
	}
}

// TestChecksums: checksums.txt lists every file of the release but the
// signatures and the chart repository, and sha256sum -c agrees with it.
func TestChecksums(t *testing.T) {
	r := build(t)
	b, err := os.ReadFile(filepath.Join(r.dir, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for line := range strings.Lines(string(b)) {
		sum, name, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("checksums.txt line %q is not sha256sum's", line)
		}
		listed = append(listed, name)
	}
	var want []string
	for _, name := range releaseFiles(t, r.dir) {
		if name != "checksums.txt" && !strings.HasSuffix(name, ".prov") && !strings.HasPrefix(name, "charts/") {
			want = append(want, name)
		}
	}
	if !slices.Equal(listed, want) {
		t.Errorf("checksums.txt lists %q, want %q", listed, want)
	}
	cmd := exec.Command("sha256sum", "--strict", "-c", "checksums.txt")
	cmd.Dir = r.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}
	// And it fails when one byte of an archive changes.
	changed := filepath.Join(t.TempDir(), "release")
	if err := os.CopyFS(changed, os.DirFS(r.dir)); err != nil {
		t.Fatal(err)
	}
	flipByte(t, filepath.Join(changed, archiveName(platforms()[1])))
	cmd = exec.Command("sha256sum", "--strict", "-c", "checksums.txt")
	cmd.Dir = changed
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), archiveName(platforms()[1])+": FAILED") {
		t.Errorf("sha256sum -c on a changed archive: %v\n%s", err, out)
	}
}

// flipByte changes one byte in the middle of a file.
func flipByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// releaseFiles lists a release's files, slash-separated and sorted.
func releaseFiles(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		names = append(names, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// TestReproducible: a second build of the same commit (the signed one)
// writes the same bytes, but for the signatures and the chart repository,
// which hold the time they were made.
func TestReproducible(t *testing.T) {
	a := build(t)
	b, _ := signedBuild(t)
	fa, fb := releaseFiles(t, a.dir), releaseFiles(t, b.dir)
	unsignedOnes := func(names []string) []string {
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return strings.HasSuffix(n, ".prov") })
	}
	if !slices.Equal(fa, unsignedOnes(fb)) {
		t.Fatalf("the builds wrote %q and %q", fa, fb)
	}
	for _, name := range fa {
		if (strings.HasPrefix(name, "aws-ccm-") && strings.HasSuffix(name, ".tgz") || strings.HasPrefix(name, "charts/") && strings.HasSuffix(name, ".tgz")) &&
			!slices.Contains(fb, name+".prov") {
			t.Errorf("the signed build has no %s.prov", name)
		}
	}
	compared := 0
	for _, name := range fa {
		if strings.HasPrefix(name, "charts/") {
			continue
		}
		x, err := os.ReadFile(filepath.Join(a.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two builds of the same commit", name)
		}
		compared++
	}
	// The archives, SBOMs and Helm 4 plugin tarballs of both platforms,
	// the Helm 3 plugin and checksums.txt.
	if want := 3*len(platforms()) + 2; compared != want {
		t.Errorf("compared %d files, want %d: %q", compared, want, fa)
	}
}

// cdxBOM is what the tests read of a CycloneDX SBOM.
type cdxBOM struct {
	BOMFormat    string `json:"bomFormat"`
	SpecVersion  string `json:"specVersion"`
	SerialNumber string `json:"serialNumber"`
	Metadata     struct {
		Timestamp string       `json:"timestamp"`
		Component cdxComponent `json:"component"`
	} `json:"metadata"`
	Components []cdxComponent `json:"components"`
}

type cdxComponent struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	PURL    string `json:"purl"`
	Hashes  []struct {
		Alg, Content string
	} `json:"hashes"`
}

// TestSBOM: each archive's SBOM is CycloneDX, names the release as its
// subject, and lists every module either program was built from (as Go
// recorded them in the binaries) at its version, with its hash.
func TestSBOM(t *testing.T) {
	r := build(t)
	for _, p := range platforms() {
		name := strings.TrimSuffix(strings.TrimSuffix(archiveName(p), ".zip"), ".tar.gz") + ".sbom.cdx.json"
		b, err := os.ReadFile(filepath.Join(r.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var bom cdxBOM
		if err := json.Unmarshal(b, &bom); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if bom.BOMFormat != "CycloneDX" || bom.SpecVersion == "" || bom.SerialNumber != "" || bom.Metadata.Timestamp != "" {
			t.Errorf("%s: format %q %q, serial number %q, timestamp %q", name, bom.BOMFormat, bom.SpecVersion, bom.SerialNumber, bom.Metadata.Timestamp)
		}
		if c := bom.Metadata.Component; c.Name != "github.com/aws-ccm-renderer/aws-ccm-renderer" || c.Version != version {
			t.Errorf("%s describes %s %s", name, c.Name, c.Version)
		}
		listed := map[string]cdxComponent{}
		for _, c := range bom.Components {
			listed[c.Name+"@"+c.Version] = c
		}
		files := unpack(t, filepath.Join(r.dir, archiveName(p)))
		for prog, m := range files {
			bi, err := buildinfo.Read(bytes.NewReader(m.data))
			if err != nil {
				t.Fatal(err)
			}
			if len(bi.Deps) < 10 {
				t.Fatalf("%s: %s records %d modules", p, prog, len(bi.Deps))
			}
			for _, d := range bi.Deps {
				if d.Replace != nil {
					d = d.Replace
				}
				c, ok := listed[d.Path+"@"+d.Version]
				if !ok {
					t.Errorf("%s: %s is built from %s %s, which the SBOM does not list", name, prog, d.Path, d.Version)
					continue
				}
				if !slices.ContainsFunc(c.Hashes, func(h struct{ Alg, Content string }) bool { return h.Alg == "SHA-256" && h.Content != "" }) {
					t.Errorf("%s: %s %s has no SHA-256", name, d.Path, d.Version)
				}
			}
		}
	}
}

// distProgram builds hack/dist, which make dist runs, for the tests of
// its refusals.
func distProgram(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "dist")
	cmd := exec.Command("go", "build", "-o", p, "./hack/dist")
	cmd.Dir = testtools.Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./hack/dist: %v\n%s", err, out)
	}
	return p
}

// TestRefusals: bad input is one line on stderr, exit status 1 and nothing
// on stdout, and no file written.
func TestRefusals(t *testing.T) {
	prog := distProgram(t)
	tools := []string{"-helm3", testtools.Helm3(t), "-helm4", testtools.Helm4(t), "-cyclonedx", testtools.CycloneDX(t)}
	key := testtools.NewPGPKey(t, "releaser")
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"an unknown flag", []string{"-bogus"}, nil, "flag provided but not defined: -bogus"},
		{"a git describe version", append([]string{"-version", "37d0cf9-dirty"}, tools...), nil, `VERSION="37d0cf9-dirty" is not a release version: give vX.Y.Z`},
		{"no v", append([]string{"-version", "1.2.3"}, tools...), nil, "is not a release version"},
		{"build metadata", append([]string{"-version", "v1.2.3+meta"}, tools...), nil, "is not a release version"},
		{"an unknown platform", append([]string{"-version", version, "-platforms", "linux/386"}, tools...), nil, `platform "linux/386" is not one of the release's`},
		{"no Helm 4", []string{"-version", version, "-helm3", testtools.Helm3(t), "-cyclonedx", testtools.CycloneDX(t)}, nil, "-helm4 is required"},
		{"a tool that is not there", append([]string{"-version", version, "-helm3", filepath.Join(t.TempDir(), "helm")}, tools[2:]...), nil, "not there (make tools-dist builds it)"},
		{"a key without a keyring", append([]string{"-version", version, "-sign-key", key.Name}, tools...), nil, "SIGN_KEY and KEYRING go together"},
		{"a keyring that is not there", append([]string{"-version", version, "-sign-key", key.Name, "-keyring", filepath.Join(t.TempDir(), "none.gpg")}, tools...), nil, "KEYRING="},
		{"a key not in the keyring", append([]string{"-version", version, "-platforms", "host", "-sign-key", "nobody", "-keyring", key.SecretRing}, tools...), nil, `SIGN_KEY="nobody" in KEYRING=` + key.SecretRing + `: no key with that user ID`},
		{"a public keyring", append([]string{"-version", version, "-sign-key", key.Name, "-keyring", key.PublicRing}, tools...), nil, "holds only the public key: give the secret keyring"},
		{"not a keyring", append([]string{"-version", version, "-sign-key", key.Name, "-keyring", filepath.Join(testtools.Root(), "go.mod")}, tools...), nil, "not a keyring Helm reads"},
		{"a SOURCE_DATE_EPOCH that is no number", append([]string{"-version", version}, tools...), []string{"SOURCE_DATE_EPOCH=yesterday"}, `SOURCE_DATE_EPOCH="yesterday" is not a number of seconds`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(prog, append(tc.args, "-out", out)...)
			cmd.Dir = testtools.Root()
			cmd.Env = append(os.Environ(), tc.env...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if testtools.ExitCode(err) != 1 || stdout.Len() > 0 {
				t.Errorf("exit %v, stdout %q", err, stdout.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "dist: ") || !strings.Contains(last, tc.want) {
				t.Errorf("stderr %q, want one line with %q", stderr.String(), tc.want)
			}
			if len(lines) > 1 && !strings.Contains(lines[0], "unsigned build") {
				t.Errorf("stderr has more than the error: %q", stderr.String())
			}
			for _, f := range releaseFiles(t, out) {
				t.Errorf("wrote %s", f)
			}
		})
	}
}

var (
	signedOnce sync.Once
	signed     *release
	signedKey  testtools.PGPKey
	signedErr  error
)

// signedBuild is a make dist run signed with a key made for the test.
func signedBuild(t *testing.T) (*release, testtools.PGPKey) {
	t.Helper()
	signedOnce.Do(func() {
		// The key outlives the test that makes it: its keyrings are
		// copied to the run's directory.
		signedKey = testtools.NewPGPKey(t, "aws-ccm releaser")
		for _, ring := range []*string{&signedKey.PublicRing, &signedKey.SecretRing} {
			b, err := os.ReadFile(*ring)
			if err != nil {
				signedErr = err
				return
			}
			*ring = filepath.Join(tmpRoot, filepath.Base(*ring))
			if signedErr = os.WriteFile(*ring, b, 0o600); signedErr != nil {
				return
			}
		}
		dir := filepath.Join(tmpRoot, "signed")
		stdout, stderr, err := makeDist(t, dir, "SIGN_KEY="+signedKey.Name, "KEYRING="+signedKey.SecretRing)
		if err != nil {
			signedErr = fmt.Errorf("make dist SIGN_KEY=...: %v\n%s%s", err, stdout, stderr)
		} else if bytes.Contains(stderr, []byte("unsigned")) {
			signedErr = fmt.Errorf("a signed make dist says it is unsigned: %s", stderr)
		}
		signed = &release{dir: dir, stdout: string(stdout)}
	})
	if signedErr != nil {
		t.Fatal(signedErr)
	}
	return signed, signedKey
}

// pluginTarball is a platform's Helm 4 plugin tarball.
func pluginTarball(p string) string {
	goos, goarch, _ := strings.Cut(p, "/")
	return "aws-ccm-" + strings.TrimPrefix(version, "v") + "+" + goos + "." + goarch + ".tgz"
}

// TestHelm4Plugin: Helm 4 installs the host's signed plugin tarball with the
// signer's public key and renders with it; it refuses the tarball when one
// byte changed, when the key is another's, and an unsigned build's tarball
// without --verify=false. Each platform's tarball verifies.
func TestHelm4Plugin(t *testing.T) {
	r, key := signedBuild(t)
	helm := testtools.Helm4(t)
	host := runtime.GOOS + "/" + runtime.GOARCH
	for _, p := range platforms() {
		tgz := filepath.Join(r.dir, pluginTarball(p))
		files := testtools.ChartPackage(t, tgz)
		yaml := string(files["aws-ccm/plugin.yaml"])
		if want := strings.TrimSuffix(strings.TrimPrefix(pluginTarball(p), "aws-ccm-"), ".tgz"); !strings.Contains(yaml, "\nversion: "+want+"\n") {
			t.Errorf("%s: plugin.yaml:\n%s", p, yaml)
		}
		if len(files) != 2 || len(files["aws-ccm/aws-ccm-renderer"]) == 0 && len(files["aws-ccm/aws-ccm-renderer.exe"]) == 0 {
			t.Errorf("%s holds %d files", pluginTarball(p), len(files))
		}
		out, errOut, err := testtools.Run(t, testtools.HelmEnv(t), helm, "plugin", "verify", tgz, "--keyring", key.PublicRing)
		if err != nil || !strings.Contains(string(out), "aws-ccm releaser") {
			t.Errorf("helm plugin verify %s: %v\n%s%s", pluginTarball(p), err, out, errOut)
		}
	}

	t.Run("installs and renders", func(t *testing.T) {
		env := testtools.HelmEnv(t)
		out := testtools.MustRun(t, env, helm, "plugin", "install", filepath.Join(r.dir, pluginTarball(host)), "--keyring", key.PublicRing)
		if !strings.Contains(string(out), "Installed plugin: aws-ccm") {
			t.Fatalf("helm plugin install: %s", out)
		}
		list := string(testtools.MustRun(t, env, helm, "plugin", "list"))
		if want := strings.TrimSuffix(strings.TrimPrefix(pluginTarball(host), "aws-ccm-"), ".tgz"); !strings.Contains(list, want) {
			t.Errorf("helm plugin list shows no %s:\n%s", want, list)
		}
		rendered := testtools.MustRun(t, env, helm, "template", "ccm", testtools.UpstreamChart(t, testtools.LatestChartVersion),
			"--namespace", "kube-system", "--post-renderer", "aws-ccm", "--post-renderer-args=--distro=rke2")
		if !bytes.Contains(rendered, []byte("node-role.kubernetes.io/control-plane")) || !bytes.Contains(rendered, []byte("kind: DaemonSet")) {
			t.Errorf("helm template with the installed plugin:\n%s", rendered)
		}
	})

	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, dir string) (tgz string, args []string)
		want    string
	}{
		{"one byte changed", func(t *testing.T, dir string) (string, []string) {
			tgz := copyWithProv(t, filepath.Join(r.dir, pluginTarball(host)), dir)
			flipByte(t, tgz)
			return tgz, []string{"--keyring", key.PublicRing}
		}, "sha256 sum does not match"},
		{"another key", func(t *testing.T, dir string) (string, []string) {
			return filepath.Join(r.dir, pluginTarball(host)), []string{"--keyring", testtools.NewPGPKey(t, "someone else").PublicRing}
		}, "signature"},
		{"unsigned", func(t *testing.T, dir string) (string, []string) {
			return filepath.Join(build(t).dir, pluginTarball(host)), nil
		}, "no provenance file"},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			env := testtools.HelmEnv(t)
			tgz, args := tc.prepare(t, t.TempDir())
			out, errOut, err := testtools.Run(t, env, helm, append([]string{"plugin", "install", tgz}, args...)...)
			if err == nil || !strings.Contains(string(errOut), tc.want) {
				t.Errorf("helm plugin install: %v, want an error with %q\n%s%s", err, tc.want, out, errOut)
			}
			if list := testtools.MustRun(t, env, helm, "plugin", "list"); bytes.Contains(list, []byte("aws-ccm")) {
				t.Errorf("installed anyway:\n%s", list)
			}
		})
	}
}

// copyWithProv copies a tarball and its .prov into dir.
func copyWithProv(t *testing.T, tgz, dir string) string {
	t.Helper()
	for _, suffix := range []string{"", ".prov"} {
		b, err := os.ReadFile(tgz + suffix)
		if err != nil {
			t.Fatal(err)
		}
		testtools.WriteFile(t, filepath.Join(dir, filepath.Base(tgz)+suffix), b)
	}
	return filepath.Join(dir, filepath.Base(tgz))
}

// server serves a directory on loopback, as a release's download URL, and
// counts the requests.
type server struct {
	URL  string
	mu   sync.Mutex
	hits []string
}

func serve(t *testing.T, dir string) *server {
	t.Helper()
	s := &server{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits = append(s.hits, r.URL.Path)
		s.mu.Unlock()
		http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *server) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hits)
}

// copyDir copies a directory into a new temporary one.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// unpackedHelm3Plugin unpacks the release's Helm 3 plugin archive into a
// directory aws-ccm and returns it.
func unpackedHelm3Plugin(t *testing.T, r *release) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "aws-ccm")
	for name, m := range unpack(t, filepath.Join(r.dir, helm3PluginArchive)) {
		testtools.WriteFile(t, filepath.Join(dir, name), m.data)
		if err := os.Chmod(filepath.Join(dir, name), m.mode.Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// pluginFiles copies the Helm 3 plugin's files of the repository's top
// (dist.Helm3PluginFiles), with their modes, into a new directory named
// name, and returns it.
func pluginFiles(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	for _, f := range dist.Helm3PluginFiles {
		src := filepath.Join(testtools.Root(), f)
		fi, err := os.Stat(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(copyFile(t, src, dir), fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// pluginRepository makes a git repository of the Helm 3 plugin's files as
// they are here (pluginFiles), named as the project's: a commit tagged
// with the release's version, then one that adds a file, LATER. It
// returns the repository's file:// URL, which helm plugin install takes as
// it takes https://github.com/aws-ccm-renderer/aws-ccm-renderer.
//
// What Helm's installer does with it (Helm 3's pkg/plugin/installer and
// Helm 4's internal/plugin/installer, read in their source; these tests
// show it): a source that is a path on the machine is a local directory
// (linked, no git), and a plain path to a repository is no exception; an
// http(s) URL that answers HEAD as an archive is downloaded; anything else
// goes to the VCS installer, where Masterminds/vcs detects the VCS: of a
// file:// URL from the .git in its path, of github.com from the host. Git
// clones it into Helm's cache, checks out --version (a tag, or a semver
// constraint matched against the tags), and the clone, .git included, is
// copied into the plugins directory under the URL's last element:
// aws-ccm-renderer, not the plugin's name, aws-ccm.
func pluginRepository(t *testing.T) string {
	t.Helper()
	dir := pluginFiles(t, "aws-ccm-renderer")
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	git := func(args ...string) { testtools.MustRun(t, env, "git", append([]string{"-C", dir}, args...)...) }
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "the plugin")
	git("tag", version)
	testtools.WriteFile(t, filepath.Join(dir, "LATER"), []byte("after the release\n"))
	git("add", "LATER")
	git("commit", "-q", "-m", "after the release")
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// TestHelm3Plugin: Helm 3 installs the plugin from the repository's files,
// from a git repository of them by its URL, and from the unpacked release;
// the install hook downloads the host's archive from the release URL (here
// a loopback server), or takes a local one, checks it against
// checksums.txt, and helm aws-ccm runs the chart commands;
// bin/aws-ccm-renderer is Helm 3's post-renderer. From a git repository,
// the release is the newest tag's at or before the commit checked out:
// --version picks the tag.
func TestHelm3Plugin(t *testing.T) {
	r := build(t)
	host := runtime.GOOS + "/" + runtime.GOARCH
	helm := testtools.Helm3(t)
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	for _, tc := range []struct {
		name     string
		plugin   func(t *testing.T, srv string) string // what helm plugin install takes
		flags    []string                              // and its flags
		env      func(t *testing.T, srv string) []string
		download bool   // the archive comes from the server
		dir      string // the plugin's directory, when not aws-ccm
		later    bool   // the repository's commit after the tag is installed
	}{
		{"from the repository's files, downloaded", func(t *testing.T, _ string) string {
			return pluginFiles(t, "aws-ccm")
		}, nil, func(t *testing.T, srv string) []string {
			return []string{"AWS_CCM_RELEASE_URL=" + srv, "AWS_CCM_VERSION=" + version}
		}, true, "", false},
		{"from the git repository's URL, its newest tag downloaded", func(t *testing.T, _ string) string { return pluginRepository(t) }, nil,
			func(t *testing.T, srv string) []string { return []string{"AWS_CCM_RELEASE_URL=" + srv} }, true, "aws-ccm-renderer", true},
		{"from the git repository's URL at --version, air-gapped", func(t *testing.T, _ string) string { return pluginRepository(t) },
			[]string{"--version", version}, func(t *testing.T, srv string) []string {
				dir := t.TempDir()
				copyFile(t, filepath.Join(r.dir, "checksums.txt"), dir)
				return []string{"AWS_CCM_RELEASE_URL=" + srv, "AWS_CCM_ARCHIVE=" + copyFile(t, filepath.Join(r.dir, archiveName(host)), dir)}
			}, false, "aws-ccm-renderer", false},
		{"from the unpacked release, downloaded", func(t *testing.T, _ string) string { return unpackedHelm3Plugin(t, r) }, nil,
			func(t *testing.T, srv string) []string { return []string{"AWS_CCM_RELEASE_URL=" + srv} }, true, "", false},
		{"from the release URL, downloaded", func(t *testing.T, srv string) string { return srv + "/" + helm3PluginArchive }, nil,
			func(t *testing.T, srv string) []string { return []string{"AWS_CCM_RELEASE_URL=" + srv} }, true, "", false},
		{"air-gapped, AWS_CCM_ARCHIVE", func(t *testing.T, _ string) string { return unpackedHelm3Plugin(t, r) }, nil,
			func(t *testing.T, srv string) []string {
				dir := t.TempDir()
				copyFile(t, filepath.Join(r.dir, "checksums.txt"), dir)
				return []string{"AWS_CCM_RELEASE_URL=" + srv, "AWS_CCM_ARCHIVE=" + copyFile(t, filepath.Join(r.dir, archiveName(host)), dir)}
			}, false, "", false},
		{"air-gapped, the archive beside the plugin", func(t *testing.T, _ string) string {
			dir := unpackedHelm3Plugin(t, r)
			copyFile(t, filepath.Join(r.dir, archiveName(host)), dir)
			copyFile(t, filepath.Join(r.dir, "checksums.txt"), dir)
			return dir
		}, nil, func(t *testing.T, srv string) []string { return []string{"AWS_CCM_RELEASE_URL=" + srv} }, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, r.dir)
			env := append(testtools.HelmEnv(t), tc.env(t, srv.URL)...)
			out := testtools.MustRun(t, env, helm, append([]string{"plugin", "install", tc.plugin(t, srv.URL)}, tc.flags...)...)
			if want := "aws-ccm: installed aws-ccm-renderer " + version + " (" + host + ")"; !strings.Contains(string(out), want) || !strings.Contains(string(out), "SHA-256 checked") {
				t.Errorf("helm plugin install: %q, want %q", out, want)
			}
			wantHits := []string(nil)
			if tc.download {
				wantHits = []string{"/checksums.txt", "/" + archiveName(host)}
			}
			got := slices.DeleteFunc(srv.requests(), func(p string) bool { return p == "/"+helm3PluginArchive })
			if !slices.Equal(got, wantHits) {
				t.Errorf("the release URL served %q, want %q", got, wantHits)
			}
			if out := testtools.MustRun(t, env, helm, "aws-ccm", "version"); !strings.HasPrefix(string(out), "aws-ccm-renderer "+version+" (") {
				t.Errorf("helm aws-ccm version: %q", out)
			}
			rendered := testtools.MustRun(t, env, helm, "aws-ccm", "template", "ccm", chart, "--namespace", "kube-system", "--distro=rke2")
			if !bytes.Contains(rendered, []byte("kind: DaemonSet")) || !bytes.Contains(rendered, []byte("node-role.kubernetes.io/control-plane")) {
				t.Errorf("helm aws-ccm template:\n%s", rendered)
			}
			if plan := testtools.MustRun(t, env, helm, "aws-ccm", "plan", "--distro", "rke2", "--brief"); len(plan) == 0 {
				t.Error("helm aws-ccm plan printed nothing")
			}
			plugins := strings.TrimSpace(string(testtools.MustRun(t, env, helm, "env", "HELM_PLUGINS")))
			dir := filepath.Join(plugins, cmp.Or(tc.dir, "aws-ccm"))
			if _, err := os.Stat(filepath.Join(dir, "LATER")); (err == nil) != tc.later {
				t.Errorf("the repository's commit after the tag installed: %v, want %v", err == nil, tc.later)
			}
			post := testtools.MustRun(t, env, helm, "template", "ccm", chart, "--namespace", "kube-system",
				"--post-renderer", filepath.Join(dir, "bin", "aws-ccm-renderer"), "--post-renderer-args=--distro=rke2")
			if !bytes.Equal(post, rendered) {
				t.Errorf("helm template --post-renderer bin/aws-ccm-renderer differs from helm aws-ccm template:\n%s", post)
			}
		})
	}
}

// TestHelm4PluginFromRepository: Helm 4 installs from the repository's
// URL only with --verify=false, as a clone has no .prov to verify; what it
// installs is the plugin at the repository's top, Helm 3's helm aws-ccm
// (a legacy plugin to Helm 4), whose hook installs the newest tag's
// release, and not the post-renderer plugin, which only the tarballs are.
func TestHelm4PluginFromRepository(t *testing.T) {
	r := build(t)
	host := runtime.GOOS + "/" + runtime.GOARCH
	helm := testtools.Helm4(t)
	srv := serve(t, r.dir)
	env := append(testtools.HelmEnv(t), "AWS_CCM_RELEASE_URL="+srv.URL)
	repo := pluginRepository(t)
	out, errOut, err := testtools.Run(t, env, helm, "plugin", "install", repo, "--version", version)
	if err == nil || !strings.Contains(string(errOut), "--verify=false") {
		t.Errorf("helm plugin install without --verify=false: %v, want a refusal naming --verify=false\n%s%s", err, out, errOut)
	}
	out = testtools.MustRun(t, env, helm, "plugin", "install", repo, "--version", version, "--verify=false")
	if want := "aws-ccm: installed aws-ccm-renderer " + version + " (" + host + ")"; !strings.Contains(string(out), want) {
		t.Errorf("helm plugin install --verify=false: %q, want %q", out, want)
	}
	if out := testtools.MustRun(t, env, helm, "aws-ccm", "version"); !strings.HasPrefix(string(out), "aws-ccm-renderer "+version+" (") {
		t.Errorf("helm aws-ccm version: %q", out)
	}
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	rendered := testtools.MustRun(t, env, helm, "aws-ccm", "template", "ccm", chart, "--namespace", "kube-system", "--distro=rke2")
	if !bytes.Contains(rendered, []byte("kind: DaemonSet")) || !bytes.Contains(rendered, []byte("node-role.kubernetes.io/control-plane")) {
		t.Errorf("helm aws-ccm template:\n%s", rendered)
	}
	out, errOut, err = testtools.Run(t, env, helm, "template", "ccm", chart, "--namespace", "kube-system", "--post-renderer", "aws-ccm")
	if err == nil || !strings.Contains(string(errOut), "postrenderer/v1") {
		t.Errorf("helm template --post-renderer aws-ccm: %v, want no postrenderer/v1 plugin found\n%s%s", err, out, errOut)
	}
}

// copyFile copies a file into dir and returns the copy's path.
func copyFile(t *testing.T, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.Base(src))
	testtools.WriteFile(t, p, b)
	return p
}

// TestHelm3PluginRefusals: the install hook refuses an archive whose
// SHA-256 is not checksums.txt's, a local archive without checksums.txt,
// a checksums.txt without the archive, and a release that is not there,
// each with one line of its own, and installs no program.
func TestHelm3PluginRefusals(t *testing.T) {
	r := build(t)
	host := runtime.GOOS + "/" + runtime.GOARCH
	helm := testtools.Helm3(t)
	for _, tc := range []struct {
		name string
		env  func(t *testing.T, plugin string) []string
		want string
	}{
		{"a changed download", func(t *testing.T, _ string) []string {
			dir := copyDir(t, r.dir)
			flipByte(t, filepath.Join(dir, archiveName(host)))
			return []string{"AWS_CCM_RELEASE_URL=" + serve(t, dir).URL}
		}, "aws-ccm: " + archiveName(host) + " has SHA-256 "},
		{"a changed local archive", func(t *testing.T, _ string) []string {
			dir := t.TempDir()
			copyFile(t, filepath.Join(r.dir, "checksums.txt"), dir)
			a := copyFile(t, filepath.Join(r.dir, archiveName(host)), dir)
			flipByte(t, a)
			return []string{"AWS_CCM_ARCHIVE=" + a}
		}, "but checksums.txt gives"},
		{"a local archive without checksums.txt", func(t *testing.T, _ string) []string {
			return []string{"AWS_CCM_ARCHIVE=" + copyFile(t, filepath.Join(r.dir, archiveName(host)), t.TempDir())}
		}, "checksums.txt to check " + archiveName(host) + " against"},
		{"an archive beside the plugin without checksums.txt", func(t *testing.T, plugin string) []string {
			copyFile(t, filepath.Join(r.dir, archiveName(host)), plugin)
			return nil
		}, "no checksums.txt beside"},
		{"a checksums.txt without the archive", func(t *testing.T, _ string) []string {
			dir := t.TempDir()
			testtools.WriteFile(t, filepath.Join(dir, "checksums.txt"), []byte(strings.Repeat("0", 64)+"  other.tar.gz\n"))
			return []string{"AWS_CCM_ARCHIVE=" + copyFile(t, filepath.Join(r.dir, archiveName(host)), dir)}
		}, "lists no " + archiveName(host)},
		{"a release that is not there", func(t *testing.T, _ string) []string {
			return []string{"AWS_CCM_RELEASE_URL=" + serve(t, r.dir).URL, "AWS_CCM_VERSION=v9.9.9"}
		}, "cannot download"},
		{"AWS_CCM_ARCHIVE not a file", func(t *testing.T, _ string) []string {
			return []string{"AWS_CCM_ARCHIVE=" + t.TempDir()}
		}, "is not a file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plugin := unpackedHelm3Plugin(t, r)
			env := append(testtools.HelmEnv(t), tc.env(t, plugin)...)
			out, errOut, err := testtools.Run(t, env, helm, "plugin", "install", plugin)
			var ours []string
			for line := range strings.Lines(string(errOut)) {
				if strings.HasPrefix(line, "aws-ccm: ") {
					ours = append(ours, line)
				}
			}
			if err == nil || len(ours) != 1 || !strings.Contains(ours[0], tc.want) {
				t.Errorf("helm plugin install: %v, want one line with %q on stderr:\n%s%s", err, tc.want, out, errOut)
			}
			if _, err := os.Stat(filepath.Join(plugin, "bin")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("bin/ is there after a refusal (%v)", err)
			}
		})
	}
}

// TestGoInstallable: go install github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/...@vX.Y.Z
// builds the module as a dependency, which go refuses when its go.mod has
// replace or exclude directives: it has none (as go mod edit reads it).
func TestGoInstallable(t *testing.T) {
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = testtools.Root()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Module  struct{ Path string }
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
		Exclude []struct{ Path, Version string }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	if mod.Module.Path != "github.com/aws-ccm-renderer/aws-ccm-renderer" {
		t.Fatalf("go mod edit -json read module %q", mod.Module.Path)
	}
	for _, r := range mod.Replace {
		t.Errorf("go.mod replaces %s with %s %s: go install ...@version refuses a module with replace directives", r.Old.Path, r.New.Path, r.New.Version)
	}
	for _, e := range mod.Exclude {
		t.Errorf("go.mod excludes %s %s: go install ...@version refuses a module with exclude directives", e.Path, e.Version)
	}
}

// TestUsage: -h prints the usage with examples on stdout, exit status 0.
func TestUsage(t *testing.T) {
	out, errOut, err := testtools.Run(t, os.Environ(), distProgram(t), "-h")
	if err != nil || len(errOut) > 0 || !strings.Contains(string(out), "Examples:\n  make dist VERSION=v1.2.3\n") || !strings.Contains(string(out), "-sign-key") {
		t.Errorf("-h: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
}
