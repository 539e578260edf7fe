package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Output formats.
const (
	FormatText     = "text"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// Formats lists the output formats.
var Formats = []string{FormatText, FormatJSON, FormatMarkdown}

// Write prints the plan in a format.
func Write(w io.Writer, p *Plan, format string) error {
	var b bytes.Buffer
	switch format {
	case FormatText:
		writeText(&b, p)
	case FormatMarkdown:
		WriteMarkdown(&b, p, 2)
	case FormatJSON:
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(p); err != nil {
			return err
		}
	default:
		return usagef("unknown output format %q: use %s", format, strings.Join(Formats, ", "))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// textWidth is where prose is wrapped in the text form.
const textWidth = 100

// wrap breaks s into lines of at most width columns, the first prefixed by
// first, the others by rest.
func wrap(s, first, rest string, width int) string {
	var out strings.Builder
	line := first
	empty := true
	for _, word := range strings.Fields(s) {
		if !empty && len(line)+1+len(word) > width {
			out.WriteString(line + "\n")
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	out.WriteString(line + "\n")
	return out.String()
}

func indent(s, prefix string) string {
	var out strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l == "" {
			out.WriteString("\n")
			continue
		}
		out.WriteString(prefix + l + "\n")
	}
	return out.String()
}

func strategyName(s Strategy) string {
	if s == LeaderMigration {
		return "leader migration"
	}
	return "switch (no in-tree provider to migrate from)"
}

func writeText(b *bytes.Buffer, p *Plan) {
	fmt.Fprintf(b, "Migration plan: %s, Kubernetes %s, %s\n\n", p.Title, p.KubernetesVersion, strategyName(p.Strategy))
	b.WriteString(wrap(p.Summary, "", "", textWidth))
	b.WriteString("\n")
	fmt.Fprintf(b, "CCM:   %s (chart %s %s, release %s in %s)\n", p.CCM.Image, p.CCM.Chart, p.CCM.ChartVersion, p.CCM.Release, p.CCM.Namespace)
	b.WriteString(wrap("image tag from "+p.CCM.ImageTagSource, "       ", "       ", textWidth))
	if l := p.LeaderMigration; l != nil {
		fmt.Fprintf(b, "Lease: %s/%s, taken by the in-tree controller manager as %s\n", l.Namespace, l.Name, l.KCMUser)
	}
	for _, ph := range p.Phases {
		fmt.Fprintf(b, "\n%s: %s\n", strings.ToUpper(string(ph.Name)), ph.Title)
		b.WriteString(wrap(ph.Summary, "  ", "  ", textWidth))
		for i, s := range ph.Steps {
			b.WriteString("\n")
			b.WriteString(wrap(fmt.Sprintf("%d. %s [%s]", i+1, s.Title, s.ID), "  ", "     ", textWidth))
			b.WriteString(wrap(s.Why, "     Why: ", "     ", textWidth))
			for _, n := range s.Notes {
				b.WriteString(wrap(n, "     Note: ", "     ", textWidth))
			}
			for _, sn := range s.Snippets {
				fmt.Fprintf(b, "     %s:\n", sn.File)
				if sn.Note != "" {
					b.WriteString(wrap(sn.Note, "       (", "        ", textWidth-1))
					trimNewline(b)
					b.WriteString(")\n")
				}
				b.WriteString(indent(sn.Content, "       | "))
			}
			where := ""
			for _, c := range s.Commands {
				if c.Where != where {
					where = c.Where
					b.WriteString(wrap("Run on "+where+":", "     ", "       ", textWidth))
				}
				writeTextCommand(b, c, "       ")
			}
			for _, c := range s.Checks {
				b.WriteString(wrap(c.Description, "     Check: ", "       ", textWidth))
				if c.Command != nil {
					writeTextCommand(b, *c.Command, "       ")
				}
				b.WriteString(wrap(c.Expect, "       Expect: ", "         ", textWidth))
			}
			b.WriteString(wrap(s.Rollback.Description, "     Roll back: ", "       ", textWidth))
			for _, c := range s.Rollback.Commands {
				b.WriteString(wrap("on "+c.Where+":", "       ", "         ", textWidth))
				writeTextCommand(b, c, "       ")
			}
		}
	}
}

func trimNewline(b *bytes.Buffer) {
	if n := b.Len(); n > 0 && b.Bytes()[n-1] == '\n' {
		b.Truncate(n - 1)
	}
}

func writeTextCommand(b *bytes.Buffer, c Command, prefix string) {
	if c.Description != "" {
		b.WriteString(wrap(c.Description, prefix+"# ", prefix+"# ", textWidth))
	}
	lines := strings.Split(c.Shell, "\n")
	for i, l := range lines {
		if i == 0 {
			b.WriteString(prefix + "$ " + l + "\n")
		} else {
			b.WriteString(prefix + "  " + l + "\n")
		}
	}
}

// WriteMarkdown prints the plan as Markdown, its phases as headings of the
// given level.
func WriteMarkdown(b *bytes.Buffer, p *Plan, level int) {
	h := strings.Repeat("#", level)
	fmt.Fprintf(b, "%s %s\n\n", h, md(p.Title))
	fmt.Fprintf(b, "%s\n\n", md(p.Summary))
	fmt.Fprintf(b, "- CCM: `%s`, chart `%s` %s, release `%s` in `%s` (image tag: %s)\n", p.CCM.Image, p.CCM.Chart, p.CCM.ChartVersion, p.CCM.Release, p.CCM.Namespace, md(p.CCM.ImageTagSource))
	if l := p.LeaderMigration; l != nil {
		fmt.Fprintf(b, "- Lease: `%s/%s`, taken by the in-tree controller manager as `%s`\n", l.Namespace, l.Name, l.KCMUser)
	}
	for _, ph := range p.Phases {
		fmt.Fprintf(b, "\n%s# %s: %s\n\n%s\n", h, strings.ToUpper(string(ph.Name)[:1])+string(ph.Name)[1:], md(ph.Title), md(ph.Summary))
		for i, s := range ph.Steps {
			fmt.Fprintf(b, "\n%s## %d. %s\n\n", h, i+1, md(s.Title))
			fmt.Fprintf(b, "Step `%s`. %s\n", s.ID, md(s.Why))
			if len(s.Notes) > 0 {
				b.WriteString("\n")
				for _, n := range s.Notes {
					fmt.Fprintf(b, "- %s\n", md(n))
				}
			}
			for _, sn := range s.Snippets {
				fmt.Fprintf(b, "\n`%s`", sn.File)
				if sn.Note != "" {
					fmt.Fprintf(b, " (%s)", md(strings.TrimSuffix(sn.Note, ".")))
				}
				fmt.Fprintf(b, ":\n\n```%s\n%s```\n", sn.Language, ensureNewline(sn.Content))
			}
			for _, c := range s.Commands {
				writeMarkdownCommand(b, c, "Run")
			}
			for _, c := range s.Checks {
				fmt.Fprintf(b, "\n**Check:** %s.", md(strings.TrimSuffix(c.Description, ".")))
				if c.Command != nil {
					b.WriteString("\n\n```sh\n" + ensureNewline(c.Command.Shell) + "```\n\n")
				} else {
					b.WriteString(" ")
				}
				fmt.Fprintf(b, "Expect: %s\n", md(c.Expect))
			}
			fmt.Fprintf(b, "\n**Roll back:** %s\n", md(s.Rollback.Description))
			for _, c := range s.Rollback.Commands {
				b.WriteString("\n```sh\n" + ensureNewline(c.Shell) + "```\n")
			}
		}
	}
}

func writeMarkdownCommand(b *bytes.Buffer, c Command, verb string) {
	b.WriteString("\n")
	if c.Description != "" {
		fmt.Fprintf(b, "%s on %s: %s.\n\n", verb, c.Where, md(strings.TrimSuffix(c.Description, ".")))
	} else {
		fmt.Fprintf(b, "%s on %s:\n\n", verb, c.Where)
	}
	b.WriteString("```sh\n" + ensureNewline(c.Shell) + "```\n")
}

// md escapes prose for Markdown outside code spans: < would open an HTML
// tag, * emphasis.
func md(s string) string {
	var b strings.Builder
	code := false
	for _, r := range s {
		switch {
		case r == '`':
			code = !code
		case !code && (r == '<' || r == '*'):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func ensureNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
