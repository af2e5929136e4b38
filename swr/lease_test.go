package swr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/fakeclock"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/swr"
)

// noOrigin is where the test Fillers' loader points: FILL.LEASE never calls
// a loader, and a test that did would fail to connect.
const noOrigin = "http://127.0.0.1:1"

// leaseResult is one Lease call's outcome.
type leaseResult struct {
	ans swr.LeaseAnswer
	err error
}

func (r leaseResult) String() string {
	return fmt.Sprintf("found %v value %q token %q err %v", r.ans.Found, r.ans.Value, r.ans.Token, r.err)
}

// leaseAll starts n concurrent Lease calls of req on f and returns the
// channel their results arrive on.
func leaseAll(f *swr.Filler, n int, req swr.LeaseRequest) <-chan leaseResult {
	out := make(chan leaseResult, n)
	for range n {
		go func() {
			ans, err := f.Lease(context.Background(), req)
			out <- leaseResult{ans, err}
		}()
	}
	return out
}

// takeToken receives results until one holds a token, failing on any other
// result: the callers that got no token are still waiting.
func takeToken(t *testing.T, results <-chan leaseResult) string {
	t.Helper()
	r := <-results
	if r.ans.Token == "" || r.err != nil || r.ans.Found {
		t.Fatalf("the first answer is %v, want a token and no value", r)
	}
	return r.ans.Token
}

// expectAll receives n results and checks each against want.
func expectAll(t *testing.T, results <-chan leaseResult, n int, want func(leaseResult) bool) {
	t.Helper()
	for range n {
		if r := <-results; !want(r) {
			t.Fatalf("answer %v", r)
		}
	}
}

func isValue(v string) func(leaseResult) bool {
	return func(r leaseResult) bool {
		return r.err == nil && r.ans.Found && string(r.ans.Value) == v && r.ans.Token == ""
	}
}

func leases(m *metrics.Fill, result swr.LeaseResult) float64 {
	return metrics.Value(m.Leases.WithLabelValues(swr.AppLoader, string(result)))
}

// TestLeaseOneTokenWaitersGetTheValue: of N concurrent callers of a missing
// key exactly one gets a token; the others wait, and get the value its
// holder sets, which is stored with the lease's ttl and grace.
func TestLeaseOneTokenWaitersGetTheValue(t *testing.T) {
	clock := fakeclock.New()
	f := newTestFiller(t, noOrigin, swr.Options{Now: clock.Now, TTLJitter: -1})
	const n = 50
	req := swr.LeaseRequest{Key: "app:1", TTL: time.Minute, Grace: time.Hour, Timeout: time.Minute}
	results := leaseAll(f.Filler, n, req)
	token := takeToken(t, results)
	testwait.For(t, "the other callers to wait", func() bool { return f.LeaseWaiters("app:1") == n-1 })
	if got := f.Info("app:1"); got.State != "loading" || !got.InFlight || got.Loader != swr.AppLoader {
		t.Fatalf("FILL.INFO during the lease: %+v", got)
	}
	if err := f.FillLease(swr.Caller{}, "app:1", token, []byte("computed"), true); err != nil {
		t.Fatal(err)
	}
	expectAll(t, results, n-1, isValue("computed"))
	env, found := f.store.Peek([]byte("app:1"))
	now := clock.Now().UnixNano()
	if !found || env.FreshUntil != now+int64(time.Minute) || env.StaleUntil != now+int64(time.Minute+time.Hour) ||
		env.Fill == nil || env.Fill.Loader != swr.AppLoader {
		t.Fatalf("stored %+v (found %v)", env, found)
	}
	// Fresh now: answered at once, without a token.
	if ans, err := f.Lease(context.Background(), req); err != nil || string(ans.Value) != "computed" || ans.Token != "" {
		t.Fatalf("a fresh key: %+v, %v", ans, err)
	}
	// The token was spent.
	if err := f.FillLease(swr.Caller{}, "app:1", token, []byte("again"), true); !errors.Is(err, swr.ErrLeaseLost) {
		t.Fatalf("a second FILL.SET with the same token: %v, want ErrLeaseLost", err)
	}
	if g, s, l := leases(f.m, swr.LeaseGranted), leases(f.m, swr.LeaseSet), leases(f.m, swr.LeaseLost); g != 1 || s != 1 || l != 1 {
		t.Fatalf("leases granted %v, set %v, lost %v; want 1 each", g, s, l)
	}
	if v := metrics.Value(f.m.Answers.WithLabelValues(swr.AppLoader, string(swr.AnswerLoaded))); v != n-1 {
		t.Fatalf("loaded answers = %v, want %d", v, n-1)
	}
}

