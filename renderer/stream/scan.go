package stream

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// Error is a document the byte layer cannot accept: not YAML, or a YAML
// alias bomb.
type Error struct {
	Doc  *Doc
	Line int // the input line of the problem, 0 when the parser did not say
	Err  error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return "input line " + strconv.Itoa(e.Line) + ": " + e.Err.Error()
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Scan checks every document, on all cores for long streams, and learns
// each one's kind. It returns an *Error for the first bad document.
func Scan(docs []*Doc) error {
	workers := min(runtime.GOMAXPROCS(0), 8)
	if len(docs) < 256 || workers < 2 {
		for _, d := range docs {
			if err := d.scan(); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, len(docs))
	var wg sync.WaitGroup
	chunk := (len(docs) + workers - 1) / workers
	for start := 0; start < len(docs); start += chunk {
		end := min(start+chunk, len(docs))
		wg.Go(func() {
			for i := start; i < end; i++ {
				if errs[i] = docs[i].scan(); errs[i] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// scan makes sure a document is well-formed YAML and learns its kind. The
// fast checker proves most documents without building a tree; the rest go
// through the YAML parser, which also rejects alias bombs.
func (d *Doc) scan() error {
	if d.body == 0 || pureSeparator(firstLine(d.Raw)) {
		if kind, ok := fastCheck(d.Raw[d.body:]); ok {
			d.Kind, d.Simple = kind, true
			return nil
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(d.Raw))
	count, aliases := 0, false
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return d.parseError(err, d.Line)
		}
		if count == 0 {
			d.Kind = topKind(&n)
		}
		aliases = aliases || hasAlias(&n)
		count++
	}
	if count > 1 {
		d.Kind = "" // "..." ended a document inside this one: pass it through, never patch it
		d.Multi = true
	}
	if aliases {
		// Decoding into values expands aliases, under the parser's limits on
		// how much expansion a document may cause.
		dec := yaml.NewDecoder(bytes.NewReader(d.Raw))
		for {
			var v any
			err := dec.Decode(&v)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return d.parseError(err, d.Line)
			}
		}
	}
	return nil
}

// yamlLine finds the line number in the YAML library's messages, which are
// its only way of telling where a problem is.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parseError returns an *Error for a parser error about a text of this
// document that starts at input line first, with the parser's line number
// turned into an input line number.
func (d *Doc) parseError(err error, first int) *Error {
	e := &Error{Doc: d, Err: err}
	msg := err.Error()
	if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
		n, _ := strconv.Atoi(msg[m[2]:m[3]])
		e.Line = first + n - 1
		e.Err = &trimmed{msg: msg[m[1]:], err: err}
	}
	return e
}

// trimmed is a parser error without the line the *Error carries.
type trimmed struct {
	msg string
	err error
}

func (t *trimmed) Error() string { return t.msg }
func (t *trimmed) Unwrap() error { return t.err }

// ParseError is how Parse reports text it cannot read.
func (d *Doc) ParseError(err error) error {
	return d.parseError(err, d.ContentLine())
}

// ErrMulti is Parse's error for a document that a "..." line ends inside.
var ErrMulti = errors.New(`a "..." line ends a document inside it; separate documents with "---"`)

// Content returns the text Parse parses: the document from its first
// content line.
func (d *Doc) Content() ([]byte, error) {
	if d.Multi {
		return nil, &Error{Doc: d, Err: ErrMulti}
	}
	return d.Raw[d.ContentStart():], nil
}

func topKind(doc *yaml.Node) string {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "kind" && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1].Value
		}
	}
	return ""
}

func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}
