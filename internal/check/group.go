package check

import (
	"fmt"
	"strings"
)

// Findings that repeat per node are grouped: 40 uninitialised workers are
// one finding that counts them and names a few (the JSON form lists them
// all), not 40.

// namesShown is how many names a grouped finding shows in the table.
const namesShown = 3

// NodeIssue is what a rule says of one node: a finding as it reads for any
// node of its kind (no subject), and what is the node's own.
type NodeIssue struct {
	Node string
	Finding
	// Note is the node's own part, e.g. the name it should have ("" when
	// none); FixFor writes the fix from the notes of the nodes it is for
	// (nil: Finding.Fix as it is).
	Note   string
	FixFor func(notes []string) string
	// One is the message when the node is the only one of its kind ("":
	// Finding.Message), which may name what is the node's own.
	One string
}

func (i NodeIssue) key() string {
	k := i.Area + "\x00" + string(i.Severity) + "\x00" + i.Message + "\x00" + i.Fix
	if i.FixFor != nil {
		k += "\x00" + i.FixFor(nil)
	}
	return k
}

// GroupNodes turns issues about nodes into findings, one per kind, in the
// order each kind first appears: about the node when it is the only one,
// else about the count of them, with their names.
func GroupNodes(issues []NodeIssue) []Finding { return GroupOf(issues, "", "nodes") }

// GroupOf groups issues about objects of one kind: a finding about one is
// about "KIND NAME" ("NAME" when kind is ""), about several "N KINDS:
// NAMES".
func GroupOf(issues []NodeIssue, kind, kinds string) []Finding {
	var order []string
	groups := map[string][]NodeIssue{}
	for _, i := range issues {
		k := i.key()
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	out := make([]Finding, 0, len(order))
	for _, k := range order {
		g := groups[k]
		f := g[0].Finding
		var names, notes []string
		for _, i := range g {
			names = append(names, i.Node)
			if i.Note != "" {
				notes = append(notes, i.Note)
			}
		}
		if g[0].FixFor != nil {
			f.Fix = g[0].FixFor(notes)
		}
		if len(g) == 1 {
			f.Subject = strings.TrimPrefix(kind+" "+g[0].Node, " ")
			if g[0].One != "" {
				f.Message = g[0].One
			}
		} else {
			f.Subject = fmt.Sprintf("%d %s: %s", len(g), kinds, SomeOf(names))
			f.Subjects, f.Count = names, len(g)
		}
		out = append(out, f)
	}
	return out
}

// SomeOf names the first few of a list, and how many more there are.
func SomeOf(items []string) string {
	if len(items) <= namesShown {
		return JoinAnd(items)
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:namesShown], ", "), len(items)-namesShown)
}
