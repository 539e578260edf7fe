package check

import (
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Reading a control-plane program's flags from a container however its
// command is wrapped: kube-controller-manager run directly, through env,
// exec, nice, tini or any other program that runs the rest of its words,
// or in a shell script (sh -c, bash -lc, /bin/sh -c with the script in
// args, env -S, eval, su -c: any word holding a command line is read as
// one), its flags as --flag=value, --flag value or --flag_name. What the
// reading cannot tell it says (unread), for the guard to hold on: a script
// that is not a sequence of simple commands it can split, or a flag that
// only the shell or the kubelet would fill in ($VAR, $(cmd), "$@", a
// $(VAR) of a value from a Secret).

// word is one word of a command line; dynamic at the first byte whose value
// is left to the shell or the kubelet (-1: none).
type word struct {
	text    string
	dynamic int
}

// maxNesting bounds scripts within scripts.
const maxNesting = 4

// invocations are what a container's command and args run of program: each
// time it is run, the words after it.
type invocations struct {
	program string
	found   [][]word
	unread  []string
}

// readContainer finds program in a container's command line. Without a
// command the image's entrypoint runs args: the program when the container
// or its image is named as it.
func readContainer(program string, c corev1.Container) invocations {
	inv := invocations{program: program}
	env := map[string]*corev1.EnvVar{}
	for i := range c.Env {
		env[c.Env[i].Name] = &c.Env[i]
	}
	var words []word
	img, imgErr := renderer.ParseImage(c.Image)
	if len(c.Command) == 0 && (c.Name == program || imgErr == nil && path.Base(img.Repository) == program) {
		words = append(words, word{text: program, dynamic: -1})
	}
	for _, s := range append(slices.Clone(c.Command), c.Args...) {
		words = append(words, kubeletExpand(s, env, len(c.EnvFrom) > 0))
	}
	inv.scan(words, 0)
	return inv
}

// kubeletExpand does what the kubelet does to a word of command and args:
// $(NAME) is the value of the container's variable NAME (left as is when
// there is none), $$ is $. A value the API does not show (valueFrom,
// envFrom) makes the word dynamic there.
func kubeletExpand(s string, env map[string]*corev1.EnvVar, envFrom bool) word {
	w := word{dynamic: -1}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				break
			}
			name := s[i+2 : i+2+end]
			v, ok := env[name]
			switch {
			case ok && v.ValueFrom == nil && !strings.Contains(v.Value, "$("):
				b.WriteString(v.Value)
			case ok || envFrom:
				if w.dynamic < 0 {
					w.dynamic = b.Len()
				}
				b.WriteString(s[i : i+3+end])
			default:
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
			continue
		}
		b.WriteByte(s[i])
	}
	w.text = b.String()
	return w
}

// scan looks for the program among the words of one command: the first
// word named as it (its path's last element) runs it with the words after;
// a word before it that holds a command line (a script) is read as one.
func (inv *invocations) scan(words []word, depth int) {
	for i, w := range words {
		if runs(w, inv.program) {
			inv.found = append(inv.found, words[i+1:])
			return
		}
		if !strings.Contains(w.text, inv.program) || !strings.ContainsAny(w.text, " \t\n;&|()<>`$\"'\\") {
			continue
		}
		if depth >= maxNesting {
			inv.unread = append(inv.unread, fmt.Sprintf("%s is run through more than %d scripts within scripts", inv.program, maxNesting))
			continue
		}
		cmds, err := shellCommands(w.text)
		if err != nil {
			inv.unread = append(inv.unread, fmt.Sprintf("a script that names %s: %v", inv.program, err))
			continue
		}
		for _, cmd := range cmds {
			inv.scan(cmd, depth+1)
		}
	}
}

// runs says whether a word names the program: its path's last element,
// which the shell or kubelet does not fill in (its directory they may).
func runs(w word, program string) bool {
	base := w.text[strings.LastIndexByte(w.text, '/')+1:]
	return base == program && (w.dynamic < 0 || w.dynamic < len(w.text)-len(base))
}

// literal is a word's text up to its first dynamic byte.
func literal(w word) string {
	if w.dynamic < 0 {
		return w.text
	}
	return w.text[:w.dynamic]
}

// commandFlags reads one invocation's flags, their names as the program's
// flag set normalises them (_ as -). The error names a word the shell or
// the kubelet fills in, unless it is --name=... of a flag other than those
// asked for; the flags are read all the same.
func commandFlags(words []word, asked ...string) (map[string]string, error) {
	texts := make([]string, len(words))
	var err error
	for i, w := range words {
		texts[i] = w.text
		if w.dynamic < 0 || err != nil {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(literal(w), "-"), "=")
		name = strings.ReplaceAll(name, "_", "-")
		if !strings.HasPrefix(w.text, "-") || !hasValue || slices.Contains(asked, name) {
			err = fmt.Errorf("its command line has %q, which is filled in when it starts: the API does not show its value", w.text)
		}
	}
	out := map[string]string{}
	for name, v := range renderer.ParseCommandLine(nil, texts).Flags() {
		out[strings.ReplaceAll(name, "_", "-")] = v
	}
	return out, err
}

