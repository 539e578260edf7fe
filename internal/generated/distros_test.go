package generated

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// recordHomes are the files that may name distributions one by one: the
// records, and the plans' parts beside them.
var recordHomes = []string{"renderer/distros/records.go", "renderer/distros/facts.go", "renderer/distros/synthetic.go", "internal/plan/parts.go"}

// sources walks the repository's source and configuration files that are
// written by hand: not the tests (their fixtures name distributions), not
// the documentation (prose, *.md), not testdata, the tools' modules or
// what make generate writes. fn gets the slash path and the text.
func sources(t *testing.T, fn func(path string, text []byte)) {
	t.Helper()
	trees, err := Trees()
	if err != nil {
		t.Fatal(err)
	}
	generated := map[string]bool{}
	for _, tree := range trees {
		for name := range tree.Files {
			generated[tree.Dir+"/"+name] = true
		}
	}
	walkRepo(t, func(rel string) bool {
		return path.Base(rel) == "testdata" || rel == "e2e/tools"
	},
		func(rel, p string) error {
			if strings.HasSuffix(rel, "_test.go") || strings.HasSuffix(rel, ".md") || generated[rel] {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil || bytes.IndexByte(b, 0) >= 0 {
				return err
			}
			fn(rel, b)
			return nil
		})
}

// namesOf maps every way a distribution is written (its --distro value,
// its name, its aliases; lower case) to its --distro value, with a regexp
// that finds them as words.
func namesOf(recs []distros.Record) (map[string]distros.Distro, *regexp.Regexp) {
	names := map[string]distros.Distro{}
	for _, p := range distros.Named(recs) {
		names[strings.ToLower(string(p.Distro))] = p.Distro
		names[strings.ToLower(p.Name)] = p.Distro
		for _, a := range p.Aliases {
			names[strings.ToLower(a)] = p.Distro
		}
	}
	var alts []string
	for n := range names {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	// Longest first: rke2 before rke.
	slices.SortFunc(alts, func(a, b string) int { return len(b) - len(a) })
	return names, regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_./-])(` + strings.Join(alts, "|") + `)(?:[^A-Za-z0-9_]|$)`)
}

// slashed finds names joined by slashes ("RKE1/RKE2/K3s", "+rke2/+k3s"),
// which the word regexp of namesOf, skipping paths, would not see.
func slashed(names map[string]distros.Distro) *regexp.Regexp {
	var alts []string
	for n := range names {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	slices.SortFunc(alts, func(a, b string) int { return len(b) - len(a) })
	name := `\+?(?:` + strings.Join(alts, "|") + `)`
	return regexp.MustCompile(`(?i)` + name + `(?:/` + name + `)+\b`)
}

// distroList tells which distributions a line names, when it names three
// or more: a hand-written list.
func distroList(names map[string]distros.Distro, re *regexp.Regexp, line string) []distros.Distro {
	var found []distros.Distro
	line = slashed(names).ReplaceAllStringFunc(line, func(l string) string { return strings.ReplaceAll(l, "/", " ") })
	// The matches may share a separator: look again from each match's
	// word.
	for rest := line; ; {
		m := re.FindStringSubmatchIndex(rest)
		if m == nil {
			break
		}
		if d := names[strings.ToLower(rest[m[2]:m[3]])]; !slices.Contains(found, d) {
			found = append(found, d)
		}
		rest = rest[m[3]:]
	}
	if len(found) < 3 {
		return nil
	}
	return found
}

// TestNoDistroLists: no hand-written source or configuration file lists
// the distributions (three or more on a line); such a list is derived
// from distros.Records, or generated from them (DistroLines, the trees of
// make generate), so a distribution added to the records is in every one.
func TestNoDistroLists(t *testing.T) {
	recs := distros.Records()
	names, re := namesOf(recs)
	lines := map[string][]string{} // generated values, by file
	for _, l := range DistroLines {
		lines[l.File] = append(lines[l.File], l.Value(recs))
	}
	sources(t, func(path string, text []byte) {
		if slices.Contains(recordHomes, path) {
			return
		}
		s := string(text)
		for _, v := range lines[path] {
			s = strings.ReplaceAll(s, v, "")
		}
		for i, line := range strings.Split(s, "\n") {
			if ds := distroList(names, re, line); ds != nil {
				t.Errorf("%s:%d names %v by hand: derive the list from distros.Records, or generate it (DistroLines): %s", path, i+1, ds, strings.TrimSpace(line))
			}
		}
	})
}

// TestDistroListFinder: what counts as a hand-written list.
func TestDistroListFinder(t *testing.T) {
	names, re := namesOf(distros.Records())
	for line, want := range map[string]int{
		`Usage: "distribution: auto, rke, rke2, k3s or kubeadm"`:    4,
		`(list "rke" "rke2" "k3s" "kubeadm")`:                       4,
		`for Rancher (RKE1, RKE2, K3s) and kubeadm clusters`:        4,
		`options: [rke2, rke, k3s]`:                                 3,
		`RKE2's or K3s's own cloud controller`:                      0,
		`rke.cattle.io/, rke2.io/ and k3s.io/ annotations`:          3,
		`sudo systemctl restart rke2-server; /etc/rancher/k3s/x`:    0,
		`the distributions of distros.Records, every one by name`:   0,
		`(RKE1/RKE2/K3s: kube-controller-manager-arg)`:              3,
		`no +rke2/+k3s kubelet, no kubeadm annotation`:              3,
		`/etc/rancher/rke2/config.yaml, /etc/rancher/k3s/x, rke up`: 0,
	} {
		if got := len(distroList(names, re, line)); got != want {
			t.Errorf("%s: %d distributions; want %d", line, got, want)
		}
	}
}

// TestDistroConstants: only the records' homes name a distribution's
// constant (distros.RKE2, ...); everything else reads the record's
// fields. auto is a placement every front end offers, not a distribution.
func TestDistroConstants(t *testing.T) {
	consts := map[string]bool{}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(testtools.Root(), "renderer", "distros", "records.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, decl := range f.Decls {
		if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Distro" {
					for _, n := range v.Names {
						if n.Name != "Auto" {
							consts[n.Name] = true
						}
					}
				}
			}
		}
	}
	if len(consts) != len(distros.Named(distros.Records())) {
		t.Fatalf("the Distro constants of renderer/distros/records.go: %v", consts)
	}
	sources(t, func(path string, text []byte) {
		if !strings.HasSuffix(path, ".go") || slices.Contains(recordHomes, path) {
			return
		}
		f, err := parser.ParseFile(fset, path, text, 0)
		if err != nil {
			t.Error(err)
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var name string
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "distros" {
					name = x.Sel.Name
				}
			case *ast.Ident:
				if strings.HasPrefix(path, "renderer/distros/") && !strings.Contains(strings.TrimPrefix(path, "renderer/distros/"), "/") {
					name = x.Name
				}
			}
			if consts[name] {
				t.Errorf("%s: %s: read the distribution's record (distros.RecordOf) instead of naming it", fset.Position(n.Pos()), name)
			}
			return true
		})
	})
}
