package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/commands/readthrough"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/swr"
)

// origin is a real HTTP origin that counts its calls.
type origin struct {
	*httptest.Server
	calls   atomic.Int64
	status  atomic.Int64  // reply status; 0 means 200
	delay   atomic.Int64  // nanoseconds to wait before answering
	version atomic.Int64  // part of the body, so refreshes are visible
	gate    chan struct{} // if not nil, each call waits for a receive
	arrived chan struct{} // if not nil, each call sends here on arrival
}

func newOrigin(t *testing.T) *origin {
	o := &origin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.calls.Add(1)
		if o.arrived != nil {
			o.arrived <- struct{}{}
		}
		if o.gate != nil {
			<-o.gate
		}
		time.Sleep(time.Duration(o.delay.Load()))
		if s := o.status.Load(); s != 0 {
			w.WriteHeader(int(s))
			return
		}
		fmt.Fprintf(w, "%s@v%d", r.Header.Get("X-Stampedeless-Key"), o.version.Load())
	}))
	t.Cleanup(o.Close)
	return o
}

// fillServer starts a server with a loader for "k:" keys on o.
func fillServer(t *testing.T, o *origin) (*testServer, *redis.Client) {
	ts := startServer(t, Options{})
	c := redis.NewClient(&redis.Options{Addr: ts.addr, Protocol: 2, PoolSize: 400})
	t.Cleanup(func() { c.Close() })
	if err := c.Do(context.Background(), "LOADER.REGISTER", "k:", o.URL+"/{key}", "TIMEOUT", "5000").Err(); err != nil {
		t.Fatal(err)
	}
	return ts, c
}

// burst runs n concurrent GETFILLs and returns their replies (value or error text).
func burst(c *redis.Client, n int, args ...any) []string {
	out := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Do(context.Background(), append([]any{"GETFILL"}, args...)...).Result()
			switch {
			case err == redis.Nil:
				out[i] = "(nil)"
			case err != nil:
				out[i] = "ERR:" + err.Error()
			default:
				out[i] = fmt.Sprint(v)
			}
		}()
	}
	wg.Wait()
	return out
}

func allEqual(t *testing.T, replies []string, want string) {
	t.Helper()
	for i, r := range replies {
		if r != want {
			t.Fatalf("reply %d = %q, want %q", i, r, want)
		}
	}
}

func TestGetFillColdKeyOneOriginCall(t *testing.T) {
	o := newOrigin(t)
	o.delay.Store(int64(200 * time.Millisecond))
	_, c := fillServer(t, o)
	allEqual(t, burst(c, 300, "k:hot", 60, 0), "k:hot@v0")
	if n := o.calls.Load(); n != 1 {
		t.Fatalf("300 callers on a cold key made %d origin calls, want 1", n)
	}
}

func TestGetFillAfterExpiryWithoutGrace(t *testing.T) {
	o := newOrigin(t)
	_, c := fillServer(t, o)
	ctx := context.Background()
	allEqual(t, burst(c, 1, "k:e", 1, 0), "k:e@v0")
	testwait.For(t, "the entry to expire", func() bool { return c.Exists(ctx, "k:e").Val() == 0 })
	o.version.Store(1)
	o.delay.Store(int64(100 * time.Millisecond))
	allEqual(t, burst(c, 300, "k:e", 60, 0), "k:e@v1")
	if n := o.calls.Load(); n != 2 {
		t.Fatalf("origin calls = %d, want 2 (one per expiry)", n)
	}
}

