package spawn

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestThreadExit: a program forked with a parent-death signal from a
// thread that then exits is killed then, though the test binary lives on
// (the hazard: the signal follows the thread); one Start forked, from the
// same kind of thread, lives on.
func TestThreadExit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		start    func(*exec.Cmd) error
		survives bool
	}{
		{"exec.Cmd.Start", func(cmd *exec.Cmd) error {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
			return cmd.Start()
		}, false},
		{"Start", Start, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sleep", "120")
			started := make(chan error, 1)
			tid := onExitingThread(func() { started <- tc.start(cmd) })
			if err := <-started; err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			})
			// The kernel has signalled the thread's children once the
			// thread is gone from /proc.
			task := "/proc/self/task/" + strconv.Itoa(tid)
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(task); errors.Is(err, os.ErrNotExist) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("thread %d did not exit", tid)
				}
			}
			select {
			case err := <-done:
				done <- err
				if tc.survives {
					t.Fatalf("the program died with the thread that forked it: %v", err)
				}
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("the program ended with %v, want SIGKILL", err)
				}
			case <-time.After(2 * time.Second):
				if !tc.survives {
					t.Fatal("the program outlived the thread that forked it: the hazard this package avoids is not there")
				}
			}
		})
	}
}

// onExitingThread runs f on a thread of its own that exits when f returns
// (a goroutine locked to it returns), and returns the thread's ID. The
// main thread never exits, so that is not the one.
func onExitingThread(f func()) int {
	tid := make(chan int, 1)
	var run func()
	run = func() {
		runtime.LockOSThread() // not unlocked: the thread exits with the goroutine
		if syscall.Gettid() == syscall.Getpid() {
			// Holding the main thread, go on on another one.
			defer runtime.UnlockOSThread()
			exited := make(chan struct{})
			go func() { run(); close(exited) }()
			<-exited
			return
		}
		tid <- syscall.Gettid()
		f()
	}
	go run()
	return <-tid
}

// TestStopGroup: Stop ends the program and what it left in its group,
// even a child that ignores SIGTERM and outlives its parent.
func TestStopGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", `(trap '' TERM; exec sleep 120) & echo $!; wait`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 32)
	n, err := out.Read(line)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(string(line[:n-1]))
	if err != nil {
		t.Fatalf("the child's PID: %q: %v", line[:n], err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	Stop(cmd.Process.Pid, done, 10*time.Second)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		// Reaped by init, or a zombie until then.
		b, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		if err != nil || stateZombie(b) {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("the child %d that ignores SIGTERM outlived Stop", child)
		}
	}
}

func stateZombie(stat []byte) bool {
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' {
			return i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
		}
	}
	return false
}
