package diff

import (
	"fmt"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
)

// Text is the text diff output: each changed object with its header,
// then a one-line summary; "" when nothing changed.
func Text(changes []Change, sum Summary, what string, color bool) string {
	if len(changes) == 0 {
		return ""
	}
	var b strings.Builder
	for i, c := range changes {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(terminal.Paint(color, terminal.BoldYellow, c.title+" "+changeVerb(c.Change)+":"))
		b.WriteByte('\n')
		for _, l := range splitLines(c.Diff) {
			switch {
			case strings.HasPrefix(l, "@@"):
				b.WriteString(terminal.Paint(color, terminal.Cyan, l))
			case strings.HasPrefix(l, "-"):
				b.WriteString(terminal.Paint(color, terminal.Red, l))
			case strings.HasPrefix(l, "+"):
				b.WriteString(terminal.Paint(color, terminal.Green, l))
			default:
				b.WriteString(l)
			}
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
	b.WriteString(terminal.Paint(color, terminal.Bold, summaryLine(sum, what)))
	b.WriteByte('\n')
	return b.String()
}

func changeVerb(change string) string {
	switch change {
	case Added:
		return "has been added"
	case Removed:
		return "has been removed"
	case Drifted:
		return "differs in the cluster from the release"
	}
	return "has changed"
}

// summaryLine is the last line of a text diff.
func summaryLine(s Summary, what string) string {
	line := fmt.Sprintf("Summary: %d changed, %d added, %d removed, %d unchanged", s.Changed, s.Added, s.Removed, s.Unchanged)
	if s.Drifted > 0 {
		verb := "differ"
		if s.Drifted == 1 {
			verb = "differs"
		}
		// Changed outside Helm, or by an upgrade that failed.
		line += fmt.Sprintf("; %d %s in the cluster from the release", s.Drifted, verb)
	}
	return line + " (" + what + ")"
}
