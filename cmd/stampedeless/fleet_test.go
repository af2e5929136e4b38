package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/swr"
)

// The --redis mode suite: three real stampedeless processes sharing one
// real Redis (a single redis-server, then a three-node Redis Cluster), a
// real HTTP origin that counts its calls, and go-redis clients spread over
// the replicas.

// fleetOrigin is the origin of the fleet tests. Each answer carries the
// number of the call that made it, so a test can tell a refreshed value
// from a stale one.
type fleetOrigin struct {
	*httptest.Server
	calls, inFlight, maxInFlight atomic.Int64
	delay                        atomic.Int64 // nanoseconds each call takes
	fail                         atomic.Bool  // answer 500
	// stallFirst, if set, holds the next call until it is closed.
	mu         sync.Mutex
	stallFirst chan struct{}
}

func newFleetOrigin(t *testing.T) *fleetOrigin {
	o := &fleetOrigin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := o.calls.Add(1)
		cur := o.inFlight.Add(1)
		defer o.inFlight.Add(-1)
		for {
			m := o.maxInFlight.Load()
			if cur <= m || o.maxInFlight.CompareAndSwap(m, cur) {
				break
			}
		}
		o.mu.Lock()
		stall := o.stallFirst
		o.stallFirst = nil
		o.mu.Unlock()
		if stall != nil {
			<-stall
		}
		time.Sleep(time.Duration(o.delay.Load()))
		if o.fail.Load() {
			http.Error(w, "database down", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "%s#%d", r.Header.Get("X-Stampedeless-Key"), n)
	}))
	t.Cleanup(o.Close)
	return o
}

// stall makes the next call wait until the returned func is called.
func (o *fleetOrigin) stall() (release func()) {
	ch := make(chan struct{})
	o.mu.Lock()
	o.stallFirst = ch
	o.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

type fleet struct {
	replicas []*replicaProc
	origin   *fleetOrigin
}

// replicaProc is one stampedeless process of a fleet and a client of it.
type replicaProc struct {
	addr string
	rdb  *redis.Client
	pid  int
	kill func()
}

// startFleet starts n replicas sharing redisSpec, each with the loader
// "k:" on origin (timeout loadTimeout).
func startFleet(t *testing.T, redisArgs []string, n int, origin *fleetOrigin, loadTimeout time.Duration, extra ...string) *fleet {
	t.Helper()
	f := &fleet{origin: origin}
	for range n {
		addr := redistest.FreeAddr(t)
		// A generous --redis-timeout: CI runs other race-enabled test
		// binaries on the same two cores, and a Redis call starved for
		// 250 ms (the default) would rightly make a replica load alone,
		// which these tests count as a failure. A stopped Redis still
		// fails fast: its connections are refused.
		args := append([]string{"--addr", addr, "--metrics-addr", ""}, redisArgs...)
		if !slices.Contains(extra, "--redis-timeout") {
			args = append(args, "--redis-timeout", "2s")
		}
		args = append(args, extra...)
		cmd := startBinary(t, nil, args...)
		rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 200, ReadTimeout: 30 * time.Second})
		t.Cleanup(func() { rdb.Close() })
		err := rdb.Do(context.Background(), "LOADER.REGISTER", "k:", origin.URL+"/{key}",
			"TIMEOUT", loadTimeout.Milliseconds()).Err()
		if err != nil {
			t.Fatal(err)
		}
		f.replicas = append(f.replicas, &replicaProc{addr: addr, rdb: rdb, pid: cmd.Process.Pid,
			kill: func() { cmd.Process.Kill() }})
	}
	f.waitJoined(t)
	f.report(t)
	return f
}

// info returns one field of a replica's INFO cluster.
func (r *replicaProc) info(t *testing.T, field string) string {
	t.Helper()
	s, err := r.rdb.Info(context.Background(), "cluster").Result()
	if err != nil {
		t.Fatalf("INFO cluster on %s: %v", r.addr, err)
	}
	for _, line := range strings.Split(s, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO cluster has no %s:\n%s", field, s)
	return ""
}

// waitJoined waits until every replica has Redis and hears every other.
func (f *fleet) waitJoined(t *testing.T) {
	t.Helper()
	want := strconv.Itoa(len(f.replicas) - 1)
	for _, r := range f.replicas {
		if !testwait.Until(func() bool {
			return r.info(t, "cluster_redis_up") == "1" && r.info(t, "cluster_peers") == want
		}) {
			t.Fatalf("replica %s: redis_up %s, peers %s (want %s)", r.addr,
				r.info(t, "cluster_redis_up"), r.info(t, "cluster_peers"), want)
		}
	}
}

// burst sends k GETFILLs of key spread over the replicas at once and
// returns each reply (value or error text).
func (f *fleet) burst(k int, args ...any) []string {
	out := make([]string, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.replicas[i%len(f.replicas)]
			v, err := r.rdb.Do(context.Background(), append([]any{"GETFILL"}, args...)...).Text()
			switch {
			case errors.Is(err, redis.Nil):
				out[i] = "(nil)"
			case err != nil:
				out[i] = "error: " + err.Error()
			default:
				out[i] = v
			}
		}()
	}
	wg.Wait()
	return out
}

// allEqual fails unless every reply is want (or, with prefix, starts with it).
func allEqual(t *testing.T, what string, replies []string, want string, prefix bool) {
	t.Helper()
	for i, got := range replies {
		if got != want && !(prefix && strings.HasPrefix(got, want)) {
			t.Fatalf("%s: reply %d of %d is %q, want %q", what, i, len(replies), got, want)
		}
	}
}

// report logs every replica's INFO cluster counters when the test failed,
// to tell a Redis timeout from a lease problem.
func (f *fleet) report(t *testing.T) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, r := range f.replicas {
			s, err := r.rdb.Info(context.Background(), "cluster").Result()
			t.Logf("replica %s: %s %v", r.addr, strings.ReplaceAll(s, "\r\n", " "), err)
		}
	})
}

// answers sums the replicas' answers of kind by the loader k: (INFO
// stampede).
func (f *fleet) answers(t *testing.T, kind swr.AnswerKind) int {
	t.Helper()
	sum := 0
	for _, r := range f.replicas {
		s, err := r.rdb.Info(context.Background(), "stampede").Result()
		if err != nil {
			t.Fatalf("INFO stampede on %s: %v", r.addr, err)
		}
		field := "answers_" + string(kind) + "="
		for _, line := range strings.Split(s, "\r\n") {
			if !strings.Contains(line, "prefix=k:,") {
				continue
			}
			for _, kv := range strings.Split(line, ",") {
				if v, ok := strings.CutPrefix(kv, field); ok {
					sum += atoi(t, v)
				}
			}
		}
	}
	return sum
}

func (f *fleet) waitCalls(t *testing.T, want int64) {
	t.Helper()
	if !testwait.Until(func() bool { return f.origin.calls.Load() >= want }) {
		t.Fatalf("origin calls = %d, want %d", f.origin.calls.Load(), want)
	}
}

// sharedRedis is what the fleet shares: one redis-server or a Redis Cluster.
type sharedRedis interface {
	Stop()
	Restart()
}

// redisModes runs fn against a single redis-server, a master behind a
// Sentinel, and a Redis Cluster of three masters; redisArgs are the
// replicas' flags that point at it.
func redisModes(t *testing.T, fn func(t *testing.T, redisArgs []string, shared sharedRedis)) {
	t.Run("redis-server", func(t *testing.T) {
		s := redistest.Start(t)
		fn(t, []string{"--redis", s.Addr()}, s)
	})
	t.Run("redis-sentinel", func(t *testing.T) {
		s := redistest.StartSentinel(t)
		fn(t, []string{"--redis", s.Addr, "--redis-master-name", s.MasterName}, s)
	})
	t.Run("redis-cluster", func(t *testing.T) {
		c := redistest.StartCluster(t, 3)
		fn(t, []string{"--redis", c.Addrs()}, c)
	})
}

