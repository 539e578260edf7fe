// Command generate writes every file of the repository that is generated,
// whole or in marked sections, from the renderer's records, the release
// data, check's rules and the plans: the one generator (make generate).
//
//	go run ./hack/generate          # rewrite what is stale
//	go run ./hack/generate -check   # exit 1, naming each stale file, if any is (make test runs it)
//	go run ./hack/generate -list    # what it writes
//
// Whole files: the kustomize overlays, the Fleet example's copy of them,
// the Flux HelmReleases, the wrapper chart's values, presets and templates,
// docs/troubleshooting.md. Marked lines ("make generate" on the line or
// just above it): the distribution lists of the schemas, examples,
// Chart.yaml and the Helm 3 plugin, the area enum of check's schema, the
// Fleet bundle's pins and the guard's image. Marked sections (BEGIN
// GENERATED ... END GENERATED): docs/compatibility.md, the plan's
// documents; and the transcripts after "<!-- example: FILE -->" markers in
// README.md and docs/check.md, which are the real-cluster tests' golden
// files. The plan's own golden files (testdata/golden/plan) are the tests'
// expectations: go test ./internal/plan -update rewrites them.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/conformance"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/generated"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// generator checks what it generates under root and returns the
// problems, or with write rewrites what is stale.
type generator struct {
	name string
	run  func(root string, write bool) ([]string, error)
}

// generators are every generated file's writer, in the order they run.
func generators() []generator {
	gs := []generator{{"the overlays, the Fleet and Flux examples, the wrapper chart", trees}}
	gs = append(gs,
		generator{"docs/troubleshooting.md (check's rules)", func(root string, write bool) ([]string, error) {
			return tree(generated.Troubleshooting(generated.TroubleRows()), root, write)
		}},
		generator{"the Fleet bundle's pins", generated.FleetPins},
		generator{"the guard's image in the examples", generated.GuardPins},
		generator{"the distribution lists (schemas, examples, Chart.yaml, plugin.yaml)", func(root string, write bool) ([]string, error) {
			return generated.DistroPins(root, distros.Records(), write)
		}},
		generator{"the area enum of check's schema", func(root string, write bool) ([]string, error) {
			return generated.AreaPins(root, check.Areas(), write)
		}},
	)
	for _, doc := range generated.ExampleDocs {
		gs = append(gs, generator{"the transcripts in " + doc, func(root string, write bool) ([]string, error) {
			return generated.Examples(root, doc, write)
		}})
	}
	gs = append(gs, generator{CompatibilityDoc + " (the releases, the front ends)", func(root string, write bool) ([]string, error) {
		return sections(root, CompatibilityDoc, compatibility, write)
	}})
	for _, doc := range PlanDocs {
		gs = append(gs, generator{doc.Path + " (the plans)", func(root string, write bool) ([]string, error) {
			return planDoc(root, doc, write)
		}})
	}
	return gs
}

// PlanDoc is a document with sections the plan writes; with AllDistros,
// one section at least names each distribution.
type PlanDoc struct {
	Path       string
	AllDistros bool
}

// CompatibilityDoc is the page of the releases and front ends.
const CompatibilityDoc = "docs/compatibility.md"

// PlanDocs are the documents with sections the plan writes. Every
// distribution has one in those marked AllDistros: the runbooks
// (docs/dev); the migration guide and the new clusters' page show one
// example each.
var PlanDocs = []PlanDoc{
	{"docs/dev/runbooks.md", true},
	{"docs/new-cluster.md", false},
	{"docs/migration.md", false},
}

func trees(root string, write bool) ([]string, error) {
	ts, err := generated.Trees()
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, t := range ts {
		p, err := tree(t, root, write)
		if err != nil {
			return nil, err
		}
		problems = append(problems, p...)
	}
	return problems, nil
}

func tree(t generated.Tree, root string, write bool) ([]string, error) {
	if write {
		if err := t.Write(root); err != nil {
			return nil, err
		}
	}
	return t.Stale(root)
}

func sections(root, path string, fill func(string) (string, error), write bool) ([]string, error) {
	problems, _, err := generated.Sections(root, path, fill, write)
	return problems, err
}