func TestGetFillServesStaleWhileOneRefreshRuns(t *testing.T) {
	o := newOrigin(t)
	ts, c := fillServer(t, o)
	allEqual(t, burst(c, 1, "k:s", 1, 60), "k:s@v0")
	// Past the fresh deadline, within the grace.
	testwait.For(t, "the entry to go stale", func() bool {
		env, ok := ts.store.Peek([]byte("k:s"))
		return ok && time.Now().UnixNano() >= env.FreshUntil
	})
	o.version.Store(1)
	o.gate = make(chan struct{})
	allEqual(t, burst(c, 300, "k:s", 1, 60), "k:s@v0")
	close(o.gate)
	testwait.For(t, "the refreshed value", func() bool {
		return c.Get(context.Background(), "k:s").Val() == "k:s@v1"
	})
	if n := o.calls.Load(); n != 2 {
		t.Fatalf("origin calls = %d, want 1 fill and exactly 1 refresh", n)
	}
}

// cooldownReply is a GETFILL reply (as burst renders it) during k:f's
// cooldown: it says so, and for how long.
var cooldownReply = regexp.MustCompile(`^ERR:LOADERR k: cooling down for [0-9.]+m?s after: status 503$`)

func TestGetFillFailureIsSharedThenCoolsDown(t *testing.T) {
	o := newOrigin(t)
	o.status.Store(503)
	o.delay.Store(int64(100 * time.Millisecond))
	_, c := fillServer(t, o)
	replies := burst(c, 100, "k:f", 60, 0)
	for _, r := range replies {
		if !strings.HasPrefix(r, "ERR:LOADERR k: status 503") {
			t.Fatalf("reply %q, want -LOADERR k: status 503", r)
		}
	}
	if n := o.calls.Load(); n != 1 {
		t.Fatalf("origin calls = %d, want 1", n)
	}
	// During the cooldown: the failure again, at once, without the origin.
	replies = burst(c, 100, "k:f", 60, 0)
	if n := o.calls.Load(); n != 1 || !cooldownReply.MatchString(replies[0]) {
		t.Fatalf("second burst: %d origin calls, reply %q; want one call and the cooldown's reply", n, replies[0])
	}
	if v, _ := c.Get(context.Background(), "k:f").Result(); v != "" {
		t.Fatalf("a failure was stored as a value: %q", v)
	}
	o.status.Store(0)
	testwait.For(t, "the key to recover after the cooldown", func() bool {
		return burst(c, 1, "k:f", 60, 0)[0] == "k:f@v0"
	})
}

func TestGetFillNotFound(t *testing.T) {
	o := newOrigin(t)
	o.status.Store(404)
	_, c := fillServer(t, o)
	allEqual(t, burst(c, 50, "k:none", 60, 0), "(nil)")
	if n := o.calls.Load(); n != 1 {
		t.Fatalf("origin calls = %d, want 1", n)
	}
	ctx := context.Background()
	if got := fmt.Sprint(c.Do(ctx, "FILL.INFO", "k:none").Val()); !strings.Contains(got, "state negative") {
		t.Fatalf("FILL.INFO of a remembered 404: %s", got)
	}
	// FLUSHALL forgets the 404 like everything else cached.
	o.status.Store(0)
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	allEqual(t, burst(c, 1, "k:none", 60, 0), "k:none@v0")
}

func TestGetFillCallerTimeout(t *testing.T) {
	o := newOrigin(t)
	o.delay.Store(int64(2 * time.Second))
	ts, c := fillServer(t, o)
	start := time.Now()
	replies := burst(c, 50, "k:slow", 60, 0, "TIMEOUT", 300)
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Fatalf("callers with TIMEOUT 300 waited %v", d)
	}
	for _, r := range replies {
		if !strings.HasPrefix(r, "ERR:TIMEOUT") {
			t.Fatalf("reply %q, want -TIMEOUT", r)
		}
	}
	testwait.For(t, "the load to be stored", func() bool {
		v, _ := ts.store.Get([]byte("k:slow"))
		return string(v) == "k:slow@v0"
	})
	if n := o.calls.Load(); n != 1 {
		t.Fatalf("origin calls = %d, want 1", n)
	}
}

