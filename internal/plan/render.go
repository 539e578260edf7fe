package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
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
	return write(w, p, format, false)
}

// WriteBrief prints the plan as a checklist: each step's ID, title and
// main command, as text or Markdown.
func WriteBrief(w io.Writer, p *Plan, format string) error {
	return write(w, p, format, true)
}

func write(w io.Writer, p *Plan, format string, brief bool) error {
	var b bytes.Buffer
	switch {
	case brief && format == FormatJSON:
		return usagef("--brief is a checklist for people, as text or markdown; -o json has every step in full")
	case brief && format == FormatText:
		writeBriefText(&b, p)
		_, err := w.Write(b.Bytes())
		return err
	case brief && format == FormatMarkdown:
		WriteBriefMarkdown(&b, p, 2)
		_, err := w.Write(b.Bytes())
		return err
	}
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
	switch s {
	case LeaderMigration:
		return "leader migration"
	case Install:
		return "a new cluster on the external provider"
	}
	return "switch (no in-tree provider to migrate from)"
}

// planWord is what a plan is called in its heading.
func planWord(p *Plan) string {
	if p.Strategy == Install {
		return "Install plan"
	}
	return "Migration plan"
}

func writeText(b *bytes.Buffer, p *Plan) {
	fmt.Fprintf(b, "%s: %s, Kubernetes %s, %s\n\n", planWord(p), p.Title, p.KubernetesVersion, strategyName(p.Strategy))
	b.WriteString(wrap(p.Summary, "", "", textWidth))
	b.WriteString("\n")
	fmt.Fprintf(b, "CCM:   %s (chart %s %s, release %s in %s)\n", p.CCM.Image, p.CCM.Chart, p.CCM.ChartVersion, p.CCM.Release, p.CCM.Namespace)
	b.WriteString(wrap("image tag from "+p.CCM.ImageTagSource, "       ", "       ", textWidth))
	if l := p.LeaderMigration; l != nil {
		fmt.Fprintf(b, "Lease: %s/%s, taken by the in-tree controller manager as %s\n", l.Namespace, l.Name, l.KCMUser)
	}
	if len(p.Inputs) > 0 {
		b.WriteString("Inputs (what the commands read and do not make):\n")
		width := 0
		for _, in := range p.Inputs {
			width = max(width, len(inputName(in)))
		}
		for _, in := range p.Inputs {
			b.WriteString(wrap(in.Source, fmt.Sprintf("  %-*s  ", width, inputName(in)), strings.Repeat(" ", width+4), textWidth))
		}
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
	if len(p.Inputs) > 0 {
		b.WriteString("- Inputs (what the commands read and do not make):\n")
		for _, in := range p.Inputs {
			fmt.Fprintf(b, "  - `%s`: %s\n", inputName(in), md(in.Source))
		}
	}
	for _, ph := range p.Phases {
		fmt.Fprintf(b, "\n%s# %s: %s\n\n%s\n", h, phaseName(ph.Name), md(ph.Title), md(ph.Summary))
		for i, s := range ph.Steps {
			fmt.Fprintf(b, "\n%s## %d. %s\n\n", h, i+1, md(s.Title))
			b.WriteString(markdownStep(s))
		}
	}
}

func phaseName(p Phase) string { return strings.ToUpper(string(p)[:1]) + string(p)[1:] }

// markdownStep is a step's body in Markdown, without its heading.
func markdownStep(s Step) string {
	var b strings.Builder
	for _, part := range markdownParts(s) {
		b.WriteString(part)
	}
	return b.String()
}

// markdownParts are the parts of a step's body: why, notes, snippets,
// commands, checks, rollback.
func markdownParts(s Step) []string {
	var why, notes, snippets, commands, checks, rollback bytes.Buffer
	fmt.Fprintf(&why, "Step `%s`. %s\n", s.ID, md(s.Why))
	if len(s.Notes) > 0 {
		notes.WriteString("\n")
		for _, n := range s.Notes {
			fmt.Fprintf(&notes, "- %s\n", md(n))
		}
	}
	for _, sn := range s.Snippets {
		fmt.Fprintf(&snippets, "\n`%s`", sn.File)
		if sn.Note != "" {
			fmt.Fprintf(&snippets, " (%s)", md(strings.TrimSuffix(sn.Note, ".")))
		}
		fmt.Fprintf(&snippets, ":\n\n```%s\n%s```\n", sn.Language, ensureNewline(sn.Content))
	}
	writeMarkdownCommands(&commands, s.Commands)
	for _, c := range s.Checks {
		fmt.Fprintf(&checks, "\n**Check:** %s.", md(strings.TrimSuffix(c.Description, ".")))
		if c.Command != nil {
			checks.WriteString("\n\n```sh\n" + ensureNewline(c.Command.Shell) + "```\n\n")
		} else {
			checks.WriteString(" ")
		}
		fmt.Fprintf(&checks, "Expect: %s\n", md(c.Expect))
	}
	fmt.Fprintf(&rollback, "\n**Roll back:** %s\n", md(s.Rollback.Description))
	if len(s.Rollback.Commands) > 0 {
		rollback.WriteString("\n```sh\n")
		for _, c := range s.Rollback.Commands {
			rollback.WriteString(ensureNewline(c.Shell))
		}
		rollback.WriteString("```\n")
	}
	return []string{why.String(), notes.String(), snippets.String(), commands.String(), checks.String(), rollback.String()}
}

// writeMarkdownCommands writes commands as one code block per place they
// run, each after its description as a comment.

// WriteGuide prints the runbooks of several distributions for
// docs/dev/runbooks.md: one checklist of every distribution's steps, the
// first plan's steps in full, then of each other plan the parts of the
// steps that differ from the first one's in more than the --distro flag.
func WriteGuide(b *bytes.Buffer, plans []*Plan, level int) {
	h := strings.Repeat("#", level)
	base := plans[0]
	fmt.Fprintf(b, "%s Checklist\n\n", h)
	fmt.Fprintf(b, "The steps in order, and the distributions that have them; `aws-ccm-renderer plan --distro DISTRO --brief` "+
		"prints a distribution's checklist with each step's main command, `--step ID` a step in full.\n\n")
	b.WriteString("| step | title |")
	for _, p := range plans {
		fmt.Fprintf(b, " %s |", p.Distro)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(plans)) + "\n")
	for _, row := range guideRows(plans) {
		fmt.Fprintf(b, "| `%s` | %s |", row.id, md(row.title))
		for _, p := range plans {
			if _, ok := findStep(p, row.id); ok {
				b.WriteString(" ✓ |")
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "\n%s The steps in full\n\n", h)
	fmt.Fprintf(b, "The steps of %s in full, then of every other distribution what differs. "+
		"`aws-ccm-renderer plan --distro DISTRO --step ID` prints any step for your cluster.\n\n", md(base.Title))
	WriteMarkdown(b, base, level+1)
	baseParts := []string{"Why", "Notes", "Configuration", "Commands", "Checks", "Roll back"}
	for _, p := range plans[1:] {
		fmt.Fprintf(b, "\n%s# %s: what differs\n\n", h, md(p.Title))
		fmt.Fprintf(b, "%s\n\nSteps not shown here are those of %s, with `--distro=%s`; of the steps shown, the parts not shown too.\n", md(p.Summary), md(base.Title), p.Distro)
		for _, ph := range p.Phases {
			for _, s := range ph.Steps {
				bs, ok := findStep(base, s.ID)
				if ok && sameStep(bs, s, base.Distro, p.Distro) {
					continue
				}
				fmt.Fprintf(b, "\n%s## %s: %s\n\n", h, phaseName(ph.Name), md(s.Title))
				parts := markdownParts(s)
				if !ok {
					b.WriteString(strings.Join(parts, ""))
					continue
				}
				bp := markdownParts(bs)
				fmt.Fprintf(b, "Step `%s`.", s.ID)
				var same []string
				for i := range parts {
					if normalize(parts[i], p.Distro, base.Distro) == bp[i] {
						same = append(same, strings.ToLower(baseParts[i]))
					}
				}
				if len(same) > 0 {
					fmt.Fprintf(b, " As for %s: %s.", base.Distro, strings.Join(same, ", "))
				}
				b.WriteString("\n")
				for i := range parts {
					if normalize(parts[i], p.Distro, base.Distro) == bp[i] || parts[i] == "" {
						continue
					}
					if i == 0 {
						fmt.Fprintf(b, "\n%s\n", strings.TrimPrefix(parts[0], "Step `"+s.ID+"`. "))
						continue
					}
					b.WriteString(parts[i])
				}
			}
		}
	}
}

type guideRow struct{ id, title string }

// guideRows are the step IDs of every plan, in the order of the plans'
// phases, each once, with its title, or each distribution's when they
// differ.
func guideRows(plans []*Plan) []guideRow {
	var rows []guideRow
	seen := map[string]bool{}
	for _, ph := range Phases {
		for _, p := range plans {
			for _, pp := range p.Phases {
				if pp.Name != ph {
					continue
				}
				for _, s := range pp.Steps {
					if !seen[s.ID] {
						seen[s.ID] = true
						rows = append(rows, guideRow{s.ID, guideTitle(plans, s.ID)})
					}
				}
			}
		}
	}
	return rows
}

// guideTitle is a step's title, or "distro: title" of each distribution
// when they differ.
func guideTitle(plans []*Plan, id string) string {
	var titles []string
	by := map[string][]string{}
	for _, p := range plans {
		if s, ok := findStep(p, id); ok {
			if !slices.Contains(titles, s.Title) {
				titles = append(titles, s.Title)
			}
			by[s.Title] = append(by[s.Title], string(p.Distro))
		}
	}
	if len(titles) == 1 {
		return titles[0]
	}
	each := make([]string, len(titles))
	for i, t := range titles {
		each[i] = strings.Join(by[t], ", ") + ": " + t
	}
	return strings.Join(each, "; ")
}

// GuideShows reports whether WriteGuide prints any part of a plan's step:
// every step of the first plan, another's when it differs from the
// first's.
func GuideShows(plans []*Plan, p *Plan, s Step) bool {
	if p == plans[0] {
		return true
	}
	bs, ok := findStep(plans[0], s.ID)
	return !ok || !sameStep(bs, s, plans[0].Distro, p.Distro)
}

func findStep(p *Plan, id string) (Step, bool) {
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			if s.ID == id {
				return s, true
			}
		}
	}
	return Step{}, false
}

