package generated

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// module is the import path of this repository's packages.
const module = "github.com/aws-ccm-renderer/aws-ccm-renderer/"

// TestNoForwarders: no package-level constant or variable of the
// program's code is another of its packages' name for the same fact
// (const X = pkg.Y), and no function only passes its parameters on to one
// of another package (func F(t string) bool { return pkg.F(t) }): callers
// import the home. A function value (a seam a test replaces) is not a
// fact, and is allowed: var run = pkg.Run.
func TestNoForwarders(t *testing.T) {
	n := 0
	walkRepo(t, func(rel string) bool { return rel == "e2e" || rel == "testdata" }, func(rel, path string) error {
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		n++
		for _, f := range forwarders(t, path) {
			t.Errorf("%s: %s: callers import the home", rel, f)
		}
		return nil
	})
	if n < 100 {
		t.Errorf("read %d Go files: the test walks the wrong tree", n)
	}
}

// forwarders are the package-level declarations of a file whose value is
// a constant or variable of another package of the module, by name.
func forwarders(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]string{} // package name in the file: its folder
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		dir, ok := strings.CutPrefix(p, module)
		if !ok {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		ours[name] = dir
	}
	var out []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			if to := forwardsTo(fd, ours); to != "" {
				out = append(out, "func "+fd.Name.Name+" returns "+to)
			}
			continue
		}
		g, ok := d.(*ast.GenDecl)
		if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, val := range v.Values {
				sel, ok := val.(*ast.SelectorExpr)
				if !ok {
					continue
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok || ours[x.Name] == "" || funcs(t, ours[x.Name])[sel.Sel.Name] {
					continue
				}
				out = append(out, v.Names[i].Name+" = "+x.Name+"."+sel.Sel.Name)
			}
		}
	}
	return out
}

// forwardsTo is the function of another package of the module a
// function only calls with its own parameters, as they come
// (func F(a, b T) R { return pkg.F(a, b) }); "" when it does more.
func forwardsTo(fd *ast.FuncDecl, ours map[string]string) string {
	if fd.Recv != nil || fd.Body == nil || len(fd.Body.List) != 1 {
		return ""
	}
	ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return ""
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok || call.Ellipsis.IsValid() {
		return ""
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok || ours[x.Name] == "" {
		return ""
	}
	var params []string
	for _, field := range fd.Type.Params.List {
		for _, n := range field.Names {
			params = append(params, n.Name)
		}
	}
	if len(params) != len(call.Args) {
		return ""
	}
	for i, a := range call.Args {
		if id, ok := a.(*ast.Ident); !ok || id.Name != params[i] {
			return ""
		}
	}
	return x.Name + "." + sel.Sel.Name
}

var funcsOf = map[string]map[string]bool{}

// funcs are the functions a package of the module declares, by name.
func funcs(t *testing.T, dir string) map[string]bool {
	t.Helper()
	if m, ok := funcsOf[dir]; ok {
		return m
	}
	m := map[string]bool{}
	pkgs, err := parser.ParseDir(token.NewFileSet(), filepath.Join(testtools.Root(), filepath.FromSlash(dir)), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
					m[fd.Name.Name] = true
				}
			}
		}
	}
	funcsOf[dir] = m
	return m
}