// TestFleetOneFillPerKey: 300 clients over 3 replicas make one origin call
// per fill fleet-wide, cold, after expiry with no grace, for a stale entry
// (one refresh, every caller served stale at once), and on a failing
// origin (one call, every caller gets its error, and the cooldown holds
// fleet-wide).
func TestFleetOneFillPerKey(t *testing.T) {
	redisModes(t, func(t *testing.T, spec []string, _ sharedRedis) {
		origin := newFleetOrigin(t)
		origin.delay.Store(int64(200 * time.Millisecond))
		// The loader's timeout outlasts the stale burst, during which the
		// refresh is held at the origin.
		f := startFleet(t, spec, 3, origin, 5*time.Second)

		// Cold.
		allEqual(t, "cold burst", f.burst(300, "k:cold", 60, 0), "k:cold#1", false)
		if n := origin.calls.Load(); n != 1 {
			t.Fatalf("cold burst: %d origin calls, want 1", n)
		}

		// After expiry with grace 0 (a 1 s ttl, jittered shorter).
		allEqual(t, "short-lived", f.burst(300, "k:short", 1, 0), "k:short#2", false)
		time.Sleep(1100 * time.Millisecond)
		allEqual(t, "after expiry", f.burst(300, "k:short", 1, 0), "k:short#3", false)
		if n := origin.calls.Load(); n != 3 {
			t.Fatalf("after expiry: %d origin calls in all, want 3", n)
		}

		// Stale: every caller gets the old value at once, one refresh runs.
		// The refresh is held at the origin until every caller is
		// answered, so that a burst slower than the refresh (a busy
		// machine) cannot see its value; a caller made to wait for the
		// refresh waits its loader's timeout and counts as timeout_stale.
		allEqual(t, "graced", f.burst(300, "k:grace", 1, 30), "k:grace#4", false)
		time.Sleep(1100 * time.Millisecond)
		waited := f.answers(t, swr.AnswerTimeoutStale)
		release := origin.stall()
		defer release()
		allEqual(t, "stale burst", f.burst(300, "k:grace", 1, 30), "k:grace#4", false)
		if n := f.answers(t, swr.AnswerTimeoutStale) - waited; n != 0 {
			t.Fatalf("stale burst: %d callers waited for the refresh, want 0", n)
		}
		release()
		f.waitCalls(t, 5)
		for _, r := range f.replicas {
			testwait.For(t, "replica "+r.addr+" to serve the refreshed value", func() bool {
				return r.rdb.Do(context.Background(), "GETFILL", "k:grace", 1, 30).Val() == "k:grace#5"
			})
		}
		if n := origin.calls.Load(); n != 5 {
			t.Fatalf("stale burst: %d origin calls in all, want 5 (one refresh)", n)
		}

		// Failing origin: one call, the error for everyone, then the
		// cooldown fleet-wide.
		origin.delay.Store(int64(200 * time.Millisecond))
		origin.fail.Store(true)
		// A caller of the first burst that comes after the failure gets
		// the cooldown's reply, which says so; the whole second burst does.
		failed := f.burst(300, "k:bad", 60, 0)
		allEqual(t, "failing origin", failed, "error: LOADERR k: ", true)
		cooling := f.burst(300, "k:bad", 60, 0)
		allEqual(t, "second burst", cooling, "error: LOADERR k: cooling down for ", true)
		for _, r := range append(failed, cooling...) {
			if !strings.HasSuffix(r, "status 500") {
				t.Fatalf("failing origin: reply %q, want the origin's status 500", r)
			}
		}
		if n := origin.calls.Load(); n != 6 {
			t.Fatalf("failing origin: %d origin calls in all, want 6 (one for the failure)", n)
		}
	})
}

// TestFleetLeaseTakeover: a replica that stalls (SIGSTOP) or dies (SIGKILL)
// while it holds a key's lease is replaced once the lease expires; the
// callers on the other replicas get the value, and the stalled holder's
// late result is rejected.
func TestFleetLeaseTakeover(t *testing.T) {
	redisModes(t, func(t *testing.T, spec []string, _ sharedRedis) {
		origin := newFleetOrigin(t)
		f := startFleet(t, spec, 3, origin, time.Second)
		holder := f.replicas[0]
		for _, how := range []string{"stalled", "killed"} {
			key := "k:" + how
			before := origin.calls.Load()
			release := origin.stall()
			defer release()
			go holder.rdb.Do(context.Background(), "GETFILL", key, 60, 0, "TIMEOUT", 0)
			testwait.For(t, "the holder's load to reach the origin", func() bool { return origin.inFlight.Load() > 0 })
			sig := syscall.SIGSTOP
			if how == "killed" {
				sig = syscall.SIGKILL
			}
			syscall.Kill(holder.pid, sig)
			others := &fleet{replicas: f.replicas[1:], origin: origin}
			want := fmt.Sprintf("%s#%d", key, before+2)
			allEqual(t, how+" holder", others.burst(100, key, 60, 0, "TIMEOUT", 10000), want, false)
			if n := origin.calls.Load(); n != before+2 {
				t.Fatalf("%s holder: %d origin calls, want 2", how, n-before)
			}
			if how == "killed" {
				break
			}
			// The stalled holder wakes up and finishes its load late: its
			// result must not replace the newer one.
			release()
			syscall.Kill(holder.pid, syscall.SIGCONT)
			if !testwait.Until(func() bool { return holder.info(t, "publications_rejected") == "1" }) {
				t.Fatalf("the stalled holder's publication was not rejected: publications_rejected %s",
					holder.info(t, "publications_rejected"))
			}
			for _, r := range others.replicas {
				if v := r.rdb.Do(context.Background(), "GETFILL", key, 60, 0).Val(); v != want {
					t.Fatalf("after the late publication %s serves %q, want %q", r.addr, v, want)
				}
			}
			taken := 0
			for _, r := range others.replicas {
				taken += atoi(t, r.info(t, "leases_takeover"))
			}
			if taken != 1 {
				t.Fatalf("takeovers = %d, want 1", taken)
			}
		}
	})
}