// normalize writes a distribution's --distro flags as another's.
func normalize(s string, from, to distros.Distro) string {
	return strings.ReplaceAll(s, "--distro="+string(from), "--distro="+string(to))
}

// sameStep reports whether two distributions' steps read the same once
// their --distro flags are.
func sameStep(a, b Step, da, db distros.Distro) bool {
	return markdownStep(a) == normalize(markdownStep(b), db, da)
}

// writeMarkdownCommands writes commands as one code block per place they
// run, each after its description as a comment.
func writeMarkdownCommands(b *bytes.Buffer, cmds []Command) {
	where := ""
	for i, c := range cmds {
		if c.Where != where {
			if i > 0 {
				b.WriteString("```\n")
			}
			where = c.Where
			fmt.Fprintf(b, "\nRun on %s:\n\n```sh\n", where)
		}
		if c.Description != "" {
			b.WriteString(indent(wrap(c.Description, "", "", textWidth), "# "))
		}
		b.WriteString(ensureNewline(c.Shell))
	}
	if len(cmds) > 0 {
		b.WriteString("```\n")
	}
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

// MainCommand returns the command --brief shows for a step: the one marked
// main among its commands and its checks' commands.
func MainCommand(s Step) (Command, bool) {
	for _, c := range s.Commands {
		if c.Main {
			return c, true
		}
	}
	for _, c := range s.Checks {
		if c.Command != nil && c.Command.Main {
			return *c.Command, true
		}
	}
	return Command{}, false
}

func countSteps(p *Plan) int {
	n := 0
	for _, ph := range p.Phases {
		n += len(ph.Steps)
	}
	return n
}

func writeBriefText(b *bytes.Buffer, p *Plan) {
	fmt.Fprintf(b, "Checklist: %s, Kubernetes %s, %s, %d steps\n", p.Title, p.KubernetesVersion, strategyName(p.Strategy), countSteps(p))
	fmt.Fprintf(b, "(%s prints a step in full: why, configuration, checks, rollback)\n", planCommand(p))
	if len(p.Inputs) > 0 {
		b.WriteString(wrap(briefInputs(p), "Inputs: ", "  ", textWidth))
	}
	width := 0
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			width = max(width, len(s.ID))
		}
	}
	for _, ph := range p.Phases {
		fmt.Fprintf(b, "\n%s: %s\n", strings.ToUpper(string(ph.Name)), ph.Title)
		for _, s := range ph.Steps {
			fmt.Fprintf(b, "[ ] %-*s  %s\n", width, s.ID, s.Title)
			if c, ok := MainCommand(s); ok {
				for _, l := range strings.Split(c.Shell, "\n") {
					b.WriteString("      " + l + "\n")
				}
			}
		}
	}
}

