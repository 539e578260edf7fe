package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxRead is the most the program reads of any one file or stream it
// reads whole (a config file, a kubeconfig and the files it names, a CA
// bundle, manifests on stdin): far more than any of them holds (the
// upstream chart's output is tens of KiB, a kubeconfig of a thousand
// clusters a few MiB), and little enough to hold in memory. A file that
// never ends (/dev/zero, a pipe that keeps writing) or a device is one
// clear error instead of an out-of-memory crash or a hang.
const MaxRead = 64 << 20

// ErrTooLarge is the error of a file or stream of more than MaxRead bytes.
var ErrTooLarge = fmt.Errorf("it holds more than %d MiB, more than any input of this program", MaxRead>>20)

// ReadFile reads a regular file whole, at most MaxRead bytes. Anything
// else (a device such as /dev/zero, a named pipe, a socket, a directory)
// is refused when it is opened, without reading or waiting for a writer.
// Errors name the file.
func ReadFile(path string) ([]byte, error) {
	// Non-blocking: opening a named pipe waits for a writer otherwise.
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	if fi.Size() > MaxRead {
		return nil, &fs.PathError{Op: "read", Path: path, Err: ErrTooLarge}
	}
	b, err := ReadAll(f)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return b, nil
}

// CheckFile refuses, as ReadFile would, a file that another library reads
// whole by itself (the Kubernetes client reads a kubeconfig's
// certificate-authority, Go's TLS package a client key): not a regular
// file, or more than MaxRead bytes.
func CheckFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := regular(path, fi); err != nil {
		return err
	}
	if fi.Size() > MaxRead {
		return &fs.PathError{Op: "read", Path: path, Err: ErrTooLarge}
	}
	return nil
}

// ReadAll reads a stream whole, at most MaxRead bytes.
func ReadAll(r io.Reader) ([]byte, error) {
	return io.ReadAll(LimitReader(r))
}

// LimitReader reads r until it ends, and fails with ErrTooLarge once it
// gave more than MaxRead bytes (io.LimitReader would end there, as if the
// input were whole).
func LimitReader(r io.Reader) io.Reader { return &limited{r: r, left: MaxRead} }

type limited struct {
	r    io.Reader
	left int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, ErrTooLarge
	}
	return n, err
}

// errNotRegular is what regular says of anything but a regular file.
var errNotRegular = errors.New("not a regular file")

// regular refuses anything but a regular file, saying what it is.
func regular(path string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	kind := "a special file"
	switch m := fi.Mode(); {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w but %s: give a file", errNotRegular, kind)}
}
