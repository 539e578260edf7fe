//go:build unix

package safefile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadFile: a regular file is read whole; a device, a named pipe
// without a writer, a directory and a file of more than MaxRead bytes are
// one error naming the path, at once (before, /dev/zero filled the memory
// and a pipe hung).
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(small, []byte("distro: rke2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(small); err != nil || string(b) != "distro: rke2\n" {
		t.Fatalf("ReadFile: %q, %v", b, err)
	}
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxRead + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(link); err != nil || len(b) == 0 {
		t.Errorf("a link to a file: %q, %v", b, err)
	}
	for path, want := range map[string]string{
		"/dev/zero":  "/dev/zero: not a regular file but a character device",
		fifo:         fifo + ": not a regular file but a named pipe",
		dir:          dir + ": not a regular file but a directory",
		big:          big + ": it holds more than 64 MiB",
		dir + "/nil": "no such file or directory",
	} {
		for name, read := range map[string]func(string) error{
			"ReadFile":  func(p string) error { _, err := ReadFile(p); return err },
			"CheckFile": CheckFile,
		} {
			if err := read(path); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s(%s): %v, want one line saying %q", name, path, err, want)
			}
		}
	}
}

// TestReadAll: a stream is read whole up to MaxRead bytes, and one that
// goes on is ErrTooLarge, having read no more than MaxRead and a buffer.
func TestReadAll(t *testing.T) {
	b, err := ReadAll(io.LimitReader(zeros{}, MaxRead))
	if err != nil || len(b) != MaxRead {
		t.Fatalf("MaxRead bytes: %d, %v", len(b), err)
	}
	var n countReader
	if _, err := ReadAll(&n); !errors.Is(err, ErrTooLarge) || n.n > MaxRead+64<<10 {
		t.Errorf("an endless stream: %v after %d bytes", err, n.n)
	}
	if b, err := ReadAll(bytes.NewReader([]byte("a: b\n"))); err != nil || string(b) != "a: b\n" {
		t.Errorf("a short stream: %q, %v", b, err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type countReader struct{ n int }

func (c *countReader) Read(p []byte) (int, error) { c.n += len(p); return len(p), nil }
