package dist

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// root is the repository's top directory, whose plugin and chart files a
// release reads.
var root = filepath.Join("..", "..")

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"v1.2.3", "v0.0.0", "v10.20.30", "v1.2.3-rc.1", "v1.2.3-alpha-2.x"} {
		if err := CheckVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, v := range []string{"", "1.2.3", "v1.2", "v01.2.3", "v1.2.3+meta", "37d0cf9-dirty", "v1.2.3-", "v1.2.3-rc..1"} {
		if err := CheckVersion(v); err == nil || !strings.Contains(err.Error(), "is not a release version: give vX.Y.Z") {
			t.Errorf("%q: %v", v, err)
		}
	}
}

func TestParsePlatforms(t *testing.T) {
	host := Platform{runtime.GOOS, runtime.GOARCH}
	got, err := ParsePlatforms("linux/arm64, host," + runtime.GOOS + "/" + runtime.GOARCH + ",linux/arm64")
	if want := []Platform{{"linux", "arm64"}, host}; err != nil || !slices.Equal(got, want) && host != want[0] {
		t.Errorf("got %v %v, want %v", got, err, want)
	}
	all, err := ParsePlatforms(strings.Join(AllPlatforms, ","))
	if err != nil || len(all) != len(AllPlatforms) || all[4] != (Platform{"windows", "amd64"}) {
		t.Errorf("all: %v %v", all, err)
	}
	for _, s := range []string{"linux/386", "", "linux", "linux/amd64,,"} {
		if _, err := ParsePlatforms(s); err == nil || !strings.Contains(err.Error(), "is not one of the release's: linux/amd64, linux/arm64, darwin/amd64, darwin/arm64, windows/amd64 (or host)") {
			t.Errorf("%q: %v", s, err)
		}
	}
}

func TestNames(t *testing.T) {
	win, linux := Platform{"windows", "amd64"}, Platform{"linux", "arm64"}
	for got, want := range map[string]string{
		ArchiveName("v1.2.3", "linux", "arm64") + ArchiveExt("linux"):     "aws-ccm-renderer_v1.2.3_linux_arm64.tar.gz",
		ArchiveName("v1.2.3", "windows", "amd64") + ArchiveExt("windows"): "aws-ccm-renderer_v1.2.3_windows_amd64.zip",
		PluginVersion("v1.2.3-rc.1", "darwin", "arm64"):                   "1.2.3-rc.1+darwin.arm64",
		Helm3PluginArchive("v1.2.3"):                                      "aws-ccm-1.2.3.tar.gz",
		win.Exe("aws-ccm-renderer") + " " + linux.Exe("aws-ccm-renderer"): "aws-ccm-renderer.exe aws-ccm-renderer",
		win.String(): "windows_amd64",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	// Every name a release writes is one Clean replaces.
	for _, name := range []string{ArchiveName("v1.2.3", "linux", "amd64") + ".tar.gz", ArchiveName("v1.2.3", "linux", "amd64") + ".sbom.cdx.json",
		"aws-ccm-" + PluginVersion("v1.2.3", "linux", "amd64") + ".tgz", "aws-ccm-" + PluginVersion("v1.2.3", "linux", "amd64") + ".tgz.prov",
		Helm3PluginArchive("v1.2.3"), "checksums.txt", "charts",
		// and what make dist's signing adds (hack/sign)
		"checksums.txt.sigstore.json", "cosign.pub", "aws-ccm-renderer_v1.2.3.provenance.sigstore.json"} {
		if !Owned(name) {
			t.Errorf("%s is not owned", name)
		}
	}
	for _, name := range []string{"images", "helm-plugin", "aws-ccm-renderer", "checksums.txt.bak", "notes.txt"} {
		if Owned(name) {
			t.Errorf("%s is owned", name)
		}
	}
}

// TestClean: an earlier release's files go, others stay.
func TestClean(t *testing.T) {
	out := t.TempDir()
	for _, f := range []string{"checksums.txt", "aws-ccm-1.0.0.tar.gz", "charts/index.yaml", "images/index.json", "README"} {
		testtools.WriteFile(t, filepath.Join(out, f), []byte(f))
	}
	if err := Clean(out); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{"README", "images"}) {
		t.Errorf("left %q", left)
	}
	if err := Clean(filepath.Join(out, "none")); err == nil {
		t.Error("a missing directory is cleaned")
	}
}

