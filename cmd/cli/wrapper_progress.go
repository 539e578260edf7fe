package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress reports the steps of the chart wrapper commands that take
// seconds (fetching a chart, waiting for a rollout) on stderr: on a
// terminal as one line that updates in place and stays when the step is
// done; in CI ($CI set, as CI services set it) or on a dumb terminal as
// plain lines; elsewhere (a pipe in a script) not at all, so that stderr
// holds nothing but warnings and the error.
type progress struct {
	w        io.Writer
	mode     progressMode
	interval time.Duration // between plain "still" lines

	mu    sync.Mutex
	msg   string
	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

type progressMode int

const (
	progressOff progressMode = iota
	progressLines
	progressTerminal
)

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, interval: 30 * time.Second}
	term := os.Getenv("TERM")
	switch {
	case isTerminal(w) && term != "dumb":
		p.mode = progressTerminal
	case isTerminal(w) || ciEnv():
		p.mode = progressLines
	}
	return p
}

// ciEnv tells whether $CI says this runs in CI (GitHub Actions, GitLab CI
// and most others set CI=true).
func ciEnv() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "false" && v != "0"
}

var spinner = []string{"|", "/", "-", "\\"}

// begin starts a step; end ends it. Steps do not nest.
func (p *progress) begin(msg string) {
	if p == nil || p.mode == progressOff {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msg, p.start = msg, time.Now()
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	if p.mode == progressLines {
		fmt.Fprintf(p.w, "aws-ccm-renderer: %s ...\n", msg)
	}
	go p.tick(p.stop, p.done)
}

func (p *progress) tick(stop, done chan struct{}) {
	defer close(done)
	every := 100 * time.Millisecond
	if p.mode == progressLines {
		every = p.interval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for i := 0; ; i++ {
		if p.mode == progressTerminal {
			p.mu.Lock()
			fmt.Fprintf(p.w, "\r\x1b[K%s aws-ccm-renderer: %s (%s)", spinner[i%len(spinner)], p.msg, elapsed(time.Since(p.start)))
			p.mu.Unlock()
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if p.mode == progressLines {
			p.mu.Lock()
			fmt.Fprintf(p.w, "aws-ccm-renderer: %s: still going (%s)\n", p.msg, elapsed(time.Since(p.start)))
			p.mu.Unlock()
		}
	}
}

// end ends the step: a last line saying how long it took, or, when it
// failed, nothing (the error follows).
func (p *progress) end(err error) {
	if p == nil || p.mode == progressOff || p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	took := elapsed(time.Since(p.start))
	if p.mode == progressTerminal {
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
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == progressTerminal && p.stop != nil {
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
