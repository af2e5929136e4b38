package swr_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/cluster"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/swr"
)

// newFleetReplica is one replica of a fleet sharing the Redis at addr: a
// Filler over its own store, coordinating through a real cluster.Client.
func newFleetReplica(t *testing.T, addr, originURL string) *testFiller {
	t.Helper()
	r, _ := newFleetMember(t, addr, originURL)
	return r
}

// newFleetMember is newFleetReplica that also returns the replica's
// cluster.Client, which shares its purges too.
func newFleetMember(t *testing.T, addr, originURL string) (*testFiller, *cluster.Client) {
	t.Helper()
	store := newTestStore(t, nil)
	// A generous timeout: a Redis call starved on a loaded machine would
	// make the replica load alone, which this test counts as a failure.
	ropts, err := cluster.RedisOptions(addr, "", false, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := cluster.New(cluster.Options{Redis: redis.NewUniversalClient(ropts), Store: store,
		Timeout: 2 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	return newTestFillerOn(t, store, originURL, swr.Options{Fleet: fleet, Purges: fleet}), fleet
}

// TestFleetSettlesFlights: a replica whose flight finds the key settled in
// the fleet answers as the fleet did, without calling the origin: with the
// entry another replica loaded, which it keeps with that entry's deadlines;
// with the fleet's "no such key", which it remembers; with the fleet's
// failure, whose cooldown it keeps.
func TestFleetSettlesFlights(t *testing.T) {
	addr := redistest.Start(t).Addr()
	origin := newTestOrigin(t)
	a, b := newFleetReplica(t, addr, origin.URL), newFleetReplica(t, addr, origin.URL)
	ctx := context.Background()
	both := func(key string, status int) (ansA, ansB swr.Answer, errA, errB error) {
		t.Helper()
		origin.status.Store(int64(status))
		before := origin.calls.Load()
		req := swr.Request{Key: key, TTL: time.Minute, Grace: time.Minute, Timeout: -1}
		ansA, errA = a.Get(ctx, req)
		ansB, errB = b.Get(ctx, req)
		if n := origin.calls.Load() - before; n != 1 {
			t.Fatalf("%s: %d origin calls for two replicas, want 1", key, n)
		}
		return ansA, ansB, errA, errB
	}
	state := func(r *testFiller, key, want string) {
		t.Helper()
		if got := r.Info(key).State; got != want {
			t.Fatalf("%s on B: state %q, want %q", key, got, want)
		}
	}

	// A value: B answers A's, and keeps it with A's envelope (the fleet
	// keeps deadlines in milliseconds).
	ansA, ansB, errA, errB := both("k:v", http.StatusOK)
	if errA != nil || errB != nil || !ansB.Found || string(ansB.Value) != string(ansA.Value) {
		t.Fatalf("A answered %+v, %v; B %+v, %v; want A's value on both", ansA, errA, ansB, errB)
	}
	envA, _ := a.store.Peek([]byte("k:v"))
	envB, found := b.store.Peek([]byte("k:v"))
	ms := int64(time.Millisecond)
	if !found || string(envB.Value) != string(ansA.Value) || envB.FreshUntil != envA.FreshUntil/ms*ms ||
		envB.StaleUntil != envA.StaleUntil/ms*ms || envB.Fill == nil || envB.Fill.Loader != "k:" {
		t.Fatalf("B keeps %+v (found %v), want A's entry %+v", envB, found, envA)
	}
	state(b, "k:v", "fresh")
	if n := testutil.ToFloat64(b.m.Answers.WithLabelValues("k:", string(swr.AnswerLoaded))); n != 1 {
		t.Fatalf("B's loaded answers = %v, want 1", n)
	}

	// A "no such key": B answers it and remembers it.
	ansA, ansB, errA, errB = both("k:gone", http.StatusNotFound)
	if errA != nil || errB != nil || ansA.Found || ansB.Found {
		t.Fatalf("A answered %+v, %v; B %+v, %v; want no such key on both", ansA, errA, ansB, errB)
	}
	state(b, "k:gone", "negative")

	// A failure: B answers A's, and the key cools down on B too.
	_, _, errA, errB = both("k:down", http.StatusServiceUnavailable)
	var oeA, oeB *loader.OriginError
	if !errors.As(errA, &oeA) || !errors.As(errB, &oeB) || oeB.Loader != oeA.Loader || oeB.Reason != oeA.Reason {
		t.Fatalf("A failed with %v, B with %v; want A's failure on both", errA, errB)
	}
	state(b, "k:down", "cooldown")
}

// TestFleetLeaseOneTokenPerFleet: of N FILL.LEASE callers on each of two
// replicas exactly one, fleet-wide, gets a token; the others wait, on both
// replicas, and get the value its holder sets. An abort is shared the same
// way, and the key cools down on both.
func TestFleetLeaseOneTokenPerFleet(t *testing.T) {
	addr := redistest.Start(t).Addr()
	a, b := newFleetReplica(t, addr, noOrigin), newFleetReplica(t, addr, noOrigin)
	const n = 10
	for _, settle := range []string{"set", "abort"} {
		key := "app:" + settle
		req := swr.LeaseRequest{Key: key, TTL: time.Minute, Timeout: time.Minute}
		results := [2]<-chan leaseResult{leaseAll(a.Filler, n, req), leaseAll(b.Filler, n, req)}
		var holder *testFiller
		var token string
		select {
		case r := <-results[0]:
			holder, token = a, r.ans.Token
		case r := <-results[1]:
			holder, token = b, r.ans.Token
		}
		if token == "" {
			t.Fatalf("%s: the first answer has no token", key)
		}
		testwait.For(t, "every other caller to wait", func() bool {
			return a.LeaseWaiters(key)+b.LeaseWaiters(key) == 2*n-1
		})
		var want func(leaseResult) bool
		if settle == "set" {
			if err := holder.FillLease(swr.Caller{}, key, token, []byte("computed"), true); err != nil {
				t.Fatal(err)
			}
			want = isValue("computed")
		} else {
			if err := holder.AbortLease(swr.Caller{}, key, token, "db down"); err != nil {
				t.Fatal(err)
			}
			want = func(r leaseResult) bool {
				var oe *loader.OriginError
				return errors.As(r.err, &oe) && oe.Loader == swr.AppLoader && oe.Reason == "db down"
			}
		}
		for i, rs := range results {
			left := n
			if (i == 0) == (holder == a) {
				left--
			}
			expectAll(t, rs, left, want)
		}
		if settle == "abort" {
			for _, r := range []*testFiller{a, b} {
				if got := r.Info(key).State; got != "cooldown" {
					t.Fatalf("after the abort: state %q, want cooldown", got)
				}
			}
		}
	}
}
