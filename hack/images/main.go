// Command images builds, pushes and pins the project's container images
// (internal/images); images.mk runs it. See docs/dev/images.md.
//
//	images build -bin DIR -out DIR -plugin FILE -version V -revision R -created UNIX -source URL -licenses SPDX
//	images push -out DIR -registry REGISTRY [-tag TAG]
//	images pin -out DIR FILE...
//	images digests -out DIR
//	images sboms -bin DIR -out DIR -cyclonedx BIN -version V
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/dist"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
)

const usage = `usage:
  images build -bin DIR -out DIR -plugin FILE -version V -revision R -created UNIX-SECONDS -source URL -licenses SPDX
  images push -out DIR -registry REGISTRY [-tag TAG]    (e.g. -registry ghcr.io/you)
  images pin -out DIR FILE...                            (rewrite the images' digests in FILEs)
  images digests -out DIR
  images sboms -bin DIR -out DIR -cyclonedx BIN -version V  (each image's SBOM a platform, in DIR/sbom)`

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "images: "+err.Error())
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("no command\n" + usage)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(os.Stderr, usage) }
	out := fs.String("out", "dist/images", "the directory of the images' OCI layouts")
	bins := fs.String("bin", "", "build: the binaries, in <os>_<arch>/ subdirectories")
	plugin := fs.String("plugin", "", "build: the Argo CD plugin's configuration (plugin.yaml)")
	version := fs.String("version", "", "build: the version; push: the default tag")
	revision := fs.String("revision", "", "build: the commit")
	created := fs.String("created", "", "build: the time of every timestamp, in seconds since the epoch (the commit's)")
	source := fs.String("source", "", "build: the repository's URL")
	licenses := fs.String("licenses", "", "build: the licence, an SPDX expression")
	registry := fs.String("registry", "", "push: where to push, REGISTRY/NAMESPACE")
	cyclonedx := fs.String("cyclonedx", "", "sboms: cyclonedx-gomod")
	tag := fs.String("tag", "", "push: the tag (default: the layout's version)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	all := images.All
	switch args[0] {
	case "build":
		if *bins == "" || *plugin == "" || *version == "" || *created == "" {
			return errors.New("build needs -bin, -plugin, -version and -created\n" + usage)
		}
		secs, err := strconv.ParseInt(*created, 10, 64)
		if err != nil {
			return fmt.Errorf("-created %q: seconds since the epoch: %w", *created, err)
		}
		pluginYAML, err := os.ReadFile(*plugin)
		if err != nil {
			return err
		}
		m := images.Meta{Version: *version, Revision: *revision, Source: *source, Licenses: *licenses, Created: time.Unix(secs, 0)}
		for _, img := range all(pluginYAML) {
			idx, err := images.Build(img, *bins, m)
			if err != nil {
				return err
			}
			if err := images.WriteLayout(filepath.Join(*out, img.Name), idx, *version); err != nil {
				return err
			}
			d, err := idx.Digest()
			if err != nil {
				return err
			}
			fmt.Printf("%s@%s\n", filepath.Join(*out, img.Name), d)
		}
	case "push":
		if *registry == "" {
			return errors.New("push needs -registry, e.g. make push REGISTRY=ghcr.io/you\n" + usage)
		}
		for _, img := range all(nil) {
			idx, err := images.ReadLayout(filepath.Join(*out, img.Name))
			if err != nil {
				return fmt.Errorf("%w (make images builds it)", err)
			}
			t := *tag
			if t == "" {
				t = layoutVersion(idx)
			}
			ref, err := name.NewTag(strings.TrimSuffix(*registry, "/") + "/" + img.Name + ":" + t)
			if err != nil {
				return err
			}
			auth := remote.WithAuthFromKeychain(authn.DefaultKeychain)
			if err := remote.WriteIndex(ref, idx, auth); err != nil {
				return err
			}
			d, _ := idx.Digest()
			fmt.Printf("%s@%s\n", ref, d)
			// The signature and attestations make dist attached: with
			// their subject, to the registry's referrers (or the
			// sha256-DIGEST tag where it has no referrers API).
			refs, err := images.Referrers(filepath.Join(*out, img.Name))
			if err != nil {
				return err
			}
			for _, r := range refs {
				rd, err := r.Digest()
				if err != nil {
					return err
				}
				if err := remote.Write(ref.Context().Digest(rd.String()), r, auth); err != nil {
					return err
				}
				fmt.Printf("  %s@%s (referrer)\n", ref.Context(), rd)
			}
		}
	case "pin", "digests":
		digests := map[string]v1.Hash{}
		for _, img := range all(nil) {
			idx, err := images.ReadLayout(filepath.Join(*out, img.Name))
			if err != nil {
				return fmt.Errorf("%w (make images builds it)", err)
			}
			if digests[img.Name], err = idx.Digest(); err != nil {
				return err
			}
			if args[0] == "digests" {
				fmt.Printf("%s %s\n", img.Name, digests[img.Name])
			}
		}
		for _, f := range fs.Args() {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if after := images.Pin(string(b), digests); after != string(b) {
				if err := os.WriteFile(f, []byte(after), 0o644); err != nil {
					return err
				}
				fmt.Println("pinned", f)
			}
		}
	case "sboms":
		if *bins == "" || *cyclonedx == "" || *version == "" {
			return errors.New("sboms needs -bin, -cyclonedx and -version\n" + usage)
		}
		dir := filepath.Join(*out, "sbom")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for _, img := range all(nil) {
			for _, p := range images.Platforms {
				f := filepath.Join(dir, img.Name+"_"+images.PlatformDir(p)+".cdx.json")
				bin := filepath.Join(*bins, images.PlatformDir(p), img.SBOMProgram())
				if _, err := dist.Command("", nil, *cyclonedx, dist.SBOMArgs(*version, bin, f)...); err != nil {
					return fmt.Errorf("%s: %w", img.Name, err)
				}
				fmt.Println(f)
			}
		}
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
	return nil
}

// layoutVersion is the version an index's annotations give.
func layoutVersion(idx v1.ImageIndex) string {
	m, err := idx.IndexManifest()
	if err != nil || m.Annotations["org.opencontainers.image.version"] == "" {
		return "latest"
	}
	// A tag is [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}: semver's build metadata
	// (+...) is not.
	return notTagChar.ReplaceAllString(m.Annotations["org.opencontainers.image.version"], "-")
}

var notTagChar = regexp.MustCompile(`[^A-Za-z0-9_.-]`)
