// Package spawn starts the long-lived programs of the e2e tests (the
// control plane, the CCMs, moto's server) so that none outlives the test
// binary, and stops them with everything they started.
//
// A program started here leads a process group of its own, which Stop
// signals as a whole, and has SIGKILL as its parent-death signal
// (PR_SET_PDEATHSIG), which the kernel sends when the test binary dies in
// a way that runs no Go code: SIGKILL, or a panic (a test's, or
// -test.timeout's), which ends the binary without running TestMain's
// deferred Stop.
//
// The kernel sends the parent-death signal when the thread that forked
// the child exits, not the process (https://go.dev/issue/27505), and Go
// forks from whichever thread the calling goroutine runs on. Go ends a
// thread before the process only when a goroutine locked to it
// (runtime.LockOSThread) returns without unlocking; nothing in the e2e
// tests does that now, but a test or library that did would kill every
// program forked from that thread, at a random moment. Start therefore
// forks from one goroutine locked to its thread for the life of the
// process: that thread ends only with the process.
//
// The parent-death signal reaches the started program alone: a program
// that forks (a shell wrapper that does not exec, say) leaves its children
// behind when the test binary is killed, though Stop reaches them through
// the group. The programs the tests start (etcd, kube-apiserver,
// kube-controller-manager, the CCMs: executables run directly; moto's
// launcher: threads, no subprocess) fork nothing; e2e/orphan checks that
// none of them, nor anything they start, outlives a test binary that is
// killed, times out, fails or panics.
package spawn

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

type request struct {
	cmd *exec.Cmd
	err chan<- error
}

var (
	once     sync.Once
	requests chan request
)

// forker starts commands on its own thread, which it never unlocks: the
// thread is the parent-death signal's parent, and lives as long as the
// process.
func forker() {
	runtime.LockOSThread()
	for r := range requests {
		r.err <- r.cmd.Start()
	}
}

// Start starts cmd in a process group of its own (Setpgid) with SIGKILL as
// its parent-death signal, forked from a thread that lives as long as the
// process. Other SysProcAttr fields of cmd are kept.
func Start(cmd *exec.Cmd) error {
	if cmd.Process != nil {
		return errors.New("spawn: already started")
	}
	attr := syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr
	}
	attr.Setpgid, attr.Pgid = true, 0
	attr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = &attr
	once.Do(func() {
		requests = make(chan request)
		go forker()
	})
	errc := make(chan error, 1)
	requests <- request{cmd: cmd, err: errc}
	return <-errc
}

// Stop stops the process group of a program Start started (pgid: its
// PID), whose exit closes done: SIGTERM to the group, SIGKILL after grace
// if the program has not exited, and SIGKILL once more to whatever is left
// in the group once it has (a child that outlived its parent, or ignored
// SIGTERM). Call it once per program: after that the group may be gone
// and its number another's.
func Stop(pgid int, done <-chan struct{}, grace time.Duration) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