// shellCommands splits a POSIX shell script into the words of its simple
// commands: ; & | && || newlines and parentheses end one, redirections are
// dropped, quotes and backslashes are removed as the shell removes them,
// and what the shell would fill in ($, backquotes, globs) marks the word
// dynamic there. A here-document or an unterminated quote or substitution
// is an error.
func shellCommands(script string) ([][]word, error) {
	var (
		cmds     [][]word
		cmd      []word
		b        strings.Builder
		inWord   bool
		dynamic  = -1
		redirect bool // the next word is a redirection's target
	)
	dyn := func() {
		if dynamic < 0 {
			dynamic = b.Len()
		}
	}
	// substitute copies the substitution or expansion at script[*i:] into
	// the word, marked as filled in at run time, and leaves *i on its
	// last byte.
	substitute := func(script string, i *int) error {
		dyn()
		n, err := substitution(script[*i:])
		if err != nil {
			return err
		}
		b.WriteString(script[*i : *i+n])
		*i += n - 1
		return nil
	}
	endWord := func() {
		if inWord {
			if !redirect {
				cmd = append(cmd, word{text: b.String(), dynamic: dynamic})
			}
			redirect = false
		}
		b.Reset()
		inWord, dynamic = false, -1
	}
	endCmd := func() {
		endWord()
		if len(cmd) > 0 {
			cmds = append(cmds, cmd)
		}
		cmd = nil
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch c {
		case ' ', '\t':
			endWord()
		case '\n', ';', '&', '|', '(', ')':
			endCmd()
		case '<', '>':
			if inWord && strings.Trim(b.String(), "0123456789") == "" && dynamic < 0 {
				b.Reset()
				inWord = false // the file descriptor of 2>file
			}
			if strings.HasPrefix(script[i:], "<<") && !strings.HasPrefix(script[i:], "<<<") {
				return nil, fmt.Errorf("a here-document")
			}
			endWord()
			for i+1 < len(script) && strings.IndexByte("<>&|", script[i+1]) >= 0 {
				i++
			}
			redirect = true
		case '#':
			if inWord {
				b.WriteByte(c)
				continue
			}
			for i+1 < len(script) && script[i+1] != '\n' {
				i++
			}
		case '\\':
			if i+1 < len(script) && script[i+1] == '\n' {
				i++ // a line continuation: no word of its own
				continue
			}
			inWord = true
			if i+1 < len(script) {
				i++
				b.WriteByte(script[i])
			}
		case '\'':
			inWord = true
			end := strings.IndexByte(script[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("a ' without its end")
			}
			b.WriteString(script[i+1 : i+1+end])
			i += 1 + end
		case '"':
			inWord = true
			i++
			for ; i < len(script) && script[i] != '"'; i++ {
				switch script[i] {
				case '\\':
					if i+1 < len(script) && strings.IndexByte("$`\"\\\n", script[i+1]) >= 0 {
						i++
						if script[i] != '\n' {
							b.WriteByte(script[i])
						}
						continue
					}
				case '$', '`':
					if err := substitute(script, &i); err != nil {
						return nil, err
					}
					continue
				}
				b.WriteByte(script[i])
			}
			if i >= len(script) {
				return nil, fmt.Errorf(`a " without its end`)
			}
		case '$', '`':
			inWord = true
			if err := substitute(script, &i); err != nil {
				return nil, err
			}
		case '*', '?', '[':
			inWord = true
			dyn()
			b.WriteByte(c)
		default:
			inWord = true
			b.WriteByte(c)
		}
	}
	endCmd()
	if redirect {
		return nil, fmt.Errorf("a redirection without its file")
	}
	return cmds, nil
}

// substitution is the length of the expansion s starts with: $NAME, ${...},
// $(...), $((...)), `...`, or a lone $.
func substitution(s string) (int, error) {
	if s[0] == '`' {
		end := strings.IndexByte(s[1:], '`')
		if end < 0 {
			return 0, fmt.Errorf("a ` without its end")
		}
		return end + 2, nil
	}
	if len(s) == 1 {
		return 1, nil
	}
	switch open := s[1]; open {
	case '(', '{':
		closer := map[byte]byte{'(': ')', '{': '}'}[open]
		depth := 0
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case open:
				depth++
			case closer:
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("a $%c without its end", open)
	}
	n := 1
	for n < len(s) && (s[n] == '_' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9' || n == 1 && strings.IndexByte("@*#?$!-", s[n]) >= 0) {
		n++
		if n == 2 && strings.IndexByte("@*#?$!-0123456789", s[1]) >= 0 {
			break
		}
	}
	return n, nil
}
