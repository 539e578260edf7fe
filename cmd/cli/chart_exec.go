//go:build !helmsdk

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
)

// chartCommands are stand-ins that hand the command line to
// aws-ccm-renderer-helm, found next to this executable or on PATH.
func chartCommands(s IOStreams) []*cobra.Command {
	var cmds []*cobra.Command
	for _, kind := range ChartCommandKinds {
		cmd := &cobra.Command{
			Use:                kind + " [RELEASE] [CHART]",
			Short:              map[string]string{"template": "Render the upstream chart with the renderer's patches (Helm SDK)", "install": "Install the upstream chart with the renderer's patches (Helm SDK)", "upgrade": "Upgrade a release of the upstream chart with the renderer's patches (Helm SDK)", "diff": "Show what the renderer changes, or what an upgrade would change (Helm SDK)"}[kind],
			DisableFlagParsing: true,
			RunE: func(_ *cobra.Command, args []string) error {
				path, err := helmBinary()
				if err != nil {
					return &ioError{err}
				}
				return &ioError{syscall.Exec(path, append([]string{path, kind}, args...), os.Environ())}
			},
		}
		setCommon(cmd, s)
		cmds = append(cmds, cmd)
	}
	return cmds
}

func helmBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), HelmBinary)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(HelmBinary); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("template, install, upgrade and diff need %s next to this executable or on PATH (make build builds both)", HelmBinary)
}