// TestFleetLeaseWaitTakeover: a lease holder killed (SIGKILL) while its
// lease has long to live is replaced when the other replicas' --lease-wait
// runs out: one of them takes the lease over and loads, the other follows
// it, so the key costs one more origin call, every caller on the two
// replicas gets that value, and the fleet fill budget holds.
func TestFleetLeaseWaitTakeover(t *testing.T) {
	for _, budget := range []string{"0", "2"} {
		t.Run("fleet-max-concurrent-fills="+budget, func(t *testing.T) {
			s := redistest.Start(t)
			origin := newFleetOrigin(t)
			// The lease lives 1 s + 10% + --redis-timeout 2 s, three times
			// --lease-wait, which is also how long the winner has to load
			// before the other follower would take its lease over too.
			f := startFleet(t, []string{"--redis", s.Addr()}, 3, origin, time.Second,
				"--lease-wait", "1s", "--fleet-max-concurrent-fills", budget)
			holder, others := f.replicas[0], &fleet{replicas: f.replicas[1:], origin: origin}
			release := origin.stall()
			defer release()
			go holder.rdb.Do(context.Background(), "GETFILL", "k:x", 60, 0, "TIMEOUT", 0)
			testwait.For(t, "the holder's load to reach the origin", func() bool { return origin.inFlight.Load() > 0 })
			syscall.Kill(holder.pid, syscall.SIGKILL)
			allEqual(t, "after the holder was killed", others.burst(100, "k:x", 60, 0, "TIMEOUT", 10000), "k:x#2", false)
			if n := origin.calls.Load(); n != 2 {
				t.Fatalf("%d origin calls, want 2 (the killed holder's and one takeover)", n)
			}
			taken := 0
			for _, r := range others.replicas {
				taken += atoi(t, r.info(t, "leases_takeover"))
			}
			if taken != 1 {
				t.Fatalf("takeovers = %d, want 1", taken)
			}
			if m := origin.maxInFlight.Load(); budget != "0" && m > 2 {
				t.Fatalf("%d origin calls in flight at once, want at most %s", m, budget)
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFleetWritesInvalidate: a write acknowledged on one replica is what the
// others serve next, also where they held the old value.
func TestFleetWritesInvalidate(t *testing.T) {
	redisModes(t, func(t *testing.T, spec []string, _ sharedRedis) {
		f := startFleet(t, spec, 3, newFleetOrigin(t), time.Second)
		ctx := context.Background()
		a, b, c := f.replicas[0].rdb, f.replicas[1].rdb, f.replicas[2].rdb
		get := func(r *redis.Client, key string) string {
			v, err := r.Get(ctx, key).Result()
			if errors.Is(err, redis.Nil) {
				return "(nil)"
			}
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		for i := range 50 {
			old, cur := fmt.Sprint("old", i), fmt.Sprint("new", i)
			a.Set(ctx, "user", old, 0)
			if get(b, "user") != old || get(c, "user") != old {
				t.Fatalf("round %d: the first write is not seen", i)
			}
			a.Set(ctx, "user", cur, 0)
			if v1, v2 := get(b, "user"), get(c, "user"); v1 != cur || v2 != cur {
				t.Fatalf("round %d: after SET on A, B has %q and C %q, want %q", i, v1, v2, cur)
			}
		}
		a.Del(ctx, "user")
		if v1, v2 := get(b, "user"), get(c, "user"); v1 != "(nil)" || v2 != "(nil)" {
			t.Fatalf("after DEL on A, B has %q and C %q", v1, v2)
		}

		// A GETFILL value overwritten by a client is the client's value
		// everywhere.
		if v := b.Do(ctx, "GETFILL", "k:x", 60, 0).Val(); v != "k:x#1" {
			t.Fatalf("GETFILL = %q", v)
		}
		c.Do(ctx, "GETFILL", "k:x", 60, 0)
		a.Set(ctx, "k:x", "written", 0)
		for _, r := range []*redis.Client{b, c} {
			if v := r.Do(ctx, "GETFILL", "k:x", 60, 0).Val(); v != "written" {
				t.Fatalf("GETFILL after SET on A = %q, want the write", v)
			}
		}

		// Expiry, counters, multi-key writes and FLUSHALL travel too.
		a.Set(ctx, "session", "s", 0)
		get(c, "session")
		a.Expire(ctx, "session", 100*time.Second)
		if ttl := c.TTL(ctx, "session").Val(); ttl < 90*time.Second || ttl > 100*time.Second {
			t.Fatalf("TTL on C after EXPIRE on A = %v", ttl)
		}
		a.Incr(ctx, "hits")
		b.Incr(ctx, "hits")
		if n := c.Incr(ctx, "hits").Val(); n != 3 {
			t.Fatalf("INCR on A, B, C = %d, want 3", n)
		}
		// Conditional writes see the other replicas' keys.
		a.Set(ctx, "lock", "a", 0)
		if ok := c.SetNX(ctx, "lock", "c", 0).Val(); ok {
			t.Fatal("SET NX on C succeeded over A's key")
		}
		if old := b.SetArgs(ctx, "lock", "b", redis.SetArgs{Get: true}).Val(); old != "a" {
			t.Fatalf("SET GET on B returned %q, want A's value", old)
		}
		a.MSet(ctx, "m1", "1", "m2", "2")
		if v := c.MGet(ctx, "m1", "m2").Val(); fmt.Sprint(v) != "[1 2]" {
			t.Fatalf("MGET on C after MSET on A = %v", v)
		}
		// Every database is shared, each apart: a key of database 1
		// written on A is on C in database 1 only; FLUSHDB of database 1
		// on B empties database 1 everywhere and leaves database 0; MOVE
		// and COPY ... DB reach the other database's part; SWAPDB is
		// refused; FLUSHALL on B empties every database everywhere.
		on := func(r *redis.Client, db int) *redis.Client {
			d := redis.NewClient(&redis.Options{Addr: r.Options().Addr, DB: db})
			t.Cleanup(func() { d.Close() })
			return d
		}
		a1, b1, c1 := on(a, 1), on(b, 1), on(c, 1)
		if err := a1.Set(ctx, "own", "db1's", 0).Err(); err != nil {
			t.Fatal(err)
		}
		a.Set(ctx, "own", "db0's", 0)
		if v1, v0 := get(c1, "own"), get(c, "own"); v1 != "db1's" || v0 != "db0's" {
			t.Fatalf("C after SETs of own on A in databases 1 and 0: %q and %q", v1, v0)
		}
		a.Set(ctx, "mv", "moved", 0)
		if n, err := a.Move(ctx, "mv", 1).Result(); err != nil || !n {
			t.Fatalf("MOVE on A: %v %v", n, err)
		}
		if v1, v0 := get(c1, "mv"), get(c, "mv"); v1 != "moved" || v0 != "(nil)" {
			t.Fatalf("C after MOVE mv 1 on A: database 1 %q, database 0 %q", v1, v0)
		}
		if n, err := a.Copy(ctx, "own", "copied", 2, false).Result(); err != nil || n != 1 {
			t.Fatalf("COPY ... DB 2 on A: %v %v", n, err)
		}
		if v := get(on(c, 2), "copied"); v != "db0's" {
			t.Fatalf("C's database 2 after COPY own copied DB 2 on A: %q", v)
		}
		if err := a.Do(ctx, "SWAPDB", 0, 1).Err(); err == nil || !strings.Contains(err.Error(), "--redis") {
			t.Fatalf("SWAPDB with --redis: %v, want a refusal naming --redis", err)
		}
		if err := b1.FlushDB(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if v1, v0 := get(c1, "own"), get(c, "own"); v1 != "(nil)" || v0 != "db0's" {
			t.Fatalf("C after FLUSHDB of database 1 on B: database 1 %q, database 0 %q", v1, v0)
		}
		if n := a1.DBSize(ctx).Val(); n != 0 {
			t.Fatalf("A's database 1 after FLUSHDB there on B: DBSIZE %d", n)
		}
		a1.Set(ctx, "own", "again", 0)
		if err := b.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		for _, r := range []*redis.Client{a, c} {
			if n := r.DBSize(ctx).Val(); n != 0 {
				t.Fatalf("DBSIZE after FLUSHALL on B = %d", n)
			}
			if v := get(r, "hits"); v != "(nil)" {
				t.Fatalf("GET after FLUSHALL on B = %q", v)
			}
		}
		if v1, v2 := get(c1, "own"), get(on(c, 2), "copied"); v1 != "(nil)" || v2 != "(nil)" {
			t.Fatalf("C's databases 1 and 2 after FLUSHALL on B: %q, %q", v1, v2)
		}
	})
}

// TestFleetFillsPerDatabase: a burst of GETFILLs of one key in database 3
// spread over three replicas calls the origin once, as in database 0, and
// the same name in database 0 is another key with its own fill.
func TestFleetFillsPerDatabase(t *testing.T) {
	redisModes(t, func(t *testing.T, spec []string, _ sharedRedis) {
		origin := newFleetOrigin(t)
		origin.delay.Store(int64(50 * time.Millisecond))
		f := startFleet(t, spec, 3, origin, 5*time.Second)
		ctx := context.Background()
		in3 := make([]*redis.Client, len(f.replicas))
		for i, r := range f.replicas {
			in3[i] = redis.NewClient(&redis.Options{Addr: r.addr, DB: 3, PoolSize: 50})
			t.Cleanup(func() { in3[i].Close() })
		}
		out := make([]string, 60)
		var wg sync.WaitGroup
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := in3[i%len(in3)].Do(ctx, "GETFILL", "k:db3", 60, 30).Text()
				out[i] = fmt.Sprint(v, err)
			}()
		}
		wg.Wait()
		allEqual(t, "GETFILL in database 3", out, "k:db3#1<nil>", false)
		if n := origin.calls.Load(); n != 1 {
			t.Fatalf("60 GETFILLs of one key in database 3 over 3 replicas: %d origin calls, want 1", n)
		}
		if v := f.replicas[1].rdb.Do(ctx, "GETFILL", "k:db3", 60, 30).Val(); v != "k:db3#2" {
			t.Fatalf("GETFILL of the same name in database 0: %v, want a fill of its own", v)
		}
		for i, c := range in3 {
			if v := c.Get(ctx, "k:db3").Val(); v != "k:db3#1" {
				t.Fatalf("GET in database 3 on replica %d: %q", i, v)
			}
		}
	})
}

// TestFleetFillBudget: --fleet-max-concurrent-fills 5 bounds the origin
// calls in flight across the three replicas, and every fill completes.
func TestFleetFillBudget(t *testing.T) {
	redisModes(t, func(t *testing.T, spec []string, _ sharedRedis) {
		origin := newFleetOrigin(t)
		origin.delay.Store(int64(20 * time.Millisecond))
		f := startFleet(t, spec, 3, origin, time.Second, "--fleet-max-concurrent-fills", "5")
		var wg sync.WaitGroup
		errs := make(chan error, 300)
		for key := range 100 {
			for _, r := range f.replicas {
				wg.Add(1)
				go func() {
					defer wg.Done()
					k := fmt.Sprint("k:", key)
					v, err := r.rdb.Do(context.Background(), "GETFILL", k, 60, 0, "TIMEOUT", 20000).Text()
					if err == nil && !strings.HasPrefix(v, k+"#") {
						err = fmt.Errorf("GETFILL %s = %q", k, v)
					}
					if err != nil {
						errs <- err
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if m := origin.maxInFlight.Load(); m > 5 {
			t.Fatalf("%d origin calls were in flight at once, want at most 5", m)
		}
		if n := origin.calls.Load(); n != 100 {
			t.Fatalf("%d origin calls for 100 keys", n)
		}
	})
}

// TestFleetRedisDown: with Redis stopped mid-burst no client waits past its
// TIMEOUT, the replicas go on coalescing each on its own, and fleet-wide
// coalescing is back once Redis is.
func TestFleetRedisDown(t *testing.T) {
	redisModes(t, func(t *testing.T, spec []string, shared sharedRedis) {
		origin := newFleetOrigin(t)
		origin.delay.Store(int64(300 * time.Millisecond))
		f := startFleet(t, spec, 3, origin, time.Second)
		ctx := context.Background()

		var wg sync.WaitGroup
		bad := make(chan string, 300)
		for i := range 300 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if msg := timedGetFill(ctx, f.replicas[i%3], fmt.Sprint("k:burst", i%30), true); msg != "" {
					bad <- msg
				}
			}()
		}
		// Redis stops while the burst's loads are at the origin.
		testwait.For(t, "the burst's loads to reach the origin", func() bool { return origin.inFlight.Load() > 0 })
		shared.Stop()
		wg.Wait()
		close(bad)
		for s := range bad {
			t.Fatal(s)
		}

		// Redis down: each replica coalesces on its own.
		for _, r := range f.replicas {
			// Each probe's GETFILL is what lets the replica notice.
			testwait.For(t, "replica "+r.addr+" to report Redis down", func() bool {
				if r.info(t, "cluster_redis_up") == "0" {
					return true
				}
				if msg := timedGetFill(ctx, r, "k:probe", true); msg != "" {
					t.Fatal(msg)
				}
				return false
			})
		}
		before := origin.calls.Load()
		allEqual(t, "Redis down", f.burst(300, "k:alone", 60, 0), "k:alone#", true)
		if n := origin.calls.Load() - before; n < 1 || n > 3 {
			t.Fatalf("with Redis down: %d origin calls for one key over 3 replicas, want 1 to 3", n)
		}

		shared.Restart()
		f.waitJoined(t)
		before = origin.calls.Load()
		allEqual(t, "Redis back", f.burst(300, "k:together", 60, 0), "k:together#", true)
		if n := origin.calls.Load() - before; n != 1 {
			t.Fatalf("with Redis back: %d origin calls, want 1", n)
		}
	})
}

// timedGetFill sends GETFILL key 60 0 TIMEOUT 2000 to r and says what was
// wrong with it, if anything: no client waits much past its TIMEOUT, and
// with the origin up the answer is the key's value (Redis gone only costs
// coalescing) or, if timeoutOK, -TIMEOUT: a Redis that went away in the
// middle of an operation may cost that operation the whole --redis-timeout,
// here as long as the TIMEOUT.
func timedGetFill(ctx context.Context, r *replicaProc, key string, timeoutOK bool) string {
	start := time.Now()
	v, err := r.rdb.Do(ctx, "GETFILL", key, 60, 0, "TIMEOUT", 2000).Text()
	if d := time.Since(start); d > 5*time.Second {
		return fmt.Sprintf("a GETFILL took %v (err %v) with TIMEOUT 2000", d, err)
	}
	if timeoutOK && err != nil && strings.HasPrefix(err.Error(), "TIMEOUT ") {
		return ""
	}
	if err != nil || !strings.HasPrefix(v, key+"#") {
		return fmt.Sprintf("GETFILL %s on %s answered %q, %v; want its value", key, r.addr, v, err)
	}
	return ""
}

// TestFleetRedisHung: a Redis that stops answering without closing its
// connections (SIGSTOP) costs a command at most --redis-timeout; callers
// get answers within their TIMEOUT, the replicas go on alone, and they
// coalesce fleet-wide again once Redis answers.
func TestFleetRedisHung(t *testing.T) {
	s := redistest.Start(t)
	origin := newFleetOrigin(t)
	origin.delay.Store(int64(100 * time.Millisecond))
	f := startFleet(t, []string{"--redis", s.Addr()}, 3, origin, time.Second, "--redis-timeout", "300ms")
	ctx := context.Background()
	s.Pause()
	defer s.Resume()

	var wg sync.WaitGroup
	slow := make(chan string, 600)
	for i := range 300 {
		wg.Add(2)
		r := f.replicas[i%3]
		go func() {
			defer wg.Done()
			if msg := timedGetFill(ctx, r, fmt.Sprint("k:hung", i%30), false); msg != "" {
				slow <- msg
			}
		}()
		go func() {
			defer wg.Done()
			start := time.Now()
			err := r.rdb.Set(ctx, fmt.Sprint("plain", i), "v", 0).Err()
			if d := time.Since(start); d > 5*time.Second || err != nil {
				slow <- fmt.Sprintf("a SET took %v (err %v) with --redis-timeout 300ms", d, err)
			}
		}()
	}
	wg.Wait()
	close(slow)
	for msg := range slow {
		t.Fatal(msg)
	}
	for _, r := range f.replicas {
		if up := r.info(t, "cluster_redis_up"); up != "0" {
			t.Fatalf("replica %s: cluster_redis_up %s with Redis hung", r.addr, up)
		}
	}

	s.Resume()
	f.waitJoined(t)
	before := origin.calls.Load()
	allEqual(t, "Redis answering again", f.burst(300, "k:after", 60, 0), "k:after#", true)
	if n := origin.calls.Load() - before; n != 1 {
		t.Fatalf("after Redis answered again: %d origin calls, want 1", n)
	}
}

// TestFleetPubSub: a subscriber on one replica receives what clients
// publish on another, in the order they published it, through channels,
// patterns and shard channels; PUBLISH counts the subscribers of the
// replica it ran on.
func TestFleetPubSub(t *testing.T) {
	redisModes(t, func(t *testing.T, spec []string, _ sharedRedis) {
		f := startFleet(t, spec, 2, newFleetOrigin(t), time.Second)
		ctx := context.Background()
		a, b := f.replicas[0].rdb, f.replicas[1].rdb
		subscribe := func(ps *redis.PubSub) *redis.PubSub {
			t.Helper()
			t.Cleanup(func() { ps.Close() })
			if _, err := ps.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			return ps
		}
		// Each replica's relay subscription to Redis is up once a message
		// published on the other reaches it.
		for _, pair := range [][2]*redis.Client{{a, b}, {b, a}} {
			probe := subscribe(pair[0].Subscribe(ctx, "probe"))
			for {
				pair[1].Publish(ctx, "probe", "?")
				if _, err := probe.ReceiveTimeout(ctx, 100*time.Millisecond); err == nil {
					break
				}
			}
			probe.Close()
		}
		onA := subscribe(a.Subscribe(ctx, "news"))
		patternOnA := subscribe(a.PSubscribe(ctx, "n*"))
		shardOnA := subscribe(a.SSubscribe(ctx, "shard"))
		onB := subscribe(b.Subscribe(ctx, "news"))

		const n = 200
		for i := range n {
			if got, err := b.Publish(ctx, "news", strconv.Itoa(i)).Result(); err != nil || got != 1 {
				t.Fatalf("PUBLISH on B = %d, %v; want 1, B's own subscriber", got, err)
			}
		}
		for i := range n {
			for _, ps := range []*redis.PubSub{onA, patternOnA, onB} {
				m, err := ps.ReceiveMessage(ctx)
				if err != nil || m.Channel != "news" || m.Payload != strconv.Itoa(i) {
					t.Fatalf("message %d: %#v %v", i, m, err)
				}
			}
		}
		if got, err := a.Publish(ctx, "news", "from A").Result(); err != nil || got != 2 {
			t.Fatalf("PUBLISH on A = %d, %v; want 2", got, err)
		}
		if m, err := onB.ReceiveMessage(ctx); err != nil || m.Payload != "from A" {
			t.Fatalf("B's subscriber: %#v %v", m, err)
		}
		if got, err := b.SPublish(ctx, "shard", "s").Result(); err != nil || got != 0 {
			t.Fatalf("SPUBLISH on B = %d, %v", got, err)
		}
		if m, err := shardOnA.ReceiveMessage(ctx); err != nil || m.Channel != "shard" || m.Payload != "s" {
			t.Fatalf("shard message: %#v %v", m, err)
		}
		// Inside EXEC and a script, which hold the store's section, the
		// messages go to the other replicas once it is left, in order.
		if _, err := b.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Publish(ctx, "news", "tx 1")
			p.Eval(ctx, "redis.call('PUBLISH', 'news', 'script'); return 1", nil)
			p.Publish(ctx, "news", "tx 2")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := b.Eval(ctx, "return redis.call('PUBLISH', KEYS[1], ARGV[1])", []string{"news"}, "eval").Err(); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"from A", "tx 1", "script", "tx 2", "eval"} {
			if m, err := onA.ReceiveMessage(ctx); err != nil || m.Payload != want {
				t.Fatalf("A's subscriber after EXEC and EVAL on B: %#v %v, want %q", m, err, want)
			}
		}
		if got := f.replicas[1].info(t, "pubsub_relayed_sent"); atoi(t, got) < n {
			t.Errorf("B's pubsub_relayed_sent = %s, want at least %d", got, n)
		}
	})
}

// leaseBurst sends k FILL.LEASEs spread over replicas at once, and sends
// each reply on the channel it returns: "value|token", "(nil)" for a nil,
// or the error's text, with the index of the replica that answered.
func leaseBurst(replicas []*replicaProc, k int, args ...any) <-chan [2]string {
	out := make(chan [2]string, k)
	for i := range k {
		go func() {
			r := replicas[i%len(replicas)]
			v, err := r.rdb.Do(context.Background(), append([]any{"FILL.LEASE"}, args...)...).Slice()
			show := func(x any) string {
				if x == nil {
					return "(nil)"
				}
				return fmt.Sprint(x)
			}
			reply := "error: " + fmt.Sprint(err)
			if err == nil {
				reply = show(v[0]) + "|" + show(v[1])
			}
			out <- [2]string{strconv.Itoa(i % len(replicas)), reply}
		}()
	}
	return out
}

// TestFleetAppLeaseOneTokenPerFleet: FILL.LEASE callers spread over two
// replicas get one token fleet-wide; the others wait on both replicas and
// get the value its holder sets with FILL.SET. When the holder's process
// dies with the lease, exactly one waiter on the other replica gets a new
// token once the lease expires in Redis.
func TestFleetAppLeaseOneTokenPerFleet(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 2, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	const k = 100
	// takeToken receives the first reply, which must be [nil token].
	takeToken := func(replies <-chan [2]string) (int, string) {
		t.Helper()
		r := <-replies
		token, ok := strings.CutPrefix(r[1], "(nil)|")
		if !ok || token == "(nil)" {
			t.Fatalf("the first reply is %q, want [nil token]", r[1])
		}
		i, _ := strconv.Atoi(r[0])
		return i, token
	}
	expect := func(replies <-chan [2]string, n int, want string) {
		t.Helper()
		for range n {
			if r := <-replies; r[1] != want {
				t.Fatalf("replica %s answered %q, want %q", r[0], r[1], want)
			}
		}
	}

	replies := leaseBurst(f.replicas, k, "q:fleet", 60, 0, "TIMEOUT", 20000)
	holder, token := takeToken(replies)
	if err := f.replicas[holder].rdb.Do(ctx, "FILL.SET", "q:fleet", token, "computed").Err(); err != nil {
		t.Fatal(err)
	}
	expect(replies, k-1, "computed|(nil)")

	// The holder dies with the lease: its Redis lease expires (LEASE plus
	// a margin) and the other replica hands exactly one new token.
	replies = leaseBurst(f.replicas[:1], 1, "q:crash", 60, 0, "LEASE", 300)
	_, crashed := takeToken(replies)
	f.replicas[0].kill()
	survivor := f.replicas[1:]
	replies = leaseBurst(survivor, k/2, "q:crash", 60, 0, "TIMEOUT", 20000)
	_, token = takeToken(replies)
	if token == crashed {
		t.Fatal("the new token is the dead holder's")
	}
	if err := survivor[0].rdb.Do(ctx, "FILL.SET", "q:crash", token, "recovered").Err(); err != nil {
		t.Fatal(err)
	}
	expect(replies, k/2-1, "recovered|(nil)")
}

// TestFleetTransactions: in --redis mode a transaction runs atomically on
// its replica, reads keys written on others, writes through what it
// changed (FLUSHALL too), and WATCH sees a write made on another replica
// to a key it watches.
func TestFleetTransactions(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 3, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b, c := f.replicas[0].rdb, f.replicas[1].rdb, f.replicas[2].rdb
	b.Set(ctx, "acct", "10", 0)
	cmds, err := a.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.IncrBy(ctx, "acct", 5)
		p.Set(ctx, "t1", "1", 0)
		p.MSet(ctx, "t2", "2", "t3", "3")
		return nil
	})
	if err != nil || cmds[0].(*redis.IntCmd).Val() != 15 {
		t.Fatalf("EXEC on A over B's key: %v %v", cmds, err)
	}
	if v := c.MGet(ctx, "acct", "t1", "t2", "t3").Val(); fmt.Sprint(v) != "[15 1 2 3]" {
		t.Fatalf("C after A's EXEC: %v", v)
	}

	// WATCH on A, a write of the key on B: A's EXEC runs nothing.
	err = a.Watch(ctx, func(tx *redis.Tx) error {
		if err := b.Set(ctx, "acct", "99", 0).Err(); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "acct", "0", 0)
			return nil
		})
		return err
	}, "acct")
	if !errors.Is(err, redis.TxFailedErr) {
		t.Fatalf("WATCH on A, SET on B, EXEC on A: %v, want %v", err, redis.TxFailedErr)
	}
	if v := c.Get(ctx, "acct").Val(); v != "99" {
		t.Fatalf("acct on C = %q, want B's 99", v)
	}

	if _, err := b.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.FlushAll(ctx)
		p.Set(ctx, "after", "1", 0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if v := a.MGet(ctx, "acct", "t1", "after").Val(); fmt.Sprint(v) != "[<nil> <nil> 1]" {
		t.Fatalf("A after FLUSHALL and SET in one EXEC on B: %v", v)
	}
}

// TestFleetClientSideCache: rueidis's default client caches reads from
// replica A (CLIENT TRACKING, DoCache); writes on replica B invalidate its
// cache through A's store: a changed value, a key A had no copy of whose
// absence was cached, and FLUSHALL.
func TestFleetClientSideCache(t *testing.T) {
	shared := redistest.Start(t)
	f := startFleet(t, []string{"--redis", shared.Addr()}, 2, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{f.replicas[0].addr}})
	if err != nil {
		t.Fatalf("rueidis default client on replica A: %v", err)
	}
	defer a.Close()
	b := f.replicas[1].rdb
	cached := func(key string) (string, bool) {
		r := a.DoCache(ctx, a.B().Get().Key(key).Cache(), time.Minute)
		if rueidis.IsRedisNil(r.Error()) {
			return "(nil)", r.IsCacheHit()
		}
		v, err := r.ToString()
		if err != nil {
			t.Fatalf("DoCache GET %s on A: %v", key, err)
		}
		return v, r.IsCacheHit()
	}
	waitFor := func(key, want string) {
		t.Helper()
		testwait.For(t, "A's cache to answer "+key+"="+want+" after B's write", func() bool {
			v, _ := cached(key)
			return v == want
		})
		if v, hit := cached(key); v != want || !hit {
			t.Fatalf("DoCache GET %s on A = %q (hit %v), want %q from the cache", key, v, hit, want)
		}
	}
	if err := b.Set(ctx, "csc", "v1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, hit := cached("csc"); v != "v1" || hit {
		t.Fatalf("first DoCache on A = %q (hit %v), want v1 from the server", v, hit)
	}
	if v, hit := cached("csc"); v != "v1" || !hit {
		t.Fatalf("second DoCache on A = %q (hit %v), want v1 from the cache", v, hit)
	}
	if err := b.Set(ctx, "csc", "v2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor("csc", "v2")

	// A has no copy of a missing key; its client cached the absence.
	if v, _ := cached("csc:new"); v != "(nil)" {
		t.Fatalf("DoCache of a missing key on A = %q", v)
	}
	if v, hit := cached("csc:new"); v != "(nil)" || !hit {
		t.Fatalf("second DoCache of a missing key on A = %q (hit %v), want the cached absence", v, hit)
	}
	if err := b.Set(ctx, "csc:new", "created", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor("csc:new", "created")

	if err := b.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor("csc", "(nil)")
}

// TestFleetScripts: in --redis mode a script runs on its replica over the
// keys it declares, faulted in from the shared tier first, and every key
// its writes name is written through, declared or not; the lock
// libraries' compare-and-delete works across replicas.
func TestFleetScripts(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 3, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b, c := f.replicas[0].rdb, f.replicas[1].rdb, f.replicas[2].rdb
	b.Set(ctx, "acct", "10", 0)
	incr := redis.NewScript(`redis.call('SET', 'undeclared', 'u'); return redis.call('INCRBY', KEYS[1], ARGV[1])`)
	if n, err := incr.Run(ctx, a, []string{"acct"}, 5).Int(); err != nil || n != 15 {
		t.Fatalf("script on A over B's key: %d %v", n, err)
	}
	if v := c.MGet(ctx, "acct", "undeclared").Val(); fmt.Sprint(v) != "[15 u]" {
		t.Fatalf("C after A's script: %v", v)
	}
	// A lock taken on B is released by its token on C, and gone on A.
	b.Set(ctx, "lock", "token-1", time.Minute)
	release := redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)
	if n, err := release.Run(ctx, c, []string{"lock"}, "token-2").Int(); err != nil || n != 0 {
		t.Fatalf("release with the wrong token: %d %v", n, err)
	}
	if n, err := release.Run(ctx, c, []string{"lock"}, "token-1").Int(); err != nil || n != 1 {
		t.Fatalf("release with the token: %d %v", n, err)
	}
	if n := a.Exists(ctx, "lock").Val(); n != 0 {
		t.Fatal("the lock released on C is still on A")
	}
	// Inside a transaction too.
	cmds, err := a.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr.Run(ctx, p, []string{"acct"}, 1)
		return nil
	})
	if err != nil || cmds[0].(*redis.Cmd).Val() != int64(16) {
		t.Fatalf("script in EXEC on A: %v %v", cmds, err)
	}
	if v := b.Get(ctx, "acct").Val(); v != "16" {
		t.Fatalf("acct on B after A's EXEC = %q, want 16", v)
	}
}

