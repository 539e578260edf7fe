package orphan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/moto"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// The test binary runs itself as the helper when modeEnv is set: it starts
// what the e2e packages start and records it in the file recordEnv names.
const (
	modeEnv   = "E2E_ORPHAN_MODE"
	recordEnv = "E2E_ORPHAN_RECORD"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(modeEnv); mode != "" {
		os.Exit(helper(m, mode))
	}
	os.Exit(m.Run())
}

// helper is an e2e package's TestMain (e2e/awsccm's): a control plane with
// its controller manager, and moto, each stopped by a deferred Stop, then
// the tests: TestHelper, which blocks, fails or panics. It records what it
// started once everything is up, before the tests, and so before
// -test.timeout starts counting.
func helper(m *testing.M, mode string) int {
	ctx := context.Background()
	root := testtools.Root()
	bin, err := harness.Locate(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 3
	}
	cp, err := harness.Start(ctx, bin, []string{"daemonset"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper: starting the control plane:", err)
		return 3
	}
	defer cp.Stop()
	aws, err := moto.Start(ctx, root, moto.Options{Dir: cp.Dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 3
	}
	defer aws.Stop()
	if err := writeRecord(os.Getenv(recordEnv), cp.Dir); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 3
	}
	fmt.Fprintf(os.Stderr, "helper (mode %s): the control plane and moto %s are up\n", mode, aws.Version)
	return m.Run()
}

// TestHelper is the helper's test (it skips in other runs).
func TestHelper(t *testing.T) {
	switch mode := os.Getenv(modeEnv); mode {
	case "":
		t.Skip("the helper of TestNoOrphan")
	case "block": // until killed or timed out
		<-time.After(time.Hour)
	case "fatal":
		t.Fatal("the test fails")
	case "panic":
		panic("the test panics")
	default:
		t.Fatalf("unknown mode %q", mode)
	}
}

// record is what the helper started, as it was once all was up.
type record struct {
	Dir   string // the control plane's, which a killed helper leaves
	Procs []proc // the helper's descendants
}

// proc is a process, from /proc/PID/stat.
type proc struct {
	PID, PPID, PGID, SID int
	Comm                 string
	State                string
	Start                uint64 // clock ticks after boot: with PID, one process
}

func (p proc) String() string {
	return fmt.Sprintf("%d (%s) state %s, parent %d, group %d, session %d", p.PID, p.Comm, p.State, p.PPID, p.PGID, p.SID)
}

// dead says whether the process has ended (a zombie not yet reaped has).
func (p proc) dead() bool { return p.State == "Z" || p.State == "X" }

// processes reads every process from /proc.
func processes() ([]proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var ps []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		p, err := parseStat(pid, string(b))
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// parseStat reads proc(5)'s /proc/PID/stat: pid (comm) state ppid pgrp
// session ..., starttime the 22nd field. comm may hold spaces and parens.
func parseStat(pid int, s string) (proc, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return proc{}, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 {
		return proc{}, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	p := proc{PID: pid, Comm: s[open+1 : end], State: f[0]}
	var err error
	for i, v := range []*int{&p.PPID, &p.PGID, &p.SID} {
		if *v, err = strconv.Atoi(f[1+i]); err != nil {
			return proc{}, fmt.Errorf("/proc/%d/stat: %q: %w", pid, s, err)
		}
	}
	if p.Start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return proc{}, fmt.Errorf("/proc/%d/stat: %q: %w", pid, s, err)
	}
	return p, nil
}

// writeRecord records the helper's descendants, and dir, in path (whole:
// the outer test reads it once it exists).
func writeRecord(path, dir string) error {
	ps, err := processes()
	if err != nil {
		return err
	}
	children := map[int][]proc{}
	for _, p := range ps {
		children[p.PPID] = append(children[p.PPID], p)
	}
	r := record{Dir: dir}
	for queue := []int{os.Getpid()}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			r.Procs = append(r.Procs, c)
			queue = append(queue, c.PID)
		}
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// survivors are the processes alive now that the helper (session, whose
// ID is its PID: it runs in a session of its own) started, directly or
// not: those of its session, of the process groups it recorded (the
// starters' programs lead their own), and those it recorded, wherever
// they went.
func survivors(session int, r record) ([]proc, error) {
	ps, err := processes()
	if err != nil {
		return nil, err
	}
	var alive []proc
	for _, p := range ps {
		if p.dead() {
			continue
		}
		if p.SID == session || slices.ContainsFunc(r.Procs, func(q proc) bool {
			return p.PGID == q.PGID || p.PID == q.PID && p.Start == q.Start
		}) {
			alive = append(alive, p)
		}
	}
	return alive, nil
}

// TestNoOrphan: a test binary that started a control plane and moto (as
// the e2e packages do, from TestMain) leaves none of their processes, nor
// anything they started, behind when it is killed (SIGKILL), times out
// (-test.timeout: a panic, which runs no deferred Stop), when a test fails
// (t.Fatal: the deferred Stops run) or panics (no deferred Stop runs).
func TestNoOrphan(t *testing.T) {
	for _, tc := range []struct {
		name, mode, timeout string
		kill                bool
		code                int    // the helper's exit status, when not killed
		says                string // the helper's output has it
	}{
		{name: "SIGKILL", mode: "block", timeout: "5m", kill: true},
		{name: "timeout", mode: "block", timeout: "5s", code: 2, says: "panic: test timed out after 5s"},
		{name: "t.Fatal", mode: "fatal", timeout: "5m", code: 1, says: "the test fails"},
		{name: "panic", mode: "panic", timeout: "5m", code: 2, says: "panic: the test panics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "record.json")
			log, err := os.Create(filepath.Join(dir, "helper.log"))
			if err != nil {
				t.Fatal(err)
			}
			defer log.Close()
			output := func() string {
				b, _ := os.ReadFile(log.Name())
				return string(b)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelper$", "-test.v", "-test.timeout="+tc.timeout)
			cmd.Env = append(os.Environ(), modeEnv+"="+tc.mode, recordEnv+"="+path)
			cmd.Stdout, cmd.Stderr = log, log
			// A session of its own, whose ID is the helper's PID, which
			// every process it starts inherits; and not outliving this
			// test.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			helperPID := cmd.Process.Pid
			exited, waited := make(chan error, 1), make(chan struct{})
			go func() {
				exited <- cmd.Wait()
				close(waited)
			}()
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-waited
			})

			// Everything up: a control plane and moto start in well under
			// 5 min even on a loaded machine.
			var r record
			read := func() bool {
				b, err := os.ReadFile(path)
				if errors.Is(err, os.ErrNotExist) {
					return false
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &r); err != nil {
					t.Fatal(err)
				}
				return true
			}
			for deadline := time.Now().Add(5 * time.Minute); !read(); {
				select {
				case err := <-exited:
					if !read() {
						t.Fatalf("the helper exited (%v) before recording what it started:\n%s", err, output())
					}
					exited <- err // it recorded, then ended at once
				case <-time.After(100 * time.Millisecond):
					if time.Now().After(deadline) {
						t.Fatalf("the helper did not record what it started in 5m:\n%s", output())
					}
				}
			}
			t.Cleanup(func() {
				// A killed helper leaves the control plane's directory.
				if strings.HasPrefix(filepath.Base(r.Dir), "aws-ccm-e2e-") {
					_ = os.RemoveAll(r.Dir)
				}
			})
			var started []string
			for _, p := range r.Procs {
				started = append(started, p.Comm)
			}
			t.Logf("the helper (%d) started: %q", helperPID, started)
			// comm is the executable's name cut to 15 bytes; moto's is
			// Python's (python3, or $PYTHON's).
			for _, want := range []string{"etcd", "kube-apiserver", "kube-controller", "python"} {
				if !slices.ContainsFunc(started, func(c string) bool { return strings.HasPrefix(c, want) }) {
					t.Fatalf("the helper started no %s: %v", want, r.Procs)
				}
			}

			if tc.kill {
				if err := syscall.Kill(helperPID, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			var err2 error
			select {
			case err2 = <-exited:
			case <-time.After(2 * time.Minute):
				t.Fatalf("the helper did not exit in 2m:\n%s", output())
			}
			var exit *exec.ExitError
			if !errors.As(err2, &exit) {
				t.Fatalf("the helper: %v, want a failure:\n%s", err2, output())
			}
			ws := exit.Sys().(syscall.WaitStatus)
			switch {
			case tc.kill && ws.Signal() != syscall.SIGKILL:
				t.Fatalf("the helper ended with %v, want SIGKILL:\n%s", err2, output())
			case !tc.kill && (ws.ExitStatus() != tc.code || !strings.Contains(output(), tc.says)):
				t.Fatalf("the helper ended with %v, want exit status %d saying %q:\n%s", err2, tc.code, tc.says, output())
			}

			// The kernel signals the programs as the helper dies; they
			// take a moment to die in turn.
			var left []proc
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if left, err = survivors(helperPID, r); err != nil {
					t.Fatal(err)
				}
				if len(left) == 0 || time.Now().After(deadline) {
					break
				}
			}
			if len(left) > 0 {
				var lines []string
				for _, p := range left {
					lines = append(lines, p.String())
					_ = syscall.Kill(p.PID, syscall.SIGKILL)
				}
				t.Fatalf("%d processes outlived the helper by 10s (killed now):\n%s\nthe helper's output:\n%s",
					len(left), strings.Join(lines, "\n"), output())
			}
		})
	}
}
