package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
)

// The CCM's program, where the reading starts.
const mainPackage = "cmd/aws-cloud-controller-manager"

// skipped are the CCM's packages the chart's CCM never runs: the
// experimental provider registered as aws/v2 (pkg/providers/v2, up to
// v1.28), which only --cloud-provider=aws/v2 selects.
var skipped = []string{"pkg/providers/v2"}

// services maps an AWS SDK service package (aws-sdk-go and
// aws-sdk-go-v2 name them alike) to its IAM action prefix.
var services = map[string]string{
	"ec2": "ec2", "elb": "elasticloadbalancing", "elasticloadbalancing": "elasticloadbalancing",
	"elbv2": "elasticloadbalancing", "elasticloadbalancingv2": "elasticloadbalancing",
	"autoscaling": "autoscaling", "kms": "kms", "sts": "sts", "iam": "iam", "ecr": "ecr",
}

var sdkPrefixes = []string{"github.com/aws/aws-sdk-go/service/", "github.com/aws/aws-sdk-go-v2/service/"}

// A function of the CCM: its package, receiver type (or "") and name.
type funcKey struct{ pkg, name string }

type function struct {
	site   string   // file and function, for people
	refs   []string // the names it refers to (calls, method values)
	inputs []string // the actions whose request it builds
}

// analysis is one release's source as read.
type analysis struct {
	module  string
	root    string
	ctx     build.Context
	funcs   map[string][]*function // by name: a reference reaches every function of the name
	roots   []*function
	unknown map[string]string // an SDK service this reading does not map, with a site
}

// Analyze returns the AWS API actions a CCM release's program can call, each
// with the sites that build its request, read from the release's source
// (dir) and the k8s.io/cloud-provider source it builds with (cloudProvider):
// the actions whose request (the SDK's <Operation>Input, aws-sdk-go and
// aws-sdk-go-v2 alike) is built in a function the program can reach from
// its main, its init functions and the methods of k8s.io/cloud-provider's
// interfaces (the controllers call those). Reaching goes by name: a
// reference to a name reaches every function and method of that name.
func Analyze(dir, cloudProvider string) (map[string][]string, error) {
	a := &analysis{root: dir, ctx: buildCtx(), funcs: map[string][]*function{}, unknown: map[string]string{}}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	if a.module = modfile.ModulePath(mod); a.module == "" {
		return nil, fmt.Errorf("%s: go.mod names no module", dir)
	}
	if err := a.load(); err != nil {
		return nil, err
	}
	if len(a.unknown) > 0 {
		var s []string
		for svc, site := range a.unknown {
			s = append(s, svc+" ("+site+")")
		}
		slices.Sort(s)
		return nil, fmt.Errorf("%s: AWS SDK services without an IAM prefix here: %s", dir, strings.Join(s, ", "))
	}
	names, err := interfaceMethods(cloudProvider)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		a.roots = append(a.roots, a.funcs[n]...)
	}
	return a.reach(), nil
}

// buildCtx is the build the CCM's images are: linux, without cgo.
func buildCtx() build.Context {
	c := build.Default
	c.GOOS, c.GOARCH, c.CgoEnabled = "linux", "amd64", false
	return c
}

// load reads the module's packages the program imports, from its main.
func (a *analysis) load() error {
	seen := map[string]bool{}
	queue := []string{mainPackage}
	for len(queue) > 0 {
		rel := queue[0]
		queue = queue[1:]
		if seen[rel] || slices.ContainsFunc(skipped, func(s string) bool { return rel == s || strings.HasPrefix(rel, s+"/") }) {
			continue
		}
		seen[rel] = true
		p, err := a.ctx.ImportDir(filepath.Join(a.root, filepath.FromSlash(rel)), 0)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		for _, imp := range p.Imports {
			if r, ok := strings.CutPrefix(imp, a.module+"/"); ok {
				queue = append(queue, r)
			}
		}
		for _, f := range p.GoFiles {
			if isDouble(f) {
				continue
			}
			if err := a.file(rel, path.Join(rel, f), rel == mainPackage); err != nil {
				return err
			}
		}
	}
	return nil
}

// isDouble says whether a file holds test doubles (the fakes and mocks
// the packages keep beside their code for other packages' tests).
func isDouble(name string) bool {
	return strings.Contains(name, "fake") || strings.Contains(name, "mock")
}