// TestWritesDuringALoadWin: a SET or DEL while the load runs wins; the
// caller still gets the loaded value, which is not stored.
func TestWritesDuringALoadWin(t *testing.T) {
	for _, write := range []string{"SET", "DEL"} {
		t.Run(write, func(t *testing.T) {
			o := newOrigin(t)
			o.gate = make(chan struct{})
			o.arrived = make(chan struct{}, 1)
			_, c := fillServer(t, o)
			ctx := context.Background()
			got := make(chan []string)
			go func() { got <- burst(c, 1, "k:w", 60, 0) }()
			<-o.arrived
			if write == "SET" {
				c.Set(ctx, "k:w", "written", 0)
			} else {
				c.Del(ctx, "k:w")
			}
			close(o.gate)
			if r := <-got; r[0] != "k:w@v0" {
				t.Fatalf("the caller got %q, want the loaded value", r[0])
			}
			want := map[string]string{"SET": "written", "DEL": ""}[write]
			if v := c.Get(ctx, "k:w").Val(); v != want {
				t.Fatalf("after a %s during the load, GET = %q, want %q", write, v, want)
			}
		})
	}
}

func TestGetFillErrorsAndLoaderCommands(t *testing.T) {
	o := newOrigin(t)
	_, c := fillServer(t, o)
	ctx := context.Background()
	if err := c.Do(ctx, "GETFILL", "other", 60, 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOLOADER") {
		t.Fatalf("key without a loader: %v", err)
	}
	if err := c.Do(ctx, "GETFILL", "k:x", "abc", 0).Err(); err == nil || err.Error() != "ERR ttl must be a positive integer number of seconds" {
		t.Fatalf("bad ttl: %v", err)
	}
	burst(c, 1, "k:x", 60, 0)
	list := fmt.Sprint(c.Do(ctx, "LOADER.LIST").Val())
	if !strings.Contains(list, "prefix k:") || !strings.Contains(list, "fills 1") {
		t.Fatalf("LOADER.LIST = %s", list)
	}
	if n := c.Do(ctx, "LOADER.UNREGISTER", "k:").Val(); n != int64(1) {
		t.Fatalf("LOADER.UNREGISTER = %v", n)
	}
	if err := c.Do(ctx, "LOADER.REGISTER", "x:", "ftp://nope").Err(); err == nil {
		t.Fatal("an ftp URL was accepted")
	}
}

// TestGetFillMetricsShowCoalescing is the seeds' success test read off the
// metrics: K concurrent requests on an expired key show 1 load and K-1
// coalesced waiters, in /metrics and in INFO.
func TestGetFillMetricsShowCoalescing(t *testing.T) {
	o := newOrigin(t)
	// The origin answers only once every caller has joined the load, so
	// none comes late enough to be served from the store instead.
	o.gate = make(chan struct{})
	ts, c := fillServer(t, o)
	const k = 200
	m := ts.metrics.Fill
	done := make(chan []string)
	go func() { done <- burst(c, k, "k:m", 60, 0) }()
	testwait.For(t, "every caller to join the load", func() bool {
		return metrics.Value(m.Coalesced.WithLabelValues("k:")) == k-1
	})
	close(o.gate)
	allEqual(t, <-done, "k:m@v0")
	if v := metrics.Value(m.Loads.WithLabelValues("k:", "ok")); v != 1 {
		t.Fatalf("fill_loads_total{ok} = %v, want 1", v)
	}
	if v := metrics.Value(m.Coalesced.WithLabelValues("k:")); v != k-1 {
		t.Fatalf("fill_coalesced_waiters_total = %v, want %d", v, k-1)
	}
	if v := metrics.Value(m.Answers.WithLabelValues("k:", "loaded")); v != k {
		t.Fatalf("fill_answers_total{loaded} = %v, want %d", v, k)
	}
	info := c.Info(context.Background(), "stampede").Val()
	for _, want := range []string{"loaders:1", "prefix=k:", "fills=1,", fmt.Sprintf("coalesced_waiters=%d", k-1),
		fmt.Sprintf("answers_loaded=%d", k)} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO stampede lacks %q:\n%s", want, info)
		}
	}
}

