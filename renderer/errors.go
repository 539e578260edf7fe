package renderer

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Location says where an object is in the input: a document of a stream
// (with its input line and Helm's "# Source:" path) or an item of a KRM
// ResourceList.
type Location struct {
	Index  int    // 1-based position of the document or item
	Line   int    // input line of the document, or of the problem when known; 0 for items
	Source string // Helm's "# Source:" template path, when the document has one
	Item   bool   // an item of a ResourceList rather than a document of a stream
}

func (l Location) String() string {
	if l.Item {
		return "item " + strconv.Itoa(l.Index)
	}
	s := "document " + strconv.Itoa(l.Index)
	if l.Line == 0 {
		return s
	}
	s += " (line " + strconv.Itoa(l.Line)
	if l.Source != "" {
		s += ", " + l.Source
	}
	return s + ")"
}

// ObjectRef names a Kubernetes object.
type ObjectRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// String names the object for messages: "DaemonSet kube-system/ccm".
func (r ObjectRef) String() string {
	name := r.Name
	if name == "" {
		name = "(unnamed)"
	}
	if r.Namespace != "" {
		name = r.Namespace + "/" + name
	}
	return r.Kind + " " + name
}

// InputError reports manifests the renderer cannot accept: text that is not
// YAML, no CCM workload or several, an object of an unexpected shape. It
// says where (Location, zero when the problem is the input as a whole) and
// which object (Object, when known), so that every front end can point at it
// its own way.
type InputError struct {
	Location
	Object *ObjectRef
	Err    error
}

func (e *InputError) Error() string { return e.message(FlagSpelling) }
func (e *InputError) Unwrap() error { return e.Err }

func (e *InputError) message(sp Spelling) string {
	var parts []string
	if e.Index > 0 {
		parts = append(parts, e.Location.String())
	}
	if e.Object != nil {
		parts = append(parts, e.Object.String())
	}
	// One line, whatever a library's message holds.
	return strings.Join(strings.Fields(strings.Join(append(parts, spell(e.Err, sp)), ": ")), " ")
}

// UsageError reports options that are unknown, malformed or contradict each
// other. Nothing was read or written when it is returned.
type UsageError struct {
	Option Opt // the option at fault, "" when several or none
	Err    error
}

func (e *UsageError) Error() string { return e.message(FlagSpelling) }
func (e *UsageError) Unwrap() error { return e.Err }

func (e *UsageError) message(sp Spelling) string {
	msg := spell(e.Err, sp)
	if e.Option != "" {
		msg = sp(e.Option) + " " + msg
	}
	return msg
}

// IsUsageError reports whether err (or an error it wraps) is a UsageError.
func IsUsageError(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// IsInputError reports whether err (or an error it wraps) is an InputError.
func IsInputError(err error) bool {
	var in *InputError
	return errors.As(err, &in)
}

// Opt is an option as the config file and Options name it ("setArgs").
// Messages carry options as Opt values so that each front end spells them
// its own way: the command line as flags, the KRM function as keys.
type Opt string

// The options.
const (
	OptDistro                Opt = "distro"
	OptMode                  Opt = "mode"
	OptHostNetwork           Opt = "hostNetwork"
	OptSetArgs               Opt = "setArgs"
	OptRemoveArgs            Opt = "removeArgs"
	OptAllowMissingWorkload  Opt = "allowMissingWorkload"
	OptLeaderMigrationConfig Opt = "leaderMigrationConfig"
	OptLeaderName            Opt = "leaderName"
	OptTarget                Opt = "target"
	OptKCMUser               Opt = "kcmUser"
	OptKubeVersion           Opt = "kubeVersion"
	OptCCMVersion            Opt = "ccmVersion"
	OptAllowVersionSkew      Opt = "allowVersionSkew"
	OptStrict                Opt = "strict"
	OptTokenScope            Opt = "tokenScope"
	OptGuardImage            Opt = "guardImage"
)

// OptValue is an option with a value inside a message: "--mode=migrate"
// on the command line.
type OptValue struct {
	Opt   Opt
	Value string
}

// Spelling writes an option the way a front end's users write it.
type Spelling func(Opt) string

// FlagSpelling spells options as the command line's flags.
func FlagSpelling(o Opt) string {
	if op, ok := OptionOf(o); ok {
		return "--" + op.Flag
	}
	return string(o)
}

// KeySpelling spells options as the config file's keys.
func KeySpelling(o Opt) string { return string(o) }

// Message returns an error's text with the options it names spelled by sp.
func Message(err error, sp Spelling) string { return spell(err, sp) }

// spelled is an error whose text names options.
type spelled interface{ message(Spelling) string }

func spell(err error, sp Spelling) string {
	if s, ok := err.(spelled); ok {
		return s.message(sp)
	}
	return err.Error()
}

// msg is an error text that may name options: Opt and OptValue arguments
// are spelled per front end, the rest formatted as fmt does.
type msg struct {
	format string
	args   []any
}

func errorf(format string, args ...any) error { return &msg{format: format, args: args} }

func (m *msg) Error() string { return m.message(FlagSpelling) }

func (m *msg) message(sp Spelling) string {
	args := make([]any, len(m.args))
	for i, a := range m.args {
		switch v := a.(type) {
		case Opt:
			args[i] = sp(v)
		case OptValue:
			if sp(v.Opt) == string(v.Opt) {
				args[i] = string(v.Opt) + ": " + v.Value
			} else {
				args[i] = sp(v.Opt) + "=" + v.Value
			}
		case error:
			args[i] = spell(v, sp)
		default:
			args[i] = a
		}
	}
	// Errors are spelled into text above: %w becomes %v.
	return fmt.Sprintf(strings.ReplaceAll(m.format, "%w", "%v"), args...)
}

// Unwrap returns the errors the message wraps, so that errors.Is and
// errors.As see through it.
func (m *msg) Unwrap() []error {
	var errs []error
	for _, a := range m.args {
		if err, ok := a.(error); ok {
			errs = append(errs, err)
		}
	}
	return errs
}

func usageErrorf(opt Opt, format string, args ...any) error {
	return &UsageError{Option: opt, Err: errorf(format, args...)}
}
