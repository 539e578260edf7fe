// Command dist writes the release: `make dist` runs it (dist.mk), from the
// repository's top directory.
//
// For every platform it builds both programs (static, -trimpath, the
// version stamped), packs them into one archive (.tar.gz, .zip for
// Windows), has cyclonedx-gomod write the archive's SBOM from the modules
// Go recorded in the programs, and has Helm 4 package (and sign, when given a key) the
// postrenderer/v1 plugin with that platform's binary. Then the Helm 3
// plugin's archive, checksums.txt (SHA-256 of everything above but the
// signatures) and the
// wrapper chart's repository (Helm 3's package, signed when given a key, and
// index.yaml).
//
// Every byte of the archives, the SBOMs, the plugin tarballs and
// checksums.txt depends only on the commit and the Go toolchain: the
// files' times are SOURCE_DATE_EPOCH (the commit's time unless set), their
// owners and modes fixed, and gzip writes no time. The signatures (.prov)
// hold the time they were made, and Helm stamps a chart package and its
// index with the time of packaging: those are left out of the comparison.
//
// It prints what it wrote, one line a file with its size, on stdout; a
// failure is one line on stderr and exit status 1.
package main

import (
	"errors"
	"flag"
	"fmt"
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

func main() {
	err := run(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

// Programs are the commands every archive holds, by their package.
var Programs = []string{"aws-ccm-renderer", "aws-ccm-renderer-helm"}

// Module is the project's module path.
const Module = "github.com/aws-ccm-renderer/aws-ccm-renderer"

// AllPlatforms are the release's platforms.
var AllPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

// config is what the flags say.
type config struct {
	version   string // vX.Y.Z[-pre]
	out       string
	platforms []platform
	helm3     string
	helm4     string
	cyclonedx string
	signKey   string // the signer's key (user ID); "" makes an unsigned build
	keyring   string // the secret keyring with signKey
	epoch     time.Time
	charts    []string // directories searched for the wrapper chart's dependency
	work      string   // a temporary directory
}

type platform struct{ os, arch string }

func (p platform) String() string { return p.os + "_" + p.arch }

// exe is a program's file name on the platform.
func (p platform) exe(name string) string {
	if p.os == "windows" {
		return name + ".exe"
	}
	return name
}

// semverRE is a release version: v, then semver (a pre-release allowed,
// no build metadata, which the plugin versions use for the platform).
var semverRE = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

func parse(args []string) (*config, error) {
	fs := flag.NewFlagSet("dist", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder)) // errors are returned, in one line
	fs.Usage = func() {}               // a bad flag is one line on stderr; -h prints the usage
	usage := func() {
		fmt.Print(`Usage: go run ./internal/dist -version vX.Y.Z -helm3 HELM3 -helm4 HELM4 -cyclonedx CYCLONEDX [flags]

Writes the release (docs/dev/release.md); make dist runs it from the repository's top directory.

Examples:
  make dist VERSION=v1.2.3
  make dist VERSION=v1.2.3 SIGN_KEY='Release Key' KEYRING=secring.gpg
  make dist VERSION=v1.2.3 PLATFORMS=host,linux/arm64 DIST=/tmp/release

Flags:
`)
		fs.SetOutput(os.Stdout)
		fs.PrintDefaults()
	}
	c := &config{}
	platforms := fs.String("platforms", strings.Join(AllPlatforms, ","), "OS/ARCH,... to build for; \"host\" is this machine's")
	fs.StringVar(&c.version, "version", "", "the release's version, vX.Y.Z (required)")
	fs.StringVar(&c.out, "out", "dist", "the directory to write to")
	fs.StringVar(&c.helm3, "helm3", "", "Helm 3, which packages the wrapper chart (required)")
	fs.StringVar(&c.helm4, "helm4", "", "Helm 4, which packages the postrenderer/v1 plugin (required)")
	fs.StringVar(&c.cyclonedx, "cyclonedx", "", "cyclonedx-gomod, which writes the SBOMs (required)")
	fs.StringVar(&c.signKey, "sign-key", "", "the user ID of the key that signs the plugin and chart packages; none: unsigned")
	fs.StringVar(&c.keyring, "keyring", "", "the secret keyring holding -sign-key")
	charts := fs.String("charts", "", "directories, separated by "+string(os.PathListSeparator)+", searched for the wrapper chart's dependency before Helm downloads it")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if !semverRE.MatchString(c.version) {
		return nil, fmt.Errorf("VERSION=%q is not a release version: give vX.Y.Z (or vX.Y.Z-pre), e.g. make dist VERSION=v1.2.3", c.version)
	}
	for name, p := range map[string]string{"-helm3": c.helm3, "-helm4": c.helm4, "-cyclonedx": c.cyclonedx} {
		if p == "" {
			return nil, fmt.Errorf("%s is required", name)
		}
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s %s: not there (make tools-dist builds it)", name, p)
		}
	}
	if (c.signKey == "") != (c.keyring == "") {
		return nil, fmt.Errorf("SIGN_KEY and KEYRING go together: the key's user ID and the secret keyring that holds it")
	}
	if c.keyring != "" {
		if _, err := os.Stat(c.keyring); err != nil {
			return nil, fmt.Errorf("KEYRING=%s: %v", c.keyring, err)
		}
		if err := findSigningKey(c.keyring, c.signKey); err != nil {
			return nil, fmt.Errorf("SIGN_KEY=%q in KEYRING=%s: %v", c.signKey, c.keyring, err)
		}
	}
	for _, s := range strings.Split(*platforms, ",") {
		s = strings.TrimSpace(s)
		if s == "host" {
			s = runtime.GOOS + "/" + runtime.GOARCH
		}
		if !slices.Contains(AllPlatforms, s) {
			return nil, fmt.Errorf("platform %q is not one of the release's: %s (or host)", s, strings.Join(AllPlatforms, ", "))
		}
		os, arch, _ := strings.Cut(s, "/")
		if p := (platform{os, arch}); !slices.Contains(c.platforms, p) {
			c.platforms = append(c.platforms, p)
		}
	}
	for _, d := range filepath.SplitList(*charts) {
		if d != "" {
			c.charts = append(c.charts, d)
		}
	}
	var err error
	if c.epoch, err = sourceDateEpoch(); err != nil {
		return nil, err
	}
	return c, nil
}

// findSigningKey checks, before anything is built, that the keyring holds
// a secret key for id as helm package --sign and helm plugin package --sign
// pick it: the key with a user ID equal to id, else the one user ID that
// contains it.
func findSigningKey(keyring, id string) error {
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
		return fmt.Errorf("no key with that user ID: give the user ID of a key the keyring holds (gpg --list-secret-keys)")
	case len(exact) == 0 && len(partial) > 1:
		return fmt.Errorf("more than one user ID contains it: give the whole user ID")
	case found[0].PrivateKey == nil:
		return fmt.Errorf("the keyring holds only the public key: give the secret keyring")
	}
	return nil
}

