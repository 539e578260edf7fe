package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	yaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// OptionFlags are the renderer's options as the command line spells them:
// one flag per entry of renderer.OptionTable, and --config.
type OptionFlags struct {
	// Config is --config, the RendererConfig file.
	Config string
	// Only are the options a command takes; none: every option.
	Only []renderer.Opt
	// lists are the list flags (--set-arg, --remove-arg), which remember
	// where their items came on the command line.
	lists map[renderer.Opt]*listFlag
}

// takes tells whether the command takes an option.
func (f *OptionFlags) takes(o renderer.Opt) bool {
	return len(f.Only) == 0 || slices.Contains(f.Only, o)
}

// listFlag is a list flag that remembers, for each item, how many
// positional arguments came before it: the word after "--set-arg v" is
// the positional argument at that index when it is one.
type listFlag struct {
	pflag.Value
	fs    *pflag.FlagSet
	items []string
	at    []int
}

func (l *listFlag) Set(v string) error {
	l.items, l.at = append(l.items, v), append(l.at, l.fs.NArg())
	return l.Value.Set(v)
}

// Args returns next preceded by a check of the words after a list flag's
// item without "=": "--set-arg v 4" gives --set-arg "v" and the argument
// "4", which next would take for RELEASE or refuse as a command; the error
// says the form that works, --set-arg=v=4.
func (f *OptionFlags) Args(next cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if l := f.lists[renderer.OptSetArgs]; l != nil {
			for i, item := range l.items {
				if strings.Contains(item, "=") || l.at[i] >= len(args) {
					continue
				}
				value := args[l.at[i]]
				return &renderer.UsageError{Option: renderer.OptSetArgs, Err: fmt.Errorf("%s %s: a CCM flag and its value are one word, FLAG=VALUE: %s",
					item, value, renderer.FlagArg(renderer.OptSetArgs, strings.TrimLeft(item, "-")+"="+value))}
			}
		}
		return next(cmd, args)
	}
}

// Register adds the flags to fs.
func (f *OptionFlags) Register(fs *pflag.FlagSet) {
	d := renderer.DefaultOptions()
	fs.StringVarP(&f.Config, "config", "c", "", "read options from a RendererConfig YAML file; flags given on the command line win")
	for _, op := range renderer.OptionTable {
		if !f.takes(op.Opt) {
			continue
		}
		def := ""
		if t := op.Text(d); len(t) == 1 {
			def = t[0]
		}
		switch {
		case op.IsList():
			fs.StringArray(op.Flag, nil, op.Usage)
			if f.lists == nil {
				f.lists = map[renderer.Opt]*listFlag{}
			}
			fl := fs.Lookup(op.Flag)
			f.lists[op.Opt] = &listFlag{Value: fl.Value, fs: fs}
			fl.Value = f.lists[op.Opt]
		case op.IsBool():
			b, _ := strconv.ParseBool(def)
			fs.Bool(op.Flag, b, op.Usage)
		default:
			fs.String(op.Flag, def, op.Usage)
		}
	}
}

// CompleteOptions completes the flags of the options that take one of a
// few values; values overrides an option's (the chart commands' --distro
// also takes detect).
func CompleteOptions(cmd *cobra.Command, values map[renderer.Opt][]string) {
	for _, op := range renderer.OptionTable {
		vs, ok := values[op.Opt]
		if !ok {
			vs = op.Values
		}
		if len(vs) > 0 {
			Complete(cmd, op.Flag, vs)
		}
	}
}

// Options merges the config file, if any, with the flags set on the
// command line: a list flag adds to the file's list.
func (f *OptionFlags) Options(fs *pflag.FlagSet) (renderer.Options, error) {
	o := renderer.DefaultOptions()
	if f.Config != "" {
		var err error
		if o, err = renderer.ReadConfigFile(f.Config); err != nil {
			return o, err
		}
		for _, op := range renderer.OptionTable {
			if !f.takes(op.Opt) && op.Given(o) {
				return o, &renderer.UsageError{Err: fmt.Errorf("--config %s: %s does not apply to this command", f.Config, op.Opt)}
			}
		}
	}
	for _, op := range renderer.OptionTable {
		if !fs.Changed(op.Flag) {
			continue
		}
		values := []string{fs.Lookup(op.Flag).Value.String()}
		if op.IsList() {
			values, _ = fs.GetStringArray(op.Flag)
		}
		for _, v := range values {
			if err := op.Set(&o, v); err != nil {
				return o, &renderer.UsageError{Option: op.Opt, Err: err}
			}
		}
	}
	return o, nil
}

// Given returns the options given on the command line or in the --config
// file, by flag name (and every other flag given on the command line).
func (f *OptionFlags) Given(fs *pflag.FlagSet) (map[string]bool, error) {
	given := map[string]bool{}
	fs.Visit(func(fl *pflag.Flag) { given[fl.Name] = true })
	if f.Config == "" {
		return given, nil
	}
	// The config file was read and checked already; this reads which
	// fields it sets.
	data, err := safefile.ReadFile(f.Config)
	if err != nil {
		return nil, &renderer.UsageError{Err: fmt.Errorf("--config: %w", err)}
	}
	var fields map[string]any
	if err := yaml.Unmarshal(data, &fields); err != nil {
		return nil, &renderer.UsageError{Err: fmt.Errorf("--config %s: %w", f.Config, err)}
	}
	for _, op := range renderer.OptionTable {
		if _, ok := fields[string(op.Opt)]; ok {
			given[op.Flag] = true
		}
	}
	return given, nil
}
