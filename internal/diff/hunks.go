package diff

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// objectHunks is the line diff of one object's YAML: each hunk starts with
// "@@ PATH @@", PATH being where in the object its first change is; lines
// are "- " removed, "+ " added, "  " unchanged.
func objectHunks(from, to string, context int) string {
	a, b := splitLines(from), splitLines(to)
	ops := diffLines(a, b)
	pathsA, pathsB := &linePaths{text: from}, &linePaths{text: to}
	if context < 0 {
		context = len(ops)
	}
	var out strings.Builder
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start, end := max(i-context, 0), i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		var path string
		if ops[i].kind == '-' {
			path = pathsA.at(ops[i].a)
		} else {
			path = pathsB.at(ops[i].b)
		}
		fmt.Fprintf(&out, "@@ %s @@\n", path)
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteByte(' ')
			out.WriteString(op.line)
			out.WriteByte('\n')
		}
		i = end
	}
	return out.String()
}

// linePaths tells where each line of a YAML text made by encodeYAML
// stands, read off the YAML library's node tree of the text: the keys that
// enclose it and its own, list items as [name=NAME] when the item has a
// name, else [] (spec.template.spec.containers[name=ccm].args). A line
// where no node starts (the rest of a block scalar) stands where the line
// before it does; "(top)" is outside every key, or a text that is no YAML.
type linePaths struct {
	text  string
	paths []string // per line, once asked
}

func (l *linePaths) at(line int) string {
	if l.paths == nil {
		l.paths = pathsOf(l.text)
	}
	if line < len(l.paths) && l.paths[line] != "" {
		return l.paths[line]
	}
	return "(top)"
}

func pathsOf(text string) []string {
	paths := make([]string, len(splitLines(text))+1)
	var doc yaml.Node
	if yaml.Unmarshal([]byte(text), &doc) == nil {
		markPaths(&doc, "", paths)
	}
	for i := 1; i < len(paths); i++ {
		if paths[i] == "" {
			paths[i] = paths[i-1]
		}
	}
	return paths
}

// markPaths writes the path of each node where it starts (a 0-based line);
// a node deeper on the same line writes over its parent's.
func markPaths(n *yaml.Node, path string, paths []string) {
	mark := func(line int, p string) {
		if line >= 1 && line <= len(paths) {
			paths[line-1] = p
		}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			markPaths(c, path, paths)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := n.Content[i].Value
			if path != "" {
				p = path + "." + p
			}
			mark(n.Content[i].Line, p)
			markPaths(n.Content[i+1], p, paths)
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			p := path + itemName(item)
			mark(item.Line, p)
			markPaths(item, p, paths)
		}
	}
}

// itemName is "[name=NAME]" for a list item that is a mapping with a name,
// else "[]".
func itemName(item *yaml.Node) string {
	if item.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(item.Content); i += 2 {
			if item.Content[i].Value == "name" && item.Content[i+1].Kind == yaml.ScalarNode {
				return "[name=" + item.Content[i+1].Value + "]"
			}
		}
	}
	return "[]"
}
