package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsage: -h prints the usage with examples and every flag on stdout.
func TestUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run([]string{"-h"}, &stdout, &stderr)
	if !errors.Is(err, flag.ErrHelp) || stderr.Len() > 0 || !strings.HasPrefix(stdout.String(), "Usage: go run ./hack/dist -version vX.Y.Z") ||
		!strings.Contains(stdout.String(), "Examples:\n  make dist VERSION=v1.2.3\n") {
		t.Errorf("%v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	for _, f := range []string{"-version", "-out", "-platforms", "-helm3", "-helm4", "-cyclonedx", "-sign-key", "-keyring", "-charts"} {
		if !strings.Contains(stdout.String(), "\n  "+f+" ") {
			t.Errorf("no %s in the usage", f)
		}
	}
}

// TestRefusals: the command line's errors, and the flags' values reaching
// the release's checks; nothing printed, nothing written.
func TestRefusals(t *testing.T) {
	tool := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(tool, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	tools := []string{"-helm3", tool, "-helm4", tool, "-cyclonedx", tool}
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{append([]string{"-version", "v1.2.3", "extra"}, tools...), `unexpected argument "extra"`},
		{append([]string{"-version", "1.2.3"}, tools...), `VERSION="1.2.3" is not a release version`},
		{[]string{"-version", "v1.2.3", "-helm3", tool, "-helm4", tool}, "-cyclonedx is required"},
		{append([]string{"-version", "v1.2.3", "-platforms", "linux/mips"}, tools...), `platform "linux/mips" is not one of the release's`},
		{append([]string{"-version", "v1.2.3", "-sign-key", "Release Key"}, tools...), "SIGN_KEY and KEYRING go together"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(append(tc.args, "-out", out), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) || stdout.Len()+stderr.Len() > 0 {
			t.Errorf("%q: %v, want %q; stdout %q, stderr %q", tc.args, err, tc.want, &stdout, &stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the output directory was made: %v", err)
	}
}