// TestFleetHashes: a hash written on one replica is read on the others,
// whole (the small one keeps its listpack order and encoding, the big one
// is a hashtable), HINCRBY on another replica builds on it, HDEL, EXPIRE
// and DEL travel, and read-through on a key another replica made a hash
// answers -WRONGTYPE as it would locally.
func TestFleetHashes(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 3, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b, c := f.replicas[0].rdb, f.replicas[1].rdb, f.replicas[2].rdb
	a.HSet(ctx, "h", "z", "1", "y", "2", "x", "3")
	if v := b.HGet(ctx, "h", "y").Val(); v != "2" {
		t.Fatalf("HGET on B after HSET on A = %q", v)
	}
	if v := c.HKeys(ctx, "h").Val(); fmt.Sprint(v) != "[z y x]" {
		t.Fatalf("HKEYS on C = %v, want the insertion order", v)
	}
	if n := b.HIncrBy(ctx, "h", "z", 5).Val(); n != 6 {
		t.Fatalf("HINCRBY on B = %d, want 6", n)
	}
	for _, r := range []*redis.Client{a, c} {
		if v := r.HGet(ctx, "h", "z").Val(); v != "6" {
			t.Fatalf("HGET after HINCRBY on B = %q", v)
		}
		if enc := r.ObjectEncoding(ctx, "h").Val(); enc != "listpack" {
			t.Fatalf("OBJECT ENCODING = %q", enc)
		}
	}
	c.HDel(ctx, "h", "y")
	if ok := a.HExists(ctx, "h", "y").Val(); ok {
		t.Fatal("HDEL on C is not seen on A")
	}
	a.Expire(ctx, "h", 100*time.Second)
	if ttl := b.TTL(ctx, "h").Val(); ttl < 90*time.Second || ttl > 100*time.Second {
		t.Fatalf("TTL on B after EXPIRE on A = %v", ttl)
	}
	if err := b.Get(ctx, "h").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Fatalf("GET of a hash on B: %v", err)
	}
	b.Del(ctx, "h")
	for _, r := range []*redis.Client{a, c} {
		if n := r.Exists(ctx, "h").Val(); n != 0 {
			t.Fatal("DEL on B is not seen")
		}
	}

	// A big hash (held on the heap) travels whole.
	big := map[string]any{}
	for i := range 600 {
		big[fmt.Sprint("f", i)] = fmt.Sprint(i)
	}
	a.HSet(ctx, "big", big)
	if n := c.HLen(ctx, "big").Val(); n != 600 {
		t.Fatalf("HLEN on C = %d", n)
	}
	if enc := c.ObjectEncoding(ctx, "big").Val(); enc != "hashtable" {
		t.Fatalf("OBJECT ENCODING on C = %q", enc)
	}
	if typ := b.Type(ctx, "big").Val(); typ != "hash" {
		t.Fatalf("TYPE on B = %q", typ)
	}

	// Read-through does not serve another replica's hash as a string.
	a.HSet(ctx, "k:h", "f", "v")
	err := c.Do(ctx, "GETFILL", "k:h", 60, 0).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Fatalf("GETFILL of another replica's hash: %v", err)
	}
	if v := c.HGet(ctx, "k:h", "f").Val(); v != "v" {
		t.Fatalf("HGET after GETFILL = %q", v)
	}
	if calls := f.origin.calls.Load(); calls != 0 {
		t.Fatalf("the origin was called %d times", calls)
	}
}

