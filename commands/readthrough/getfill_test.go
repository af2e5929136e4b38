package readthrough

import (
	"regexp"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// TestGetFillArguments: GETFILL's and MGETFILL's argument errors, before
// any load.
func TestGetFillArguments(t *testing.T) {
	f := newHarness(t)
	f.Run([]Case{
		{"GETFILL k 0 5", Err("ERR ttl must be a positive integer number of seconds")},
		{"GETFILL k x 5", Err("ERR ttl must be a positive integer number of seconds")},
		{"GETFILL k 10 -1", Err("ERR grace must be 0 or a positive integer number of seconds")},
		{"GETFILL k 10 x", Err("ERR grace must be 0 or a positive integer number of seconds")},
		{"GETFILL k 9000000000 5", Err("ERR invalid expire time in 'getfill' command")},
		{"GETFILL k 10 9000000000", Err("ERR invalid expire time in 'getfill' command")},
		{"GETFILL k 10 5 TIMEOUT -1", Err("ERR invalid TIMEOUT in 'getfill' command")},
		{"GETFILL k 10 5 TIMEOUT x", Err("ERR invalid TIMEOUT in 'getfill' command")},
		{"GETFILL k 10 5 EARLY -1", Err("ERR invalid EARLY in 'getfill' command")},
		{"GETFILL k 10 5 EARLY inf", Err("ERR invalid EARLY in 'getfill' command")},
		{"GETFILL k 10 5 EARLY nan", Err("ERR invalid EARLY in 'getfill' command")},
		{"GETFILL k 10 5 TIMEOUT", Err("ERR syntax error")},
		{"GETFILL k 10 5 BOGUS 1", Err("ERR syntax error")},
		{"MGETFILL 0 5 k", Err("ERR ttl must be a positive integer number of seconds")},
		{"MGETFILL 10 -5 k", Err("ERR grace must be 0 or a positive integer number of seconds")},
		{"MGETFILL 10 5 TIMEOUT x k", Err("ERR invalid TIMEOUT in 'mgetfill' command")},
		// A long ttl whose deadline still fits is good: a century and more.
		{"GETFILL k 4000000000 5 EARLY 0", Err("NOLOADER no loader registered for key 'k'")},
	})
}

// TestGetFillLoads: a miss loads from the origin once, then is served
// from the store until its ttl and grace pass on the clock; the origin's
// answers (a value, 404, an error) are GETFILL's, the failures cool down.
func TestGetFillLoads(t *testing.T) {
	f, o := newServed(t)
	o.set("k:1", "one")
	o.set("k:2", "two")
	o.status["k:bad"] = 503
	f.Run([]Case{
		{"GETFILL k:1 10 5", "one"},
		{"GETFILL k:1 10 5", "one"},
		{"GET k:1", "one"},
		{"TTL k:1", 15},
		{"GETFILL k:nosuch 10 5", nil},
		{"GETFILL k:nosuch 10 5", nil},
		{"GETFILL k:bad 10 5", Err("LOADERR k: status 503")},
		{"GETFILL other 10 5", Err("NOLOADER no loader registered for key 'other'")},
		{"MGETFILL 10 5 k:1 k:2 k:nosuch other", []any{"one", "two", nil, Err("NOLOADER no loader registered for key 'other'")}},
		{"MGETFILL 10 5 TIMEOUT 1000 k:2 TIMEOUT", []any{"two", Err("NOLOADER no loader registered for key 'TIMEOUT'")}},
	})
	if n, m := o.callsOf("k:1"), o.callsOf("k:nosuch"); n != 1 || m != 1 {
		t.Errorf("the origin was called %d times for k:1 and %d for k:nosuch, want once each", n, m)
	}
	// The failure cools the key down (for a second, jittered by a fifth):
	// the next reads share it, no call.
	if got, ok := f.Do("GETFILL", "k:bad", "10", "5").(Err); !ok || !cooling.MatchString(string(got)) {
		t.Errorf("GETFILL k:bad again = %#v, want %s", got, cooling)
	}
	if n := o.callsOf("k:bad"); n != 1 {
		t.Errorf("the origin was called %d times for k:bad, want once", n)
	}

	// Past its ttl, within its grace, the value is stale: served while one
	// refresh runs in the background.
	o.set("k:1", "uno")
	f.Clock.Advance(12 * time.Second)
	f.Check("GETFILL k:1 10 5", "one")
	testwait.For(t, "k:1 refreshed", func() bool { return f.Do("GETFILL", "k:1", "10", "5") == "uno" })
	if n := o.callsOf("k:1"); n != 2 {
		t.Errorf("the origin was called %d times for k:1, want twice: the load and one refresh", n)
	}
	// Past its grace, the value is gone: the read waits for the load.
	o.set("k:2", "dos")
	f.Clock.Advance(20 * time.Second)
	f.Check("GETFILL k:2 10 5", "dos")
}

// cooling is the reply to a read of a key that cools down after the
// origin answered 503.
var cooling = regexp.MustCompile(`^LOADERR k: cooling down for ((800|900)ms|1(\.[0-2])?s) after: status 503$`)

// TestGetFillKeepsTheStoreValue: a key GETFILL loaded is a string of the
// store; a key of another type answers WRONGTYPE; a key SET holds is
// served as it is.
func TestGetFillKeepsTheStoreValue(t *testing.T) {
	f, o := newServed(t)
	o.set("k:1", "one")
	f.Check("GETFILL k:1 10 5", "one")
	f.Check("GET k:1", "one")
	f.Check("HSET k:h f v", 1)
	f.Check("GETFILL k:h 10 5", Err("WRONGTYPE Operation against a key holding the wrong kind of value"))
	f.Check("SET k:2 mine", "OK")
	f.Check("GETFILL k:2 10 5", "mine")
}

// TestGetFillTimeout: TIMEOUT bounds the wait for a load, which goes on;
// inside EXEC or a script nothing waits: a load that would is -TIMEOUT at
// once, and a fresh value is served.
func TestGetFillTimeout(t *testing.T) {
	f, o := newServed(t)
	o.set("k:slow", "late")
	o.set("k:1", "one")
	f.Check("GETFILL k:1 10 5", "one")
	hold := make(chan struct{})
	o.mu.Lock()
	o.hold = hold
	o.mu.Unlock()
	f.Check("GETFILL k:slow 10 5 TIMEOUT 0", Err("TIMEOUT gave up waiting for the load after 0s"))
	f.Check("GETFILL k:slow 10 5 TIMEOUT 20", Err("TIMEOUT gave up waiting for the load after 20ms"))
	f.Check("MGETFILL 10 5 TIMEOUT 0 k:slow k:1", []any{Err("TIMEOUT gave up waiting for the load after 0s"), "one"})
	f.Client.Atomic = true
	f.Check("GETFILL k:slow 10 5", Err("TIMEOUT gave up waiting for the load after 0s"))
	f.Check("MGETFILL 10 5 k:slow k:1", []any{Err("TIMEOUT gave up waiting for the load after 0s"), "one"})
	f.Check("GETFILL k:1 10 5", "one")
	f.Client.Atomic = false
	close(hold)
	f.Check("GETFILL k:slow 10 5", "late")
}
