package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"unicode"

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
	if len(docs) > 0 && bytes.HasPrefix(bytes.TrimLeftFunc(docs[0].Raw, unicode.IsSpace), []byte("{")) {
		// apimachinery's YAMLOrJSONDecoder reads such a stream as JSON
		// objects, with JSON's rules, where the renderer reads YAML.
		return &Error{Doc: docs[0], Err: errors.New(`the stream starts with "{", which Kubernetes' clients read as a stream of JSON objects, ` +
			`not as YAML: start it with "---" or a YAML document`)}
	}
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

// scan makes sure a document is well-formed YAML that Kubernetes' clients
// and the renderer read alike, and learns its kind when the fast checker
// can. The fast checker proves most documents without building a tree; the
// rest go through the YAML parser. The kind of those the renderer reads
// from their tree (Kind stays ""), as it reads lists.
func (d *Doc) scan() error {
	body := d.Raw[d.body:]
	if kind, ok := fastCheck(body); ok {
		d.Kind, d.Simple = kind, true
		return nil
	}
	first := d.Line
	if d.body > 0 {
		first++
	}
	if err := d.sameLines(body, first); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(body))
	count := 0
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return d.parseError(err, first)
		}
		if err := aliasBomb(&n); err != nil {
			return &Error{Doc: d, Err: err}
		}
		count++
	}
	if count > 1 {
		// "..." ended a document inside this one, and a parser reads on
		// where Kubernetes' clients stop: never read, never patched.
		d.Multi = true
	}
	return nil
}

// sameLines refuses what makes Kubernetes' clients and a YAML parser see
// different lines or documents in body (whose first line is input line
// first): a line break other than "\n" and "\r\n" (NEL, LS, PS, a lone CR),
// which the parser breaks at and the clients' document splitter does not,
// and a line that starts with "---" but is no separator, where the clients
// stop reading the stream.
func (d *Doc) sameLines(body []byte, first int) error {
	line := first
	for pos := 0; pos < len(body); {
		end := bytes.IndexByte(body[pos:], '\n')
		if end < 0 {
			end = len(body)
		} else {
			end += pos
		}
		text := body[pos:end]
		if bytes.HasPrefix(text, []byte("---")) {
			return &Error{Doc: d, Line: line, Err: fmt.Errorf("%q starts with \"---\" but is no document separator (\"---\" then nothing but blanks or a comment): "+
				"Kubernetes' clients stop reading the stream there", firstBytes(text))}
		}
		if i := oddBreak(text); i >= 0 {
			return &Error{Doc: d, Line: line, Err: fmt.Errorf("a line break other than \"\\n\" or \"\\r\\n\" (%s): YAML parsers break the line there and Kubernetes' "+
				"document splitter does not, so they could read different objects; use \"\\n\"", oddBreakName(text[i:]))}
		}
		pos = end + 1
		line++
	}
	return nil
}

// oddBreak returns the offset in line (without its "\n") of the first NEL,
// LS, PS or CR that does not end the line, or -1.
func oddBreak(line []byte) int {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\r':
			if i+1 < len(line) {
				return i
			}
		case 0xC2:
			if i+1 < len(line) && line[i+1] == 0x85 {
				return i
			}
		case 0xE2:
			if i+2 < len(line) && line[i+1] == 0x80 && (line[i+2] == 0xA8 || line[i+2] == 0xA9) {
				return i
			}
		}
	}
	return -1
}

func oddBreakName(b []byte) string {
	switch {
	case b[0] == '\r':
		return "a CR without a LF"
	case b[0] == 0xC2:
		return "NEL, U+0085"
	case b[2] == 0xA8:
		return "LS, U+2028"
	}
	return "PS, U+2029"
}

func firstBytes(b []byte) []byte {
	if len(b) > 40 {
		return append(b[:37:37], "..."...)
	}
	return b
}

// aliasBomb refuses a document whose aliases expand it beyond what the YAML
// libraries of Kubernetes' clients accept (they give up on a document in
// which more than 99% of the nodes, or of 400,000 and more nodes a falling
// share, come from aliases). It counts without expanding: the renderer never
// expands a document it does not patch, and one it patches only within a
// tighter bound (see the renderer's expand).
func aliasBomb(doc *yaml.Node) error {
	expanded, real := ExpandedSize(doc)
	aliased := expanded - real
	if aliased > 100 && expanded > 1000 && float64(aliased)/float64(expanded) > allowedAliasRatio(expanded) {
		return fmt.Errorf("a YAML alias bomb: %d nodes expand to %d through aliases, more than YAML libraries accept", real, expanded)
	}
	return nil
}

// allowedAliasRatio is the share of a document's nodes that the YAML
// libraries (go.yaml.in/yaml v2 and v3, decode.go) let come from aliases.
func allowedAliasRatio(nodes int) float64 {
	const low, high = 400_000, 4_000_000
	switch {
	case nodes <= low:
		return 0.99
	case nodes >= high:
		return 0.10
	}
	return 0.99 - 0.89*float64(nodes-low)/float64(high-low)
}

// ExpandedSize returns how many nodes the tree under n holds once its
// aliases are expanded (saturating at 1<<40: an alias of an alias can double
// a document per line), and how many it holds as written, in one pass over
// the nodes as written: an anchored node's size is counted once. An alias
// may name a node outside n (items of one ResourceList share anchors).
func ExpandedSize(n *yaml.Node) (expanded, written int) {
	const most = 1 << 40
	var memo map[*yaml.Node]int // made at the first anchor: most trees have none
	var active map[*yaml.Node]bool
	var size func(n *yaml.Node, own bool) int
	size = func(n *yaml.Node, own bool) int {
		if n.Kind == yaml.AliasNode {
			switch t := n.Alias; {
			case t == nil:
				return 1
			case active[t]:
				return most // an alias of a node it is inside of
			default:
				if s, ok := memo[t]; ok {
					return s
				}
				return size(t, false)
			}
		}
		if own {
			written++
		}
		if n.Anchor != "" {
			if memo == nil {
				memo, active = map[*yaml.Node]int{}, map[*yaml.Node]bool{}
			}
			active[n] = true
		}
		s := 1
		for _, c := range n.Content {
			s = min(s+size(c, own), most)
		}
		if n.Anchor != "" {
			delete(active, n)
			memo[n] = s
		}
		return s
	}
	return size(n, true), written
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