// compatibility fills docs/compatibility.md's sections.
func compatibility(marker string) (string, error) {
	switch marker {
	case "releases":
		return releases.CompatibilityMarkdown(), nil
	case "front ends":
		return conformance.FrontEndsMarkdown(), nil
	}
	return "", errors.New("no such section: releases or front ends")
}

// planDoc fills a plan document's sections: "aws-ccm-renderer ARGS" is
// what the command prints, "plan.WriteGuide DISTRO..." the runbooks of
// those distributions at the defaults.
func planDoc(root string, doc PlanDoc, write bool) ([]string, error) {
	problems, markers, err := generated.Sections(root, doc.Path, planSection, write)
	if err != nil || !doc.AllDistros {
		return problems, err
	}
	seen := map[string]bool{}
	for _, m := range markers {
		words := strings.Fields(m)
		for i, w := range words {
			if words[0] == "plan.WriteGuide" && i > 0 || i > 0 && words[i-1] == "--distro" {
				seen[w] = true
			}
		}
	}
	for _, d := range plan.Distros {
		if !seen[string(d)] {
			problems = append(problems, fmt.Sprintf("%s has no generated section for %s", doc.Path, d))
		}
	}
	return problems, nil
}

func planSection(marker string) (string, error) {
	words := strings.Fields(marker)
	if len(words) < 2 {
		return "", errors.New("a section is aws-ccm-renderer ARGS or plan.WriteGuide DISTRO...")
	}
	switch words[0] {
	case "plan.WriteGuide":
		var ps []*plan.Plan
		for _, d := range words[1:] {
			o := plan.DefaultOptions()
			o.Distro = distros.Distro(d)
			p, err := plan.Build(o)
			if err != nil {
				return "", err
			}
			ps = append(ps, p)
		}
		var b bytes.Buffer
		plan.WriteGuide(&b, ps, 2)
		return b.String(), nil
	case "aws-ccm-renderer":
		var out, errOut bytes.Buffer
		if code := cli.Main(words[1:], cli.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}); code != 0 {
			return "", fmt.Errorf("exit %d: %s", code, strings.TrimSpace(errOut.String()))
		}
		return out.String(), nil
	}
	return "", errors.New("a section is aws-ccm-renderer ARGS or plan.WriteGuide DISTRO...")
}

// run runs every generator over root: with check it writes nothing and
// reports each problem on stderr, exit 1 if there is any; else it rewrites
// what is stale and names it on stdout.
func run(root string, check, list bool, stdout, stderr io.Writer) int {
	n := 0
	for _, g := range generators() {
		if list {
			fmt.Fprintln(stdout, g.name)
			continue
		}
		problems, err := g.run(root, false)
		if err != nil {
			fmt.Fprintf(stderr, "generate: %s: %v\n", g.name, err)
			return 2
		}
		n += len(problems)
		if check {
			for _, p := range problems {
				fmt.Fprintln(stderr, p)
			}
			continue
		}
		if len(problems) > 0 {
			if _, err := g.run(root, true); err != nil {
				fmt.Fprintf(stderr, "generate: %s: %v\n", g.name, err)
				return 2
			}
			if after, err := g.run(root, false); err != nil || len(after) > 0 {
				fmt.Fprintf(stderr, "generate: %s: still stale after the write: %v %q\n", g.name, err, after)
				return 2
			}
			fmt.Fprintf(stdout, "rewrote %s (%d stale)\n", g.name, len(problems))
		}
	}
	if check && n > 0 {
		fmt.Fprintf(stderr, "generate: %d stale; run make generate (go run ./hack/generate)\n", n)
		return 1
	}
	return 0
}

// repoRoot is the directory of the root module's go.mod, at or above the
// working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/aws-ccm-renderer/aws-ccm-renderer\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run it inside the aws-ccm-renderer repository")
		}
		dir = parent
	}
}

func main() {
	check := flag.Bool("check", false, "write nothing: name each stale file and exit 1 if any")
	list := flag.Bool("list", false, "list what is generated")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "generate: no arguments (got %q); -check or -list\n", flag.Args())
		os.Exit(2)
	}
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(2)
	}
	os.Exit(run(root, *check, *list, os.Stdout, os.Stderr))
}
