package conformance

import (
	"fmt"
	"strings"
)

// FrontEndsMarkdown writes the table of docs/compatibility.md that says,
// for each front end, where it does other than the post-renderer and why:
// its limits on the table's cases, and how its warnings and refusals reach
// the user. make generate writes it there (hack/generate).
func FrontEndsMarkdown() string {
	var b strings.Builder
	b.WriteString("| front end | where it does other than the post-renderer, and why |\n|---|---|\n")
	for _, fe := range FrontEnds {
		var notes []string
		seen := map[string]bool{}
		for _, c := range Cases() {
			if fe.Limit == nil {
				break
			}
			l, ok := fe.Limit(c)
			if !ok {
				continue
			}
			what := string(c.Kind)
			if l.Distro != "" {
				what = fmt.Sprintf("%s %s: renders distro %s", c.Distro, c.Kind, l.Distro)
			} else if c.Kind == Install || c.Distro == "auto" {
				what = fmt.Sprintf("distro %s", c.Distro)
			}
			note := fmt.Sprintf("%s: %s (%s)", what, l.Want, l.Why)
			if l.Want == Inexpressible {
				note = fmt.Sprintf("%s: %s (%s)", what, "cannot be asked", l.Why)
			}
			key := string(l.Want) + l.Why + string(l.Distro)
			if c.Distro == "auto" || l.Distro != "" {
				key += string(c.Distro)
			}
			if !seen[key] {
				seen[key] = true
				notes = append(notes, note)
			}
		}
		for _, n := range []string{fe.Quiet, fe.TerminalOnly, fe.Unrecorded} {
			if n != "" {
				notes = append(notes, n)
			}
		}
		if len(notes) == 0 {
			notes = []string{"the same"}
		}
		fmt.Fprintf(&b, "| %s | %s |\n", fe.Name, strings.Join(notes, "; "))
	}
	return b.String()
}
