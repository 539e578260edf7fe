package renderer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// NarrowedAnnotation records on a role what NarrowTokens took out of it:
// the rules as they were, with their places, so that a render without
// --token-scope=controllers puts them back and an output rendered again
// with other options is what the original gives with them.
const NarrowedAnnotation = "aws-ccm-renderer.io/narrowed-rules"

// NarrowTokens takes out of the CCM's own roles (the access decision picks
// them) every grant of create on serviceaccounts/token that is not limited
// to named accounts: a rule for that resource alone goes, a rule for more
// resources loses that one. TokenRBAC grants it again, for the
// controllers' accounts in kube-system alone. A rule that grants it through
// a wildcard ("*" resources, verbs or API groups) cannot be narrowed without
// rewriting it and is an error. With Narrow false it puts back what an
// earlier narrowing took out (NarrowedAnnotation). Narrowing a role an
// earlier render narrowed starts from the role as it was.
type NarrowTokens struct {
	Narrow bool
}

var _ kio.Filter = NarrowTokens{}

// narrowedRule is one entry of NarrowedAnnotation.
type narrowedRule struct {
	Index   int    `json:"index"`   // its place among the rules as they were
	Rule    string `json:"rule"`    // the rule as it was, in YAML
	Removed bool   `json:"removed"` // taken out whole, else changed
}

func (f NarrowTokens) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	for _, rn := range nodes {
		if err := restoreTokens(rn); err != nil {
			return nil, &patchError{Object: refOf(rn), Err: err}
		}
		if f.Narrow {
			if err := narrowTokens(rn); err != nil {
				return nil, &patchError{Object: refOf(rn), Err: err}
			}
		}
	}
	return nodes, nil
}

// broadTokenRule reports whether a rule lets its holder create tokens for
// every service account in its scope.
func broadTokenRule(r rule) bool {
	return len(r.names) == 0 &&
		(slices.Contains(r.groups, "") || slices.Contains(r.groups, "*")) &&
		(slices.Contains(r.resources, tokenResource) || slices.Contains(r.resources, "*") || slices.Contains(r.resources, "serviceaccounts/*")) &&
		(slices.Contains(r.verbs, tokenVerb) || slices.Contains(r.verbs, "*"))
}

func narrowTokens(rn *yaml.RNode) error {
	rules, err := readRules(rn.YNode())
	if err != nil {
		return err
	}
	var record []narrowedRule
	list := mapGet(rn.YNode(), "rules")
	kept := make([]*yaml.Node, 0, len(rules))
	for i, r := range rules {
		if !broadTokenRule(r) {
			kept = append(kept, list.Content[i])
			continue
		}
		if !slices.Equal(r.groups, []string{""}) || slices.Contains(r.resources, "*") || slices.Contains(r.resources, "serviceaccounts/*") || slices.Contains(r.verbs, "*") {
			return fmt.Errorf("rules[%d] lets its holders create tokens for every service account through a wildcard; "+
				"the renderer narrows rules that name serviceaccounts/token, not wildcards: write the rule out", i)
		}
		was, err := yaml.NewRNode(r.node).String()
		if err != nil {
			return err
		}
		resources := slices.DeleteFunc(slices.Clone(r.resources), func(s string) bool { return s == tokenResource })
		record = append(record, narrowedRule{Index: i, Rule: was, Removed: len(resources) == 0})
		if len(resources) == 0 {
			continue
		}
		changed := cloneNode(r.node)
		items := make([]*yaml.Node, len(resources))
		for j, s := range resources {
			items[j] = strNode(s)
		}
		res := seqNode(items...)
		res.Style = mapGet(r.node, "resources").Style // as it was written, flow or block
		mapSet(changed, "resources", res)
		kept = append(kept, changed)
	}
	if len(record) == 0 {
		return nil
	}
	b, err := json.Marshal(record)
	if err != nil {
		return err
	}
	list.Content = kept
	return setAnnotation(rn, NarrowedAnnotation, string(b))
}

// narrowedRules returns a role's NarrowedAnnotation, "" when it has none.
func narrowedRules(rn *yaml.RNode) string { return rn.GetAnnotations()[NarrowedAnnotation] }

func restoreTokens(rn *yaml.RNode) error {
	v := narrowedRules(rn)
	if v == "" {
		return nil
	}
	var record []narrowedRule
	if err := json.Unmarshal([]byte(v), &record); err != nil {
		return fmt.Errorf("annotation %s: %w", NarrowedAnnotation, err)
	}
	sort.Slice(record, func(i, j int) bool { return record[i].Index < record[j].Index })
	list, err := listField(rn.YNode(), "rules", "rules")
	if err != nil {
		return err
	}
	if list == nil {
		list = seqNode()
		mapSet(rn.YNode(), "rules", list)
	}
	for _, e := range record {
		was, err := yaml.Parse(e.Rule)
		if err != nil || was.YNode().Kind != yaml.MappingNode {
			return fmt.Errorf("annotation %s: a rule that does not parse: %q", NarrowedAnnotation, e.Rule)
		}
		n := was.YNode()
		i := min(max(e.Index, 0), len(list.Content))
		if e.Removed || i == len(list.Content) {
			list.Content = slices.Insert(list.Content, i, n)
		} else {
			list.Content[i] = n
		}
	}
	return removeAnnotation(rn, NarrowedAnnotation)
}

// patchErrorText returns the error a filter's *patchError carries.
func patchErrorText(err error) error {
	var pe *patchError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
