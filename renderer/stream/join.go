package stream

import (
	"bytes"
	"io"
)

// Builder joins documents into a stream. Whatever is kept, replaced, added
// or left out, every document of the output starts on a line of its own
// after a "---" line (but the first, which needs none): a document never
// merges with its neighbour, whatever the input's first line, line endings
// or last byte. Kept documents are slices of the input, not copies.
type Builder struct {
	parts [][]byte
	size  int
	last  byte // the last byte written, 0 before any
	crlf  bool // write separators the builder adds with "\r\n"
}

// Keep writes a document as it came.
func (b *Builder) Keep(d *Doc) {
	if d.HasSeparator() {
		b.breakLine()
	} else {
		b.separate()
	}
	b.add(d.Raw)
}

// Replace writes a document with new content: the lines before its content
// (separator, comments) as they came, then body. body uses "\n" line
// endings; they become "\r\n" when the document had those.
func (b *Builder) Replace(d *Doc, body []byte) {
	if d.CRLF() {
		body = toCRLF(body)
	}
	b.Keep(&Doc{Raw: d.Raw[:d.ContentStart()], body: d.body})
	b.breakLine()
	b.add(body)
}

// Add writes a new document, with a separator line before it.
func (b *Builder) Add(body []byte) {
	b.separate()
	b.add(body)
}

// Len returns the size of the stream in bytes.
func (b *Builder) Len() int { return b.size }

// WriteTo writes the stream to w.
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, p := range b.parts {
		m, err := w.Write(p)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Bytes returns the stream as one slice.
func (b *Builder) Bytes() []byte {
	out := make([]byte, 0, b.size)
	for _, p := range b.parts {
		out = append(out, p...)
	}
	return out
}

// separate writes a "---" line unless the stream is still empty.
func (b *Builder) separate() {
	if b.size == 0 {
		return
	}
	b.breakLine()
	if b.crlf {
		b.add([]byte("---\r\n"))
	} else {
		b.add([]byte("---\n"))
	}
}

// breakLine ends the last line when it has no line break.
func (b *Builder) breakLine() {
	if b.size > 0 && b.last != '\n' {
		b.add([]byte("\n"))
	}
}

func (b *Builder) add(p []byte) {
	if len(p) == 0 {
		return
	}
	if b.size == 0 {
		b.crlf = bytes.Contains(firstLine(p), []byte("\r"))
	}
	b.last = p[len(p)-1]
	b.size += len(p)
	// Input documents that follow each other in the input stay one slice.
	if n := len(b.parts); n > 0 {
		if last := b.parts[n-1]; cap(last) > len(last) && &last[:len(last)+1][len(last)] == &p[0] {
			b.parts[n-1] = last[:len(last)+len(p)]
			return
		}
	}
	b.parts = append(b.parts, p)
}

func toCRLF(b []byte) []byte {
	if bytes.Contains(b, []byte("\r\n")) {
		return b
	}
	return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
}
