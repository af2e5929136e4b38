package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// topKeys reads FILL.TOP's keys as "key=count/loader" from a RESP3 reply.
func topKeys(t *testing.T, c *redis.Client, args ...any) []string {
	t.Helper()
	v, err := c.Do(context.Background(), append([]any{"FILL.TOP"}, args...)...).Result()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := v.(map[any]any)
	if !ok {
		t.Fatalf("FILL.TOP replied %T %v, want a map", v, v)
	}
	var out []string
	for _, e := range m["keys"].([]any) {
		em := e.(map[any]any)
		out = append(out, fmt.Sprintf("%s=%d/%s", em["key"], em["count"], em["loader"]))
	}
	return out
}

// TestFillTopShowsAStampede: 500 clients on one cold key put it at the top
// of FILL.TOP BY waiters with 499 waiters while its one load runs.
func TestFillTopShowsAStampede(t *testing.T) {
	o := newOrigin(t)
	o.gate = make(chan struct{})
	ts, _ := fillServer(t, o)
	c500 := redis.NewClient(&redis.Options{Addr: ts.addr, PoolSize: 500})
	t.Cleanup(func() { c500.Close() })
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); burst(c500, 500, "k:cold", 60, 0) }()
	obs := ts.client(t)
	testwait.For(t, "499 waiters on k:cold in FILL.TOP", func() bool {
		keys := topKeys(t, obs, "BY", "waiters")
		return len(keys) > 0 && keys[0] == "k:cold=499/k:"
	})
	close(o.gate)
	wg.Wait()
	if got := topKeys(t, obs, "BY", "calls", "WINDOW", "10m"); len(got) != 1 || got[0] != "k:cold=1/k:" {
		t.Fatalf("FILL.TOP BY calls = %v", got)
	}
}

func TestFillTopMeasures(t *testing.T) {
	o := newOrigin(t)
	_, c := fillServer(t, o)
	ctx := context.Background()
	obs := (&testServer{addr: c.Options().Addr}).client(t)
	for i := range 3 {
		burst(c, 1, fmt.Sprint("k:a", i), 1, 60)
	}
	burst(c, 1, "k:a0", 1, 60)
	testwait.For(t, "k:a0 to turn stale", func() bool {
		v, _ := obs.Do(ctx, "FILL.INFO", "k:a0").Result()
		m, _ := v.(map[any]any)
		return m["state"] == "stale"
	})
	burst(c, 1, "k:a0", 1, 60) // stale: served, refreshed
	testwait.For(t, "the refresh", func() bool { return o.calls.Load() == 4 })
	o.status.Store(503)
	burst(c, 1, "k:bad", 60, 0)
	burst(c, 1, "k:bad", 60, 0) // cooling down: no call
	if got := topKeys(t, obs, "BY", "stale"); len(got) != 1 || got[0] != "k:a0=1/k:" {
		t.Fatalf("BY stale %v", got)
	}
	if got := topKeys(t, obs, "BY", "failures"); len(got) != 1 || got[0] != "k:bad=1/k:" {
		t.Fatalf("BY failures %v", got)
	}
	if got := topKeys(t, obs, "BY", "calls", "COUNT", "1"); len(got) != 1 || got[0] != "k:a0=2/k:" {
		t.Fatalf("BY calls COUNT 1 %v", got)
	}
	if got := topKeys(t, obs, "BY", "latency"); len(got) > 5 {
		t.Fatalf("BY latency %v", got)
	}
	// FILL.RADAR: the loader's row.
	v, err := obs.Do(ctx, "FILL.RADAR").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[any]any)
	row := m["loaders"].([]any)[0].(map[any]any)
	if row["loader"] != "k:" || row["calls"] != int64(5) || row["failures"] != int64(1) || row["cooldowns"] != int64(1) {
		t.Fatalf("FILL.RADAR loaders %v", m["loaders"])
	}
	hist := m["history"].([]any)
	var reads, calls int64
	for _, s := range hist {
		reads += s.([]any)[1].(int64)
		calls += s.([]any)[2].(int64)
	}
	if reads != 7 || calls != 5 {
		t.Fatalf("history: %d reads, %d calls; want 7, 5", reads, calls)
	}
	for _, bad := range [][]any{{"BY", "speed"}, {"WINDOW", "5m"}, {"COUNT", "0"}, {"COUNT"}, {"FOO", "1"}} {
		if err := obs.Do(ctx, append([]any{"FILL.TOP"}, bad...)...).Err(); err == nil {
			t.Fatalf("FILL.TOP %v: no error", bad)
		}
	}
}

