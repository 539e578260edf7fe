package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressWarning: a line written during a step on a terminal (the
// renderer's warnings during a server-side dry run or a rollout) starts on
// a line of its own, not after the spinner's text.
func TestProgressWarning(t *testing.T) {
	var b bytes.Buffer
	p := &progress{w: &b, mode: progressTerminal, interval: time.Hour}
	p.begin("comparing")
	time.Sleep(250 * time.Millisecond)
	if _, err := p.Write([]byte("aws-ccm-renderer: warning: w\n")); err != nil {
		t.Fatal(err)
	}
	p.end(nil)
	out := b.String()
	if !strings.Contains(out, "\r\x1b[Kaws-ccm-renderer: warning: w\n") {
		t.Errorf("the warning does not start a cleared line: %q", out)
	}
	// Without a step, or off, it is written as it is.
	b.Reset()
	p.Write([]byte("x\n"))
	off := &progress{w: &b}
	off.Write([]byte("y\n"))
	if b.String() != "x\ny\n" {
		t.Errorf("outside a step: %q", b.String())
	}
}
