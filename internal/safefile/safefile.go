// Package safefile is how the program touches files a user names. It
// writes generated files into a directory (aws-ccm-renderer overlays
// --out) without ever following a symbolic link: a link where the output
// goes could otherwise make the command delete or overwrite files
// elsewhere (another checkout's, a home directory's). And it reads every
// file and stream it takes whole (ReadFile, ReadAll, CheckFile for what
// another library reads) as a regular file of at most MaxRead bytes.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Replace removes each directory of replace under dir whole, then writes
// files under dir (both relative, slash-separated). dir is created when
// missing. Nothing is followed through a symbolic link: dir itself, a
// directory on the way to what is removed or written, or a file to write
// that is a link is an error, before anything is removed; and the work is
// done through an os.Root, so that no path can lead outside dir even if the
// tree changes meanwhile. Other files under dir are left alone.
func Replace(dir string, replace []string, files map[string][]byte) error {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return linkError(dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	names := slices.Sorted(maps.Keys(files))
	for _, rel := range append(slices.Clone(replace), names...) {
		if err := noLinks(root, dir, rel); err != nil {
			return err
		}
	}
	for _, rel := range replace {
		if err := root.RemoveAll(filepath.FromSlash(rel)); err != nil {
			return err
		}
	}
	for _, name := range names {
		if err := root.MkdirAll(filepath.FromSlash(path.Dir(name)), 0o755); err != nil {
			return err
		}
		if err := root.WriteFile(filepath.FromSlash(name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// noLinks fails when rel, or a directory on the way to it, is a symbolic
// link; what does not exist yet is fine.
func noLinks(root *os.Root, dir, rel string) error {
	parts := strings.Split(path.Clean(rel), "/")
	for i := range parts {
		p := filepath.FromSlash(strings.Join(parts[:i+1], "/"))
		fi, err := root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return linkError(filepath.Join(dir, p))
		}
	}
	return nil
}

func linkError(p string) error {
	return fmt.Errorf("%s is a symbolic link: the generated files are not written or deleted through links; remove it, or write them elsewhere", p)
}
