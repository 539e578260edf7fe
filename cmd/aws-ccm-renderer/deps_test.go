package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goList runs go list in the module for the packages given.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	// The go command that runs the test: go test puts its GOROOT's bin
	// first in PATH (runtime.GOROOT is empty in a -trimpath build).
	goTool := "go"
	out, err := exec.Command(goTool, append([]string{"list"}, args...)...).Output()
	if err != nil {
		var stderr []byte
		if e, ok := err.(*exec.ExitError); ok {
			stderr = e.Stderr
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestLeanDependencies: the post-renderer program links neither Helm nor
// the Kubernetes client or API types, whose package initialisers would run
// on every post-render; the chart commands and check live in
// aws-ccm-renderer-helm.
func TestLeanDependencies(t *testing.T) {
	deps := goList(t, "-deps", ".")
	if len(deps) < 10 {
		t.Fatalf("go list -deps: %q", deps)
	}
	for _, d := range deps {
		for _, heavy := range []string{"helm.sh/", "k8s.io/client-go/", "k8s.io/api/", "k8s.io/cli-runtime/", "github.com/aws/"} {
			if strings.HasPrefix(d, heavy) || d+"/" == heavy {
				t.Errorf("aws-ccm-renderer links %s", d)
			}
		}
	}
}

// TestLeanNoTemplates: no package of this module linked into the
// post-renderer imports text/template or html/template. Executing a
// template calls methods by name through reflection, and a program that
// may do so keeps every exported method of every type it links (the
// linker cannot tell which a template will call): the plans' texts as
// templates made the post-renderer 14.5 MB (peak memory 11.8 MiB on
// chart 0.0.11), their Go strings 9.1 MB (9.4 MiB). cobra imports
// text/template and executes it only for a template a command sets; the
// Helm SDK program executes the charts' templates and keeps its methods.
func TestLeanNoTemplates(t *testing.T) {
	lines := goList(t, "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".")
	n := 0
	for _, line := range lines {
		pkg, imports, _ := strings.Cut(line, " ")
		if !strings.HasPrefix(pkg, "github.com/aws-ccm-renderer/aws-ccm-renderer/") {
			continue
		}
		n++
		for _, imp := range strings.Fields(imports) {
			if imp == "text/template" || imp == "html/template" {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
	if n < 5 {
		t.Errorf("read %d packages of the module: the test reads go list wrong", n)
	}
	// What the imports cannot show: a dependency, or a template a command
	// sets with cobra, executing one. The program as linked has no
	// template evaluation (it had, with the plans' texts as templates).
	bin := filepath.Join(t.TempDir(), "aws-ccm-renderer")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	syms, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	if !strings.Contains(string(syms), " main.main") {
		t.Fatalf("go tool nm lists no main.main: the test reads its output wrong")
	}
	if strings.Contains(string(syms), "text/template.(*state).evalCall") {
		t.Error("aws-ccm-renderer links text/template's evaluation: something executes a template")
	}
}

// TestOneHelmImporter: in the module, only the action layer,
// internal/chartops, imports Helm.
func TestOneHelmImporter(t *testing.T) {
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/aws-ccm-renderer/aws-ccm-renderer/...") {
		pkg, imports, _ := strings.Cut(line, " ")
		if strings.HasSuffix(pkg, "/internal/chartops") {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, "helm.sh/") {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}

// TestDistrosLeaf: the distributions' records import nothing but the
// release data (and what it imports), so that every part of the program
// can read them and none of their consumers' imports come along.
func TestDistrosLeaf(t *testing.T) {
	const module = "github.com/aws-ccm-renderer/aws-ccm-renderer/"
	allowed := map[string]bool{module + "renderer/distros": true}
	for _, d := range goList(t, "-deps", module+"internal/releases") {
		allowed[d] = true
	}
	deps := goList(t, "-deps", module+"renderer/distros")
	if len(deps) < 5 || !slices.Contains(deps, module+"internal/releases") {
		t.Fatalf("go list -deps: %q", deps)
	}
	for _, d := range deps {
		if std := !strings.Contains(strings.SplitN(d, "/", 2)[0], "."); !allowed[d] && !std {
			t.Errorf("renderer/distros imports %s", d)
		}
	}
}
