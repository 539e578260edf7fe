// Command dist writes the release (internal/dist, docs/dev/release.md): `make
// dist` runs it (dist.mk), from the repository's top directory.
//
// It prints what it wrote, one line a file with its size, on stdout; a
// failure is one line on stderr and exit status 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/dist"
)

const usage = `Usage: go run ./hack/dist -version vX.Y.Z -helm3 HELM3 -helm4 HELM4 -cyclonedx CYCLONEDX [flags]

Writes the release (docs/dev/release.md); make dist runs it from the repository's top directory.

Examples:
  make dist VERSION=v1.2.3
  make dist VERSION=v1.2.3 SIGN_KEY='Release Key' KEYRING=secring.gpg
  make dist VERSION=v1.2.3 PLATFORMS=host,linux/arm64 DIST=/tmp/release

Flags:
`

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

// run parses the command line into dist.Options, with $SOURCE_DATE_EPOCH
// and $GO, and writes the release.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dist", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, in one line
	o := dist.Options{SourceDateEpoch: os.Getenv("SOURCE_DATE_EPOCH"), Go: os.Getenv("GO")}
	fs.StringVar(&o.Platforms, "platforms", strings.Join(dist.AllPlatforms, ","), "OS/ARCH,... to build for; \"host\" is this machine's")
	fs.StringVar(&o.Version, "version", "", "the release's version, vX.Y.Z (required)")
	fs.StringVar(&o.Out, "out", "dist", "the directory to write to")
	fs.StringVar(&o.Helm3, "helm3", "", "Helm 3, which packages the wrapper chart (required)")
	fs.StringVar(&o.Helm4, "helm4", "", "Helm 4, which packages the postrenderer/v1 plugin (required)")
	fs.StringVar(&o.CycloneDX, "cyclonedx", "", "cyclonedx-gomod, which writes the SBOMs (required)")
	fs.StringVar(&o.SignKey, "sign-key", "", "the user ID of the key that signs the plugin and chart packages; none: unsigned")
	fs.StringVar(&o.Keyring, "keyring", "", "the secret keyring holding -sign-key")
	fs.StringVar(&o.Charts, "charts", "", "directories, separated by "+string(os.PathListSeparator)+", searched for the wrapper chart's dependency before Helm downloads it")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c, err := dist.New(o)
	if err != nil {
		return err
	}
	return c.Release(stdout, stderr)
}
