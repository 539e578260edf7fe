package renderer

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"path"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Flag is one operation of an args merge: set the flag Name to Value, or
// remove it.
type Flag struct {
	Name   string // without dashes
	Value  string
	Remove bool
	// Entries: Value is a comma-separated list of KEY=VALUE entries (as
	// --feature-gates takes) merged into the flag's entries by key.
	Entries bool
}

// ArgsAnnotation records, on the workload's metadata, the CCM containers'
// command and args as they were before the user's own flags (SetArgs,
// RemoveArgs) changed them, so that rendering the output again with other
// flags gives what rendering the original would. It is written only while
// there is something to undo.
const ArgsAnnotation = "aws-ccm-renderer.io/args"

// Args merges flags into the command line of the CCM's containers by flag
// name, never by position. The command line is command after the CCM's
// executable, then args: a flag in either is found, and every flag appears
// once in the result. "--flag=value" and "--flag value" are both read; every
// flag set is written as "--flag=value". A flag that is set keeps its place
// (later duplicates go), a new flag is appended to args, a removed flag goes
// wherever it is.
type Args struct {
	Workload
	Flags []Flag // the renderer's flags, applied first
	User  []Flag // the user's flags: ArgsAnnotation remembers how to undo them
	// Risks are the flags of Flags another value of which the user may
	// choose with a risk, by flag name: a command line that comes with
	// another value (from the chart's values) is overridden with a
	// warning that says so and how to keep it.
	Risks map[string]string
	// Warn, when set, is told about command lines edited since the
	// renderer last wrote them, and about the values Risks overrides.
	Warn func(error)
}

var _ kio.Filter = Args{}

func (f Args) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	return f.each(nodes, func(rn, _ *yaml.RNode, ccm []*yaml.RNode) error {
		memory, err := readArgsMemory(rn)
		if err != nil {
			return err
		}
		next := argsMemory{}
		for _, c := range ccm {
			name := containerName(c)
			base, err := readLine(c)
			if err != nil {
				return fmt.Errorf("container %q: %w", name, err)
			}
			if w := base.commandFlag(append(slices.Clip(f.Flags), f.User...)); w != "" {
				return fmt.Errorf("container %q: its command passes %s to %s, which is not the AWS CCM's executable (%s): the renderer "+
					"cannot tell whether those words are the CCM's flags; move the CCM's flags to args, where each is merged once", name, w, base.command[0], CCMBinary)
			}
			if m, ok := memory[name]; ok {
				if m.Rendered == base.fingerprint() {
					base = m.lines() // undo the last render's user flags
				} else {
					f.warn(errorf("%s: the command line of container %q changed since the renderer wrote it: taken as it is now", refOf(rn), name))
				}
			}
			f.overridden(rn, name, base)
			ours := base
			ours.merge(f.Flags)
			all := ours
			all.merge(f.User)
			if !slices.Equal(ours.words(), all.words()) {
				// What the renderer's own flags make of the command line:
				// they are the same whatever an earlier render's were.
				next[name] = argsRecord{Command: ours.command, Args: ours.args, Rendered: all.fingerprint()}
			}
			all.write(c)
		}
		return writeArgsMemory(rn, next)
	})
}

func (f Args) warn(err error) {
	if f.Warn != nil {
		f.Warn(err)
	}
}

// overridden warns about each flag of Risks that the container's command
// line sets to another value than the renderer's, unless the user's flags
// set it too (their own warning says what that risks).
func (f Args) overridden(rn *yaml.RNode, container string, base line) {
	words := base.flagWords()
	for _, fl := range f.Flags {
		risk, ok := f.Risks[fl.Name]
		if !ok || fl.Remove || slices.ContainsFunc(f.User, func(u Flag) bool { return u.Name == fl.Name }) {
			continue
		}
		had, found := flagValue(words, fl.Name)
		if !found || sameFlagValue(had, fl.Value) {
			continue
		}
		if had == "" {
			had = "true" // a bare boolean flag
		}
		f.warn(errorf("%s: container %q comes with --%s=%s (the chart's values), which the renderer replaces with --%s=%s; to keep %s, pass %s: %s",
			refOf(rn), container, fl.Name, had, fl.Name, fl.Value, had, OptValue{OptSetArgs, fl.Name + "=" + had}, risk))
	}
}

