// Package generated writes and checks the files of the repository
// generated from the renderer: the kustomize overlays (and the Fleet
// example's copy of them), the Flux HelmReleases, the wrapper chart's
// values, presets and templates, the marked lines and sections of
// hand-written files. hack/generate, the one generator (make generate),
// runs each of them; its -check mode reports what is stale.
package generated

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/overlays"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/wrapperchart"
)

// FleetOverlays is the Fleet example's copy of the overlays, with the
// guard (images.PinnedGuard) in every component.
const FleetOverlays = "examples/fleet/overlays"

// Tree is a set of generated files under one directory of the repository.
type Tree struct {
	Dir   string            // slash-separated, relative to the repository
	Files map[string][]byte // by slash-separated path relative to Dir
	// Owned are subdirectories of Dir whose every file is generated: a
	// file there that Files lacks is stale.
	Owned []string
}

// Trees returns every generated tree.
func Trees() ([]Tree, error) {
	var trees []Tree
	for _, g := range []struct {
		dir   string
		files func(overlays.Spec) (map[string][]byte, error)
		more  []string // owned directories beside the components
		guard string   // the guard's image, "" for none
	}{
		{"overlays", overlays.Files, nil, ""},
		// The Fleet example runs the guard: one bundle lands on many
		// clusters, some of which may still run the in-tree provider.
		{FleetOverlays, overlays.Files, nil, images.PinnedGuard},
		{"examples/flux", overlays.FluxFiles, []string{overlays.FluxSourceDir}, ""},
	} {
		spec := overlays.DefaultSpec(g.dir)
		spec.Options.GuardImage = g.guard
		files, err := g.files(spec)
		if err != nil {
			return nil, err
		}
		trees = append(trees, Tree{Dir: g.dir, Files: files, Owned: append(g.more, spec.Directories()...)})
	}
	chart, err := wrapperchart.Files()
	if err != nil {
		return nil, err
	}
	return append(trees, Tree{Dir: "charts/aws-ccm-rancher", Files: chart, Owned: []string{"presets"}}), nil
}

// Stale compares a tree with the files under root (the repository) and
// returns what differs: "path: missing", "path: stale", "path: not
// generated any more".
func (t Tree) Stale(root string) ([]string, error) {
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(t.Files)) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(t.Dir), filepath.FromSlash(name)))
		switch {
		case os.IsNotExist(err):
			problems = append(problems, t.Dir+"/"+name+": missing")
		case err != nil:
			return nil, err
		case string(b) != string(t.Files[name]):
			problems = append(problems, t.Dir+"/"+name+": stale")
		}
	}
	extra, err := t.extra(root)
	for _, name := range extra {
		problems = append(problems, t.Dir+"/"+name+": not generated any more")
	}
	return problems, err
}

// extra returns the files of the owned directories that are not generated.
func (t Tree) extra(root string) ([]string, error) {
	var extra []string
	for _, dir := range t.Owned {
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(t.Dir), filepath.FromSlash(dir)))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if name := dir + "/" + e.Name(); !e.IsDir() && t.Files[name] == nil {
				extra = append(extra, name)
			}
		}
	}
	return extra, nil
}

// Write writes the tree under root and removes the files of its owned
// directories that are no longer generated.
func (t Tree) Write(root string) error {
	base := filepath.Join(root, filepath.FromSlash(t.Dir))
	extra, err := t.extra(root)
	if err != nil {
		return err
	}
	for _, name := range extra {
		if err := os.Remove(filepath.Join(base, filepath.FromSlash(name))); err != nil {
			return err
		}
	}
	// An owned directory nothing is generated into any more goes too.
	for _, dir := range t.Owned {
		if err := os.Remove(filepath.Join(base, filepath.FromSlash(dir))); err != nil && !os.IsNotExist(err) && !isNotEmpty(err) {
			return err
		}
	}
	for name, b := range t.Files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// isNotEmpty tells whether removing a directory failed because it holds
// files.
func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}

// Summary names the trees, for messages.
func Summary(trees []Tree) string {
	var dirs []string
	for _, t := range trees {
		dirs = append(dirs, t.Dir)
	}
	return strings.Join(dirs, ", ")
}