// file reads one file's functions.
func (a *analysis) file(pkg, rel string, isMain bool) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(a.root, filepath.FromSlash(rel)), nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	sdk := map[string]string{} // local name of an SDK service package -> IAM prefix
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		for _, pre := range sdkPrefixes {
			svc, ok := strings.CutPrefix(p, pre)
			if !ok || strings.Contains(svc, "/") {
				continue
			}
			name := svc
			if imp.Name != nil {
				name = imp.Name.Name
			}
			prefix, known := services[svc]
			if !known {
				a.unknown[svc] = rel
			}
			sdk[name] = prefix
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			fn := &function{site: rel + " " + d.Name.Name}
			if d.Body != nil {
				collect(d.Body, sdk, fn)
			}
			a.funcs[d.Name.Name] = append(a.funcs[d.Name.Name], fn)
			if d.Recv == nil && (d.Name.Name == "init" || isMain && d.Name.Name == "main") {
				a.roots = append(a.roots, fn)
			}
		case *ast.GenDecl:
			// Package-level values are built at start: their requests and
			// references count as reached.
			if d.Tok == token.VAR {
				fn := &function{site: rel + " (package variables)"}
				collect(d, sdk, fn)
				a.roots = append(a.roots, fn)
			}
		}
	}
	return nil
}

// collect records what a function body refers to and which requests it
// builds: a composite literal, new() or a declared zero value of an SDK
// service's <Operation>Input.
func collect(n ast.Node, sdk map[string]string, fn *function) {
	input := func(e ast.Expr) {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return
		}
		prefix, ok := sdk[id.Name]
		op, isInput := strings.CutSuffix(sel.Sel.Name, "Input")
		if ok && isInput && op != "" && prefix != "" {
			fn.inputs = append(fn.inputs, prefix+":"+op)
		}
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			input(n.Type)
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 {
				input(n.Args[0])
			}
		case *ast.ValueSpec:
			if n.Type != nil && len(n.Values) == 0 {
				input(n.Type)
			}
		case *ast.SelectorExpr:
			fn.refs = append(fn.refs, n.Sel.Name)
		case *ast.Ident:
			fn.refs = append(fn.refs, n.Name)
		}
		return true
	})
}

// reach walks from the roots and returns the actions of the requests the
// reached functions build, with their sites.
func (a *analysis) reach() map[string][]string {
	out := map[string][]string{}
	done := map[*function]bool{}
	names := map[string]bool{}
	queue := slices.Clone(a.roots)
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		if done[fn] {
			continue
		}
		done[fn] = true
		for _, act := range fn.inputs {
			if !slices.Contains(out[act], fn.site) {
				out[act] = append(out[act], fn.site)
			}
		}
		for _, r := range fn.refs {
			if !names[r] {
				names[r] = true
				queue = append(queue, a.funcs[r]...)
			}
		}
	}
	for act := range out {
		slices.Sort(out[act])
	}
	return out
}

// interfaceMethods returns the methods of the interfaces of
// k8s.io/cloud-provider's cloud.go (Interface, LoadBalancer, Instances,
// InstancesV2, Zones, Routes...) that the module's own code calls: its
// controllers call the provider through them. A method only kube-apiserver
// or the kubelet of the in-tree days called (PVLabeler's
// GetLabelsForVolume) is not among them.
func interfaceMethods(dir string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(dir, "cloud.go"), nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if it, ok := n.(*ast.InterfaceType); ok {
			for _, m := range it.Methods.List {
				for _, id := range m.Names {
					declared[id.Name] = true
				}
			}
		}
		return true
	})
	called := map[string]bool{}
	ctx := buildCtx()
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); p != dir && (name == "fake" || name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		pkg, err := ctx.ImportDir(p, 0)
		if err != nil {
			return nil // no Go files for this build
		}
		for _, name := range pkg.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && declared[sel.Sel.Name] {
					called[sel.Sel.Name] = true
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(called) < 10 {
		return nil, fmt.Errorf("%s: only %d methods of the interfaces of cloud.go are called", dir, len(called))
	}
	return slices.Sorted(maps.Keys(called)), nil
}