// sameFlagValue compares a flag's values as the CCM's flag parsing reads
// them: booleans by meaning (a bare boolean flag is true), others as text.
func sameFlagValue(had, want string) bool {
	if had == "" {
		had = "true"
	}
	a, errA := strconv.ParseBool(had)
	b, errB := strconv.ParseBool(want)
	if errA == nil && errB == nil {
		return a == b
	}
	return had == want
}

// commandLine returns a container's flags: command after the CCM's
// executable, then args.
func commandLine(c *yaml.RNode) ([]string, error) {
	l, err := readLine(c)
	if err != nil {
		return nil, err
	}
	return l.flagWords(), nil
}

// line is a container's command and args.
type line struct {
	command, args []string
	hasArgs       bool // args is present (possibly empty)
}

func readLine(c *yaml.RNode) (line, error) {
	var l line
	var err error
	if l.command, err = stringList(c, "command"); err != nil {
		return l, err
	}
	if l.args, err = stringList(c, "args"); err != nil {
		return l, err
	}
	l.hasArgs = c.Field("args") != nil
	return l, nil
}

// inCommand reports whether the command's words after the executable are
// flags of the CCM: only when the executable is the CCM's own.
func (l line) inCommand() bool {
	return len(l.command) > 0 && path.Base(l.command[0]) == CCMBinary
}

// commandFlag returns a word of a command that is not the CCM's own (a
// wrapper, an unusual build) which sets one of the flags, "" when none
// does: the renderer would write the flag again in args.
func (l line) commandFlag(flags []Flag) string {
	if l.inCommand() || len(l.command) < 2 {
		return ""
	}
	for _, a := range parseArgs(l.command[1:], 0) {
		if a.flag != "" && slices.ContainsFunc(flags, func(f Flag) bool { return f.Name == a.flag }) {
			return a.dashes + a.flag
		}
	}
	return ""
}

func (l line) flagWords() []string {
	if l.inCommand() {
		return append(slices.Clone(l.command[1:]), l.args...)
	}
	return slices.Clone(l.args)
}

func (l line) words() []string {
	return append(slices.Clone(l.command), append([]string{"\x00"}, l.args...)...)
}

