package generated

import (
	"fmt"
	"regexp"
	"strings"
)

// docCommand is one simple command of a shell block of a document: its
// words as the shell would pass them (quotes removed; a variable or a
// command substitution left as written).
type docCommand struct {
	doc   string
	line  int
	words []string
}

func (c docCommand) String() string {
	return fmt.Sprintf("%s:%d: %s", c.doc, c.line, strings.Join(c.words, " "))
}

// fence opens or closes a fenced code block, indented or not (in a list).
var fence = regexp.MustCompile("^( *)```([a-z]*)")

// shellBlocks are the languages whose blocks hold commands.
var shellBlocks = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}

// docCommands extracts the commands of the sh, bash and console blocks of
// a Markdown document: a console block's commands are its lines after a
// "$ " prompt (and their continuations), the rest its output.
func docCommands(doc, text string) ([]docCommand, error) {
	var out []docCommand
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, lang := m[1], m[2]
		start := i + 1
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimLeft(lines[i], " "), "```"); i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if !shellBlocks[lang] {
			continue
		}
		if lang == "console" {
			body = promptLines(body)
		}
		cmds, err := shellCommands(strings.Join(body, "\n"))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", doc, start, err)
		}
		for _, c := range cmds {
			out = append(out, docCommand{doc: doc, line: start + 1 + c.line, words: c.words})
		}
	}
	return out, nil
}

// promptLines keeps a console block's commands: the lines after "$ ", each
// with the lines its trailing backslashes continue it on; the output lines
// become empty, so that line numbers stay.
func promptLines(body []string) []string {
	out := make([]string, len(body))
	cont := false
	for i, l := range body {
		switch {
		case cont:
			out[i] = l
		case strings.HasPrefix(l, "$ "):
			out[i] = strings.TrimPrefix(l, "$ ")
		default:
			continue
		}
		cont = strings.HasSuffix(l, `\`)
	}
	return out
}

// simpleCommand is a command's words and the line (from 0) it starts on.
type simpleCommand struct {
	line  int
	words []string
}

// shellCommands splits shell text into its simple commands, as far as
// documents use the shell: quotes, backslashes and line continuations,
// comments, pipes and lists (| || && ; &), redirections (their targets
// dropped), here-documents (their bodies skipped), command substitutions
// (their commands returned too; the word keeps the substitution as
// written) and arithmetic. Leading variable assignments are dropped, and
// sudo and env before the program.
func shellCommands(src string) ([]simpleCommand, error) {
	p := &shellParser{src: src}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.cmds, nil
}

type shellParser struct {
	src     string
	pos     int
	line    int
	cmds    []simpleCommand
	words   []string
	start   int
	word    strings.Builder
	inWord  bool
	skip    bool     // the next word is a redirection's target
	heredoc []string // delimiters of here-documents whose bodies follow the line
}

func (p *shellParser) parse() error {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '\\':
			if p.pos+1 < len(p.src) && p.src[p.pos+1] == '\n' {
				p.pos += 2
				p.line++
				continue
			}
			if p.pos+1 < len(p.src) {
				p.add(p.src[p.pos+1 : p.pos+2])
			}
			p.pos += 2
		case c == '\'':
			end := strings.IndexByte(p.src[p.pos+1:], '\'')
			if end < 0 {
				return fmt.Errorf("line %d: an unclosed single quote", p.line+1)
			}
			s := p.src[p.pos+1 : p.pos+1+end]
			p.add(s)
			p.line += strings.Count(s, "\n")
			p.pos += end + 2
		case c == '"':
			if err := p.doubleQuoted(); err != nil {
				return err
			}
		case c == '$' && strings.HasPrefix(p.src[p.pos:], "$(("):
			end := strings.Index(p.src[p.pos:], "))")
			if end < 0 {
				return fmt.Errorf("line %d: an unclosed $((", p.line+1)
			}
			p.add(p.src[p.pos : p.pos+end+2])
			p.pos += end + 2
		case c == '$' && strings.HasPrefix(p.src[p.pos:], "$("), c == '<' && strings.HasPrefix(p.src[p.pos:], "<("):
			if err := p.substitution(); err != nil {
				return err
			}
		case c == '#' && !p.inWord:
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '\n':
			p.endCommand()
			p.line++
			p.pos++
			if err := p.hereDocuments(); err != nil {
				return err
			}
		case c == ' ' || c == '\t':
			p.endWord()
			p.pos++
		case c == '|' || c == '&' || c == ';' || c == '(' || c == ')' || c == '{' && !p.inWord || c == '}' && !p.inWord:
			if c == '&' && p.pos > 0 && p.src[p.pos-1] == '>' {
				p.pos++ // >&2: a redirection
				continue
			}
			p.endCommand()
			p.pos++
		case c == '<' || c == '>':
			if p.inWord && strings.Trim(p.word.String(), "0123456789") == "" {
				p.word.Reset()
				p.inWord = false
			}
			p.endWord()
			if strings.HasPrefix(p.src[p.pos:], "<<") && !strings.HasPrefix(p.src[p.pos:], "<<<") {
				p.pos += 2
				if p.pos < len(p.src) && p.src[p.pos] == '-' {
					p.pos++
				}
				for p.pos < len(p.src) && p.src[p.pos] == ' ' {
					p.pos++
				}
				end := p.pos
				for end < len(p.src) && !strings.ContainsRune(" \t\n;|&", rune(p.src[end])) {
					end++
				}
				p.heredoc = append(p.heredoc, strings.Trim(p.src[p.pos:end], `'"`))
				p.pos = end
				continue
			}
			for p.pos < len(p.src) && strings.IndexByte("<>&", p.src[p.pos]) >= 0 {
				p.pos++
			}
			if p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' && p.src[p.pos-1] == '&' {
				p.pos++ // 2>&1
				continue
			}
			p.skip = true
		default:
			p.add(string(c))
			p.pos++
		}
	}
	p.endCommand()
	if len(p.heredoc) > 0 {
		return fmt.Errorf("the here-document %s is not closed", p.heredoc[0])
	}
	return nil
}

