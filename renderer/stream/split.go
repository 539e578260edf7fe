// Package stream is the renderer's byte layer: it cuts a manifest stream
// into documents at "---" lines without parsing it, proves each document
// well-formed (a one-pass checker, else the YAML parser), and joins documents
// back into a stream. It is the only place that decides where documents start
// and end; everything above it works on whole documents.
package stream

import (
	"bytes"
	"strconv"
)

// Doc is one YAML document of a stream. Raw holds its bytes exactly as they
// arrived, including the "---" line that opened it, so that a document the
// renderer does not change is written back byte for byte.
type Doc struct {
	Index int    // 1-based position in the stream
	Line  int    // 1-based input line of Raw's first byte
	Raw   []byte // the document's bytes, separator line included

	// Set by Scan.
	Kind   string // top-level kind, "" when absent or not a plain scalar
	Simple bool   // the fast checker proved the document well-formed
	Multi  bool   // a "..." line ends a document inside Raw: never patched

	body int // offset in Raw of the first line after the separator line
}

// HasSeparator reports whether the document opens with a "---" line.
func (d *Doc) HasSeparator() bool { return d.body > 0 || isSeparator(firstLine(d.Raw)) }

// Body returns the document without its separator line.
func (d *Doc) Body() []byte { return d.Raw[d.body:] }

// Mentions reports whether the document may hold the string s: a cheap
// test before parsing, which must never say no to a document that does. A
// document the fast checker proved (Simple: no tags, aliases, flow or
// multi-line flow scalars) spells s without its bytes only through an
// escape in a double-quoted scalar ("\x2D", "\u002D", a "\" line break),
// so one with a backslash may hold anything, or, when s has a "'", through
// the doubled quote of a single-quoted one. Any other document may hold anything: a
// tag alone (!!binary) spells a string in other bytes.
func (d *Doc) Mentions(s []byte) bool {
	return !d.Simple || bytes.Contains(d.Raw, s) || bytes.IndexByte(d.Raw, '\\') >= 0 || bytes.IndexByte(s, '\'') >= 0
}

// ContentStart returns the offset in Raw of the document's first content
// line: what comes before it (the separator line, comments, blank lines) is
// kept as it is when the document is replaced.
func (d *Doc) ContentStart() int {
	pos := d.body
	for pos < len(d.Raw) {
		end := bytes.IndexByte(d.Raw[pos:], '\n')
		if end < 0 {
			end = len(d.Raw)
		} else {
			end += pos + 1
		}
		line := bytes.TrimSpace(d.Raw[pos:end])
		if len(line) > 0 && line[0] != '#' {
			break
		}
		pos = end
	}
	return pos
}

// ContentLine returns the input line of the document's first content line.
func (d *Doc) ContentLine() int {
	return d.Line + bytes.Count(d.Raw[:d.ContentStart()], []byte("\n"))
}

// CRLF reports whether the document's lines end with "\r\n".
func (d *Doc) CRLF() bool {
	i := bytes.IndexByte(d.Raw, '\n')
	return i > 0 && d.Raw[i-1] == '\r'
}

// Source returns the template path Helm writes as a "# Source:" comment
// above each document, or "".
func (d *Doc) Source() string {
	rest := d.Raw[d.body:]
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if !bytes.HasPrefix(line, []byte("#")) {
			return ""
		}
		if s, ok := bytes.CutPrefix(line, []byte("# Source:")); ok {
			return string(bytes.TrimSpace(s))
		}
	}
	return ""
}

// String names the document for messages: "document 3 (line 40,
// chart/templates/daemonset.yaml)".
func (d *Doc) String() string {
	s := "document " + strconv.Itoa(d.Index) + " (line " + strconv.Itoa(d.Line)
	if src := d.Source(); src != "" {
		s += ", " + src
	}
	return s + ")"
}

// Split cuts a stream, given as the chunks Read returns, into documents at
// "---" lines without parsing it. Every byte belongs to exactly one
// document: joining the Raw fields gives back the input.
func Split(chunks [][]byte) []*Doc {
	n := 0
	for _, c := range chunks {
		n += 16 + bytes.Count(c, []byte("\n---")) // a cheap upper bound
	}
	docs := make([]*Doc, 0, n)
	line := 1
	for _, c := range chunks {
		docs = splitChunk(docs, c, line)
		line += bytes.Count(c, []byte("\n"))
	}
	return docs
}

// splitChunk appends the documents of in, whose first line is input line
// first, to docs.
func splitChunk(docs []*Doc, in []byte, first int) []*Doc {
	start, startLine, line := 0, first, first
	for pos := 0; pos < len(in); {
		end := bytes.IndexByte(in[pos:], '\n')
		if end < 0 {
			end = len(in)
		} else {
			end += pos
		}
		if pos > start && isSeparator(in[pos:end]) {
			docs = append(docs, newDoc(len(docs)+1, startLine, in[start:pos]))
			start, startLine = pos, line
		}
		pos = end + 1
		line++
	}
	if start < len(in) {
		docs = append(docs, newDoc(len(docs)+1, startLine, in[start:]))
	}
	return docs
}

func newDoc(index, line int, raw []byte) *Doc {
	d := &Doc{Index: index, Line: line, Raw: raw}
	if first := firstLine(raw); isSeparator(first) {
		d.body = len(first)
		if d.body < len(raw) {
			d.body++
		}
	}
	return d
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// isSeparator reports whether line opens a new document the way Kubernetes'
// clients cut a stream (apimachinery's YAMLReader, which Helm's and kubectl's
// resource builder read with): "---" at column 0 followed by nothing but
// white space (Unicode's, as strings.TrimSpace trims) or a comment. A line
// that starts with "---" and goes on otherwise ("--- |", "---x") is no
// separator, and Scan refuses it: those clients stop reading the stream
// there. "---#" is one to them though not to a YAML parser, so the renderer
// never parses a separator line: a document is read from the line after it.
func isSeparator(line []byte) bool {
	if len(line) < 3 || line[0] != '-' || line[1] != '-' || line[2] != '-' {
		return false
	}
	rest := bytes.TrimSpace(line[3:])
	return len(rest) == 0 || rest[0] == '#'
}
