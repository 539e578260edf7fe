package renderer

import (
	"bytes"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// document is one YAML document of the input stream. raw holds its bytes
// exactly as they arrived, including the "---" line that opened it, so that
// documents the renderer does not change are written back byte for byte.
type document struct {
	index int    // 1-based position in the stream
	line  int    // 1-based input line of raw's first byte
	raw   []byte // the document's bytes, separator line included
	body  int    // offset in raw of the first line after the separator line

	kind    string // top-level kind, "" when absent or unknown
	simple  bool   // the fast checker proved it well-formed
	multi   bool   // "..." ends a document inside the segment
	removed bool   // the renderer drops the document
	out     []byte // replacement bytes when a patch changed the document

	// node is set instead of raw when the caller passes parsed objects
	// (the KRM function); replace then holds a regenerated document's text.
	node    *yaml.RNode
	replace []byte
}

// mentions reports whether the document may contain s: a cheap test before
// parsing. Parsed objects always may.
func (d *document) mentions(s []byte) bool {
	return d.node != nil || bytes.Contains(d.raw, s)
}

// source returns the template path Helm writes as a "# Source:" comment
// above each document, or "".
func (d *document) source() string {
	rest := d.raw[d.body:]
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

// prefix returns the offset of the document's first content line: what
// comes before it (the separator line, comments, blank lines) is kept as it
// is when the document is patched.
func (d *document) prefix() int {
	pos := d.body
	for pos < len(d.raw) {
		end := bytes.IndexByte(d.raw[pos:], '\n')
		if end < 0 {
			end = len(d.raw)
		} else {
			end += pos + 1
		}
		line := bytes.TrimSpace(d.raw[pos:end])
		if len(line) > 0 && line[0] != '#' {
			break
		}
		pos = end
	}
	return pos
}

// describe names the document for error messages.
func (d *document) describe() string {
	if d.node != nil {
		return "object " + strconv.Itoa(d.index) + " (" + objectName(d.node) + ")"
	}
	s := "document " + strconv.Itoa(d.index) + " (line " + strconv.Itoa(d.line)
	if src := d.source(); src != "" {
		s += ", " + src
	}
	return s + ")"
}

// splitDocuments cuts the stream at "---" lines without parsing it. Every
// byte of in belongs to exactly one document, so concatenating the raw
// fields gives back in.
func splitDocuments(in []byte) []*document {
	return splitChunks([][]byte{in})
}

// splitChunks splits every chunk of a stream read by ReadStream.
func splitChunks(chunks [][]byte) []*document {
	n := 0
	for _, c := range chunks {
		n += 16 + bytes.Count(c, []byte("\n---")) // a cheap upper bound
	}
	docs := make([]*document, 0, n)
	line := 1
	for _, c := range chunks {
		docs = splitChunk(docs, c, line)
		line += bytes.Count(c, []byte("\n"))
	}
	return docs
}

// splitChunk appends the documents of in, whose first line is input line
// first, to docs.
func splitChunk(docs []*document, in []byte, first int) []*document {
	start, startLine, line := 0, first, first
	for pos := 0; pos < len(in); {
		end := bytes.IndexByte(in[pos:], '\n')
		if end < 0 {
			end = len(in)
		} else {
			end += pos
		}
		if pos > start && isSeparator(in[pos:end]) {
			docs = append(docs, newDocument(len(docs)+1, startLine, in[start:pos]))
			start, startLine = pos, line
		}
		pos = end + 1
		line++
	}
	if start < len(in) {
		docs = append(docs, newDocument(len(docs)+1, startLine, in[start:]))
	}
	return docs
}

func newDocument(index, line int, raw []byte) *document {
	d := &document{index: index, line: line, raw: raw}
	if isSeparator(firstLine(raw)) {
		d.body = len(firstLine(raw))
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

// isSeparator reports whether line opens a new YAML document ("---" at
// column 0 followed by nothing, a blank or a comment).
func isSeparator(line []byte) bool {
	if len(line) < 3 || line[0] != '-' || line[1] != '-' || line[2] != '-' {
		return false
	}
	return len(line) == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r'
}

// pureSeparator reports whether a separator line carries no content of its
// own ("--- |" or "--- !tag" do).
func pureSeparator(line []byte) bool {
	rest := bytes.TrimLeft(line[3:], " ")
	return len(rest) == 0 || rest[0] == '#'
}
