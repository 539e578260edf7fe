package renderer

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Flag is one flag of an args merge.
type Flag struct {
	Name  string // without dashes
	Value string
}

// Args merges flags into the args of every CCM container by flag name, never
// by position. "--flag=value" and "--flag value" are both read; every flag
// is written as "--flag=value". A flag that is set keeps its place (later
// duplicates go), a new flag is appended, removed flags go wherever they are.
type Args struct {
	Set    []Flag
	Remove []string
}

var _ kio.Filter = Args{}

func (f Args) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	return eachPodSpec(nodes, func(_, spec *yaml.RNode) error {
		containers, err := ccmContainers(spec)
		if err != nil {
			return err
		}
		for _, c := range containers {
			if err := f.apply(c.YNode()); err != nil {
				return fmt.Errorf("container %q: %w", containerName(c), err)
			}
		}
		return nil
	})
}

func (f Args) apply(c *yaml.Node) error {
	list, err := listField(c, "args", "args")
	if err != nil {
		return err
	}
	old, err := scalarStrings(list, "args")
	if err != nil {
		return err
	}
	merged := f.Merge(old)
	if slices.Equal(old, merged) {
		return nil
	}
	items := make([]*yaml.Node, len(merged))
	for i, a := range merged {
		items[i] = strNode(a)
	}
	if list != nil {
		list.Content = items
		return nil
	}
	mapSet(c, "args", seqNode(items...))
	return nil
}

// arg is one parsed element of an args list: a flag with or without a value,
// or a positional argument (flag == "").
type arg struct {
	dashes   string
	flag     string
	value    string
	hasValue bool
	text     string // positional arguments
}

func (a arg) String() string {
	switch {
	case a.flag == "":
		return a.text
	case a.hasValue:
		return a.dashes + a.flag + "=" + a.value
	}
	return a.dashes + a.flag
}

// splitFlag splits "--name=value" or "-name"; ok is false for a value.
func splitFlag(s string) (name, value string, hasValue bool) {
	if len(s) < 2 || s[0] != '-' || s == "--" {
		return "", "", false
	}
	name, value, hasValue = strings.Cut(strings.TrimLeft(s, "-"), "=")
	return name, value, hasValue
}

// parseArgs reads an args list. A flag without "=" takes the next element as
// its value unless that element is itself a flag.
func parseArgs(list []string) []arg {
	out := make([]arg, 0, len(list))
	for i := 0; i < len(list); i++ {
		s := list[i]
		name, value, hasValue := splitFlag(s)
		if name == "" {
			out = append(out, arg{text: s})
			continue
		}
		a := arg{dashes: s[:len(s)-len(strings.TrimLeft(s, "-"))], flag: name, value: value, hasValue: hasValue}
		if !hasValue && i+1 < len(list) && !strings.HasPrefix(list[i+1], "-") {
			a.value, a.hasValue = list[i+1], true
			i++
		}
		out = append(out, a)
	}
	return out
}

// Merge applies the merge to an args list and returns the new list.
func (f Args) Merge(list []string) []string {
	args := parseArgs(list)
	for _, set := range f.Set {
		found := false
		args = slices.DeleteFunc(args, func(a arg) bool {
			if a.flag != set.Name {
				return false
			}
			if found {
				return true // a later duplicate
			}
			found = true
			return false
		})
		if i := slices.IndexFunc(args, func(a arg) bool { return a.flag == set.Name }); i >= 0 {
			args[i].value, args[i].hasValue = set.Value, true
		} else {
			args = append(args, arg{dashes: "--", flag: set.Name, value: set.Value, hasValue: true})
		}
	}
	args = slices.DeleteFunc(args, func(a arg) bool { return slices.Contains(f.Remove, a.flag) && a.flag != "" })
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.String()
	}
	return out
}

func containerName(c *yaml.RNode) string {
	if v := mapGet(c.YNode(), "name"); v != nil {
		return v.Value
	}
	return ""
}
