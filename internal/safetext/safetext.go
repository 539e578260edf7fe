// Package safetext is the one reading of text that must stay on its line:
// which characters count as control characters, refused in the values of
// flags, parameters and options, and escaped wherever text that came from
// outside (a kubeconfig, the cluster, a flag) is printed for a person or
// copied into a comment of a generated file.
//
// A control character is one of C0 (U+0000-U+001F, tab and line feed
// included), DEL (U+007F), C1 (U+0080-U+009F, NEL included), the line and
// paragraph separators U+2028 and U+2029 (which YAML parsers read as line
// breaks), and the bidirectional embeddings, overrides and isolates
// (U+202A-U+202E, U+2066-U+2069), which reorder what a terminal or an
// editor shows.
package safetext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// IsControl tells whether r is a control character as the package reads
// them.
func IsControl(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// HasControl tells whether s holds a control character or a byte that is
// not UTF-8.
func HasControl(s string) bool {
	return strings.IndexFunc(s, IsControl) >= 0 || !utf8.ValidString(s)
}

// Check returns nil for text without control characters and invalid
// UTF-8, else an error naming the first, its position and the text
// escaped: "holds a line feed (U+000A) at byte 3: \"a=b\\nc\"".
func Check(s string) error {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return fmt.Errorf("holds a byte that is not UTF-8 (%#x) at byte %d: %s", s[i], i, strconv.Quote(s))
			}
		}
		if IsControl(r) {
			return fmt.Errorf("holds %s (U+%04X) at byte %d: %s; control characters and line breaks are refused", describe(r), r, i, strconv.Quote(s))
		}
	}
	return nil
}

// describe names the control characters people meet.
func describe(r rune) string {
	switch r {
	case '\n':
		return "a line feed"
	case '\r':
		return "a carriage return"
	case '\t':
		return "a tab"
	case '\v':
		return "a vertical tab"
	case 0x1b:
		return "an escape"
	case 0x85:
		return "a next line"
	case 0x2028:
		return "a line separator"
	case 0x2029:
		return "a paragraph separator"
	}
	return "a control character"
}

// Escape returns s with each control character, and each byte that is not
// UTF-8, written as a Go escape (\n, \x1b, \u2028): the result holds none,
// so it stays on its line and cannot drive a terminal. Everything else,
// backslashes included, is kept as it is, so text without control
// characters is returned unchanged.
func Escape(s string) string {
	if !HasControl(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !validAt(s, i):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case IsControl(r):
			q := strconv.QuoteRuneToASCII(r) // '\n', '\x1b', '\u2028'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func validAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size > 1
}

// ShellWord quotes a word for a shell command line a person copies from a
// generated file's comment: as is when it needs no quotes, in single
// quotes when it holds what a shell reads itself, and as $'...' (ANSI-C
// quotes, read by bash, zsh, ksh and POSIX.1-2024 sh) when it holds a
// control character, a byte that is not UTF-8 or "-->", each written as an
// escape (\n, \x1b, \u2028, '>' as \x3e), so that the word stays on its
// line and ends no HTML comment.
func ShellWord(w string) string {
	switch {
	case HasControl(w) || strings.Contains(w, "-->"):
		var b strings.Builder
		b.WriteString("$'")
		for i, r := range w {
			switch {
			case r == utf8.RuneError && !validAt(w, i):
				fmt.Fprintf(&b, `\x%02x`, w[i])
			case r == '\\' || r == '\'':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '>':
				b.WriteString(`\x3e`)
			case IsControl(r) && r < 0x80:
				fmt.Fprintf(&b, `\x%02x`, r)
			case IsControl(r):
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteString("'")
		return b.String()
	case w == "" || strings.ContainsAny(w, " \t'\"$`\\*?[]{}()<>|&;#~!"):
		return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return w
}
