package terminal

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestColour: colour only on a terminal, without $NO_COLOR (even empty)
// or TERM=dumb; a file, /dev/null (a character device) or a pipe is no
// terminal.
func TestColour(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	t.Setenv("TERM", "xterm")
	os.Unsetenv("NO_COLOR")
	if !Colour(tty) || !IsTerminal(tty) {
		t.Error("a terminal is not coloured")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, s := range map[string]any{"/dev/null": null, "a pipe": w, "a buffer": &bytes.Buffer{}} {
		if IsTerminal(s) || Colour(s.(interface{ Write([]byte) (int, error) })) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
	t.Setenv("NO_COLOR", "")
	if Colour(tty) {
		t.Error("NO_COLOR set (even empty) still colours")
	}
	os.Unsetenv("NO_COLOR")
	t.Setenv("TERM", "dumb")
	if Colour(tty) {
		t.Error("TERM=dumb still colours")
	}
	if Paint(false, Red, "x") != "x" || Paint(true, Red, "x") != Red+"x\x1b[0m" {
		t.Error("Paint")
	}
}

// TestProgressMode: a spinner on a terminal, lines on a dumb one or in CI,
// nothing in a pipe.
func TestProgressMode(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	var b bytes.Buffer
	for _, c := range []struct {
		term, ci string
		w        any
		want     Mode
	}{
		{"xterm", "", tty, Spinner}, {"dumb", "", tty, Lines}, {"xterm", "true", &b, Lines}, {"xterm", "false", &b, Off}, {"xterm", "", &b, Off},
	} {
		t.Setenv("TERM", c.term)
		t.Setenv("CI", c.ci)
		if p := NewProgress(c.w.(interface{ Write([]byte) (int, error) })); p.mode != c.want || p.Shown() != (c.want != Off) {
			t.Errorf("TERM=%s CI=%s %T: mode %d, want %d", c.term, c.ci, c.w, p.mode, c.want)
		}
	}
}

// TestProgressWarning: a line written during a step on a terminal (the
// renderer's warnings during a server-side dry run or a rollout) starts on
// a line of its own, not after the spinner's text.
func TestProgressWarning(t *testing.T) {
	var b bytes.Buffer
	p := NewProgressMode(&b, Spinner, time.Hour)
	p.Begin("comparing")
	time.Sleep(250 * time.Millisecond)
	if _, err := p.Write([]byte("aws-ccm-renderer: warning: w\n")); err != nil {
		t.Fatal(err)
	}
	p.End(nil)
	out := b.String()
	if !strings.Contains(out, "\r\x1b[Kaws-ccm-renderer: warning: w\n") {
		t.Errorf("the warning does not start a cleared line: %q", out)
	}
	// Without a step, or off, it is written as it is.
	b.Reset()
	p.Write([]byte("x\n"))
	off := &Progress{w: &b}
	off.Write([]byte("y\n"))
	if b.String() != "x\ny\n" {
		t.Errorf("outside a step: %q", b.String())
	}
}
