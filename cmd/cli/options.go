package cli

import (
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// optionFlags are the renderer's options as the command line spells them:
// one flag per entry of renderer.OptionTable, and --config.
type optionFlags struct {
	config string
}

func (f *optionFlags) register(fs *pflag.FlagSet) {
	d := renderer.DefaultOptions()
	fs.StringVarP(&f.config, "config", "c", "", "read options from a RendererConfig YAML file; flags given on the command line win")
	for _, op := range renderer.OptionTable {
		def := ""
		if t := op.Text(d); len(t) == 1 {
			def = t[0]
		}
		switch {
		case op.IsList():
			fs.StringArray(op.Flag, nil, op.Usage)
		case op.IsBool():
			b, _ := strconv.ParseBool(def)
			fs.Bool(op.Flag, b, op.Usage)
		default:
			fs.String(op.Flag, def, op.Usage)
		}
	}
}

// completeOptions completes the flags of the options that take one of a
// few values; values overrides an option's (the chart commands' --distro
// also takes detect).
func completeOptions(cmd *cobra.Command, values map[renderer.Opt][]string) {
	for _, op := range renderer.OptionTable {
		vs, ok := values[op.Opt]
		if !ok {
			vs = op.Values
		}
		if len(vs) > 0 {
			complete(cmd, op.Flag, vs)
		}
	}
}

// options merges the config file, if any, with the flags set on the command
// line: a list flag adds to the file's list.
func (f *optionFlags) options(fs *pflag.FlagSet) (renderer.Options, error) {
	o := renderer.DefaultOptions()
	if f.config != "" {
		var err error
		if o, err = renderer.ReadConfigFile(f.config); err != nil {
			return o, err
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