func TestFillInfo(t *testing.T) {
	o := newOrigin(t)
	o.gate = make(chan struct{})
	o.arrived = make(chan struct{}, 1)
	_, c := fillServer(t, o)
	ctx := context.Background()
	info := func() string { return fmt.Sprint(c.Do(ctx, "FILL.INFO", "k:i").Val()) }
	if got := info(); !strings.Contains(got, "state missing") || !strings.Contains(got, "loader k:") {
		t.Fatalf("before any fill: %s", got)
	}
	done := make(chan []string)
	go func() { done <- burst(c, 1, "k:i", 60, 30) }()
	<-o.arrived
	if got := info(); !strings.Contains(got, "state loading") || !strings.Contains(got, "in_flight 1") {
		t.Fatalf("during the load: %s", got)
	}
	close(o.gate)
	<-done
	got := info()
	var freshMs, staleMs int64
	fmt.Sscanf(got[strings.Index(got, "fresh_ms"):], "fresh_ms %d stale_ms %d", &freshMs, &staleMs)
	if !strings.Contains(got, "state fresh") || freshMs <= 50_000 || freshMs > 60_000 || staleMs-freshMs < 29_000 || staleMs-freshMs > 30_000 {
		t.Fatalf("after the fill: %s (fresh %d ms, stale %d ms)", got, freshMs, staleMs)
	}
}

// TestRevalidationRenewsWithoutABody: a refresh of an entry with an ETag
// sends If-None-Match, and a 304 renews the deadlines keeping the value.
func TestRevalidationRenewsWithoutABody(t *testing.T) {
	var calls, conditional atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("If-None-Match") == `"v1"` {
			conditional.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		io.WriteString(w, "body-v1")
	}))
	defer srv.Close()
	ts := startServer(t, Options{})
	c := ts.clientRESP2(t)
	ctx := context.Background()
	c.Do(ctx, "LOADER.REGISTER", "r:", srv.URL+"/{key}")
	if v := c.Do(ctx, "GETFILL", "r:1", 1, 60).Val(); v != "body-v1" {
		t.Fatalf("first fill: %v", v)
	}
	first, _ := ts.store.Peek([]byte("r:1"))
	testwait.For(t, "the entry to go stale", func() bool { return time.Now().UnixNano() >= first.FreshUntil })
	if v := c.Do(ctx, "GETFILL", "r:1", 1, 60).Val(); v != "body-v1" {
		t.Fatalf("stale read: %v", v)
	}
	testwait.For(t, "the 304 to renew the entry", func() bool {
		env, ok := ts.store.Peek([]byte("r:1"))
		return ok && env.FreshUntil > first.FreshUntil
	})
	if env, _ := ts.store.Peek([]byte("r:1")); string(env.Value) != "body-v1" || env.Fill == nil || env.Fill.ETag != `"v1"` {
		t.Fatalf("after the 304: value %q, fill %+v", env.Value, env.Fill)
	}
	if calls.Load() != 2 || conditional.Load() != 1 {
		t.Fatalf("origin calls %d (conditional %d), want 2 (1)", calls.Load(), conditional.Load())
	}
}