// sourceDateEpoch is $SOURCE_DATE_EPOCH, else the time of the commit
// checked out.
func sourceDateEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		out, err := command("", nil, "git", "log", "-1", "--format=%ct")
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

func run(args []string) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	if c.work, err = os.MkdirTemp("", "aws-ccm-dist-"); err != nil {
		return err
	}
	defer os.RemoveAll(c.work)
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	if err := clean(c.out); err != nil {
		return err
	}
	if c.signKey == "" {
		fmt.Fprintln(os.Stderr, "dist: unsigned build (no SIGN_KEY and KEYRING): the Helm 4 plugin tarballs and the chart package have no .prov; Helm 4 installs them only with --verify=false")
	}
	var written []string
	for _, p := range c.platforms {
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
	sums, err := writeChecksums(c.out, slices.DeleteFunc(slices.Clone(written), func(f string) bool { return strings.HasSuffix(f, ".prov") }))
	if err != nil {
		return err
	}
	written = append(written, sums)
	if files, err = c.chartRepo(); err != nil {
		return err
	}
	written = append(written, files...)
	for _, f := range written {
		st, err := os.Stat(filepath.Join(c.out, f))
		if err != nil {
			return err
		}
		fmt.Printf("%10d  %s\n", st.Size(), f)
	}
	return nil
}

// owned tells whether a file in the output directory is one of dist's,
// which a new build replaces: others (the images' layouts, make
// helm-plugin's directory) stay.
func owned(name string) bool {
	return ownedRE.MatchString(name)
}

var ownedRE = regexp.MustCompile(`^(aws-ccm-renderer_v.*|aws-ccm-[0-9][^/]*\.(tgz|tgz\.prov|tar\.gz)|checksums\.txt|charts)$`)

func clean(out string) error {
	entries, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if owned(e.Name()) {
			if err := os.RemoveAll(filepath.Join(out, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// platform builds one platform's archive, SBOM and Helm 4 plugin tarball
// (and .prov).
func (c *config) platform(p platform) ([]string, error) {
	stage := filepath.Join(c.work, p.String())
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return nil, err
	}
	var members []string
	for _, prog := range Programs {
		bin := p.exe(prog)
		if err := c.build(p, prog, filepath.Join(stage, bin)); err != nil {
			return nil, err
		}
		members = append(members, bin)
	}
	base := ArchiveName(c.version, p.os, p.arch)
	archive := base + ArchiveExt(p.os)
	if err := writeArchive(filepath.Join(c.out, archive), stage, members, p.os == "windows", c.epoch); err != nil {
		return nil, err
	}
	sbom := base + ".sbom.cdx.json"
	if err := c.sbom(filepath.Join(stage, p.exe(Programs[1])), filepath.Join(c.out, sbom)); err != nil {
		return nil, err
	}
	plugin, err := c.helm4Plugin(p, filepath.Join(stage, p.exe(Programs[0])))
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

// build compiles a program for a platform as a release does: static
// (no cgo), -trimpath, without VCS stamps (the version is stamped), stripped.
func (c *config) build(p platform, prog, out string) error {
	env := append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.os, "GOARCH="+p.arch)
	_, err := command("", env, goCmd(), "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X "+Module+"/cmd/cli.version="+c.version,
		"-o", out, "./cmd/"+prog)
	return err
}

// sbom has cyclonedx-gomod describe the archive from the module
// information Go wrote into aws-ccm-renderer-helm (go version -m): the
// modules the build took from the module graph, on the platform, each with
// its go.sum hash. Its modules are a superset of aws-ccm-renderer's (it has
// every command of it). No serial number or time, which would make two
// builds differ.
func (c *config) sbom(bin, out string) error {
	_, err := command("", nil, c.cyclonedx, "bin", "-json", "-noserial", "-notimestamp",
		"-version", c.version, "-output", out, bin)
	return err
}

// goCmd is the go command: $GO, else go.
func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}
