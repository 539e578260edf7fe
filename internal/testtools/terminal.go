package testtools

import (
	"os/exec"
	"syscall"
)

// OwnSession runs a command in a session of its own: without a controlling
// terminal even when the tests run in one, so that what a program writes on
// its controlling terminal neither reaches the developer's nor depends on
// whether there is one.
func OwnSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
