// Package dist writes the release: `make dist` runs it (dist.mk) through
// hack/dist, which parses the command line into Options.
//
// For every platform it builds both programs (static, -trimpath, the
// version stamped), packs them into one archive (.tar.gz, .zip for
// Windows), has cyclonedx-gomod write the archive's SBOM from the modules
// Go recorded in the programs, and has Helm 4 package (and sign, when given
// a key) the postrenderer/v1 plugin with that platform's binary. Then the
// Helm 3 plugin's archive, checksums.txt (SHA-256 of everything above but
// the signatures) and the wrapper chart's repository (Helm 3's package,
// signed when given a key, and index.yaml).
//
// Every byte of the archives, the SBOMs, the plugin tarballs and
// checksums.txt depends only on the commit and the Go toolchain: the
// files' times are SOURCE_DATE_EPOCH (the commit's time unless set), their
// owners and modes fixed, and gzip writes no time. The signatures (.prov)
// hold the time they were made, and Helm stamps a chart package and its
// index with the time of packaging: those are left out of the comparison.
package dist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
)

// Programs are the commands every archive holds, by their package.
var Programs = []string{"aws-ccm-renderer", "aws-ccm-renderer-helm"}

// Module is the project's module path.
const Module = "github.com/aws-ccm-renderer/aws-ccm-renderer"

// AllPlatforms are the release's platforms.
var AllPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

// Options are the release's settings as given (hack/dist's flags and
// environment); New checks them.
type Options struct {
	Version   string // vX.Y.Z[-pre]
	Out       string // the directory to write to
	Platforms string // OS/ARCH,...; "host" is this machine's
	Helm3     string // Helm 3, which packages the wrapper chart
	Helm4     string // Helm 4, which packages the postrenderer/v1 plugin
	CycloneDX string // cyclonedx-gomod, which writes the SBOMs
	SignKey   string // the signer's key (user ID); "" makes an unsigned build
	Keyring   string // the secret keyring with SignKey
	// Charts are directories, separated by os.PathListSeparator, searched
	// for the wrapper chart's dependency before Helm downloads it.
	Charts string
	// SourceDateEpoch is $SOURCE_DATE_EPOCH: the files' time in seconds;
	// "" takes the time of the commit checked out in Root.
	SourceDateEpoch string
	// Root is the repository's top directory; "" is the current one.
	Root string
	// Go is the go command ($GO); "" is go.
	Go string
}

// Config is a checked release: what Release writes.
type Config struct {
	Version   string
	Out       string
	Platforms []Platform
	Helm3     string
	Helm4     string
	CycloneDX string
	SignKey   string
	Keyring   string
	Epoch     time.Time
	Charts    []string
	Root      string
	Go        string
	// Exec runs a program in dir with env (nil: this process's) and
	// returns its stdout; nil runs it (Command). Tests give their own.
	Exec func(dir string, env []string, name string, args ...string) ([]byte, error)

	work string // a temporary directory, during Release
}

// Platform is an OS and architecture of the release.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "_" + p.Arch }

// Exe is a program's file name on the platform.
func (p Platform) Exe(name string) string {
	if p.OS == "windows" {
		return name + ".exe"
	}
	return name
}

// semverRE is a release version: v, then semver (a pre-release allowed,
// no build metadata, which the plugin versions use for the platform).
var semverRE = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// CheckVersion refuses what is not a release version.
func CheckVersion(v string) error {
	if !semverRE.MatchString(v) {
		return fmt.Errorf("VERSION=%q is not a release version: give vX.Y.Z (or vX.Y.Z-pre), e.g. make dist VERSION=v1.2.3", v)
	}
	return nil
}