// TestFillTopRESP2 reads FILL.TOP as a flat array, as redis-cli shows it.
func TestFillTopRESP2(t *testing.T) {
	o := newOrigin(t)
	ts, c := fillServer(t, o)
	burst(c, 1, "k:x", 60, 0)
	r := dialRaw(t, ts.addr)
	got := r.do("FILL.TOP", "BY", "calls")
	for _, want := range []string{`"by" "calls"`, `"window" "1m"`, `"keys" [["key" "k:x" "loader" "k:" "count" :1 "error" :0]]`} {
		if !strings.Contains(got, want) {
			t.Fatalf("FILL.TOP in RESP2: %s, want %s in it", got, want)
		}
	}
}

// TestFillTopFiltersByACL: a user sees only the keys it may read.
func TestFillTopFiltersByACL(t *testing.T) {
	o := newOrigin(t)
	ts, c := fillServer(t, o)
	ctx := context.Background()
	burst(c, 1, "k:public", 60, 0)
	burst(c, 1, "k:secret", 60, 0)
	burst(c, 1, "k:"+strings.Repeat("p", 200), 60, 0) // cut by the radar
	if err := c.Do(ctx, "ACL", "SETUSER", "reader", "on", ">pw", "~k:p*", "+fill.top").Err(); err != nil {
		t.Fatal(err)
	}
	u := redis.NewClient(&redis.Options{Addr: ts.addr, Username: "reader", Password: "pw"})
	t.Cleanup(func() { u.Close() })
	if got := topKeys(t, u, "BY", "calls"); len(got) != 1 || got[0] != "k:public=1/k:" {
		t.Fatalf("the reader sees %v", got)
	}
	if got := topKeys(t, ts.client(t), "BY", "calls"); len(got) != 3 {
		t.Fatalf("the default user sees %v", got)
	}
}

// TestFillTopCountsLeases: a fill the application does under FILL.LEASE is
// an origin call to the radar, as a loader's is: FILL.SET a call (with the
// time since the lease was granted), FILL.ABORT a failed one, under the
// loader "app".
func TestFillTopCountsLeases(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	ctx := context.Background()
	lease := func(key string) string {
		t.Helper()
		v, err := c.Do(ctx, "FILL.LEASE", key, "60", "0").Slice()
		if err != nil || len(v) != 2 || v[1] == nil {
			t.Fatalf("FILL.LEASE %s: %v %v", key, v, err)
		}
		return v[1].(string)
	}
	if err := c.Do(ctx, "FILL.SET", "app:set", lease("app:set"), "v").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "FILL.ABORT", "app:abort", lease("app:abort"), "origin down").Err(); err != nil {
		t.Fatal(err)
	}
	calls := topKeys(t, c, "BY", "calls")
	slices.Sort(calls)
	if want := []string{"app:abort=1/app", "app:set=1/app"}; !slices.Equal(calls, want) {
		t.Errorf("BY calls %v, want %v", calls, want)
	}
	if got := topKeys(t, c, "BY", "failures"); !slices.Equal(got, []string{"app:abort=1/app"}) {
		t.Errorf("BY failures %v", got)
	}
	// A holder that never answers: its lease's term ends it, a failure.
	if v, err := c.Do(ctx, "FILL.LEASE", "app:lost", "60", "0", "LEASE", "20").Slice(); err != nil || v[1] == nil {
		t.Fatalf("FILL.LEASE app:lost: %v %v", v, err)
	}
	testwait.For(t, "app:lost's lease to run out", func() bool {
		got := topKeys(t, c, "BY", "failures")
		slices.Sort(got)
		return slices.Equal(got, []string{"app:abort=1/app", "app:lost=1/app"})
	})
	v, err := c.Do(ctx, "FILL.RADAR").Result()
	if err != nil {
		t.Fatal(err)
	}
	row := v.(map[any]any)["loaders"].([]any)[0].(map[any]any)
	if row["loader"] != "app" || row["calls"] != int64(3) || row["failures"] != int64(2) {
		t.Errorf("FILL.RADAR loaders %v", v.(map[any]any)["loaders"])
	}
}
