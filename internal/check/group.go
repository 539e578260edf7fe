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

// nodeIssue is what a rule says of one node: a finding as it reads for any
// node of its kind (no subject), and what is the node's own.
type nodeIssue struct {
	node string
	Finding
	// note is the node's own part, e.g. the name it should have ("" when
	// none); fix writes the fix from the notes of the nodes it is for
	// (nil: Finding.Fix as it is).
	note string
	fix  func(notes []string) string
	// one is the message when the node is the only one of its kind ("":
	// Finding.Message), which may name what is the node's own.
	one string
}

func (i nodeIssue) key() string {
	k := i.Area + "\x00" + string(i.Severity) + "\x00" + i.Message + "\x00" + i.Fix
	if i.fix != nil {
		k += "\x00" + i.fix(nil)
	}
	return k
}

// groupNodes turns issues about nodes into findings, one per kind, in the
// order each kind first appears: about the node when it is the only one,
// else about the count of them, with their names.
func groupNodes(issues []nodeIssue) []Finding { return groupOf(issues, "", "nodes") }

// groupOf groups issues about objects of one kind: a finding about one is
// about "KIND NAME" ("NAME" when kind is ""), about several "N KINDS:
// NAMES".
func groupOf(issues []nodeIssue, kind, kinds string) []Finding {
	var order []string
	groups := map[string][]nodeIssue{}
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
			names = append(names, i.node)
			if i.note != "" {
				notes = append(notes, i.note)
			}
		}
		if g[0].fix != nil {
			f.Fix = g[0].fix(notes)
		}
		if len(g) == 1 {
			f.Subject = strings.TrimPrefix(kind+" "+g[0].node, " ")
			if g[0].one != "" {
				f.Message = g[0].one
			}
		} else {
			f.Subject = fmt.Sprintf("%d %s: %s", len(g), kinds, someOf(names))
			f.Subjects, f.Count = names, len(g)
		}
		out = append(out, f)
	}
	return out
}

// someOf names the first few of a list, and how many more there are.
func someOf(items []string) string {
	if len(items) <= namesShown {
		return joinAnd(items)
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:namesShown], ", "), len(items)-namesShown)
}