// WriteBriefMarkdown prints the checklist as Markdown, its phases as
// headings of the given level.
func WriteBriefMarkdown(b *bytes.Buffer, p *Plan, level int) {
	h := strings.Repeat("#", level)
	fmt.Fprintf(b, "%s %s\n\n", h, md(p.Title))
	fmt.Fprintf(b, "Kubernetes %s, %s, %d steps; `%s` prints a step in full.\n", p.KubernetesVersion, strategyName(p.Strategy), countSteps(p), planCommand(p))
	if len(p.Inputs) > 0 {
		fmt.Fprintf(b, "\nInputs: %s.\n", md(briefInputs(p)))
	}
	for _, ph := range p.Phases {
		fmt.Fprintf(b, "\n%s# %s: %s\n\n", h, phaseName(ph.Name), md(ph.Title))
		for _, s := range ph.Steps {
			fmt.Fprintf(b, "- [ ] `%s` %s\n", s.ID, md(s.Title))
			if c, ok := MainCommand(s); ok {
				b.WriteString("\n  ```sh\n" + indent(c.Shell, "  ") + "  ```\n\n")
			}
		}
	}
}

// planCommand is the plan command that prints this plan, and with --step ID
// one of its steps.
func planCommand(p *Plan) string {
	flags := p.flags
	if len(flags) == 0 {
		flags = []string{"--distro", string(p.Distro)}
	}
	words := []string{"aws-ccm-renderer", "plan"}
	for _, f := range append(slices.Clone(flags), "--step", "ID") {
		words = append(words, quote(f))
	}
	return strings.Join(words, " ")
}

// inputName is an input as the commands name it: $NAME, or the file.
func inputName(in Input) string {
	if in.Kind == InputVariable {
		return "$" + in.Name
	}
	return in.Name
}

// briefInputs lists the inputs, each with the step that makes it or
// "yours".
func briefInputs(p *Plan) string {
	each := make([]string, len(p.Inputs))
	for i, in := range p.Inputs {
		from := in.Step
		if from == "" {
			from = "yours"
		}
		each[i] = fmt.Sprintf("%s (%s)", inputName(in), from)
	}
	return strings.Join(each, ", ")
}
