package renderer

import (
	"errors"
	"fmt"
)

// InputError reports manifests the renderer cannot accept: text that is not
// YAML, a missing CCM workload, an object of an unexpected shape.
type InputError struct {
	Doc string // which document, e.g. "document 3 (line 40, chart/templates/daemonset.yaml)"; may be empty
	Err error
}

func (e *InputError) Error() string {
	if e.Doc == "" {
		return e.Err.Error()
	}
	return e.Doc + ": " + e.Err.Error()
}

func (e *InputError) Unwrap() error { return e.Err }

// UsageError reports options that are unknown, malformed or contradict each
// other. Nothing was read or written when it is returned.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
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