// TestFleetSets: a set written on one replica is read on the others in
// each of its forms (intset, small strings, on the heap), and SREM, SMOVE,
// *STORE and DEL reach them all.
func TestFleetSets(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 3, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b, c := f.replicas[0].rdb, f.replicas[1].rdb, f.replicas[2].rdb
	a.SAdd(ctx, "ints", 3, 1, 2)
	a.SAdd(ctx, "tags", "red", "green")
	big := make([]any, 700)
	for i := range big {
		big[i] = fmt.Sprint("m", i)
	}
	a.SAdd(ctx, "big", big...)
	for _, r := range []*redis.Client{b, c} {
		if v := r.SMembers(ctx, "ints").Val(); fmt.Sprint(v) != "[1 2 3]" {
			t.Fatalf("SMEMBERS ints on another replica = %v", v)
		}
		if enc := r.ObjectEncoding(ctx, "ints").Val(); enc != "intset" {
			t.Fatalf("OBJECT ENCODING ints = %q", enc)
		}
		if ok := r.SIsMember(ctx, "tags", "green").Val(); !ok {
			t.Fatal("SISMEMBER tags green on another replica = false")
		}
		if n := r.SCard(ctx, "big").Val(); n != 700 {
			t.Fatalf("SCARD big on another replica = %d", n)
		}
	}
	b.SRem(ctx, "tags", "green")
	b.SMove(ctx, "ints", "tags", "3")
	c.SInterStore(ctx, "both", "big", "big")
	for _, r := range []*redis.Client{a, c} {
		if v := r.SMembers(ctx, "tags").Val(); len(v) != 2 || !slices.Contains(v, "red") || !slices.Contains(v, "3") {
			t.Fatalf("SMEMBERS tags after SREM and SMOVE on B = %v", v)
		}
		if v := r.SCard(ctx, "ints").Val(); v != 2 {
			t.Fatalf("SCARD ints after SMOVE on B = %d", v)
		}
	}
	if n := a.SCard(ctx, "both").Val(); n != 700 {
		t.Fatalf("SCARD of SINTERSTORE's destination on A = %d", n)
	}
	c.Del(ctx, "big")
	if n := b.Exists(ctx, "big").Val(); n != 0 {
		t.Fatal("DEL on C is not seen on B")
	}
}