// TestBackgroundRefreshCap: refreshes beyond --max-background-refreshes are
// dropped (and counted), and the stale value is served anyway.
func TestBackgroundRefreshCap(t *testing.T) {
	o := newOrigin(t)
	store, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	reg := metrics.New()
	loaders := loader.NewRegistry(loader.Options{})
	filler := swr.New(swr.Options{Store: store, Loaders: loaders, Metrics: reg.Fill, MaxBackgroundRefreshes: 2})
	ts := startServer(t, Options{Store: store, Metrics: reg}, readthrough.Options{Loaders: loaders, Filler: filler})
	c := ts.clientRESP2(t)
	ctx := context.Background()
	c.Do(ctx, "LOADER.REGISTER", "k:", o.URL+"/{key}")
	for i := range 5 {
		if err := c.Do(ctx, "GETFILL", fmt.Sprint("k:", i), 1, 60).Err(); err != nil {
			t.Fatal(err)
		}
	}
	testwait.For(t, "the entries to go stale", func() bool {
		for i := range 5 {
			env, _ := store.Peek([]byte(fmt.Sprint("k:", i)))
			if time.Now().UnixNano() < env.FreshUntil {
				return false
			}
		}
		return true
	})
	o.gate = make(chan struct{})
	for i := range 5 {
		if v := c.Do(ctx, "GETFILL", fmt.Sprint("k:", i), 1, 60).Val(); v != fmt.Sprintf("k:%d@v0", i) {
			t.Fatalf("stale read of k:%d = %v", i, v)
		}
	}
	started := metrics.Value(reg.Fill.Refreshes.WithLabelValues("k:", "started"))
	dropped := metrics.Value(reg.Fill.Refreshes.WithLabelValues("k:", "dropped"))
	close(o.gate)
	if started != 2 || dropped != 3 {
		t.Fatalf("refreshes started %v, dropped %v; want 2 and 3", started, dropped)
	}
}

func TestLoaderCommandsGate(t *testing.T) {
	ts := startServer(t, Options{}, readthrough.Options{LoaderCommands: readthrough.LoaderCommandsNo})
	r := dialRaw(t, ts.addr)
	if got := r.do("LOADER.REGISTER", "a:", "http://127.0.0.1:1/{key}"); !strings.Contains(got, "not allowed") {
		t.Fatalf("with --enable-loader-commands no: %s", got)
	}
	if got := r.do("LOADER.LIST"); got != "[]" {
		t.Fatalf("LOADER.LIST is commands.Always allowed: %s", got)
	}
}

