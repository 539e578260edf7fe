// Package safefiletest has the files no input of the program may be, for
// the tests of each place that reads one.
package safefiletest

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
)

// Files are a device without end (/dev/zero), a named pipe nothing writes
// to, and a file larger than safefile.MaxRead (sparse: no disk used), by
// path, each with the words of the one error safefile gives for it.
func Files(t testing.TB) map[string]string {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, safefile.MaxRead+1); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"/dev/zero": "read /dev/zero: not a regular file but a character device: give a file",
		fifo:        "read " + fifo + ": not a regular file but a named pipe: give a file",
		big:         "read " + big + ": it holds more than 64 MiB",
	}
}

// Within runs f and fails the test, without waiting for f, when it has not
// returned within a minute: a read of /dev/zero or of a named pipe never
// ends, and a test that reads one must fail, not hang.
func Within[T any](t testing.TB, what string, f func() T) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-ctx.Done():
		t.Fatalf("%s has not ended: it reads without end or waits for a writer", what)
	}
	panic("unreachable")
}

// Endless is a stream without end, as `yes` or /dev/zero through a pipe.
type Endless struct{}

func (Endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}
