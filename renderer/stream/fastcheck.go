package stream

import (
	"bytes"
	"unicode/utf8"
)

// fastCheck proves, without building a tree, that body is a well-formed YAML
// document written in the block style that templating tools print: block
// mappings and sequences, single-line plain and quoted scalars, literal and
// folded block scalars, empty flow collections and comments. It returns the
// top-level kind as well.
//
// The check is one-sided: ok means the YAML parser accepts the document and
// Kubernetes' clients read the same kind from it (one "kind" key, no merge
// key, no "items" key that would make it a list to them); !ok means only
// "not proven", and the caller parses the document with the real parser,
// which then also supplies the error message. Anything unusual (anchors,
// aliases, tags, merge keys, flow collections, multi-line flow scalars,
// directives, tabs, CR, unusual characters, a second "kind", "items") is
// left to the parser.
func fastCheck(body []byte) (kind string, ok bool) {
	var c checker
	c.pending, c.scalarLimit = -1, -1
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		if !c.line(line) {
			return "", false
		}
	}
	return c.kind, true
}

type frame struct {
	indent  int
	seq     bool
	compact bool // a sequence written at the same indent as its parent key
}

type checker struct {
	stack       []frame
	pending     int  // column of a key or dash whose value may follow on the next lines, or -1
	pendingKey  bool // pending belongs to a mapping key (a same-indent sequence may follow)
	pendingKind bool // pending belongs to the top-level "kind" key
	// scalarLimit: a scalar stood alone on the line after its key, whose
	// column this is; a deeper line would continue it (multi-line), so
	// the next node line must not be deeper. -1 when unused.
	scalarLimit int
	rootScalar  bool // the document is one scalar: no further node lines allowed

	block       bool // inside a literal or folded block scalar
	blockParent int  // its content must be indented more than this column
	blockIndent int  // its content indent, 0 until the first content line

	kind     string
	kindSeen bool
}

type lineType int

const (
	scalarLine lineType = iota
	seqLine
	mapLine
)

func (c *checker) line(line []byte) bool {
	indent := 0
	for indent < len(line) && line[indent] == ' ' {
		indent++
	}
	if !printable(line[indent:]) {
		return false
	}
	if c.block {
		if ok, inside := c.blockLine(line, indent); inside {
			return ok
		}
	}
	rest := line[indent:]
	if len(rest) == 0 || rest[0] == '#' {
		return true
	}
	if bytes.IndexByte(rest, '\t') >= 0 {
		return false
	}
	if indent == 0 && (rest[0] == '%' || bytes.HasPrefix(rest, []byte("...")) || bytes.HasPrefix(rest, []byte("---"))) {
		return false
	}
	t := classify(rest)
	if c.scalarLimit >= 0 {
		if indent > c.scalarLimit {
			return false
		}
		c.scalarLimit = -1
	}
	if c.pending >= 0 {
		if ok, taken := c.afterPending(indent, rest, t); taken {
			return ok
		}
	}
	return c.node(indent, rest, t)
}

// blockLine checks a line while a block scalar is open: inside reports
// whether the line belongs to the scalar (ok then says whether it is
// well-formed); a line less indented ends the scalar.
func (c *checker) blockLine(line []byte, indent int) (ok, inside bool) {
	if indent < len(line) && line[indent] == '\t' && (c.blockIndent == 0 || indent < c.blockIndent) {
		return false, true // a tab where the parser expects indentation
	}
	if indent == len(line) { // blank or all-space line
		return indent == 0 || c.blockIndent != 0, true
	}
	if indent > c.blockParent {
		if c.blockIndent == 0 {
			c.blockIndent = indent
		}
		return indent >= c.blockIndent, true
	}
	c.block = false
	return false, false
}