func TestArgs(t *testing.T) {
	got := BuildArgs("v1.2.3", "aws-ccm-renderer-helm", "/stage/aws-ccm-renderer-helm.exe")
	want := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w -X github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli.version=v1.2.3",
		"-o", "/stage/aws-ccm-renderer-helm.exe", "./cmd/aws-ccm-renderer-helm"}
	if !slices.Equal(got, want) {
		t.Errorf("build: %q", got)
	}
	env := make([]string, 1, 8)
	env[0] = "PATH=/bin"
	a, b := BuildEnv(env, Platform{"linux", "arm64"}), BuildEnv(env, Platform{"darwin", "amd64"})
	if !slices.Equal(a, []string{"PATH=/bin", "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64"}) || b[2] != "GOOS=darwin" {
		t.Errorf("env: %q %q (one platform's environment must not change another's)", a, b)
	}
	got = SBOMArgs("v1.2.3", "bin/aws-ccm-renderer-helm", "out/x.sbom.cdx.json")
	want = []string{"bin", "-json", "-noserial", "-notimestamp", "-version", "v1.2.3", "-output", "out/x.sbom.cdx.json", "bin/aws-ccm-renderer-helm"}
	if !slices.Equal(got, want) {
		t.Errorf("sbom: %q", got)
	}
	signed, unsigned := &Config{SignKey: "Release Key", Keyring: "secring.gpg"}, &Config{}
	for _, tc := range []struct {
		c      *Config
		plugin bool
		want   []string
	}{
		{signed, true, []string{"--sign", "--key", "Release Key", "--keyring", "secring.gpg"}},
		{signed, false, []string{"--sign", "--key", "Release Key", "--keyring", "secring.gpg"}},
		{unsigned, true, []string{"--sign=false"}}, // Helm 4 signs unless told not to
		{unsigned, false, nil},
	} {
		if got := tc.c.signArgs(tc.plugin); !slices.Equal(got, tc.want) {
			t.Errorf("key %q, plugin %v: %q, want %q", tc.c.SignKey, tc.plugin, got, tc.want)
		}
	}
}

