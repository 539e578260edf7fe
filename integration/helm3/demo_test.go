package helm3

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// TestDemo runs make demo's script (hack/demo.sh), which the README gives
// as the first command on a fresh machine, with the real Helm 3 CLI and the
// renderer: it exits 0 and shows each of its steps' results, the
// LeaderMigrationConfiguration of migrate mode and the one-line refusal.
func TestDemo(t *testing.T) {
	env := append(os.Environ(), "HELM3="+testtools.Helm3(t), "AWS_CCM_RENDERER="+testtools.Renderer(t))
	out, errOut, err := testtools.Run(t, env, "bash", filepath.Join(testtools.Root(), "hack", "demo.sh"))
	if err != nil {
		t.Fatalf("hack/demo.sh: %v\n%s\n%s", err, out, errOut)
	}
	for _, want := range []string{
		"+        node-role.kubernetes.io/control-plane: \"true\"",
		"kind: LeaderMigrationConfiguration",
		"exit code 1, 0 bytes on stdout",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out)
		}
	}
}