// afterPending checks the line after a key or dash whose value did not
// start on its own line: taken reports whether the line is that value.
func (c *checker) afterPending(indent int, rest []byte, t lineType) (ok, taken bool) {
	p, key := c.pending, c.pendingKey
	c.pending = -1
	switch {
	case indent > p:
		if t == scalarLine {
			// "key:" and its value on the next line, as toYaml prints
			// "env:\n  []". A complete one-line scalar only.
			c.scalarLimit = p
			if c.pendingKind {
				if rest[0] == '"' && bytes.IndexByte(rest, '\\') >= 0 {
					return false, true
				}
				c.kind = scalarText(rest)
			}
			return value(rest) == plainValue, true
		}
		c.stack = append(c.stack, frame{indent: indent, seq: t == seqLine})
		return c.entry(indent, rest, t), true
	case indent == p && key && t == seqLine:
		c.stack = append(c.stack, frame{indent: indent, seq: true, compact: true})
		return c.entry(indent, rest, t), true
	}
	return false, false
}

// node checks a line that starts a node of the collection it is indented
// into, or the document's root node.
func (c *checker) node(indent int, rest []byte, t lineType) bool {
	if c.rootScalar {
		return false
	}
	if len(c.stack) == 0 {
		if t == scalarLine {
			c.rootScalar = true
			return value(rest) == plainValue
		}
		c.stack = append(c.stack, frame{indent: indent, seq: t == seqLine})
		return c.entry(indent, rest, t)
	}
	for len(c.stack) > 0 && c.stack[len(c.stack)-1].indent > indent {
		c.stack = c.stack[:len(c.stack)-1]
	}
	if n := len(c.stack); n > 0 && c.stack[n-1].compact && c.stack[n-1].indent == indent && t == mapLine {
		c.stack = c.stack[:n-1]
	}
	if len(c.stack) == 0 || t == scalarLine {
		return false
	}
	top := c.stack[len(c.stack)-1]
	if top.indent != indent || top.seq != (t == seqLine) {
		return false
	}
	return c.entry(indent, rest, t)
}

// entry checks the content of a sequence entry or mapping entry that starts
// at column col, descending into compact forms such as "- key: value".
func (c *checker) entry(col int, rest []byte, t lineType) bool {
	for {
		switch t {
		case seqLine:
			j := 1
			for j < len(rest) && rest[j] == ' ' {
				j++
			}
			if j == len(rest) || rest[j] == '#' {
				c.pending, c.pendingKey, c.pendingKind = col, false, false
				return true
			}
			col, rest = col+j, rest[j:]
			t = classify(rest)
			if t == scalarLine {
				return c.scalar(col-j, rest)
			}
			c.stack = append(c.stack, frame{indent: col, seq: t == seqLine})
		case mapLine:
			key, after := splitKey(rest)
			v := bytes.TrimLeft(after, " ")
			if string(key) == "<<" {
				return false // a merge key, which Kubernetes' clients merge
			}
			top := len(c.stack) == 1 && !c.stack[0].seq
			if top && (string(key) == "items" || (string(key) == "kind" && c.kindSeen)) {
				return false // a list to Kubernetes' clients, or a kind they read from the last "kind" key
			}
			isKind := top && string(key) == "kind"
			if isKind {
				if len(v) > 0 && (v[0] == '|' || v[0] == '>' || (v[0] == '"' && bytes.IndexByte(v, '\\') >= 0)) {
					return false // a kind the parser must read
				}
				c.kind, c.kindSeen = scalarText(v), true
			}
			if len(v) == 0 || v[0] == '#' {
				c.pending, c.pendingKey, c.pendingKind = col, true, isKind
				return true
			}
			return c.scalar(col, v)
		default:
			return false
		}
	}
}

// scalar checks a value that starts on the line of its key or dash; parent
// is the column of that key or dash.
func (c *checker) scalar(parent int, v []byte) bool {
	switch value(v) {
	case plainValue:
		return true
	case blockValue:
		c.block, c.blockParent, c.blockIndent = true, parent, 0
		return true
	}
	return false
}

func classify(rest []byte) lineType {
	if rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ') {
		return seqLine
	}
	if key, _ := splitKey(rest); key != nil {
		return mapLine
	}
	return scalarLine
}