func TestPluginYAML(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "plugin", "aws-ccm", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	linux, err := Helm4PluginYAML(src, "v1.2.3", Platform{"linux", "amd64"})
	if err != nil || !bytes.Contains(linux, []byte("\nversion: 1.2.3+linux.amd64\n")) || !bytes.Contains(linux, []byte("- command: ${HELM_PLUGIN_DIR}/aws-ccm-renderer\n")) {
		t.Errorf("linux: %v\n%s", err, linux)
	}
	win, err := Helm4PluginYAML(src, "v1.2.3", Platform{"windows", "amd64"})
	if err != nil || !bytes.Contains(win, []byte("\nversion: 1.2.3+windows.amd64\n")) || !bytes.Contains(win, []byte("- command: ${HELM_PLUGIN_DIR}/aws-ccm-renderer.exe\n")) {
		t.Errorf("windows: %v\n%s", err, win)
	}
	if len(win) != len(src)-len("0.1.0")+len("1.2.3+windows.amd64")+len(".exe") {
		t.Errorf("more than the version and the command changed:\n%s", win)
	}
	for _, broken := range []string{"name: aws-ccm\n", strings.Replace(string(src), "version:", "# version:", 1)} {
		if _, err := Helm4PluginYAML([]byte(broken), "v1.2.3", Platform{"linux", "amd64"}); err == nil || !strings.Contains(err.Error(), "no version line or no command") {
			t.Errorf("%q: %v", broken, err)
		}
	}

	src, err = os.ReadFile(filepath.Join(root, "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Helm3PluginYAML(src, "v2.0.0-rc.1")
	if want := strings.Replace(string(src), "\nversion: 0.1.0\n", "\nversion: 2.0.0-rc.1\n", 1); err != nil || string(got) != want {
		t.Errorf("helm 3: %v\n%s", err, got)
	}
	if _, err := Helm3PluginYAML([]byte("name: aws-ccm\n"), "v1.2.3"); err == nil || !strings.Contains(err.Error(), "no version line to set") {
		t.Errorf("no version: %v", err)
	}
}

func TestChartDependencies(t *testing.T) {
	lock, err := os.ReadFile(filepath.Join(root, ChartDir, "Chart.lock"))
	if err != nil {
		t.Fatal(err)
	}
	deps, err := ChartDependencies(lock)
	if err != nil || len(deps) != 1 || !strings.HasPrefix(deps[0], "aws-cloud-controller-manager-0.0.") || !strings.HasSuffix(deps[0], ".tgz") {
		t.Errorf("%q %v", deps, err)
	}
	for _, bad := range []string{"dependencies: []\n", "dependencies: {\n", ""} {
		if _, err := ChartDependencies([]byte(bad)); err == nil || !strings.Contains(err.Error(), "no dependencies read") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// tools writes stand-ins for Helm 3, Helm 4 and cyclonedx-gomod, which New
// only looks for, into options that New takes.
func tools(t *testing.T) Options {
	dir := t.TempDir()
	o := Options{Version: "v1.2.3", Platforms: "host", Out: filepath.Join(dir, "out"), SourceDateEpoch: "1700000000",
		Helm3: filepath.Join(dir, "helm"), Helm4: filepath.Join(dir, "helm4"), CycloneDX: filepath.Join(dir, "cyclonedx-gomod")}
	for _, p := range []string{o.Helm3, o.Helm4, o.CycloneDX} {
		testtools.WriteFile(t, p, nil)
	}
	return o
}

// TestNew: what the options say, checked before anything is built.
func TestNew(t *testing.T) {
	o := tools(t)
	o.Charts = string(os.PathListSeparator) + "/a" + string(os.PathListSeparator) + string(os.PathListSeparator) + "/b"
	o.Platforms = "linux/amd64,windows/amd64"
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Charts, []string{"/a", "/b"}) || !c.Epoch.Equal(time.Unix(1700000000, 0)) || len(c.Platforms) != 2 || c.Platforms[1].OS != "windows" ||
		c.Helm3 != o.Helm3 || c.Version != "v1.2.3" {
		t.Errorf("%+v", c)
	}

	key := testtools.NewPGPKey(t, "releaser")
	missing := filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		name string
		set  func(*Options)
		want string
	}{
		{"no version", func(o *Options) { o.Version = "" }, `VERSION="" is not a release version`},
		{"no Helm 4", func(o *Options) { o.Helm4 = "" }, "-helm4 is required"},
		{"a tool that is not there", func(o *Options) { o.CycloneDX = missing }, "-cyclonedx " + missing + ": not there (make tools-dist builds it)"},
		{"a key without a keyring", func(o *Options) { o.SignKey = "releaser" }, "SIGN_KEY and KEYRING go together"},
		{"a keyring without a key", func(o *Options) { o.Keyring = key.SecretRing }, "SIGN_KEY and KEYRING go together"},
		{"a keyring that is not there", func(o *Options) { o.SignKey, o.Keyring = "releaser", missing }, "KEYRING=" + missing + ": "},
		{"another key", func(o *Options) { o.SignKey, o.Keyring = "nobody", key.SecretRing }, `SIGN_KEY="nobody" in KEYRING=` + key.SecretRing + ": no key with that user ID"},
		{"an unknown platform", func(o *Options) { o.Platforms = "host,plan9/amd64" }, `platform "plan9/amd64" is not one of the release's`},
		{"an epoch that is no number", func(o *Options) { o.SourceDateEpoch = "yesterday" }, `SOURCE_DATE_EPOCH="yesterday" is not a number of seconds`},
	} {
		o := tools(t)
		tc.set(&o)
		if c, err := New(o); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %+v %v, want one line with %q", tc.name, c, err, tc.want)
		}
	}
	o = tools(t)
	o.SignKey, o.Keyring = "releaser", key.SecretRing
	if c, err := New(o); err != nil || c.SignKey != "releaser" || c.Keyring != key.SecretRing {
		t.Errorf("signed: %+v %v", c, err)
	}
}

// secretRing writes a secret keyring with a key for each user ID.
func secretRing(t *testing.T, ids ...string) string {
	var ring bytes.Buffer
	for _, id := range ids {
		e, err := openpgp.NewEntity(id, "", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.SerializePrivate(&ring, nil); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "secring.gpg")
	testtools.WriteFile(t, p, ring.Bytes())
	return p
}

// TestFindSigningKey: the key Helm would pick: the user ID given whole,
// else the one that contains it; a public key or another file is refused.
func TestFindSigningKey(t *testing.T) {
	both := secretRing(t, "releaser", "releaser two")
	public := testtools.NewPGPKey(t, "releaser").PublicRing
	for _, tc := range []struct {
		name, ring, id, want string
	}{
		{"whole, and a part of another", both, "releaser", ""},
		{"a part of one", both, "er tw", ""},
		{"a part of two", both, "releas", "more than one user ID contains it: give the whole user ID"},
		{"none", both, "builder", "no key with that user ID"},
		{"a public keyring", public, "releaser", "the keyring holds only the public key"},
		{"not a keyring", filepath.Join(root, "go.mod"), "releaser", "not a keyring Helm reads"},
		{"no file", filepath.Join(t.TempDir(), "none.gpg"), "releaser", "no such file"},
	} {
		err := FindSigningKey(tc.ring, tc.id)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestSourceDateEpoch: the value given, else the commit's time.
func TestSourceDateEpoch(t *testing.T) {
	if got, err := SourceDateEpoch("1700000000", ""); err != nil || !got.Equal(time.Unix(1700000000, 0)) || got.Location() != time.UTC {
		t.Errorf("given: %v %v", got, err)
	}
	for _, bad := range []string{"-1", "1.5", "yesterday"} {
		if _, err := SourceDateEpoch(bad, ""); err == nil || !strings.Contains(err.Error(), "is not a number of seconds") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	repo := t.TempDir()
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_COMMITTER_DATE=@1600000000 +0000", "GIT_CONFIG_GLOBAL=/dev/null")
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "one"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args, err, out)
		}
	}
	if got, err := SourceDateEpoch("", repo); err != nil || !got.Equal(time.Unix(1600000000, 0)) {
		t.Errorf("the commit's: %v %v", got, err)
	}
	if _, err := SourceDateEpoch("", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no SOURCE_DATE_EPOCH and no commit to take the time of: git log -1 --format=%ct: exit status") {
		t.Errorf("no commit: %v", err)
	}
}
