// Command ccmcalls reads, from the source of each AWS CCM release that
// internal/releases pins, the AWS API actions its program can call
// (Analyze), and writes them to internal/releases/calls_gen.go, the data the
// plans' IAM policy and check's IAM rule use. With -check it writes nothing
// and exits 1 when the file differs from what the source says (make
// releases-check).
//
// A release's source comes from the Go module proxy
// (k8s.io/cloud-provider-aws, which serves only some tags), else from a git
// clone of kubernetes/cloud-provider-aws given with -repo (git archive of the
// tag); k8s.io/cloud-provider, whose interfaces the controllers call the
// provider through, from the module proxy at the version the release's
// go.mod requires (else v0.<minor>.0 of it).
package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

const (
	module  = "k8s.io/cloud-provider-aws"
	cpMod   = "k8s.io/cloud-provider"
	outFile = "calls_gen.go"
)

func main() {
	check := flag.Bool("check", false, "compare "+outFile+" with the source; write nothing")
	repo := flag.String("repo", "", "a git clone of kubernetes/cloud-provider-aws, for the tags the module proxy does not serve")
	dir := flag.String("dir", ".", "the directory of "+outFile+" (internal/releases)")
	flag.Parse()
	if err := run(*check, *repo, filepath.Join(*dir, outFile)); err != nil {
		fmt.Fprintln(os.Stderr, "ccmcalls:", err)
		os.Exit(1)
	}
}

func run(check bool, repo, out string) error {
	tmp, err := os.MkdirTemp("", "ccmcalls")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	all := map[string]map[string][]string{}
	for _, tag := range releases.CallTags() {
		src, err := source(tag, repo, tmp)
		if err != nil {
			return err
		}
		cp, err := cloudProvider(src)
		if err != nil {
			return fmt.Errorf("%s: %w", tag, err)
		}
		calls, err := Analyze(src, cp)
		if err != nil {
			return fmt.Errorf("%s: %w", tag, err)
		}
		all[tag] = calls
	}
	b, err := render(all)
	if err != nil {
		return err
	}
	if !check {
		return os.WriteFile(out, b, 0o644)
	}
	old, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	if !bytes.Equal(old, b) {
		return fmt.Errorf("%s differs from what the releases' source calls: run go run ./internal/releases/ccmcalls -dir internal/releases (with -repo for the tags the module proxy does not serve)", out)
	}
	fmt.Printf("%s is current: the AWS calls of %d releases\n", out, len(all))
	return nil
}

// source returns the directory of a release's source.
func source(tag, repo, tmp string) (string, error) {
	if dir, err := download(module, tag); err == nil {
		return dir, nil
	} else if repo == "" {
		return "", fmt.Errorf("%s@%s: %w (give -repo, a git clone of kubernetes/cloud-provider-aws)", module, tag, err)
	}
	dir := filepath.Join(tmp, tag)
	cmd := exec.Command("git", "--git-dir", repo, "archive", tag)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	arch, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git archive %s: %v: %s", tag, err, strings.TrimSpace(stderr.String()))
	}
	return dir, untar(bytes.NewReader(arch), dir)
}

// download returns a module version's directory, as go mod download
// fetches it.
func download(mod, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", mod+"@"+version)
	cmd.Dir = os.TempDir() // outside any module
	out, _ := cmd.Output()
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v", mod, version, err)
	}
	if m.Error != "" || m.Dir == "" {
		return "", errors.New(m.Error)
	}
	return m.Dir, nil
}

// cloudProvider returns the k8s.io/cloud-provider source a release builds
// with.
func cloudProvider(src string) (string, error) {
	b, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return "", err
	}
	f, err := modfile.ParseLax("go.mod", b, nil)
	if err != nil {
		return "", err
	}
	version := ""
	for _, r := range f.Require {
		if r.Mod.Path == cpMod {
			version = r.Mod.Version
		}
	}
	for _, r := range f.Replace {
		if r.Old.Path == cpMod && r.New.Version != "" {
			version = r.New.Version
		}
	}
	if version == "" {
		return "", fmt.Errorf("go.mod requires no %s", cpMod)
	}
	dir, err := download(cpMod, version)
	if err == nil {
		return dir, nil
	}
	// Some versions are no longer served; the interfaces are the same
	// across a minor.
	return download(cpMod, semver.MajorMinor(version)+".0")
}

func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, dir+string(filepath.Separator)) {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			if err = os.MkdirAll(filepath.Dir(name), 0o755); err == nil {
				var b []byte
				if b, err = io.ReadAll(tr); err == nil {
					err = os.WriteFile(name, b, 0o644)
				}
			}
		}
		if err != nil {
			return err
		}
	}
}

// render writes the data file.
func render(all map[string]map[string][]string) ([]byte, error) {
	var b strings.Builder
	b.WriteString("// Code generated by go run ./internal/releases/ccmcalls; DO NOT EDIT.\n\npackage releases\n\n")
	b.WriteString("// CodeCalls are the AWS API actions each release's program can call, read\n// from its source (CallsSource), each with the first site that builds its\n// request (file and function).\n")
	b.WriteString("var CodeCalls = map[string][]CodeCall{\n")
	tags := make([]string, 0, len(all))
	for t := range all {
		tags = append(tags, t)
	}
	slices.SortFunc(tags, semver.Compare)
	for _, t := range tags {
		fmt.Fprintf(&b, "\t%q: {\n", t)
		acts := make([]string, 0, len(all[t]))
		for a := range all[t] {
			acts = append(acts, a)
		}
		slices.Sort(acts)
		for _, a := range acts {
			fmt.Fprintf(&b, "\t\t{%q, %q},\n", a, all[t][a][0])
		}
		b.WriteString("\t},\n")
	}
	b.WriteString("}\n")
	return format.Source([]byte(b.String()))
}
