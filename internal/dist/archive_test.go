package dist

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

var epoch = time.Unix(1700000000, 0).UTC()

// stage writes files (name: contents) under a new directory.
func stage(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, data := range files {
		testtools.WriteFile(t, filepath.Join(dir, filepath.FromSlash(name)), []byte(data))
	}
	return dir
}

// TestWriteTarGz: only the members named, in that order, a directory's
// entry before its first file, root's, dated at the epoch, programs and
// scripts executable; gzip records no time or name; the bytes depend on
// the contents only, not on the files' times on disk.
func TestWriteTarGz(t *testing.T) {
	dir := stage(t, map[string]string{"prog": "a program", "sub/install.sh": "#!/bin/sh\n", "sub/plugin.yaml": "name: x\n", "left-out": "x"})
	file := filepath.Join(t.TempDir(), "a.tar.gz")
	names := []string{"sub/plugin.yaml", "prog", "sub/install.sh"}
	if err := WriteArchive(file, dir, names, false, epoch); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range testtools.TarGz(t, file) {
		h := m.Header
		got = append(got, fmt.Sprintf("%c %s %o %d:%d %s:%s %s %q", h.Typeflag, h.Name, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime.UTC().Format(time.RFC3339), m.Data))
		if h.Format != tar.FormatUSTAR {
			t.Errorf("%s: format %v, want USTAR", h.Name, h.Format)
		}
	}
	want := []string{
		`5 sub/ 755 0:0 root:root 2023-11-14T22:13:20Z ""`,
		`0 sub/plugin.yaml 644 0:0 root:root 2023-11-14T22:13:20Z "name: x\n"`,
		`0 prog 755 0:0 root:root 2023-11-14T22:13:20Z "a program"`,
		`0 sub/install.sh 755 0:0 root:root 2023-11-14T22:13:20Z "#!/bin/sh\n"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("members:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header: time %v, name %q", zr.ModTime, zr.Name)
	}

	// Other times on disk, another day: the same bytes.
	for _, name := range names {
		if err := os.Chtimes(filepath.Join(dir, name), time.Now(), time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	again := filepath.Join(t.TempDir(), "a.tar.gz")
	if err := WriteArchive(again, dir, names, false, epoch); err != nil {
		t.Fatal(err)
	}
	if b2, err := os.ReadFile(again); err != nil || !bytes.Equal(b, b2) {
		t.Errorf("a second archive of the same files differs: %v", err)
	}
	// Another epoch: other bytes.
	if err := WriteArchive(again, dir, names, false, epoch.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(again); bytes.Equal(b, b2) {
		t.Error("the epoch is not in the archive")
	}
}

// TestWriteZip: as the tar.gz, for Windows.
func TestWriteZip(t *testing.T) {
	dir := stage(t, map[string]string{"prog.exe": "a program", "README.md": "read me"})
	file := filepath.Join(t.TempDir(), "a.zip")
	if err := WriteArchive(file, dir, []string{"prog.exe", "README.md"}, true, epoch); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var got []string
	for _, f := range zr.File {
		got = append(got, fmt.Sprintf("%s %v %s %d", f.Name, f.Mode(), f.Modified.UTC().Format(time.RFC3339), f.Method))
	}
	want := []string{"prog.exe -rwxr-xr-x 2023-11-14T22:13:20Z 8", "README.md -rw-r--r-- 2023-11-14T22:13:20Z 8"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("members:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWriteArchiveErrors: a member that is not there fails, naming the
// archive; so does an archive that cannot be written.
func TestWriteArchiveErrors(t *testing.T) {
	dir := stage(t, map[string]string{"prog": "x"})
	for _, zipped := range []bool{false, true} {
		err := WriteArchive(filepath.Join(t.TempDir(), "a.out"), dir, []string{"prog", "none"}, zipped, epoch)
		if err == nil || !strings.HasPrefix(err.Error(), "a.out: ") || !strings.Contains(err.Error(), "none") {
			t.Errorf("zip %v, a missing member: %v", zipped, err)
		}
	}
	if err := WriteArchive(filepath.Join(dir, "no", "a.tar.gz"), dir, []string{"prog"}, false, epoch); err == nil {
		t.Error("an archive in a directory that is not there is written")
	}
}

// TestWriteChecksums: sha256sum's format, sorted by name.
func TestWriteChecksums(t *testing.T) {
	out := stage(t, map[string]string{"b.tar.gz": "bee", "a.zip": "ay", "c.prov": "not listed"})
	name, err := WriteChecksums(out, []string{"b.tar.gz", "a.zip"})
	if err != nil || name != "checksums.txt" {
		t.Fatalf("%q %v", name, err)
	}
	got, err := os.ReadFile(filepath.Join(out, name))
	want := fmt.Sprintf("%x  a.zip\n%x  b.tar.gz\n", sha256.Sum256([]byte("ay")), sha256.Sum256([]byte("bee")))
	if err != nil || string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, err := WriteChecksums(out, []string{"a.zip", "none"}); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestStamp: every file and directory under the directory, itself too,
// dated at the epoch.
func TestStamp(t *testing.T) {
	dir := stage(t, map[string]string{"a/b/c": "x", "d": "y"})
	if err := Stamp(dir, epoch); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if n++; !st.ModTime().Equal(epoch) {
			t.Errorf("%s: %v", p, st.ModTime())
		}
		return nil
	})
	if err != nil || n != 5 {
		t.Errorf("%d paths: %v", n, err)
	}
	if err := Stamp(filepath.Join(dir, "none"), epoch); err == nil {
		t.Error("a directory that is not there is stamped")
	}
}

// TestCommand: a program's stdout; its failure with its last line on
// stderr.
func TestCommand(t *testing.T) {
	sh := "/bin/sh"
	if out, err := Command(t.TempDir(), []string{"X=1"}, sh, "-c", "echo $X; pwd >/dev/null"); err != nil || string(out) != "1\n" {
		t.Errorf("%q %v", out, err)
	}
	_, err := Command("", nil, sh, "-c", "echo out; echo first >&2; echo last >&2; exit 3")
	if err == nil || err.Error() != "sh -c echo out; echo first >&2; echo last >&2; exit 3: exit status 3: last" {
		t.Errorf("failure: %v", err)
	}
}
