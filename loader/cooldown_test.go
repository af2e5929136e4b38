package loader

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// within checks that until is d from now, jittered by at most ±20%.
func within(t *testing.T, what string, now, until time.Time, d time.Duration) {
	t.Helper()
	lo, hi := now.Add(d*8/10), now.Add(d*12/10)
	if until.Before(lo) || until.After(hi) {
		t.Errorf("%s: pause %v, want %v ±20%%", what, until.Sub(now), d)
	}
}

func TestCooldownDoublesAndResets(t *testing.T) {
	var c Cooldown // defaults: 1s doubling to 30s
	errA := errors.New("status 503")
	now := t0
	if _, _, ok := c.Check("k", now); ok {
		t.Fatal("a key that never failed is in cooldown")
	}

	want := []time.Duration{1, 2, 4, 8, 16} // seconds; then capped at 30
	for i, d := range want {
		until := c.Fail("k", errA, now)
		within(t, fmt.Sprintf("failure %d", i+1), now, until, d*time.Second)
		got, err, ok := c.Check("k", now)
		if !ok || !got.Equal(until) || err != errA {
			t.Fatalf("Check during pause = %v, %v, %v; want %v, %v, true", got, err, ok, until, errA)
		}
		if _, _, ok := c.Check("k", until.Add(-time.Nanosecond)); !ok {
			t.Fatal("cooldown ended before its until")
		}
		// The next failure comes when the pause is over, as it would: no
		// load runs during a pause.
		now = until
		if _, _, ok := c.Check("k", now); ok {
			t.Fatal("cooldown still on at its until")
		}
	}
	for i := range 5 {
		until := c.Fail("k", errA, now)
		if d := until.Sub(now); d > 30*time.Second || d < 24*time.Second {
			t.Fatalf("capped failure %d: pause %v, want in [24s, 30s]", i, d)
		}
		now = until
	}

	c.Succeed("k")
	if _, _, ok := c.Check("k", t0); ok || c.Len() != 0 {
		t.Fatal("Succeed did not clear the key")
	}
	within(t, "failure after a success", now, c.Fail("k", errA, now), time.Second)
}

func TestCooldownForgetsQuietKeys(t *testing.T) {
	c := Cooldown{Base: 100 * time.Millisecond, Max: time.Second}
	e := errors.New("x")
	u1 := c.Fail("k", e, t0)
	u2 := c.Fail("k", e, u1)
	within(t, "consecutive failure", u1, u2, 200*time.Millisecond)

	// A failure less than Max after the pause ended is still consecutive.
	soon := u2.Add(time.Second - time.Nanosecond)
	u3 := c.Fail("k", e, soon)
	within(t, "failure just under Max after the pause", soon, u3, 400*time.Millisecond)

	// Max after the pause, the key is forgotten: Check drops it, and a new
	// failure starts again at Base.
	quiet := u3.Add(time.Second)
	if _, _, ok := c.Check("k", quiet); ok || c.Len() != 0 {
		t.Fatalf("Check after a quiet Max: ok=%v, Len()=%d; want false, 0", ok, c.Len())
	}
	within(t, "failure after a quiet Max", quiet, c.Fail("k", e, quiet), 100*time.Millisecond)
}

func TestCooldownJitterSpreads(t *testing.T) {
	var c Cooldown
	e := errors.New("x")
	lo, hi := time.Hour, time.Duration(0)
	for i := range 1000 {
		until := c.Fail(fmt.Sprint("key", i), e, t0)
		within(t, "first failure", t0, until, time.Second)
		lo, hi = min(lo, until.Sub(t0)), max(hi, until.Sub(t0))
	}
	// 1000 uniform draws in [0.8s, 1.2s] all within 100ms of each other
	// would mean the jitter is not applied.
	if hi-lo < 200*time.Millisecond {
		t.Errorf("1000 first pauses span only [%v, %v]", lo, hi)
	}
}

func TestCooldownBoundedMemory(t *testing.T) {
	c := Cooldown{MaxKeys: 100}
	e := errors.New("x")
	for i := range 1000 {
		c.Fail(fmt.Sprint("key", i), e, t0)
		if n := c.Len(); n > 100 {
			t.Fatalf("Len() = %d after %d failing keys, over MaxKeys 100", n, i+1)
		}
	}
	// The last key failed just now, so eviction must not have dropped it.
	if _, _, ok := c.Check("key999", t0); !ok {
		t.Error("the newest failure was evicted")
	}
	// Once every record is forgotten (pause ≤ 1.2s, then Max = 30s), the
	// next failure sweeps them all.
	later := t0.Add(time.Minute)
	c.Fail("new", e, later)
	if n := c.Len(); n != 1 {
		t.Errorf("Len() = %d after the sweep, want 1", n)
	}
}

// A failure another replica saw pauses the key here until the fleet's
// deadline, capped at Max, and counts toward this replica's next pause.
func TestCooldownHold(t *testing.T) {
	c := Cooldown{Max: 10 * time.Second}
	errA := errors.New("status 500")
	c.Hold("k", errA, t0.Add(3*time.Second), t0)
	if until, err, ok := c.Check("k", t0.Add(2*time.Second)); !ok || err != errA || !until.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("during a held pause: %v, %v, %v", until, err, ok)
	}
	if _, _, ok := c.Check("k", t0.Add(3*time.Second)); ok {
		t.Fatal("the pause outlived the fleet's deadline")
	}
	// Held for a minute with Max 10s: 10s.
	c.Hold("x", errA, t0.Add(time.Minute), t0)
	if until, _, _ := c.Check("x", t0); !until.Equal(t0.Add(10 * time.Second)) {
		t.Fatalf("held until %v, want Max from now", until.Sub(t0))
	}
	// This replica's own next failure of "k" is the second in a row: 2s.
	within(t, "own failure after a held one", t0.Add(4*time.Second),
		c.Fail("k", errA, t0.Add(4*time.Second)), 2*time.Second)
}