// TestLeaseLostToAWrite: a client write of the key during the lease (SET,
// DEL or FLUSHALL) wins: the holder's FILL.SET stores nothing and gets
// ErrLeaseLost, and its waiters take what the write left.
func TestLeaseLostToAWrite(t *testing.T) {
	for _, write := range []string{"SET", "DEL", "FLUSHALL"} {
		t.Run(write, func(t *testing.T) {
			f := newTestFiller(t, noOrigin, swr.Options{})
			req := swr.LeaseRequest{Key: "app:w", TTL: time.Minute, Timeout: time.Minute}
			results := leaseAll(f.Filler, 2, req)
			token := takeToken(t, results)
			testwait.For(t, "the other caller to wait", func() bool { return f.LeaseWaiters("app:w") == 1 })
			switch write {
			case "SET":
				if _, err := f.store.Set([]byte("app:w"), []byte("written"), engine.SetOptions{}); err != nil {
					t.Fatal(err)
				}
			case "DEL":
				f.store.Delete([]byte("app:w"))
			case "FLUSHALL":
				f.store.FlushAll()
			}
			for _, found := range []bool{true, false} {
				if err := f.FillLease(swr.Caller{}, "app:w", token, []byte("computed"), found); !errors.Is(err, swr.ErrLeaseLost) {
					t.Fatalf("FILL.SET (found %v) after a %s: %v, want ErrLeaseLost", found, write, err)
				}
			}
			got := <-results
			if write == "SET" {
				if !isValue("written")(got) {
					t.Fatalf("the waiter got %v, want the written value", got)
				}
			} else if got.ans.Token == "" {
				// The key is missing again: the waiter fills it.
				t.Fatalf("the waiter got %v, want a new token", got)
			}
			if v, _ := f.store.Get([]byte("app:w")); string(v) == "computed" {
				t.Fatal("the lost fill was stored")
			}
		})
	}
}

// TestLeaseLostNotFound: FILL.SET NOTFOUND under a lease a DEL fenced
// stores no "no such key" either.
func TestLeaseLostNotFound(t *testing.T) {
	f := newTestFiller(t, noOrigin, swr.Options{})
	req := swr.LeaseRequest{Key: "app:n", TTL: time.Minute}
	token := takeToken(t, leaseAll(f.Filler, 1, req))
	f.store.Delete([]byte("app:n"))
	if err := f.FillLease(swr.Caller{}, "app:n", token, nil, false); !errors.Is(err, swr.ErrLeaseLost) {
		t.Fatalf("FILL.SET NOTFOUND after a DEL: %v", err)
	}
	if got := f.Info("app:n").State; got != "missing" {
		t.Fatalf("state %q, want missing (no remembered 404)", got)
	}
}

// TestLeaseExpiryHandsOneNewToken: a holder that neither sets nor aborts
// within its term loses the lease; exactly one waiter gets a new token, and
// the others get the value that one sets. The old token is lost.
func TestLeaseExpiryHandsOneNewToken(t *testing.T) {
	f := newTestFiller(t, noOrigin, swr.Options{})
	const n = 20
	first := swr.LeaseRequest{Key: "app:x", TTL: time.Minute, Term: 50 * time.Millisecond}
	crashed := takeToken(t, leaseAll(f.Filler, 1, first))
	req := swr.LeaseRequest{Key: "app:x", TTL: time.Minute, Timeout: time.Minute}
	results := leaseAll(f.Filler, n, req)
	token := takeToken(t, results)
	if token == crashed {
		t.Fatal("the new token is the old one")
	}
	testwait.For(t, "the other callers to wait", func() bool { return f.LeaseWaiters("app:x") == n-1 })
	if err := f.FillLease(swr.Caller{}, "app:x", crashed, []byte("late"), true); !errors.Is(err, swr.ErrLeaseLost) {
		t.Fatalf("FILL.SET with the expired token: %v", err)
	}
	if err := f.FillLease(swr.Caller{}, "app:x", token, []byte("v2"), true); err != nil {
		t.Fatal(err)
	}
	expectAll(t, results, n-1, isValue("v2"))
	if e, g := leases(f.m, swr.LeaseExpired), leases(f.m, swr.LeaseGranted); e != 1 || g != 2 {
		t.Fatalf("leases expired %v, granted %v; want 1 and 2", e, g)
	}
}

// TestLeaseAbortSharesTheFailureAndCoolsDown: the waiters of an aborted
// lease get the holder's message as the app loader's failure, and during
// the cooldown the next caller gets it at once, without a token.
func TestLeaseAbortSharesTheFailureAndCoolsDown(t *testing.T) {
	clock := fakeclock.New()
	f := newTestFiller(t, noOrigin, swr.Options{Now: clock.Now,
		Cooldown: &loader.Cooldown{Base: time.Second, Max: time.Minute}})
	const n = 10
	req := swr.LeaseRequest{Key: "app:a", TTL: time.Minute, Timeout: time.Minute}
	results := leaseAll(f.Filler, n, req)
	token := takeToken(t, results)
	testwait.For(t, "the other callers to wait", func() bool { return f.LeaseWaiters("app:a") == n-1 })
	if err := f.AbortLease(swr.Caller{}, "app:a", token, "db down\r\nreally"); err != nil {
		t.Fatal(err)
	}
	isFailure := func(r leaseResult) bool {
		var oe *loader.OriginError
		return errors.As(r.err, &oe) && oe.Loader == swr.AppLoader && oe.Reason == "db down really"
	}
	expectAll(t, results, n-1, isFailure)
	if r := <-leaseAll(f.Filler, 1, req); !isFailure(r) {
		t.Fatalf("during the cooldown: %v, want the failure at once", r)
	}
	if got := f.Info("app:a").State; got != "cooldown" {
		t.Fatalf("state %q, want cooldown", got)
	}
	clock.Advance(2 * time.Second) // past the cooldown (1 s ± 20%)
	takeToken(t, leaseAll(f.Filler, 1, req))
}