// TestFleetMovableKeys: the commands whose keys follow a numkeys or an
// option (SINTERCARD, EVAL and EVAL_RO, MGETFILL) find them on another
// replica, sent alone and inside MULTI: their keys are faulted in from the
// shared tier as a fixed-position command's are. Each read is of keys
// the reading replica has never held.
func TestFleetMovableKeys(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 2, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b := f.replicas[0].rdb, f.replicas[1].rdb
	for _, p := range []string{"alone", "multi"} {
		a.SAdd(ctx, p+":s1", "x", "y", "z")
		a.SAdd(ctx, p+":s2", "y", "z")
		a.Set(ctx, p+":str", "v", 0)
	}
	want := "[2 1 v 2]"
	reads := func(p redis.Cmdable, prefix string) []redis.Cmder {
		return []redis.Cmder{
			p.SInterCard(ctx, 0, prefix+":s1", prefix+":s2"),
			p.SInterCard(ctx, 1, prefix+":s1", prefix+":s2"),
			p.EvalRO(ctx, "return redis.call('GET', KEYS[1])", []string{prefix + ":str"}),
			p.Eval(ctx, "return redis.call('SCARD', KEYS[1])", []string{prefix + ":s2"}),
		}
	}
	vals := func(cmds []redis.Cmder) string {
		var out []string
		for _, c := range cmds {
			switch c := c.(type) {
			case *redis.IntCmd:
				out = append(out, fmt.Sprint(c.Val()))
			case *redis.Cmd:
				out = append(out, fmt.Sprint(c.Val()))
			}
		}
		return "[" + strings.Join(out, " ") + "]"
	}
	if got := vals(reads(b, "alone")); got != want {
		t.Fatalf("on B, alone, of A's keys: %s, want %s", got, want)
	}
	cmds, err := b.TxPipelined(ctx, func(p redis.Pipeliner) error {
		reads(p, "multi")
		return nil
	})
	if got := vals(cmds); err != nil || got != want {
		t.Fatalf("on B, inside MULTI, of A's keys: %s %v, want %s", got, err, want)
	}
	// MGETFILL's keys come after TIMEOUT ms: k:1 is filled once, by A,
	// and B reads A's value from the shared tier.
	v1, err := a.Do(ctx, "MGETFILL", 60, 30, "TIMEOUT", 1000, "k:1").StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	v2, err := b.Do(ctx, "MGETFILL", 60, 30, "TIMEOUT", 1000, "k:1").StringSlice()
	if err != nil || fmt.Sprint(v1) != fmt.Sprint(v2) || f.origin.calls.Load() != 1 {
		t.Fatalf("MGETFILL on A %v, then on B %v %v; %d origin calls, want 1", v1, v2, err, f.origin.calls.Load())
	}
}

// TestFleetMigrate: with --redis, a key MIGRATE moved away from one
// replica is gone from the others too, also when the target refused
// another key of the same MIGRATE (an error reply); a key it refused stays
// on every replica.
func TestFleetMigrate(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 2, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b := f.replicas[0].rdb, f.replicas[1].rdb
	target := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr()})
	t.Cleanup(func() { target.Close() })
	host, port, _ := strings.Cut(target.Options().Addr, ":")
	a.MSet(ctx, "moved", "1", "taken", "2", "refused", "3")
	target.Set(ctx, "refused", "theirs", 0)
	if v := b.MGet(ctx, "moved", "taken", "refused").Val(); fmt.Sprint(v) != "[1 2 3]" {
		t.Fatalf("on B before: %v", v)
	}
	if err := a.Do(ctx, "MIGRATE", host, port, "moved", "0", "5000").Err(); err != nil {
		t.Fatalf("MIGRATE: %v", err)
	}
	err := a.Do(ctx, "MIGRATE", host, port, "", "0", "5000", "KEYS", "taken", "refused").Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR Target instance replied with error: BUSYKEY") {
		t.Fatalf("MIGRATE of a key the target has: %v", err)
	}
	for _, r := range []*redis.Client{a, b} {
		if v := r.MGet(ctx, "moved", "taken", "refused").Val(); fmt.Sprint(v) != "[<nil> <nil> 3]" {
			t.Errorf("after MIGRATE: %v, want only the refused key", v)
		}
	}
	if v := target.MGet(ctx, "moved", "taken", "refused").Val(); fmt.Sprint(v) != "[1 2 theirs]" {
		t.Errorf("the target has %v", v)
	}
}