// splitKey returns the simple key of a "key: value" line and what follows
// the colon, or a nil key when the line is not one.
func splitKey(rest []byte) (key, after []byte) {
	switch rest[0] {
	case '"', '\'':
		end := bytes.IndexByte(rest[1:], rest[0])
		if end < 0 {
			return nil, nil
		}
		end++
		if bytes.IndexByte(rest[1:end], '\\') >= 0 {
			return nil, nil
		}
		if end+1 < len(rest) && rest[end+1] == ':' && (end+2 == len(rest) || rest[end+2] == ' ') {
			return rest[1:end], rest[end+2:]
		}
		return nil, nil
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`':
		return nil, nil
	}
	for i := 0; i < len(rest) && i < 1000; i++ {
		switch rest[i] {
		case ':':
			if i+1 == len(rest) || rest[i+1] == ' ' {
				return bytes.TrimRight(rest[:i], " "), rest[i+1:]
			}
		case '#':
			if rest[i-1] == ' ' {
				return nil, nil
			}
		}
	}
	return nil, nil
}

type valueType int

const (
	badValue valueType = iota
	plainValue
	blockValue
)

// value classifies a scalar that starts on the current line. Only complete
// single-line scalars and block scalar headers pass.
func value(v []byte) valueType {
	switch v[0] {
	case '|', '>':
		i := 1
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if onlyComment(v[i:]) {
			return blockValue
		}
		return badValue
	case '"':
		for i := 1; i < len(v); i++ {
			switch v[i] {
			case '\\':
				i++
				if i == len(v) || bytes.IndexByte([]byte(`0abtnvfre "\N_LP`), v[i]) < 0 {
					return badValue
				}
			case '"':
				return after(v[i+1:])
			}
		}
		return badValue
	case '\'':
		for i := 1; i < len(v); i++ {
			if v[i] == '\'' {
				if i+1 < len(v) && v[i+1] == '\'' {
					i++
					continue
				}
				return after(v[i+1:])
			}
		}
		return badValue
	case '[', '{':
		if len(v) >= 2 && v[1] == v[0]+2 { // "[]" or "{}"
			return after(v[2:])
		}
		return badValue
	case '-', '?', ':':
		if len(v) == 1 || v[1] == ' ' || v[0] != '-' {
			return badValue
		}
	case ',', ']', '}', '#', '&', '*', '!', '%', '@', '`':
		return badValue
	}
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case ':':
			if i+1 == len(v) || v[i+1] == ' ' {
				return badValue
			}
		case '#':
			if v[i-1] == ' ' {
				return plainValue
			}
		}
	}
	return plainValue
}

// after accepts what may follow a closed scalar on its line: blanks and a
// comment that a blank separates from the scalar.
func after(rest []byte) valueType {
	if len(rest) == 0 || (rest[0] == ' ' && onlyComment(rest)) {
		return plainValue
	}
	return badValue
}

func onlyComment(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " ")
	return len(rest) == 0 || rest[0] == '#'
}

// scalarText returns the text of a simple scalar value: the plain text
// before any comment, or the content of a quoted scalar without escapes.
func scalarText(v []byte) string {
	if len(v) == 0 || v[0] == '#' {
		return ""
	}
	if v[0] == '"' || v[0] == '\'' {
		if end := bytes.IndexByte(v[1:], v[0]); end >= 0 && bytes.IndexByte(v[1:end+1], '\\') < 0 {
			return string(v[1 : end+1])
		}
		return ""
	}
	if i := bytes.Index(v, []byte(" #")); i >= 0 {
		v = v[:i]
	}
	return string(bytes.TrimRight(v, " "))
}

// printable reports whether every character of line is one the YAML parser
// accepts outside a quoted escape: printable ASCII, tab, and the BMP ranges
// it allows. Anything else is left to the parser.
func printable(line []byte) bool {
	for i := 0; i < len(line); {
		b := line[i]
		if b < utf8.RuneSelf {
			if (b < 0x20 && b != '\t') || b == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(line[i:])
		// U+2028 and U+2029 are line breaks to the parser.
		if size == 1 || r < 0xA0 || r == 0x2028 || r == 0x2029 || (r > 0xD7FF && r < 0xE000) || r == 0xFEFF || r > 0xFFFD {
			return false
		}
		i += size
	}
	return true
}