// doubleQuoted reads a double-quoted string at pos, with its backslash
// escapes and command substitutions.
func (p *shellParser) doubleQuoted() error {
	p.pos++
	p.add("")
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return nil
		case c == '\\' && p.pos+1 < len(p.src) && strings.IndexByte("\"\\$`\n", p.src[p.pos+1]) >= 0:
			if p.src[p.pos+1] != '\n' {
				p.add(p.src[p.pos+1 : p.pos+2])
			}
			p.pos += 2
		case c == '$' && strings.HasPrefix(p.src[p.pos:], "$(("):
			end := strings.Index(p.src[p.pos:], "))")
			if end < 0 {
				return fmt.Errorf("line %d: an unclosed $((", p.line+1)
			}
			p.add(p.src[p.pos : p.pos+end+2])
			p.pos += end + 2
		case c == '$' && strings.HasPrefix(p.src[p.pos:], "$("):
			if err := p.substitution(); err != nil {
				return err
			}
		default:
			if c == '\n' {
				p.line++
			}
			p.add(string(c))
			p.pos++
		}
	}
	return fmt.Errorf("line %d: an unclosed double quote", p.line+1)
}

// substitution reads $(...) or <(...) at pos: its commands are the
// document's too, and the word keeps it as written.
func (p *shellParser) substitution() error {
	depth, i := 0, p.pos+1
	for ; i < len(p.src); i++ {
		switch p.src[i] {
		case '(':
			depth++
		case ')':
			depth--
		case '\'':
			if end := strings.IndexByte(p.src[i+1:], '\''); end >= 0 {
				i += end + 1
			}
		}
		if depth == 0 {
			break
		}
	}
	if depth != 0 {
		return fmt.Errorf("line %d: an unclosed %s", p.line+1, p.src[p.pos:p.pos+2])
	}
	inner, err := shellCommands(p.src[p.pos+2 : i])
	if err != nil {
		return err
	}
	for _, c := range inner {
		p.cmds = append(p.cmds, simpleCommand{line: p.line + c.line, words: c.words})
	}
	p.add(p.src[p.pos : i+1])
	p.line += strings.Count(p.src[p.pos:i+1], "\n")
	p.pos = i + 1
	return nil
}

// hereDocuments skips the bodies of the here-documents the line before
// opened.
func (p *shellParser) hereDocuments() error {
	for len(p.heredoc) > 0 {
		delim := p.heredoc[0]
		p.heredoc = p.heredoc[1:]
		closed := false
		for !closed && p.pos < len(p.src) {
			end := strings.IndexByte(p.src[p.pos:], '\n')
			if end < 0 {
				end = len(p.src) - p.pos
			}
			l := p.src[p.pos : p.pos+end]
			p.pos += end + 1
			p.line++
			closed = strings.TrimLeft(l, "\t") == delim
		}
		if !closed {
			return fmt.Errorf("the here-document %s is not closed", delim)
		}
	}
	return nil
}

func (p *shellParser) add(s string) {
	if !p.inWord && len(p.words) == 0 {
		p.start = p.line
	}
	p.word.WriteString(s)
	p.inWord = true
}

func (p *shellParser) endWord() {
	if !p.inWord {
		return
	}
	if p.skip {
		p.skip = false
	} else {
		p.words = append(p.words, p.word.String())
	}
	p.word.Reset()
	p.inWord = false
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

func (p *shellParser) endCommand() {
	p.endWord()
	p.skip = false
	w := p.words
	p.words = nil
	for len(w) > 0 && (assignment.MatchString(w[0]) || w[0] == "sudo" || w[0] == "env" || w[0] == "time" || w[0] == "exec") {
		w = w[1:]
	}
	if len(w) > 0 {
		p.cmds = append(p.cmds, simpleCommand{line: p.start, words: w})
	}
}