// TestGetFillDifferentKeysLoadInParallel: 100 missing keys with a 200 ms
// origin are answered in about 200 ms, not 20 s.
func TestGetFillDifferentKeysLoadInParallel(t *testing.T) {
	o := newOrigin(t)
	o.delay.Store(int64(200 * time.Millisecond))
	_, c := fillServer(t, o)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprint("k:p", i)
			if v, err := c.Do(context.Background(), "GETFILL", key, 60, 0).Text(); err != nil || v != key+"@v0" {
				errs <- fmt.Errorf("GETFILL %s = %q, %v", key, v, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Generous for a shared machine; serial loads would take 20 s.
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("100 keys took %v", d)
	}
	if n := o.calls.Load(); n != 100 {
		t.Fatalf("origin calls = %d, want 100", n)
	}
}

// TestGoneAtOriginDropsStaleCopy: when a refresh learns the key is gone
// (404), the stale copy is removed rather than served until its grace ends.
func TestGoneAtOriginDropsStaleCopy(t *testing.T) {
	o := newOrigin(t)
	ts, c := fillServer(t, o)
	allEqual(t, burst(c, 1, "k:g", 1, 60), "k:g@v0")
	testwait.For(t, "the entry to go stale", func() bool {
		env, ok := ts.store.Peek([]byte("k:g"))
		return ok && time.Now().UnixNano() >= env.FreshUntil
	})
	o.status.Store(404)
	allEqual(t, burst(c, 1, "k:g", 1, 60), "k:g@v0") // stale, starts the refresh
	testwait.For(t, "the stale copy to be dropped", func() bool {
		_, ok := ts.store.Peek([]byte("k:g"))
		return !ok
	})
	allEqual(t, burst(c, 20, "k:g", 1, 60), "(nil)")
	if n := o.calls.Load(); n != 2 {
		t.Fatalf("origin calls = %d, want 2 (the fill, the refresh; the 404 is remembered)", n)
	}
}

// TestDisconnectedCallerLeavesTheFlight: a caller who closes its connection
// stops waiting; the load goes on and its result is stored.
func TestDisconnectedCallerLeavesTheFlight(t *testing.T) {
	o := newOrigin(t)
	o.gate = make(chan struct{})
	o.arrived = make(chan struct{}, 1)
	ts, c := fillServer(t, o)
	r := dialRaw(t, ts.addr)
	r.send(encodeCommand("GETFILL", "k:d", "60", "0"))
	<-o.arrived
	testwait.For(t, "the caller to wait on the flight", func() bool { return ts.fill.Filler.Waiters("k:d") == 1 })
	r.nc.Close()
	testwait.For(t, "the caller to leave the flight", func() bool { return ts.fill.Filler.Waiters("k:d") == 0 })
	close(o.gate)
	testwait.For(t, "the load to be stored", func() bool { return c.Get(context.Background(), "k:d").Val() == "k:d@v0" })
}

// TestPipelineBehindGetFill: commands pipelined behind a waiting GETFILL
// are answered in order once it is.
func TestPipelineBehindGetFill(t *testing.T) {
	o := newOrigin(t)
	o.gate = make(chan struct{})
	ts, _ := fillServer(t, o)
	r := dialRaw(t, ts.addr)
	r.send(encodeCommand("GETFILL", "k:pp", "60", "0"))
	// The rest of the pipeline arrives while the disconnect watcher owns
	// the socket; it must reach the reader intact.
	testwait.For(t, "the GETFILL to wait", func() bool { return ts.fill.Filler.Waiters("k:pp") == 1 })
	r.send(encodeCommand("SET", "after", "1") + encodeCommand("GET", "after"))
	close(o.gate)
	for _, want := range []string{`"k:pp@v0"`, "+OK", `"1"`} {
		if got := r.reply(); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
}

// TestFillBudgetBoundsOriginCalls: with --max-concurrent-fills 5, 50 cold
// keys never have more than 5 origin calls in flight, and all complete.
func TestFillBudgetBoundsOriginCalls(t *testing.T) {
	var inFlight, peak, calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(50 * time.Millisecond)
		inFlight.Add(-1)
		io.WriteString(w, "v")
	}))
	defer srv.Close()
	store, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	loaders := loader.NewRegistry(loader.Options{MaxConcurrentFills: 5})
	ts := startServer(t, Options{Store: store},
		readthrough.Options{Loaders: loaders, Filler: swr.New(swr.Options{Store: store, Loaders: loaders})})
	c := redis.NewClient(&redis.Options{Addr: ts.addr, Protocol: 2, PoolSize: 60})
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	c.Do(ctx, "LOADER.REGISTER", "b:", srv.URL+"/{key}")
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := c.Do(ctx, "GETFILL", fmt.Sprint("b:", i), 60, 0).Text(); err != nil || v != "v" {
				t.Errorf("GETFILL b:%d = %q, %v", i, v, err)
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > 5 {
		t.Fatalf("%d origin calls in flight at once, want at most 5", p)
	}
	if n := calls.Load(); n != 50 {
		t.Fatalf("origin calls = %d, want 50", n)
	}
}

// TestTimeoutZeroFailsFast: TIMEOUT 0 answers at once and never waits,
// while the load it started still runs and is stored.
func TestTimeoutZeroFailsFast(t *testing.T) {
	o := newOrigin(t)
	o.delay.Store(int64(2 * time.Second))
	ts, c := fillServer(t, o)
	start := time.Now()
	r := burst(c, 1, "k:z", 60, 0, "TIMEOUT", 0)[0]
	if !strings.HasPrefix(r, "ERR:TIMEOUT") {
		t.Fatalf("TIMEOUT 0 on a cold key: %q", r)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("TIMEOUT 0 waited %v for a 2 s origin", d)
	}
	testwait.For(t, "the load to be stored", func() bool {
		v, _ := ts.store.Get([]byte("k:z"))
		return string(v) == "k:z@v0"
	})
	if got := burst(c, 1, "k:z", 60, 0, "TIMEOUT", 0)[0]; got != "k:z@v0" {
		t.Fatalf("TIMEOUT 0 on a fresh key: %q", got)
	}
}

