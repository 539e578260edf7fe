package cli

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile/safefiletest"
)

// runWith runs the lean program with stdin, failed (not waited for) when
// it does not end.
func runWith(t *testing.T, stdin io.Reader, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type ran struct {
		code        int
		out, errOut string
	}
	r := safefiletest.Within(t, strings.Join(args, " "), func() ran {
		var out, errOut bytes.Buffer
		code := Main(args, IOStreams{In: stdin, Out: &out, ErrOut: &errOut})
		return ran{code, out.String(), errOut.String()}
	})
	return r.code, r.out, r.errOut
}

// TestConfigFileBounded: --config is a regular file of at most 64 MiB:
// one usage error line.
func TestConfigFileBounded(t *testing.T) {
	for path, want := range safefiletest.Files(t) {
		code, out, errOut := runWith(t, strings.NewReader(ccm), "--config", path)
		oneLineError(t, code, out, errOut, "--config: "+want)
	}
}

// TestStdinBounded: the post-renderer and fn read at most 64 MiB of stdin:
// an endless stream, /dev/zero as stdin and a larger file as stdin are one
// input error line, never a read without end.
func TestStdinBounded(t *testing.T) {
	var big string
	for path := range safefiletest.Files(t) {
		if strings.HasSuffix(path, "big") {
			big = path
		}
	}
	open := func(path string) io.Reader {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	for _, c := range []struct {
		name  string
		stdin io.Reader
		args  []string
		want  string
	}{
		{"an endless stream", safefiletest.Endless{}, []string{"--distro=rke2"}, "reading stdin: it holds more than 64 MiB"},
		{"/dev/zero", open("/dev/zero"), []string{"--distro=rke2"}, "reading stdin: it holds more than 64 MiB"},
		{"a file over 64 MiB", open(big), []string{"--distro=rke2"}, "reading stdin: it holds more than 64 MiB"},
		{"fn, an endless stream", safefiletest.Endless{}, []string{"fn"}, "reading the ResourceList: it holds more than 64 MiB"},
	} {
		code, out, errOut := runWith(t, c.stdin, c.args...)
		if code != ExitInput || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q (want %q)", c.name, code, out, errOut, c.want)
		}
	}
}