// ParsePlatforms reads OS/ARCH,... ("host" is this machine's), each once,
// in the order given.
func ParsePlatforms(s string) ([]Platform, error) {
	var ps []Platform
	for _, s := range strings.Split(s, ",") {
		s = strings.TrimSpace(s)
		if s == "host" {
			s = runtime.GOOS + "/" + runtime.GOARCH
		}
		if !slices.Contains(AllPlatforms, s) {
			return nil, fmt.Errorf("platform %q is not one of the release's: %s (or host)", s, strings.Join(AllPlatforms, ", "))
		}
		goos, arch, _ := strings.Cut(s, "/")
		if p := (Platform{goos, arch}); !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps, nil
}

// New checks the options, the signing key before anything is built, and
// returns what Release writes.
func New(o Options) (*Config, error) {
	if err := CheckVersion(o.Version); err != nil {
		return nil, err
	}
	for _, tool := range []struct{ flag, path string }{{"-helm3", o.Helm3}, {"-helm4", o.Helm4}, {"-cyclonedx", o.CycloneDX}} {
		if tool.path == "" {
			return nil, fmt.Errorf("%s is required", tool.flag)
		}
		if _, err := os.Stat(tool.path); err != nil {
			return nil, fmt.Errorf("%s %s: not there (make tools-dist builds it)", tool.flag, tool.path)
		}
	}
	if (o.SignKey == "") != (o.Keyring == "") {
		return nil, errors.New("SIGN_KEY and KEYRING go together: the key's user ID and the secret keyring that holds it")
	}
	if o.Keyring != "" {
		if _, err := os.Stat(o.Keyring); err != nil {
			return nil, fmt.Errorf("KEYRING=%s: %v", o.Keyring, err)
		}
		if err := FindSigningKey(o.Keyring, o.SignKey); err != nil {
			return nil, fmt.Errorf("SIGN_KEY=%q in KEYRING=%s: %v", o.SignKey, o.Keyring, err)
		}
	}
	c := &Config{Version: o.Version, Out: o.Out, Helm3: o.Helm3, Helm4: o.Helm4, CycloneDX: o.CycloneDX,
		SignKey: o.SignKey, Keyring: o.Keyring, Root: o.Root, Go: o.Go}
	var err error
	if c.Platforms, err = ParsePlatforms(o.Platforms); err != nil {
		return nil, err
	}
	for _, d := range filepath.SplitList(o.Charts) {
		if d != "" {
			c.Charts = append(c.Charts, d)
		}
	}
	if c.Epoch, err = SourceDateEpoch(o.SourceDateEpoch, o.Root); err != nil {
		return nil, err
	}
	return c, nil
}

// FindSigningKey checks that the keyring holds a secret key for id as helm
// package --sign and helm plugin package --sign pick it: the key with a
// user ID equal to id, else the one user ID that contains it.
func FindSigningKey(keyring, id string) error {
	f, err := os.Open(keyring)
	if err != nil {
		return err
	}
	defer f.Close()
	ring, err := openpgp.ReadKeyRing(f)
	if err != nil {
		return fmt.Errorf("not a keyring Helm reads (binary OpenPGP; gpg --export-secret-keys > secring.gpg): %v", err)
	}
	var exact, partial []*openpgp.Entity
	for _, e := range ring {
		for name := range e.Identities {
			if name == id {
				exact = append(exact, e)
			} else if strings.Contains(name, id) {
				partial = append(partial, e)
			}
		}
	}
	found := exact
	if len(found) == 0 {
		found = partial
	}
	switch {
	case len(found) == 0:
		return errors.New("no key with that user ID: give the user ID of a key the keyring holds (gpg --list-secret-keys)")
	case len(exact) == 0 && len(partial) > 1:
		return errors.New("more than one user ID contains it: give the whole user ID")
	case found[0].PrivateKey == nil:
		return errors.New("the keyring holds only the public key: give the secret keyring")
	}
	return nil
}

// SourceDateEpoch is the time value ($SOURCE_DATE_EPOCH) says, in seconds;
// "" takes the time of the commit checked out in dir ("": the current
// directory).
func SourceDateEpoch(value, dir string) (time.Time, error) {
	s := value
	if s == "" {
		out, err := Command(dir, nil, "git", "log", "-1", "--format=%ct")
		if err != nil {
			return time.Time{}, fmt.Errorf("no SOURCE_DATE_EPOCH and no commit to take the time of: %v", err)
		}
		s = strings.TrimSpace(string(out))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

// Unsigned is what an unsigned build says on stderr.
const Unsigned = "dist: unsigned build (no SIGN_KEY and KEYRING): the Helm 4 plugin tarballs and the chart package have no .prov; Helm 4 installs them only with --verify=false"

// Release writes the release into c.Out, replacing what an earlier one
// wrote there, and prints each file written, one line a file with its
// size, on stdout; an unsigned build says so on stderr.
func (c *Config) Release(stdout, stderr io.Writer) error {
	var err error
	if c.work, err = os.MkdirTemp("", "aws-ccm-dist-"); err != nil {
		return err
	}
	defer os.RemoveAll(c.work)
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return err
	}
	if err := Clean(c.Out); err != nil {
		return err
	}
	if c.SignKey == "" {
		fmt.Fprintln(stderr, Unsigned)
	}
	var written []string
	for _, p := range c.Platforms {
		files, err := c.platform(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		written = append(written, files...)
	}
	files, err := c.helm3Plugin()
	if err != nil {
		return err
	}
	written = append(written, files...)
	// Not the signatures: they differ from build to build, and are
	// checked on their own.
	sums, err := WriteChecksums(c.Out, slices.DeleteFunc(slices.Clone(written), func(f string) bool { return strings.HasSuffix(f, ".prov") }))
	if err != nil {
		return err
	}
	written = append(written, sums)
	if files, err = c.chartRepo(); err != nil {
		return err
	}
	written = append(written, files...)
	for _, f := range written {
		st, err := os.Stat(filepath.Join(c.Out, f))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%10d  %s\n", st.Size(), f)
	}
	return nil
}

// Owned tells whether a file in the output directory is one of dist's,
// which a new build replaces: others (the images' layouts, make
// helm-plugin's directory) stay.
func Owned(name string) bool {
	return ownedRE.MatchString(name)
}

var ownedRE = regexp.MustCompile(`^(aws-ccm-renderer_v.*|aws-ccm-[0-9][^/]*\.(tgz|tgz\.prov|tar\.gz)|checksums\.txt(\.sigstore\.json)?|cosign\.pub|charts)$`)

// Clean removes what an earlier release wrote into out (Owned).
func Clean(out string) error {
	entries, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if Owned(e.Name()) {
			if err := os.RemoveAll(filepath.Join(out, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// exec runs a program with c.Exec, else Command.
func (c *Config) exec(dir string, env []string, name string, args ...string) ([]byte, error) {
	if c.Exec != nil {
		return c.Exec(dir, env, name, args...)
	}
	return Command(dir, env, name, args...)
}

// path is a file of the repository.
func (c *Config) path(elem ...string) string {
	return filepath.Join(append([]string{c.Root}, elem...)...)
}

// platform builds one platform's archive, SBOM and Helm 4 plugin tarball
// (and .prov).
func (c *Config) platform(p Platform) ([]string, error) {
	stage := filepath.Join(c.work, p.String())
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return nil, err
	}
	var members []string
	for _, prog := range Programs {
		bin := p.Exe(prog)
		if _, err := c.exec(c.Root, BuildEnv(os.Environ(), p), c.goCmd(), BuildArgs(c.Version, prog, filepath.Join(stage, bin))...); err != nil {
			return nil, err
		}
		members = append(members, bin)
	}
	base := ArchiveName(c.Version, p.OS, p.Arch)
	archive := base + ArchiveExt(p.OS)
	if err := WriteArchive(filepath.Join(c.Out, archive), stage, members, p.OS == "windows", c.Epoch); err != nil {
		return nil, err
	}
	sbom := base + ".sbom.cdx.json"
	if _, err := c.exec("", nil, c.CycloneDX, SBOMArgs(c.Version, filepath.Join(stage, p.Exe(Programs[1])), filepath.Join(c.Out, sbom))...); err != nil {
		return nil, err
	}
	plugin, err := c.helm4Plugin(p, filepath.Join(stage, p.Exe(Programs[0])))
	if err != nil {
		return nil, err
	}
	return append([]string{archive, sbom}, plugin...), nil
}

// ArchiveName is the name of a platform's archive without its extension.
func ArchiveName(version, goos, goarch string) string {
	return fmt.Sprintf("aws-ccm-renderer_%s_%s_%s", version, goos, goarch)
}

// ArchiveExt is the extension of a platform's archive.
func ArchiveExt(goos string) string {
	if goos == "windows" {
		return ".zip"
	}
	return ".tar.gz"
}

// BuildEnv is env with what a release build of the platform sets: no
// cgo, the platform's GOOS and GOARCH.
func BuildEnv(env []string, p Platform) []string {
	return append(slices.Clip(env), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch)
}

// BuildArgs are go's arguments that compile a program as a release does:
// -trimpath, without VCS stamps (the version is stamped), stripped.
func BuildArgs(version, prog, out string) []string {
	return []string{"build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X " + Module + "/cmd/cli.version=" + version,
		"-o", out, "./cmd/" + prog}
}

// SBOMArgs are cyclonedx-gomod's arguments that describe the archive
// from the module information Go wrote into aws-ccm-renderer-helm (go
// version -m): the modules the build took from the module graph, on the
// platform, each with its go.sum hash. Its modules are a superset of
// aws-ccm-renderer's (it has every command of it). No serial number or
// time, which would make two builds differ.
func SBOMArgs(version, bin, out string) []string {
	return []string{"bin", "-json", "-noserial", "-notimestamp", "-version", version, "-output", out, bin}
}

// goCmd is the go command: c.Go, else go.
func (c *Config) goCmd() string {
	if c.Go != "" {
		return c.Go
	}
	return "go"
}