// TestFailedRefreshKeepsDeadlinesAndServesStale: a refresh that fails
// leaves the entry's deadlines alone, and during the cooldown the stale
// value is served without calling the origin (stale-if-error).
func TestFailedRefreshKeepsDeadlinesAndServesStale(t *testing.T) {
	o := newOrigin(t)
	ts, c := fillServer(t, o)
	allEqual(t, burst(c, 1, "k:r", 1, 60), "k:r@v0")
	before, _ := ts.store.Peek([]byte("k:r"))
	testwait.For(t, "the entry to go stale", func() bool { return time.Now().UnixNano() >= before.FreshUntil })
	o.status.Store(500)
	allEqual(t, burst(c, 1, "k:r", 1, 60), "k:r@v0") // stale; starts the refresh, which fails
	testwait.For(t, "the refresh to fail", func() bool { return o.calls.Load() == 2 })
	testwait.For(t, "the key to cool down", func() bool {
		return strings.Contains(fmt.Sprint(c.Do(context.Background(), "FILL.INFO", "k:r").Val()), "in_flight 0")
	})
	allEqual(t, burst(c, 50, "k:r", 1, 60), "k:r@v0")
	if n := o.calls.Load(); n != 2 {
		t.Fatalf("origin calls = %d during the cooldown, want 2", n)
	}
	after, _ := ts.store.Peek([]byte("k:r"))
	if after.FreshUntil != before.FreshUntil || after.StaleUntil != before.StaleUntil {
		t.Fatalf("a failed refresh moved the deadlines: %+v -> %+v", before, after)
	}
}

// TestFillIntrospectionTypes checks FILL.INFO's and LOADER.LIST's replies
// exactly: flat arrays of names and values in RESP2, maps in RESP3.
func TestFillIntrospectionTypes(t *testing.T) {
	o := newOrigin(t)
	ts, _ := fillServer(t, o)
	loader := `"prefix" "k:" "url" ` + strconv.Quote(o.URL+"/{key}") +
		` "timeout_ms" :5000 "batch" :0 "headers" [] "source" "register" "version" :1 "in_flight" :0 "fills" "0" "failures" "0" "batches" "0"`
	info := `"state" "missing" "fresh_ms" :0 "stale_ms" :0 "loader" "k:" "in_flight" :0 "tags" []`
	for _, tc := range []struct {
		proto             int
		fillInfo, loaders string
	}{
		{2, "[" + info + "]", "[[" + loader + "]]"},
		{3, "%{" + info + "}", "[%{" + loader + "}]"},
	} {
		c := dialCompat(t, ts.addr)
		if r, err := c.do("HELLO", strconv.Itoa(tc.proto)); err != nil || r.kind == '-' {
			t.Fatalf("HELLO %d: %v %v", tc.proto, r, err)
		}
		if got := c.run(compatExact, []string{"FILL.INFO", "k:nothing"}); got != tc.fillInfo {
			t.Errorf("RESP%d: FILL.INFO = %s, want %s", tc.proto, got, tc.fillInfo)
		}
		if got := c.run(compatExact, []string{"LOADER.LIST"}); got != tc.loaders {
			t.Errorf("RESP%d: LOADER.LIST = %s, want %s", tc.proto, got, tc.loaders)
		}
	}
}

