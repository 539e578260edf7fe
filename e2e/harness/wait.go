package harness

import (
	"testing"
	"time"
)

// WaitFor polls cond every 250 ms until it holds, and fails the test when
// it still does not after timeout, saying what it waited for. cond is
// asked at least once: a timeout of 0 asks once.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	WaitForState(t, timeout, what, func() (bool, string) { return cond(), "" })
}

// WaitForState is WaitFor with a condition that also says what it saw
// (state); on timeout the failure ends with what it saw last.
func WaitForState(t testing.TB, timeout time.Duration, what string, cond func() (ok bool, state string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if state != "" {
				t.Fatalf("timed out after %s waiting for %s; last seen: %s", timeout, what, state)
			}
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