// TestFleetAppLeaseOutlivesLeaseWait: an application's lease is its
// holder's for its whole LEASE term, however much longer than --lease-wait
// that is: a replica whose callers wait for it follows it on rather than
// take it over, and the holder's FILL.SET answers them.
func TestFleetAppLeaseOutlivesLeaseWait(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 2, newFleetOrigin(t), time.Second, "--lease-wait", "200ms")
	ctx := context.Background()
	reply, err := f.replicas[0].rdb.Do(ctx, "FILL.LEASE", "q:slow", 60, 0, "LEASE", 20000).Slice()
	if err != nil || len(reply) != 2 || reply[1] == nil {
		t.Fatalf("the holder's FILL.LEASE = %v, %v", reply, err)
	}
	waiting := make(chan []any, 1)
	go func() {
		v, _ := f.replicas[1].rdb.Do(ctx, "FILL.LEASE", "q:slow", 60, 0, "TIMEOUT", 20000).Slice()
		waiting <- v
	}()
	// The holder computes for five --lease-waits while the other
	// replica's caller waits: a span of time the test needs, not a
	// synchronisation.
	time.Sleep(time.Second)
	if err := f.replicas[0].rdb.Do(ctx, "FILL.SET", "q:slow", reply[1], "computed").Err(); err != nil {
		t.Fatalf("the holder's FILL.SET after 5 --lease-waits: %v, want OK", err)
	}
	if v := <-waiting; len(v) != 2 || v[0] != "computed" || v[1] != nil {
		t.Fatalf("the waiting caller got %v, want [computed <nil>]", v)
	}
}

// TestFleetHLL: HyperLogLogs are strings to the shared tier. PFADD and
// PFMERGE on one replica are counted on the others, PFCOUNT there faults
// the keys in, and the value in the shared Redis is one redis-server
// itself counts the same.
func TestFleetHLL(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 3, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b, c := f.replicas[0].rdb, f.replicas[1].rdb, f.replicas[2].rdb
	elems := make([]any, 5000)
	for i := range elems {
		elems[i] = i
	}
	a.PFAdd(ctx, "visits", elems[:100]...) // sparse
	a.PFAdd(ctx, "dense", elems...)
	want := a.PFCount(ctx, "visits").Val()
	wantDense := a.PFCount(ctx, "dense").Val()
	for _, r := range []*redis.Client{b, c} {
		if n := r.PFCount(ctx, "visits").Val(); n != want || n == 0 {
			t.Fatalf("PFCOUNT visits on another replica = %d, want %d", n, want)
		}
		if n := r.PFCount(ctx, "visits", "dense").Val(); n != wantDense {
			t.Fatalf("PFCOUNT visits dense on another replica = %d, want %d", n, wantDense)
		}
	}
	if changed := b.PFAdd(ctx, "visits", "new one").Val(); changed != 1 {
		t.Fatalf("PFADD of a new element on B = %d", changed)
	}
	if n := c.PFCount(ctx, "visits").Val(); n != want+1 {
		t.Fatalf("PFCOUNT visits on C after PFADD on B = %d, want %d", n, want+1)
	}
	c.PFMerge(ctx, "all", "visits", "dense")
	merged := a.PFCount(ctx, "all").Val()
	if merged < wantDense {
		t.Fatalf("PFCOUNT of PFMERGE's destination on A = %d, want at least %d", merged, wantDense)
	}
	// The shared tier's entry holds the HLL's value as Redis would: set as
	// a string in redis-server, it counts the same.
	shared := redis.NewClient(&redis.Options{Addr: s.Addr()})
	t.Cleanup(func() { shared.Close() })
	keys := shared.Keys(ctx, "*all*").Val()
	if len(keys) != 1 {
		t.Fatalf("the shared tier's keys for all: %v", keys)
	}
	shared.Set(ctx, "copy", shared.HGet(ctx, keys[0], "v").Val(), 0)
	if n, err := shared.PFCount(ctx, "copy").Result(); err != nil || n != merged {
		t.Fatalf("redis-server's PFCOUNT of the shared value = %d, %v; want %d", n, err, merged)
	}
}

// TestFleetZSets writes sorted sets on one replica, small (listpack) and
// big (on the heap), and reads them on the others, then changes them on
// those: scores, ranks, ranges, pops and the STORE forms are seen
// everywhere.
func TestFleetZSets(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 3, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b, c := f.replicas[0].rdb, f.replicas[1].rdb, f.replicas[2].rdb
	a.ZAdd(ctx, "board", redis.Z{Score: 10, Member: "ann"}, redis.Z{Score: 2.5, Member: "bob"}, redis.Z{Score: math.Inf(1), Member: "cat"})
	big := make([]redis.Z, 700)
	for i := range big {
		big[i] = redis.Z{Score: float64(i), Member: fmt.Sprint("m", i)}
	}
	a.ZAdd(ctx, "big", big...)
	for _, r := range []*redis.Client{b, c} {
		if v := r.ZRangeWithScores(ctx, "board", 0, -1).Val(); fmt.Sprint(v) != "[{2.5 bob} {10 ann} {+Inf cat}]" {
			t.Fatalf("ZRANGE board on another replica = %v", v)
		}
		if enc := r.ObjectEncoding(ctx, "board").Val(); enc != "listpack" {
			t.Fatalf("OBJECT ENCODING board = %q", enc)
		}
		if n := r.ZCard(ctx, "big").Val(); n != 700 {
			t.Fatalf("ZCARD big on another replica = %d", n)
		}
		if rank := r.ZRevRank(ctx, "big", "m600").Val(); rank != 99 {
			t.Fatalf("ZREVRANK big m600 on another replica = %d", rank)
		}
		if enc := r.ObjectEncoding(ctx, "big").Val(); enc != "skiplist" {
			t.Fatalf("OBJECT ENCODING big = %q", enc)
		}
	}
	b.ZIncrBy(ctx, "board", 1, "bob")
	b.ZRem(ctx, "board", "cat")
	b.ZPopMin(ctx, "big", 100)
	c.ZUnionStore(ctx, "sum", &redis.ZStore{Keys: []string{"board", "big"}, Weights: []float64{2, 1}})
	for _, r := range []*redis.Client{a, c} {
		if v := r.ZRangeWithScores(ctx, "board", 0, -1).Val(); fmt.Sprint(v) != "[{3.5 bob} {10 ann}]" {
			t.Fatalf("ZRANGE board after ZINCRBY and ZREM on B = %v", v)
		}
		if v := r.ZRange(ctx, "big", 0, 0).Val(); fmt.Sprint(v) != "[m100]" {
			t.Fatalf("ZRANGE big 0 0 after ZPOPMIN on B = %v", v)
		}
	}
	if v := a.ZScore(ctx, "sum", "ann").Val(); v != 20 {
		t.Fatalf("ZSCORE of ZUNIONSTORE's destination on A = %v", v)
	}
	if n := a.ZCard(ctx, "sum").Val(); n != 602 {
		t.Fatalf("ZCARD of ZUNIONSTORE's destination on A = %d", n)
	}
	// ZMPOP names its keys after a count, and still goes through.
	if k, v, err := a.ZMPop(ctx, "max", 1, "board").Result(); err != nil || k != "board" || fmt.Sprint(v) != "[{10 ann}]" {
		t.Fatalf("ZMPOP on A = %s %v %v", k, v, err)
	}
	if v := b.ZRange(ctx, "board", 0, -1).Val(); fmt.Sprint(v) != "[bob]" {
		t.Fatalf("ZRANGE board on B after ZMPOP on A = %v", v)
	}
	c.Del(ctx, "big")
	if n := b.Exists(ctx, "big").Val(); n != 0 {
		t.Fatal("DEL on C is not seen on B")
	}
}

// TestFleetLists writes lists on one replica of three sharing a Redis and
// reads them on the others: a small list held in its record and a big one
// on the heap, each written through in its portable form; pushes, pops,
// LMOVE between two lists, LMPOP (keys found by numkeys) and DEL are
// seen everywhere.
func TestFleetLists(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 3, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b, c := f.replicas[0].rdb, f.replicas[1].rdb, f.replicas[2].rdb
	a.RPush(ctx, "small", "x", "y", "z")
	big := make([]any, 700)
	for i := range big {
		big[i] = fmt.Sprint("e", i)
	}
	a.RPush(ctx, "big", big...)
	for _, r := range []*redis.Client{b, c} {
		if v := r.LRange(ctx, "small", 0, -1).Val(); fmt.Sprint(v) != "[x y z]" {
			t.Fatalf("LRANGE small on another replica = %v", v)
		}
		if n := r.LLen(ctx, "big").Val(); n != 700 {
			t.Fatalf("LLEN big on another replica = %d", n)
		}
		if v := r.LIndex(ctx, "big", -1).Val(); v != "e699" {
			t.Fatalf("LINDEX big -1 on another replica = %q", v)
		}
		if typ := r.Type(ctx, "small").Val(); typ != "list" {
			t.Fatalf("TYPE small on another replica = %q", typ)
		}
	}
	b.LPop(ctx, "small")
	b.LMove(ctx, "big", "small", "LEFT", "RIGHT")
	c.LMPop(ctx, "RIGHT", 10, "nokey", "big")
	for _, r := range []*redis.Client{a, c} {
		if v := r.LRange(ctx, "small", 0, -1).Val(); fmt.Sprint(v) != "[y z e0]" {
			t.Fatalf("LRANGE small after LPOP and LMOVE on B = %v", v)
		}
	}
	for _, r := range []*redis.Client{a, b} {
		if n := r.LLen(ctx, "big").Val(); n != 689 {
			t.Fatalf("LLEN big after LMOVE on B and LMPOP on C = %d", n)
		}
	}
	c.Del(ctx, "big")
	if n := b.Exists(ctx, "big").Val(); n != 0 {
		t.Fatal("DEL on C is not seen on B")
	}
}

