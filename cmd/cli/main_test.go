package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestMain runs the tests without the environment variables that pick a
// cluster, a namespace, a storage driver, colour or progress lines,
// whatever the caller's shell or CI service set: tests that need one set it
// with t.Setenv.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); testtools.HostileToTests(name) {
			os.Unsetenv(name)
		}
	}
	os.Exit(m.Run())
}
