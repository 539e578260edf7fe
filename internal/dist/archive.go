package dist

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// WriteArchive packs files of dir (names relative to it, at the archive's
// top) into a .tar.gz or a .zip. Only what is named goes in, in the order
// given, each with the time epoch, owner root (0) and mode 0755 (the
// programs) or 0644: the archive depends on the files' contents only.
func WriteArchive(file, dir string, names []string, zipped bool, epoch time.Time) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if zipped {
		err = writeZip(f, dir, names, epoch)
	} else {
		err = writeTarGz(f, dir, names, epoch)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(file), err)
	}
	return f.Close()
}

// mode is a member's mode: programs (no extension, .exe) and scripts
// (.sh) are executable, the rest not.
func mode(name string) fs.FileMode {
	switch filepath.Ext(name) {
	case "", ".exe", ".sh":
		return 0o755
	}
	return 0o644
}

func writeTarGz(w io.Writer, dir string, names []string, epoch time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, name := range names {
		// A directory's entry before its first file: some readers (Helm
		// 3's plugin installer) create no directory a file needs.
		if dir := path.Dir(name); dir != "." && !dirs[dir] {
			dirs[dir] = true
			h := &tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: epoch,
				Format: tar.FormatUSTAR, Uname: "root", Gname: "root"}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(b)), Mode: int64(mode(name)),
			ModTime: epoch, Format: tar.FormatUSTAR, Uname: "root", Gname: "root"}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, dir string, names []string, epoch time.Time) error {
	zw := zip.NewWriter(w)
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: epoch}
		h.SetMode(mode(name))
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(b); err != nil {
			return err
		}
	}
	return zw.Close()
}

// WriteChecksums writes out/checksums.txt: the SHA-256 of each file of
// out named, as sha256sum prints it (sha256sum -c checks it), sorted by
// name. It returns the name it wrote.
func WriteChecksums(out string, names []string) (string, error) {
	var buf bytes.Buffer
	for _, name := range slices.Sorted(slices.Values(names)) {
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			return "", err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&buf, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), name)
	}
	const name = "checksums.txt"
	return name, os.WriteFile(filepath.Join(out, name), buf.Bytes(), 0o644)
}

// Command runs a program in dir with env (nil: this process's) and returns
// its stdout; its error carries the program's last line on stderr.
func Command(dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return nil, fmt.Errorf("%s %s: %v: %s", filepath.Base(name), strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// Stamp sets the time of every file and directory under dir to epoch, for
// the tools that pack a directory as they find it (helm plugin package).
func Stamp(dir string, epoch time.Time) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	})
	if err != nil {
		return err
	}
	// The deepest first: setting a file's time leaves its directory's alone,
	// but creating it did not.
	for _, p := range slices.Backward(paths) {
		if err := os.Chtimes(p, epoch, epoch); err != nil {
			return err
		}
	}
	return nil
}
