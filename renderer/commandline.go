package renderer

// CommandLine is a CCM container's command line as the renderer reads it
// (the Args filter merges into it): the words of command after the CCM's
// executable, then args; "--flag=value" and "--flag value" both read. It is
// the one parser of the CCM's flags: check reads live workloads with it,
// the tests read rendered ones.
type CommandLine struct{ args []arg }

// ParseCommandLine reads a container's command and args.
func ParseCommandLine(command, args []string) CommandLine {
	return CommandLine{parseArgs(line{command: command, args: args}.flagWords(), 0)}
}

// Value returns the value of a flag (its name without dashes) as the CCM's
// flag parser takes it: the last occurrence wins, and a flag without a
// value is a boolean set to "true". ok is false when the flag is absent.
func (c CommandLine) Value(name string) (value string, ok bool) {
	for _, a := range c.args {
		if a.flag == name {
			value, ok = a.flagValue(), true
		}
	}
	return value, ok
}

// Flags returns every flag's value by name, as Value reads each.
func (c CommandLine) Flags() map[string]string {
	out := map[string]string{}
	for _, a := range c.args {
		if a.flag != "" {
			out[a.flag] = a.flagValue()
		}
	}
	return out
}

// flagValue is a flag's value, "true" for a flag without one.
func (a arg) flagValue() string {
	if !a.hasValue {
		return "true"
	}
	return a.value
}
