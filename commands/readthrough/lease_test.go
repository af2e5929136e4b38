package readthrough

import (
	"strings"
	"testing"
	"time"
)

// lease runs FILL.LEASE and returns its [value, token] reply.
func (f *harness) lease(t *testing.T, args ...string) (value, token any) {
	t.Helper()
	got, ok := f.Do(append([]string{"FILL.LEASE"}, args...)...).([]any)
	if !ok || len(got) != 2 {
		t.Fatalf("FILL.LEASE %q = %#v, want [value token]", args, got)
	}
	return got[0], got[1]
}

// TestFillLeaseArguments: FILL.LEASE's, FILL.SET's and FILL.ABORT's
// argument errors.
func TestFillLeaseArguments(t *testing.T) {
	f := newHarness(t)
	f.Run([]Case{
		{"FILL.LEASE k 0 5", Err("ERR ttl must be a positive integer number of seconds")},
		{"FILL.LEASE k 10 -5", Err("ERR grace must be 0 or a positive integer number of seconds")},
		{"FILL.LEASE k 10 5 TIMEOUT x", Err("ERR invalid TIMEOUT in 'fill.lease' command")},
		{"FILL.LEASE k 10 5 LEASE 0", Err("ERR invalid LEASE in 'fill.lease' command")},
		{"FILL.LEASE k 10 5 LEASE -1", Err("ERR invalid LEASE in 'fill.lease' command")},
		{"FILL.LEASE k 10 5 LEASE", Err("ERR syntax error")},
		{"FILL.LEASE k 10 5 BOGUS 1", Err("ERR syntax error")},
		{"FILL.SET k token value BOGUS", Err("ERR syntax error")},
		{"FILL.SET k token value NOTFOUND", Err("ERR NOTFOUND takes an empty value in 'fill.set' command")},
		{"FILL.SET k token value NOTFOUND x", Err("ERR syntax error")},
		{"FILL.ABORT k token message more", Err("ERR syntax error")},
		{"FILL.SET k token value", Err("LEASELOST no lease with this token (it expired, was superseded, or was settled)")},
		{"FILL.ABORT k token", Err("LEASELOST no lease with this token (it expired, was superseded, or was settled)")},
	})
}

// TestFillLease: one caller gets the lease, the others wait (or, with
// TIMEOUT 0 and inside EXEC, give up at once); FILL.SET stores the value
// for ttl and grace, NOTFOUND remembers no value, FILL.ABORT cools the
// key down with the holder's message.
func TestFillLease(t *testing.T) {
	f := newHarness(t)
	value, token := f.lease(t, "app:1", "10", "5", "LEASE", "5000")
	if value != nil || token == nil {
		t.Fatalf("the first FILL.LEASE = [%#v %#v], want [nil token]", value, token)
	}
	tok := token.(string)
	f.Run([]Case{
		{"FILL.LEASE app:1 10 5 TIMEOUT 0", Err("TIMEOUT gave up waiting for the load after 0s")},
		{"FILL.SET app:1 wrong one", Err("LEASELOST no lease with this token (it expired, was superseded, or was settled)")},
		{"FILL.SET app:1 " + tok + " one", "OK"},
		{"FILL.SET app:1 " + tok + " again", Err("LEASELOST no lease with this token (it expired, was superseded, or was settled)")},
		{"FILL.LEASE app:1 10 5", []any{"one", nil}},
		{"GET app:1", "one"},
		{"TTL app:1", 15},
		{"FILL.INFO app:1", []any{"state", "fresh", "fresh_ms", 10000, "stale_ms", 15000, "loader", "app", "in_flight", 0, "tags", []any{}}},
	})
	// Stale: the value, and the lease to refresh it to one caller.
	f.Clock.Advance(11 * time.Second)
	if value, token := f.lease(t, "app:1", "10", "5"); value != "one" || token == nil {
		t.Errorf("FILL.LEASE of a stale key = [%#v %#v], want [one token]", value, token)
	}
	f.Check("FILL.LEASE app:1 10 5", []any{"one", nil})

	_, token = f.lease(t, "app:none", "10", "5")
	f.Run([]Case{
		{"FILL.SET app:none " + token.(string) + ` "" NOTFOUND`, "OK"},
		{"FILL.LEASE app:none 10 5", []any{nil, nil}},
	})

	_, token = f.lease(t, "app:fail", "10", "5")
	f.Check("FILL.ABORT app:fail "+token.(string)+` "db timeout"`, "OK")
	if got, ok := f.Do("FILL.LEASE", "app:fail", "10", "5").(Err); !ok || !strings.HasPrefix(string(got), "LOADERR app: cooling down for ") ||
		!strings.HasSuffix(string(got), " after: db timeout") {
		t.Errorf("FILL.LEASE after FILL.ABORT = %#v, want the cooldown with the message", got)
	}

	// Inside EXEC: a lease held elsewhere is -TIMEOUT at once, a free one
	// is taken, FILL.SET stores.
	_, token = f.lease(t, "app:x", "10", "5")
	f.Client.Atomic = true
	f.Check("FILL.LEASE app:x 10 5", Err("TIMEOUT gave up waiting for the load after 0s"))
	f.Check("FILL.SET app:x "+token.(string)+" ex", "OK")
	f.Client.Atomic = false
	f.Check("GET app:x", "ex")
}

// TestFillLeaseLost: a write to the key during the lease loses it.
func TestFillLeaseLost(t *testing.T) {
	f := newHarness(t)
	_, token := f.lease(t, "app:1", "10", "5")
	f.Check("SET app:1 other", "OK")
	f.Check("FILL.SET app:1 "+token.(string)+" mine", Err("LEASELOST the key was written during the lease"))
	f.Check("GET app:1", "other")
}