// TestReadThroughOfPresentKeyNeedsNoLoader: GETFILL, MGETFILL and
// FILL.LEASE of a key the store holds answer its value whatever the
// loaders are; only a miss needs a loader. Unregistering a loader leaves
// the keys it filled readable.
func TestReadThroughOfPresentKeyNeedsNoLoader(t *testing.T) {
	o := newOrigin(t)
	ts, c := fillServer(t, o)
	r := dialRaw(t, ts.addr)
	r.do("SET", "plain:1", "by SET")
	if got := r.do("GETFILL", "plain:1", "60", "0"); got != `"by SET"` {
		t.Errorf("GETFILL of a SET key under no loader = %s, want its value", got)
	}
	if got := r.do("GETFILL", "plain:2", "60", "0"); got != "-NOLOADER no loader registered for key 'plain:2'" {
		t.Errorf("GETFILL of a missing key under no loader = %s", got)
	}
	if got := burst(c, 1, "k:a", 60, 0)[0]; got != "k:a@v0" {
		t.Fatalf("GETFILL through the loader = %s", got)
	}
	if got := r.do("LOADER.UNREGISTER", "k:"); got != ":1" {
		t.Fatal(got)
	}
	if got := r.do("GETFILL", "k:a", "60", "0"); got != `"k:a@v0"` {
		t.Errorf("GETFILL of a filled key after its loader went = %s, want the value", got)
	}
	if got := r.do("MGETFILL", "60", "0", "k:a", "plain:1", "plain:2"); got != `["k:a@v0" "by SET" -NOLOADER no loader registered for key 'plain:2']` {
		t.Errorf("MGETFILL after the loader went = %s", got)
	}
	if got := r.do("FILL.LEASE", "k:a", "60", "0"); got != `["k:a@v0" (nil)]` {
		t.Errorf("FILL.LEASE of a present key = %s, want [value nil]", got)
	}
	r.do("HSET", "plain:h", "f", "v")
	if got := r.do("GETFILL", "plain:h", "60", "0"); !strings.HasPrefix(got, "-WRONGTYPE") {
		t.Errorf("GETFILL of a hash under no loader = %s, want -WRONGTYPE", got)
	}
	if n := o.calls.Load(); n != 1 {
		t.Errorf("origin calls = %d, want the one fill", n)
	}
}

// TestReadThroughArgumentErrors: each bad ttl or grace gets its own text,
// naming the argument and its rule; a deadline past the engine's clock
// (2262) is refused, rather than answered and never stored (SET ... EX,
// which must take what Redis takes, keeps one as 2262's last instant); an
// empty LOADER.REGISTER prefix is refused.
func TestReadThroughArgumentErrors(t *testing.T) {
	o := newOrigin(t)
	ts, _ := fillServer(t, o)
	r := dialRaw(t, ts.addr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"GETFILL", "k:x", "0", "0"}, "-ERR ttl must be a positive integer number of seconds"},
		{[]string{"GETFILL", "k:x", "-5", "0"}, "-ERR ttl must be a positive integer number of seconds"},
		{[]string{"GETFILL", "k:x", "1.5", "0"}, "-ERR ttl must be a positive integer number of seconds"},
		{[]string{"GETFILL", "k:x", "60", "-1"}, "-ERR grace must be 0 or a positive integer number of seconds"},
		{[]string{"GETFILL", "k:x", "60", "x"}, "-ERR grace must be 0 or a positive integer number of seconds"},
		{[]string{"GETFILL", "demo:big", "8000000000", "30"}, "-ERR invalid expire time in 'getfill' command"},
		{[]string{"SET", "demo:big", "v", "EX", "8000000000"}, "+OK"},
		{[]string{"GETFILL", "k:x", "60", "9223372036854775807"}, "-ERR invalid expire time in 'getfill' command"},
		{[]string{"GETFILL", "k:x", "9223372036854775807", "9223372036854775807"}, "-ERR invalid expire time in 'getfill' command"},
		{[]string{"FILL.LEASE", "k:x", "8000000000", "0"}, "-ERR invalid expire time in 'fill.lease' command"},
		{[]string{"LOADER.REGISTER", "", o.URL + "/{key}"}, "-ERR prefix must not be empty: a loader for every key is registered only at start, with --loader =url"},
	} {
		if got := r.do(tc.args...); got != tc.want {
			t.Errorf("%v = %s, want %s", tc.args, got, tc.want)
		}
	}
	if n := o.calls.Load(); n != 0 {
		t.Errorf("origin calls = %d after refused commands", n)
	}
	if got := r.do("LOADER.LIST"); strings.Contains(got, `"prefix" ""`) {
		t.Errorf("an empty prefix was registered: %s", got)
	}
}
