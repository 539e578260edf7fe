package terminal

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Progress reports the steps of the chart wrapper commands that take
// seconds (fetching a chart, waiting for a rollout) on stderr: on a
// terminal as one line that updates in place and stays when the step is
// done; in CI ($CI set, as CI services set it) or on a dumb terminal as
// plain lines; elsewhere (a pipe in a script) not at all, so that stderr
// holds nothing but warnings and the error.
type Progress struct {
	w        io.Writer
	mode     Mode
	interval time.Duration // between plain "still" lines

	mu    sync.Mutex
	msg   string
	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

// Mode is how a Progress shows the steps.
type Mode int

// The modes.
const (
	Off     Mode = iota // nothing
	Lines               // a plain line per step, and every interval while it lasts
	Spinner             // one line updated in place
)

// NewProgress returns the progress display for w: a spinner on a
// terminal, plain lines on a dumb one or in CI, else nothing.
func NewProgress(w io.Writer) *Progress {
	p := &Progress{w: w, interval: 30 * time.Second}
	switch {
	case IsTerminal(w) && os.Getenv("TERM") != "dumb":
		p.mode = Spinner
	case IsTerminal(w) || CI():
		p.mode = Lines
	}
	return p
}

// NewProgressMode returns a progress display of a mode, its plain lines
// interval apart.
func NewProgressMode(w io.Writer, mode Mode, interval time.Duration) *Progress {
	return &Progress{w: w, mode: mode, interval: interval}
}

// Shown tells whether the steps are shown at all.
func (p *Progress) Shown() bool { return p != nil && p.mode != Off }

var spinner = []string{"|", "/", "-", "\\"}

// Begin starts a step; End ends it. Steps do not nest.
func (p *Progress) Begin(msg string) {
	if p == nil || p.mode == Off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msg, p.start = msg, time.Now()
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	if p.mode == Lines {
		fmt.Fprintf(p.w, "aws-ccm-renderer: %s ...\n", msg)
	}
	go p.tick(p.stop, p.done)
}

func (p *Progress) tick(stop, done chan struct{}) {
	defer close(done)
	every := 100 * time.Millisecond
	if p.mode == Lines {
		every = p.interval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for i := 0; ; i++ {
		if p.mode == Spinner {
			p.mu.Lock()
			fmt.Fprintf(p.w, "\r\x1b[K%s aws-ccm-renderer: %s (%s)", spinner[i%len(spinner)], p.msg, elapsed(time.Since(p.start)))
			p.mu.Unlock()
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if p.mode == Lines {
			p.mu.Lock()
			fmt.Fprintf(p.w, "aws-ccm-renderer: %s: still going (%s)\n", p.msg, elapsed(time.Since(p.start)))
			p.mu.Unlock()
		}
	}
}

// End ends the step: a last line saying how long it took, or, when it
// failed, nothing (the error follows).
func (p *Progress) End(err error) {
	if p == nil || p.mode == Off || p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	took := elapsed(time.Since(p.start))
	if p.mode == Spinner {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	if err == nil {
		fmt.Fprintf(p.w, "aws-ccm-renderer: %s: done (%s)\n", p.msg, took)
	}
	p.stop = nil
}

// Write writes what is said during a step (a warning) to the progress's
// writer: on a terminal on a line cleared of the spinner, which the next
// tick draws again below it.
func (p *Progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == Spinner && p.stop != nil {
		if _, err := io.WriteString(p.w, "\r\x1b[K"); err != nil {
			return 0, err
		}
	}
	return p.w.Write(b)
}

func elapsed(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