// TestFleetStreams writes a stream on one replica of three sharing a Redis
// and reads and writes it on the others, each step also run on a
// redis-server of its own with the same replies: entries of two field
// sets and one past a node's bytes, a consumer group whose PEL and last
// ID another replica continues from, XACK, XDEL and an exact trim on one
// replica, then an approximate trim and XADDs on another, which remove
// and start the nodes Redis does only if the nodes (their deleted entries
// counted) travelled with the stream. XINFO STREAM FULL, delivery and seen times
// included, is the same on every replica, and DEL removes it everywhere.
func TestFleetStreams(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 3, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b, c := f.replicas[0].rdb, f.replicas[1].rdb, f.replicas[2].rdb
	ref := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr()})
	t.Cleanup(func() { ref.Close() })
	reply := func(r *redis.Client, args []any, drop func(any) any) string {
		v, err := r.Do(ctx, args...).Result()
		if err != nil {
			return "error: " + err.Error()
		}
		if drop != nil {
			v = drop(v)
		}
		return fmt.Sprint(v)
	}
	// on runs args on r and on the reference, and fails unless both
	// answer the same (drop takes out what may differ).
	on := func(r *redis.Client, drop func(any) any, args ...any) string {
		t.Helper()
		got, want := reply(r, args, drop), reply(ref, args, drop)
		if got != want {
			t.Fatalf("%v:\n got %s\nwant %s", args, got, want)
		}
		return got
	}
	// everywhere runs a read on every replica and the reference.
	everywhere := func(drop func(any) any, args ...any) {
		t.Helper()
		for _, r := range []*redis.Client{a, b, c} {
			on(r, drop, args...)
		}
	}
	// XINFO STREAM's radix-tree-nodes is the one field that differs from
	// Redis's (docs/commands.md); XPENDING's idle times are the clock's.
	noTreeNodes := func(v any) any {
		m, ok := v.(map[any]any)
		if !ok {
			t.Fatalf("XINFO STREAM is a %T", v)
		}
		delete(m, "radix-tree-nodes")
		return m
	}
	noIdle := func(v any) any {
		list, _ := v.([]any)
		for _, e := range list {
			e.([]any)[2] = "idle"
		}
		return list
	}

	for i := 1; i <= 250; i++ {
		fields := []any{"temp", i % 40, "unit", "C"}
		switch {
		case i%7 == 0:
			fields = []any{"other", "x", "n", i}
		case i == 180:
			fields = []any{"blob", strings.Repeat("b", 5000)}
		}
		on(a, nil, append([]any{"XADD", "s", fmt.Sprintf("1-%d", i)}, fields...)...)
	}
	everywhere(nil, "XLEN", "s")
	everywhere(nil, "XRANGE", "s", "-", "+")
	everywhere(noTreeNodes, "XINFO", "STREAM", "s")

	on(a, nil, "XGROUP", "CREATE", "s", "g", "0")
	on(a, nil, "XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "STREAMS", "s", ">")
	everywhere(nil, "XPENDING", "s", "g")
	on(b, noIdle, "XPENDING", "s", "g", "-", "+", 10)
	on(b, nil, "XREADGROUP", "GROUP", "g", "bob", "COUNT", 3, "STREAMS", "s", ">")
	on(c, nil, "XACK", "s", "g", "1-1", "1-4")
	everywhere(noIdle, "XPENDING", "s", "g", "-", "+", 10)
	everywhere(nil, "XINFO", "GROUPS", "s")

	ids := []any{"XDEL", "s"}
	for i := 11; i <= 40; i++ {
		ids = append(ids, fmt.Sprintf("1-%d", i))
	}
	on(b, nil, ids...)
	on(b, nil, "XTRIM", "s", "MINID", "1-6")
	everywhere(nil, "XLEN", "s")
	everywhere(noTreeNodes, "XINFO", "STREAM", "s")
	// The first node has 65 entries left of the 100 it took: Redis
	// removes it whole, and so must C, which holds the stream only as B
	// wrote it through.
	on(c, nil, "XADD", "s", "MAXLEN", "~", 140, "2-1", "f", "v")
	everywhere(nil, "XLEN", "s")
	everywhere(nil, "XRANGE", "s", "-", "+", "COUNT", 3)
	everywhere(noTreeNodes, "XINFO", "STREAM", "s")
	everywhere(noIdle, "XPENDING", "s", "g", "-", "+", 10)
	everywhere(nil, "XINFO", "GROUPS", "s")
	// The last node took 71 entries, 5 of which B deletes: C's XADDs
	// fill it to 100 before they start another, as Redis's do.
	on(b, nil, "XDEL", "s", "1-241", "1-242", "1-243", "1-244", "1-245")
	for i := 2; i <= 31; i++ {
		on(c, nil, "XADD", "s", fmt.Sprintf("2-%d", i), "f", "v")
	}
	everywhere(noTreeNodes, "XINFO", "STREAM", "s")

	full := reply(a, []any{"XINFO", "STREAM", "s", "FULL"}, nil)
	for _, r := range []*redis.Client{b, c} {
		if got := reply(r, []any{"XINFO", "STREAM", "s", "FULL"}, nil); got != full {
			t.Fatalf("XINFO STREAM FULL differs between replicas:\n%s\n%s", got, full)
		}
	}

	on(c, nil, "DEL", "s")
	for _, r := range []*redis.Client{a, b} {
		if n := r.Exists(ctx, "s").Val(); n != 0 {
			t.Fatal("DEL on C is not seen")
		}
	}
}

// TestFleetSort: SORT ... STORE on one replica of three faults its source
// in and writes its destination through, which the others read; BY and
// GET patterns read the replica's own copies only, as docs/commands.md
// says, so a weight written on another replica counts once this one has
// read it.
func TestFleetSort(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 3, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b, c := f.replicas[0].rdb, f.replicas[1].rdb, f.replicas[2].rdb
	a.RPush(ctx, "src", "3", "1", "2")
	a.MSet(ctx, "w_1", "30", "w_2", "20", "w_3", "10")
	if n, err := b.Do(ctx, "SORT", "src", "STORE", "dst").Int(); err != nil || n != 3 {
		t.Fatalf("SORT src STORE dst on B = %d, %v", n, err)
	}
	for _, r := range []*redis.Client{a, c} {
		if v := r.LRange(ctx, "dst", 0, -1).Val(); fmt.Sprint(v) != "[1 2 3]" {
			t.Fatalf("LRANGE of SORT's destination on another replica = %v", v)
		}
	}
	if v := c.Do(ctx, "SORT", "src", "BY", "w_*", "GET", "w_*").Val(); fmt.Sprint(v) != "[<nil> <nil> <nil>]" {
		t.Fatalf("SORT src BY w_* GET w_* on C, which holds no w_* = %v", v)
	}
	c.Get(ctx, "w_1")
	if v := c.Do(ctx, "SORT", "src", "BY", "w_*", "GET", "#", "GET", "w_*").Val(); fmt.Sprint(v) != "[2 <nil> 3 <nil> 1 30]" {
		t.Fatalf("SORT src BY w_* on C once it read w_1 = %v", v)
	}
	// An empty result deletes the destination everywhere.
	if n, err := c.Do(ctx, "SORT", "nokey", "STORE", "dst").Int(); err != nil || n != 0 {
		t.Fatalf("SORT nokey STORE dst on C = %d, %v", n, err)
	}
	if n := a.Exists(ctx, "dst").Val(); n != 0 {
		t.Fatal("SORT's empty STORE on C is not seen on A")
	}
}

// TestFleetFunctionsPerReplica: libraries are per replica, as
// docs/commands.md (Scripting) says: FUNCTION LOAD on A leaves B without the function. Once B has it
// too, FCALL runs as EVAL does with --redis: the keys it declares are
// faulted in from the shared tier, and what it writes reaches A.
func TestFleetFunctionsPerReplica(t *testing.T) {
	s := redistest.Start(t)
	f := startFleet(t, []string{"--redis", s.Addr()}, 2, newFleetOrigin(t), time.Second)
	ctx := context.Background()
	a, b := f.replicas[0].rdb, f.replicas[1].rdb
	code := "#!lua name=fleet\n" +
		"redis.register_function('fset', function(keys, args) return redis.call('SET', keys[1], args[1]) end)\n" +
		"redis.register_function{function_name='fget', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}"
	if err := a.FunctionLoad(ctx, code).Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.FCall(ctx, "fset", []string{"fk"}, "x").Err(); err == nil || err.Error() != "ERR Function not found" {
		t.Fatalf("FCALL on B of A's library: %v, want ERR Function not found", err)
	}
	if err := b.FunctionLoad(ctx, code).Err(); err != nil {
		t.Fatal(err)
	}
	a.Set(ctx, "fa", "from-a", 0)
	if v, err := b.FCallRO(ctx, "fget", []string{"fa"}).Result(); err != nil || v != "from-a" {
		t.Fatalf("FCALL_RO on B of A's key: %v %v", v, err)
	}
	if err := b.FCall(ctx, "fset", []string{"fb"}, "from-b").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := a.Get(ctx, "fb").Result(); err != nil || v != "from-b" {
		t.Fatalf("GET on A of what B's function wrote: %v %v", v, err)
	}
}
