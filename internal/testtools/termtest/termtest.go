// Package termtest runs the programs under test on a pseudo-terminal, as
// in an interactive shell, for what they show a person at a terminal.
package termtest

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// RunOnTerminal runs a command with a new pseudo-terminal as its
// controlling terminal, stdin, stdout and stderr, as in an interactive
// shell, and returns its exit code and what the terminal showed (with
// "\n" line ends).
func RunOnTerminal(t testing.TB, env []string, name string, args ...string) (int, string) {
	t.Helper()
	testtools.CheckHomes(t, env)
	cmd := exec.Command(name, args...)
	cmd.Env = env
	term, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	var screen bytes.Buffer
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(&screen, term) // ends with EIO when the command exits
		close(copied)
	}()
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err = <-waitErr:
	case <-time.After(120 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("%s did not finish", filepath.Base(name))
	}
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
	}
	code := testtools.ExitCode(err)
	if code < 0 {
		t.Fatal(err)
	}
	return code, strings.ReplaceAll(screen.String(), "\r\n", "\n")
}

// CheckTerminalWarning runs a command that renders through the renderer
// and warns, once under a pseudo-terminal and once without one: on the
// terminal the warning shows once and the command succeeds; without a
// terminal it succeeds with manifests on stdout, and its stderr tells
// whether the front end passed the warning on (passed). It returns what
// the terminal showed.
func CheckTerminalWarning(t *testing.T, env []string, name string, args []string, warning string, passed bool) string {
	t.Helper()
	code, text := RunOnTerminal(t, env, name, args...)
	if code != 0 || strings.Count(text, warning) != 1 || !strings.Contains(text, "kind: DaemonSet") {
		t.Errorf("on a terminal: exit %d, want 0 with the warning %q once and the manifests:\n%s", code, warning, text)
	}
	out, errOut, err := testtools.Run(t, env, name, args...)
	if err != nil || !bytes.Contains(out, []byte("kind: DaemonSet")) || strings.Contains(string(errOut), warning) != passed {
		t.Errorf("without a terminal: %v, the warning on stderr %v, want %v:\n%s", err, !passed, passed, errOut)
	}
	return text
}
