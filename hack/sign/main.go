// Command aws-ccm-sign signs and verifies the release (docs/dev/release.md):
// make dist runs its release command with the key of COSIGN_KEY, and the
// tests its verify commands. Everything it writes is a sigstore bundle
// (v0.3) that cosign 2.5+ verifies with --new-bundle-format; it is made and
// checked with sigstore-go.
//
//	aws-ccm-sign check-key -key FILE
//	aws-ccm-sign release -key FILE -dist DIR -images DIR -sboms DIR -version V -source URL -revision R -builder ID -created UNIX
//	aws-ccm-sign verify-blob (-key FILE | -trusted-root F -identity I -issuer O) -bundle B FILE
//	aws-ccm-sign verify-provenance (...) -bundle B FILE...
//	aws-ccm-sign verify-image (...) LAYOUT-DIR...
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
)

const usage = `usage:
  aws-ccm-sign check-key -key FILE
  aws-ccm-sign release -key FILE -dist DIR -images DIR -sboms DIR -version V -source URL -revision R -builder ID -created UNIX-SECONDS
  aws-ccm-sign verify-blob TRUST -bundle BUNDLE FILE
  aws-ccm-sign verify-provenance TRUST -bundle BUNDLE FILE...
  aws-ccm-sign verify-image TRUST LAYOUT-DIR...
TRUST is -key cosign.pub, or -trusted-root trusted_root.json -identity SAN -issuer OIDC-ISSUER (keyless).
The key's password is $COSIGN_PASSWORD.`

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "aws-ccm-sign: "+err.Error())
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("no command\n" + usage)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	key := fs.String("key", "", "release: the private key (cosign.key); verify: the public key (cosign.pub)")
	trustedRoot := fs.String("trusted-root", "", "verify, keyless: sigstore's trusted_root.json")
	identity := fs.String("identity", "", "verify, keyless: the certificate's identity (SAN)")
	issuer := fs.String("issuer", "", "verify, keyless: the OIDC issuer")
	bundlePath := fs.String("bundle", "", "verify-blob, verify-provenance: the bundle")
	dist := fs.String("dist", "", "release: the release's directory (checksums.txt)")
	imagesDir := fs.String("images", "", "release: the images' layouts")
	sboms := fs.String("sboms", "", "release: the images' SBOMs")
	var b Build
	fs.StringVar(&b.Version, "version", "", "release: the version")
	fs.StringVar(&b.Source, "source", "", "release: the repository's URL")
	fs.StringVar(&b.Revision, "revision", "", "release: the commit")
	fs.StringVar(&b.BuilderID, "builder", "", "release: the builder's ID (a URI)")
	created := fs.String("created", "", "release: SOURCE_DATE_EPOCH")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%v\n%s", err, usage)
	}
	if args[0] == "check-key" || args[0] == "release" {
		if *key == "" {
			return fmt.Errorf("%s needs -key\n%s", args[0], usage)
		}
		pemBytes, err := os.ReadFile(*key)
		if err != nil {
			return err
		}
		var pass []byte
		if p, ok := os.LookupEnv("COSIGN_PASSWORD"); ok {
			pass = []byte(p)
		}
		k, err := LoadKey(pemBytes, pass)
		if err != nil {
			return fmt.Errorf("COSIGN_KEY=%s: %w", *key, err)
		}
		if args[0] == "check-key" {
			return nil
		}
		if *dist == "" || *imagesDir == "" || *sboms == "" || *created == "" {
			return errors.New("release needs -key, -dist, -images, -sboms and -created\n" + usage)
		}
		secs, err := strconv.ParseInt(*created, 10, 64)
		if err != nil {
			return fmt.Errorf("-created %q: %w", *created, err)
		}
		b.Epoch, b.GoVersion = time.Unix(secs, 0).UTC(), runtime.Version()
		r := &Release{Dist: *dist, Images: *imagesDir, SBOMs: *sboms, Key: k, Build: b}
		return r.Sign(stdout)
	}
	t, err := trust(*key, *trustedRoot, *identity, *issuer)
	if err != nil {
		return err
	}
	switch args[0] {
	case "verify-blob", "verify-provenance":
		if *bundlePath == "" || fs.NArg() == 0 || (args[0] == "verify-blob" && fs.NArg() != 1) {
			return fmt.Errorf("%s needs -bundle and the file(s)\n%s", args[0], usage)
		}
		raw, err := os.ReadFile(*bundlePath)
		if err != nil {
			return err
		}
		bu, err := ParseBundle(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", *bundlePath, err)
		}
		if args[0] == "verify-provenance" {
			if _, err := VerifyProvenance(bu, fs.Args(), t); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Verified OK: %s is SLSA provenance of %s\n", *bundlePath, strings.Join(fs.Args(), ", "))
			return nil
		}
		data, err := os.ReadFile(fs.Arg(0))
		if err != nil {
			return err
		}
		if err := VerifyBlob(bu, data, t); err != nil {
			return fmt.Errorf("%s: %w", fs.Arg(0), err)
		}
		fmt.Fprintf(stdout, "Verified OK: %s\n", fs.Arg(0))
	case "verify-image":
		if fs.NArg() == 0 {
			return errors.New("verify-image needs the layouts' directories\n" + usage)
		}
		for _, dir := range fs.Args() {
			rep, err := VerifyImage(dir, t)
			if err != nil {
				return err
			}
			var types []string
			for pt, subs := range rep {
				types = append(types, fmt.Sprintf("%s ×%d", pt, len(subs)))
			}
			sort.Strings(types)
			fmt.Fprintf(stdout, "Verified OK: %s: %s\n", dir, strings.Join(types, ", "))
		}
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
	return nil
}

// trust is the verify commands' trust: a public key, or a trusted root
// with the identity and issuer a keyless certificate must carry.
func trust(key, trustedRoot, identity, issuer string) (Trust, error) {
	switch {
	case key != "" && trustedRoot == "":
		b, err := os.ReadFile(key)
		if err != nil {
			return Trust{}, err
		}
		return KeyTrust(b)
	case key == "" && trustedRoot != "":
		tr, err := root.NewTrustedRootFromPath(trustedRoot)
		if err != nil {
			return Trust{}, err
		}
		return Trust{Root: tr, Identity: identity, Issuer: issuer, SCTs: 1}, nil
	}
	return Trust{}, errors.New("give -key, or -trusted-root with -identity and -issuer\n" + usage)
}
