// Package testwait is how tests wait for state that settles asynchronously:
// they poll an observable condition with one generous deadline instead of
// sleeping and hoping. Only a failing test ever waits out the deadline.
package testwait

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// Timeout bounds every wait. It is generous because only a failure reaches
// it, and the race detector and a loaded machine slow the passing case.
const Timeout = 30 * time.Second

// maxPause caps the pause between polls: the first polls come quickly, so a
// condition that holds at once costs almost nothing, and a slow condition
// (a network round trip) is not asked hundreds of times a second.
const maxPause = 20 * time.Millisecond

// Until polls cond until it returns true, and reports whether it did before
// Timeout. It is for a test that fails with its own message, naming the
// state it saw last; For is the common case.
func Until(cond func() bool) bool {
	deadline := time.Now().Add(Timeout)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, maxPause)
	}
	return true
}

// For polls cond until it returns true, and fails the test if it has not
// within Timeout; what names the awaited state in the failure.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Until(cond) {
		t.Fatalf("timed out after %v waiting for %s", Timeout, what)
	}
}

// Hung ends the test binary for a server in this process that stopped
// answering: it prints what was awaited and every goroutine's stack, which
// shows where the server waits, then panics on a goroutine of its own, so
// that the test framework does not recover it and run the test's cleanups,
// which would wait for the hung server too. It does not return.
func Hung(what string) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	fmt.Fprintf(os.Stderr, "%s: no answer; every goroutine:\n%s\n", what, buf)
	go panic("a server stopped answering: " + what)
	select {}
}
