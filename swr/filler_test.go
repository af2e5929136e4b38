package swr_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/fakeclock"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/swr"
)

// TestLateWaitersDoNotReload: callers whose Start decided to load, but whose
// Wait begins after that key's flight has ended (as on the event loop, which
// hands the wait to a goroutine), take the flight's answer: a value just
// stored, a "no such key" or a failure in its cooldown is not fetched again.
func TestLateWaitersDoNotReload(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusNotFound, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			origin := newTestOrigin(t)
			origin.status.Store(int64(status))
			f := newTestFiller(t, origin.URL, swr.Options{})
			req := swr.Request{Key: "k:1", TTL: time.Minute, Timeout: -1}
			_, first, err := f.Start(req)
			if first == nil || err != nil {
				t.Fatalf("Start of a missing key: pending %v, err %v", first, err)
			}
			_, late, _ := f.Start(req)
			if late == nil {
				t.Fatal("the second Start did not ask to load either")
			}
			ctx := context.Background()
			ans1, err1 := first.Wait(ctx)
			ans2, err2 := late.Wait(ctx)
			if n := origin.calls.Load(); n != 1 {
				t.Errorf("origin calls = %d, want 1", n)
			}
			found := status == http.StatusOK
			if ans1.Found != found || ans2.Found != found || string(ans1.Value) != string(ans2.Value) ||
				(err1 == nil) != (err2 == nil) {
				t.Errorf("answers %+v %v / %+v %v; want both alike, found %v", ans1, err1, ans2, err2, found)
			}
			var oe *loader.OriginError
			if status == http.StatusServiceUnavailable && !errors.As(err2, &oe) {
				t.Errorf("late waiter's error = %v, want the origin's failure", err2)
			}
		})
	}
}

// TestFillerRunsOnTheInjectedClock: the Filler sets deadlines and reads
// them on Options.Now, the clock the store runs on too, so moving that one
// clock moves an entry from fresh to stale to gone, without a sleep.
func TestFillerRunsOnTheInjectedClock(t *testing.T) {
	clock := fakeclock.New()
	origin := newTestOrigin(t)
	f := newTestFiller(t, origin.URL, swr.Options{Now: clock.Now, TTLJitter: -1})
	ctx := context.Background()
	req := swr.Request{Key: "k:1", TTL: time.Minute, Grace: time.Minute, Timeout: -1}
	get := func(want string) {
		t.Helper()
		if ans, err := f.Get(ctx, req); err != nil || string(ans.Value) != want {
			t.Fatalf("Get = %q, %v; want %q", ans.Value, err, want)
		}
	}
	state := func(want string) {
		t.Helper()
		if in := f.Info(req.Key); in.State != want {
			t.Fatalf("state %q at %v, want %q", in.State, clock.Now(), want)
		}
	}
	get("k:1#1")
	state("fresh")
	if in := f.Info(req.Key); in.FreshIn != time.Minute || in.StaleIn != 2*time.Minute {
		t.Fatalf("deadlines in %v and %v, want 1m and 2m on the injected clock", in.FreshIn, in.StaleIn)
	}
	clock.Advance(time.Minute - time.Nanosecond)
	state("fresh")
	clock.Advance(time.Nanosecond)
	state("stale")
	clock.Advance(time.Minute)
	state("missing")
	get("k:1#2")
	if n := origin.calls.Load(); n != 2 {
		t.Fatalf("origin calls = %d, want 2", n)
	}
}

// TestSuccessResetsTheCooldown: a load that succeeds forgets the key's
// failures, so the next failure pauses the key for the cooldown's Base
// again, not for twice as long.
func TestSuccessResetsTheCooldown(t *testing.T) {
	clock := fakeclock.New()
	origin := newTestOrigin(t)
	f := newTestFiller(t, origin.URL, swr.Options{Now: clock.Now, TTLJitter: -1,
		Cooldown: &loader.Cooldown{Base: time.Second, Max: time.Minute}})
	ctx := context.Background()
	// Grace 0: once its second is over the value is gone and the next read
	// loads.
	req := swr.Request{Key: "k:1", TTL: time.Second, Timeout: -1}
	// Base is jittered by ±20%: 1.3s is past a first pause, and short of a
	// second, doubled one (1.6s at the least).
	const pastBase = 1300 * time.Millisecond
	get := func(status int, wantErr bool, wantCalls int64) {
		t.Helper()
		origin.status.Store(int64(status))
		ans, err := f.Get(ctx, req)
		if (err != nil) != wantErr || origin.calls.Load() != wantCalls {
			t.Fatalf("with the origin at %d: %+v, %v after %d origin calls; want error %v after %d",
				status, ans, err, origin.calls.Load(), wantErr, wantCalls)
		}
	}
	get(http.StatusServiceUnavailable, true, 1)
	clock.Advance(pastBase)
	get(http.StatusOK, false, 2)
	clock.Advance(time.Second)
	get(http.StatusServiceUnavailable, true, 3)
	clock.Advance(pastBase)
	get(http.StatusOK, false, 4)
}
