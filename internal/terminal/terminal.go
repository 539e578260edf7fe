// Package terminal decides what the commands show on a terminal and what
// they leave out elsewhere: whether a stream is a terminal, whether to
// colour, and the progress of the steps that take seconds. It is the one
// place for these rules, which the environment ($NO_COLOR, $TERM, $CI)
// steers.
package terminal

import (
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// IsTerminal reports whether a stream (a reader or a writer) is a terminal:
// a file whose device answers as one, also through Redacting. A pipe, a
// file or /dev/null (a character device, but no terminal) is not.
func IsTerminal(stream any) bool {
	if r, ok := stream.(*redacting); ok {
		stream = r.w
	}
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Colour tells whether to colour what goes to w when the user did not say:
// w is a terminal, $NO_COLOR is not set (set empty counts as set, as
// docs/check.md says) and $TERM is not dumb.
func Colour(w io.Writer) bool {
	if _, set := os.LookupEnv("NO_COLOR"); set || os.Getenv("TERM") == "dumb" {
		return false
	}
	return IsTerminal(w)
}

// CI tells whether $CI says this runs in CI (GitHub Actions, GitLab CI and
// most others set CI=true).
func CI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "false" && v != "0"
}

// The colours and weights the commands use.
const (
	Bold       = "\x1b[1m"
	BoldYellow = "\x1b[1;33m"
	Dim        = "\x1b[2m"
	Red        = "\x1b[31m"
	Green      = "\x1b[32m"
	Yellow     = "\x1b[33m"
	Cyan       = "\x1b[36m"
	reset      = "\x1b[0m"
)

// Paint writes s in a colour when on.
func Paint(on bool, colour, s string) string {
	if !on {
		return s
	}
	return colour + s + reset
}

// Controlling opens the process's controlling terminal for writing: the
// terminal of the person who ran the command, even when stderr goes
// elsewhere (a post-renderer's stderr is a buffer of Helm's). It fails
// where there is none (CI jobs, GitOps controllers, a process in a session
// of its own) and on systems without /dev/tty.
func Controlling() (io.WriteCloser, error) {
	return os.OpenFile("/dev/tty", os.O_WRONLY, 0)
}