func (l line) fingerprint() string {
	h := fnv.New64a()
	for _, w := range l.words() {
		h.Write([]byte(w))
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// merge applies the flag operations in order.
func (l *line) merge(flags []Flag) {
	split := 0 // words of the flag line that belong to command
	if l.inCommand() {
		split = len(l.command) - 1
	}
	args := parseArgs(l.flagWords(), split)
	for _, f := range flags {
		if f.Remove && f.Entries {
			for i := range args {
				if args[i].flag == f.Name {
					args[i].value = removeEntries(args[i].value, f.Value)
				}
			}
			args = slices.DeleteFunc(args, func(a arg) bool { return a.flag == f.Name && a.hasValue && a.value == "" })
			continue
		}
		if f.Remove {
			args = slices.DeleteFunc(args, func(a arg) bool { return a.flag == f.Name })
			continue
		}
		i := slices.IndexFunc(args, func(a arg) bool { return a.flag == f.Name })
		if i < 0 {
			args = append(args, arg{dashes: "--", flag: f.Name, value: f.Value, hasValue: true})
			continue
		}
		if f.Entries {
			args[i].value = mergeEntries(args[i].value, f.Value)
		} else {
			args[i].value = f.Value
		}
		args[i].hasValue = true
		// Later duplicates go.
		rest := slices.DeleteFunc(args[i+1:], func(a arg) bool { return a.flag == f.Name })
		args = args[:i+1+len(rest)]
	}
	var command, rest []string
	if l.inCommand() {
		command = l.command[:1:1]
	}
	for _, a := range args {
		if a.inCommand {
			command = append(command, a.words()...)
		} else {
			rest = append(rest, a.words()...)
		}
	}
	if l.inCommand() {
		l.command = command
	}
	l.args = rest
}

// write puts the command line back into the container, changing only what
// differs.
func (l line) write(c *yaml.RNode) {
	m := c.YNode()
	if l.inCommand() {
		setStrings(m, "command", l.command)
	}
	if l.hasArgs || len(l.args) > 0 {
		setStrings(m, "args", l.args)
	}
}

func setStrings(m *yaml.Node, field string, list []string) {
	old := mapGet(m, field)
	if old != nil && old.Kind == yaml.SequenceNode {
		if have, err := scalarStrings(old, field); err == nil && slices.Equal(have, list) {
			return
		}
	}
	items := make([]*yaml.Node, len(list))
	for i, s := range list {
		items[i] = strNode(s)
	}
	if old != nil && old.Kind == yaml.SequenceNode {
		old.Content = items
		return
	}
	mapSet(m, field, seqNode(items...))
}

// mergeEntries merges comma-separated KEY=VALUE entries into a list of them
// by key: a key present keeps its place, a new one is appended.
func mergeEntries(list, add string) string {
	var entries []string
	if list != "" {
		entries = strings.Split(list, ",")
	}
	for _, e := range strings.Split(add, ",") {
		key, _, _ := strings.Cut(e, "=")
		i := slices.IndexFunc(entries, func(x string) bool { k, _, _ := strings.Cut(x, "="); return k == key })
		if i < 0 {
			entries = append(entries, e)
		} else {
			entries[i] = e
		}
	}
	return strings.Join(entries, ",")
}

// removeEntries removes the entries of the keys in remove (KEY=VALUE or
// KEY, comma-separated) from a list of entries.
func removeEntries(list, remove string) string {
	var keys []string
	for _, e := range strings.Split(remove, ",") {
		k, _, _ := strings.Cut(e, "=")
		keys = append(keys, k)
	}
	entries := slices.DeleteFunc(strings.Split(list, ","), func(x string) bool {
		k, _, _ := strings.Cut(x, "=")
		return slices.Contains(keys, k)
	})
	return strings.Join(entries, ",")
}

// arg is one parsed element of a command line: a flag with or without a
// value, or a positional argument (flag == "").
type arg struct {
	dashes    string
	flag      string
	value     string
	hasValue  bool
	text      string // positional arguments
	inCommand bool   // the flag's word is in command, not args
	split     bool   // "--flag value" as two words
}

func (a arg) words() []string {
	switch {
	case a.flag == "":
		return []string{a.text}
	case a.hasValue:
		return []string{a.dashes + a.flag + "=" + a.value}
	}
	return []string{a.dashes + a.flag}
}

// splitFlag splits "--name=value" or "-name"; name is "" for a value.
func splitFlag(s string) (name, value string, hasValue bool) {
	if len(s) < 2 || s[0] != '-' || s == "--" {
		return "", "", false
	}
	name, value, hasValue = strings.Cut(strings.TrimLeft(s, "-"), "=")
	return name, value, hasValue
}

// parseArgs reads a command line whose first inCommand words come from
// command. A flag without "=" takes the next word as its value unless that
// word is itself a flag.
func parseArgs(list []string, inCommand int) []arg {
	out := make([]arg, 0, len(list))
	for i := 0; i < len(list); i++ {
		s := list[i]
		name, value, hasValue := splitFlag(s)
		if name == "" {
			out = append(out, arg{text: s, inCommand: i < inCommand})
			continue
		}
		a := arg{dashes: s[:len(s)-len(strings.TrimLeft(s, "-"))], flag: name, value: value, hasValue: hasValue, inCommand: i < inCommand}
		if !hasValue && i+1 < len(list) && !strings.HasPrefix(list[i+1], "-") {
			a.value, a.hasValue, a.split = list[i+1], true, true
			i++
		}
		out = append(out, a)
	}
	return out
}

// flagValue returns the value of a flag in a command line.
func flagValue(words []string, name string) (string, bool) {
	for _, a := range parseArgs(words, 0) {
		if a.flag == name {
			return a.value, true
		}
	}
	return "", false
}

// MergeArgs returns a command line merged with flag operations, as the Args
// filter writes it.
func MergeArgs(list []string, flags []Flag) []string {
	l := line{args: list}
	l.merge(flags)
	return l.args
}

// argsMemory is ArgsAnnotation's value: per CCM container, its command line
// before the user's flags were applied, and a fingerprint of what the
// renderer wrote.
type argsMemory map[string]argsRecord

type argsRecord struct {
	Command  []string `json:"command,omitempty"`
	Args     []string `json:"args"` // null when the container had no args
	Rendered string   `json:"rendered"`
}

func (r argsRecord) lines() line {
	return line{command: r.Command, args: r.Args, hasArgs: r.Args != nil}
}

func readArgsMemory(rn *yaml.RNode) (argsMemory, error) {
	v := rn.GetAnnotations()[ArgsAnnotation]
	if v == "" {
		return nil, nil
	}
	var m argsMemory
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", ArgsAnnotation, err)
	}
	return m, nil
}

func writeArgsMemory(rn *yaml.RNode, m argsMemory) error {
	if len(m) == 0 {
		return removeAnnotation(rn, ArgsAnnotation)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return setAnnotation(rn, ArgsAnnotation, string(b))
}
