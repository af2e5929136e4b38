package swr_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/fakeclock"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/swr"
)

func TestEarlyRefreshPolicy(t *testing.T) {
	const sec = int64(time.Second)
	// u such that -ln(1-u) is 1: the gap is delta*beta exactly.
	one := 1 - 1/math.E
	for _, tc := range []struct {
		name       string
		fresh, now int64
		delta      time.Duration
		beta, u    float64
		want       bool
	}{
		{"far from the deadline", 100 * sec, 10 * sec, time.Second, 1, one, false},
		{"within delta*beta of it", 100 * sec, 99*sec + 1, time.Second, 1, one, true},
		{"beta stretches the window", 100 * sec, 90 * sec, time.Second, 10, one, true},
		{"u = 0 never refreshes early", 100 * sec, 100*sec - 1, time.Second, 1, 0, false},
		{"no load time", 100 * sec, 100*sec - 1, 0, 1, one, false},
		{"no fresh deadline", 0, 10 * sec, time.Second, 1, one, false},
		{"off", 100 * sec, 100*sec - 1, time.Second, 0, one, false},
	} {
		if got := swr.EarlyRefresh(tc.fresh, tc.delta, tc.now, tc.beta, tc.u); got != tc.want {
			t.Errorf("%s: EarlyRefresh = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestEarlyRefreshOnePerKey: fresh reads near the deadline, with a random
// source that says "refresh early", are answered with the fresh value at
// once and start exactly one refresh for the key while it runs; with EARLY
// off for the read, or a source that never says so, none. The same holds
// for reads answered through ServeFresh, a GETFILL hit's way.
func TestEarlyRefreshOnePerKey(t *testing.T) {
	for _, via := range []string{"Get", "ServeFresh"} {
		t.Run(via, func(t *testing.T) { testEarlyRefreshOnePerKey(t, via == "ServeFresh") })
	}
}

func testEarlyRefreshOnePerKey(t *testing.T, serveFresh bool) {
	clock := fakeclock.New()
	var calls atomic.Int64
	gate := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			<-gate // the refresh waits until every read is done
		}
		fmt.Fprintf(w, "v%d", calls.Load())
	}))
	t.Cleanup(origin.Close)
	var u atomic.Uint64 // math.Float64bits of what Rand returns
	f := newTestFiller(t, origin.URL, swr.Options{Now: clock.Now, TTLJitter: -1,
		EarlyRefresh: 1e9, // a load of a microsecond makes a window of minutes
		Rand:         func() float64 { return math.Float64frombits(u.Load()) }})
	ctx := context.Background()
	req := swr.Request{Key: "k:e", TTL: time.Minute, Timeout: -1}
	if _, err := f.Get(ctx, req); err != nil {
		t.Fatal(err)
	}
	if env, _ := f.store.Peek([]byte("k:e")); env.Fill == nil || env.Fill.LoadTime <= 0 {
		t.Fatalf("the fill kept no load time: %+v", env.Fill)
	}
	clock.Advance(50 * time.Second)
	read := func(n int, req swr.Request) {
		t.Helper()
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if serveFresh {
					var got string
					if !f.ServeFresh(req, []byte(req.Key), func(v []byte) { got = string(v) }) || got != "v1" {
						t.Errorf("fresh read: ServeFresh gave %q; want v1 at once", got)
					}
					return
				}
				if ans, err := f.Get(ctx, req); err != nil || string(ans.Value) != "v1" {
					t.Errorf("fresh read: %q, %v; want v1 at once", ans.Value, err)
				}
			}()
		}
		wg.Wait()
	}
	read(20, req) // u = 0: never early
	u.Store(math.Float64bits(0.5))
	off := req
	off.Early = -1
	read(20, off)
	if n := calls.Load(); n != 1 {
		t.Fatalf("origin calls = %d before early refresh was on, want 1", n)
	}
	read(50, req)
	close(gate)
	testwait.For(t, "the early refresh to store its value", func() bool {
		env, _ := f.store.Peek([]byte("k:e"))
		return string(env.Value) == "v2"
	})
	if n := metrics.Value(f.m.Refreshes.WithLabelValues("k:", string(swr.RefreshEarly))); n != 1 {
		t.Fatalf("early refreshes = %v for 50 reads during one, want 1", n)
	}
	now := clock.Now().UnixNano()
	if env, _ := f.store.Peek([]byte("k:e")); env.FreshUntil != now+int64(time.Minute) {
		t.Fatalf("after the early refresh: fresh until %d, want now + ttl", env.FreshUntil)
	}
}
