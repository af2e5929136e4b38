// Package waitfor waits in tests for a condition that a real goroutine,
// process or server makes true, polling it up to a deadline generous enough
// for a loaded CI machine. It waits for what must happen; it never proves
// that something does not.
package waitfor

import (
	"testing"
	"time"
)

// Timeout is how long True waits before it fails the test.
const Timeout = 10 * time.Second

// True polls cond until it holds, or fails t after Timeout, naming what it
// waited for.
func True(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
