package plan

import (
	"bytes"
	"strconv"
	"strings"

	goyaml "go.yaml.in/yaml/v3"
)

// The configuration the plans print, as structs marshalled to YAML by one
// marshaller (go.yaml.in/yaml/v3): the migration steps' snippets with
// their sequences indented under their keys, the new-cluster snippets with
// them level with their keys; the comments that say what to keep or change
// are attached to the nodes they annotate.

// quoted is a string that YAML writes in double quotes, as the
// distributions' documentation does ("*", "12h", "true").
type quoted string

// MarshalYAML writes the string double-quoted.
func (s quoted) MarshalYAML() (any, error) {
	return &goyaml.Node{Kind: goyaml.ScalarNode, Style: goyaml.DoubleQuotedStyle, Value: string(s)}, nil
}

// yamlComment annotates the node at a path of keys and sequence indexes:
// line after its value, gap spaces before it; head on the lines before
// its key or item.
type yamlComment struct {
	path       string
	line, head string
	gap        int
}

// lineComment annotates the node at a dotted path
// (spec.rkeConfig.machineSelectorConfig.0) after its value, gap spaces
// after it, so that a snippet's comments line up.
func lineComment(path string, gap int, text string) yamlComment {
	return yamlComment{path: path, line: "# " + text, gap: gap}
}

// headComment annotates the node at a dotted path on the line before it.
func headComment(path, text string) yamlComment { return yamlComment{path: path, head: "# " + text} }

// yamlOf marshals v with the comments, sequences indented under their
// keys: the migration steps' snippets. The plans' structs always marshal.
func yamlOf(v any, comments ...yamlComment) string {
	n := yamlNode(v)
	for _, c := range comments {
		key, value := yamlAt(n, c.path)
		if c.line != "" {
			value.LineComment = c.line
		}
		if c.head != "" {
			key.HeadComment = c.head
		}
	}
	out := encodeYAML(n, false)
	for _, c := range comments {
		if c.line != "" && c.gap > 1 {
			out = strings.Replace(out, " "+c.line+"\n", strings.Repeat(" ", c.gap)+c.line+"\n", 1)
		}
	}
	return out
}

// yamlCompact marshals v with sequences level with their keys, as the
// new-cluster snippets print (and kubectl and the distributions' own
// examples write them).
func yamlCompact(v any) string { return encodeYAML(yamlNode(v), true) }

func yamlNode(v any) *goyaml.Node {
	var n goyaml.Node
	if err := n.Encode(v); err != nil {
		panic(err)
	}
	return &n
}

func encodeYAML(n *goyaml.Node, compact bool) string {
	var b bytes.Buffer
	e := goyaml.NewEncoder(&b)
	e.SetIndent(2)
	if compact {
		e.CompactSeqIndent()
	}
	if err := e.Encode(n); err != nil {
		panic(err)
	}
	return b.String()
}

// yamlAt finds the node at a dotted path: the key node (the item itself
// in a sequence) and the value node.
func yamlAt(n *goyaml.Node, path string) (key, value *goyaml.Node) {
	key, value = n, n
	for _, p := range strings.Split(path, ".") {
		switch value.Kind {
		case goyaml.MappingNode:
			found := false
			for i := 0; i+1 < len(value.Content); i += 2 {
				if value.Content[i].Value == p {
					key, value, found = value.Content[i], value.Content[i+1], true
					break
				}
			}
			if !found {
				panic("yaml: no key " + p + " in " + path)
			}
		case goyaml.SequenceNode:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(value.Content) {
				panic("yaml: no item " + p + " in " + path)
			}
			key, value = value.Content[i], value.Content[i]
		default:
			panic("yaml: " + path + " goes past a scalar")
		}
	}
	return key, value
}

// yamlComments are comment lines at an indentation, for what follows a
// document: the entries the operator adds, options left commented out.
func yamlComments(indent int, lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.Repeat(" ", indent) + "# " + l + "\n")
	}
	return b.String()
}
