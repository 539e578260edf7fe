package cli

import (
	"os"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestMain runs the tests without the environment variables that pick a
// cluster, a namespace, a storage driver, colour or progress lines,
// whatever the caller's shell or CI service set: tests that need one set it
// with t.Setenv.
func TestMain(m *testing.M) {
	testtools.UnsetHostile()
	os.Exit(m.Run())
}
