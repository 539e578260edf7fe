package renderer

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// check makes sure a document is well-formed YAML and learns its kind. The
// fast checker proves most documents without building a tree; the rest go
// through the YAML parser, which also rejects alias bombs.
func (d *document) check() error {
	if d.body == 0 || pureSeparator(firstLine(d.raw)) {
		if kind, ok := fastCheck(d.raw[d.body:]); ok {
			d.kind, d.simple = kind, true
			return nil
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(d.raw))
	count, aliases := 0, false
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return &InputError{Doc: d.describe(), Err: relocate(err, d.line)}
		}
		if count == 0 {
			d.kind = topKind(&n)
		}
		aliases = aliases || hasAlias(&n)
		count++
	}
	if count > 1 {
		d.kind = "" // "..." ended a document inside this one: pass it through, never patch it
		d.multi = true
	}
	if aliases {
		// Decoding into values expands aliases, under the parser's limits on
		// how much expansion a document may cause.
		dec := yaml.NewDecoder(bytes.NewReader(d.raw))
		for {
			var v any
			err := dec.Decode(&v)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return &InputError{Doc: d.describe(), Err: relocate(err, d.line)}
			}
		}
	}
	return nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// relocate turns the parser's line numbers, counted from a text that starts
// at input line first, into input line numbers.
func relocate(err error, first int) error {
	msg := err.Error()
	m := yamlLine.FindStringSubmatchIndex(msg)
	if m == nil {
		return errors.New(msg)
	}
	n, _ := strconv.Atoi(msg[m[2]:m[3]])
	return errors.New("input line " + strconv.Itoa(first+n-1) + ": " + msg[m[1]:])
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
