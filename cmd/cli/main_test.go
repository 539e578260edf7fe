package cli

import (
	"os"
	"testing"
)

// TestMain runs the tests without the environment variables that pick a
// cluster, a namespace, colour or progress lines, whatever the caller's
// shell or CI service set: tests that need one set it with t.Setenv.
func TestMain(m *testing.M) {
	for _, name := range []string{"CI", "NO_COLOR", "TERM", "HELM_NAMESPACE", "HELM_KUBECONTEXT", "KUBECONFIG"} {
		os.Unsetenv(name)
	}
	os.Exit(m.Run())
}