// TestLeaseTimeoutZero: TIMEOUT 0 never waits: it gets the token when no
// one fills the key, else -TIMEOUT at once.
func TestLeaseTimeoutZero(t *testing.T) {
	f := newTestFiller(t, noOrigin, swr.Options{})
	req := swr.LeaseRequest{Key: "app:z", TTL: time.Minute, Timeout: 0}
	token := takeToken(t, leaseAll(f.Filler, 1, req))
	ans, pending, err := f.StartLease(req)
	if pending != nil || !errors.Is(err, swr.ErrTimeout) || ans.Token != "" {
		t.Fatalf("TIMEOUT 0 while another fills: %+v, pending %v, %v; want ErrTimeout at once", ans, pending, err)
	}
	if err := f.FillLease(swr.Caller{}, "app:z", token, []byte("v"), true); err != nil {
		t.Fatal(err)
	}
}

// TestLeaseStaleServesAllOneRefreshes: a stale key is served to every
// caller at once, and exactly one of them gets a token to refresh it.
func TestLeaseStaleServesAllOneRefreshes(t *testing.T) {
	clock := fakeclock.New()
	f := newTestFiller(t, noOrigin, swr.Options{Now: clock.Now, TTLJitter: -1})
	req := swr.LeaseRequest{Key: "app:s", TTL: time.Second, Grace: time.Minute}
	token := takeToken(t, leaseAll(f.Filler, 1, req))
	if err := f.FillLease(swr.Caller{}, "app:s", token, []byte("v1"), true); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Second)
	const n = 30
	results := leaseAll(f.Filler, n, req)
	tokens := 0
	for range n {
		r := <-results
		if r.err != nil || !r.ans.Found || string(r.ans.Value) != "v1" {
			t.Fatalf("stale read: %v, want v1", r)
		}
		if r.ans.Token != "" {
			tokens++
			token = r.ans.Token
		}
	}
	if tokens != 1 {
		t.Fatalf("%d of %d stale readers got a token, want 1", tokens, n)
	}
	if err := f.FillLease(swr.Caller{}, "app:s", token, []byte("v2"), true); err != nil {
		t.Fatal(err)
	}
	if r := <-leaseAll(f.Filler, 1, req); !isValue("v2")(r) {
		t.Fatalf("after the refresh: %v", r)
	}
}

// TestLeaseNotFoundIsRemembered: FILL.SET NOTFOUND answers the waiters
// nil, and the next callers nil at once, for the negative ttl.
func TestLeaseNotFoundIsRemembered(t *testing.T) {
	f := newTestFiller(t, noOrigin, swr.Options{})
	req := swr.LeaseRequest{Key: "app:none", TTL: time.Minute, Timeout: time.Minute}
	results := leaseAll(f.Filler, 5, req)
	token := takeToken(t, results)
	testwait.For(t, "the other callers to wait", func() bool { return f.LeaseWaiters("app:none") == 4 })
	if err := f.FillLease(swr.Caller{}, "app:none", token, nil, false); err != nil {
		t.Fatal(err)
	}
	isNil := func(r leaseResult) bool { return r.err == nil && !r.ans.Found && r.ans.Token == "" }
	expectAll(t, results, 4, isNil)
	expectAll(t, leaseAll(f.Filler, 1, req), 1, isNil)
	if got := f.Info("app:none").State; got != "negative" {
		t.Fatalf("state %q, want negative", got)
	}
}

// TestLeaseWaiterTimeout: a waiter whose TIMEOUT passes gets ErrTimeout;
// the lease goes on and its value is stored.
func TestLeaseWaiterTimeout(t *testing.T) {
	f := newTestFiller(t, noOrigin, swr.Options{})
	req := swr.LeaseRequest{Key: "app:t", TTL: time.Minute, Timeout: 20 * time.Millisecond}
	token := takeToken(t, leaseAll(f.Filler, 1, req))
	var te *swr.TimeoutError
	if r := <-leaseAll(f.Filler, 1, req); !errors.As(r.err, &te) || te.After != req.Timeout {
		t.Fatalf("a waiter past its TIMEOUT: %v", r)
	}
	if err := f.FillLease(swr.Caller{}, "app:t", token, []byte("v"), true); err != nil {
		t.Fatal(err)
	}
}
