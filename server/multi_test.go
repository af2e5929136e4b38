package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	redigo "github.com/gomodule/redigo/redis"
	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/commands/keyspace"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/metrics"
)

// txTarget is a server a transaction test runs against: ours, or a real
// redis-server for the same assertions.
type txTarget struct {
	name string
	addr string
	ts   *testServer // nil for redis-server
}

// txTargets starts our server and a redis-server.
func txTargets(t *testing.T) []txTarget {
	ts := startServer(t, Options{})
	return []txTarget{{name: "stampedeless", addr: ts.addr, ts: ts}, {name: "redis-server", addr: startRedis(t)}}
}

// client returns a go-redis client in its default configuration.
func (tt txTarget) client(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: tt.addr})
	t.Cleanup(func() { c.Close() })
	if err := c.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// replies renders a go-redis pipeline's results as values or error texts.
// A command's String is "its args: its value"; the tests' arguments
// contain no ": ".
func replies(cmds []redis.Cmder) []string {
	out := make([]string, len(cmds))
	for i, c := range cmds {
		if err := c.Err(); err != nil {
			out[i] = "ERR:" + err.Error()
			continue
		}
		_, out[i], _ = strings.Cut(c.String(), ": ")
	}
	return out
}

// TestTxPipelinedGoRedis: go-redis's TxPipelined (MULTI ... EXEC in one
// round trip) applies every command, with a runtime error reported for its
// command alone, and an error while queuing (EXECABORT) applies nothing.
func TestTxPipelinedGoRedis(t *testing.T) {
	ctx := context.Background()
	var got []string
	for _, tt := range txTargets(t) {
		c := tt.client(t)
		c.Set(ctx, "text", "abc", 0)
		cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "a", "1", 0)
			p.Incr(ctx, "a")
			p.Incr(ctx, "text") // a runtime error, for INCR alone
			p.MSet(ctx, "b", "x", "c", "y")
			p.Get(ctx, "a")
			p.MGet(ctx, "a", "b", "c", "missing")
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), "not an integer") {
			t.Errorf("%s: TxPipelined error %v, want INCR's", tt.name, err)
		}
		r := replies(cmds)
		if v, _ := c.Get(ctx, "a").Result(); v != "2" {
			t.Errorf("%s: after EXEC a = %q", tt.name, v)
		}
		cmds, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "d", "1", 0)
			p.Do(ctx, "NOSUCHCOMMAND", "x")
			return nil
		})
		if err == nil || !strings.HasPrefix(err.Error(), "EXECABORT Transaction discarded because of previous errors.") {
			t.Errorf("%s: an unknown command in TxPipelined: %v, want EXECABORT", tt.name, err)
		}
		if n, _ := c.Exists(ctx, "d").Result(); n != 0 {
			t.Errorf("%s: a transaction with an unknown command applied its SET", tt.name)
		}
		r = append(r, replies(cmds)...)
		got = append(got, strings.Join(r, "\n"))
	}
	if got[0] != got[1] {
		t.Errorf("replies differ:\nstampedeless:\n%s\nredis-server:\n%s", got[0], got[1])
	}
}

// incrementWatched adds one to key with GET, then MULTI SET EXEC under
// WATCH, retrying while another client changed key in between. It returns
// how many tries failed.
func incrementWatched(ctx context.Context, c *redis.Client, key string) (retries int, err error) {
	for {
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			n, err := tx.Get(ctx, key).Int()
			if err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, key, n+1, 0)
				return nil
			})
			return err
		}, key)
		if !errors.Is(err, redis.TxFailedErr) {
			return retries, err
		}
		retries++
	}
}

// TestWatchRetryLoopLosesNoUpdate: goroutines incrementing one counter
// with WATCH and retries, the optimistic-locking pattern, lose no
// increment.
func TestWatchRetryLoopLosesNoUpdate(t *testing.T) {
	const workers, each = 8, 40
	ctx := context.Background()
	for _, tt := range txTargets(t) {
		c := tt.client(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		retries := 0
		for range workers {
			wg.Go(func() {
				for range each {
					n, err := incrementWatched(ctx, c, "counter")
					if err != nil {
						t.Errorf("%s: %v", tt.name, err)
						return
					}
					mu.Lock()
					retries += n
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if v, err := c.Get(ctx, "counter").Int(); err != nil || v != workers*each {
			t.Errorf("%s: counter = %d, %v; want %d", tt.name, v, err, workers*each)
		}
		t.Logf("%s: %d increments took %d retries", tt.name, workers*each, retries)
	}
}

// TestRedigoMultiExec: redigo's MULTI/EXEC (Send, then Do("EXEC")), and a
// null EXEC after another connection wrote a watched key.
func TestRedigoMultiExec(t *testing.T) {
	var got []string
	for _, tt := range txTargets(t) {
		conn, err := redigo.Dial("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		other, err := redigo.Dial("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if _, err := conn.Do("FLUSHALL"); err != nil {
			t.Fatal(err)
		}
		conn.Send("MULTI")
		conn.Send("SET", "a", "1")
		conn.Send("INCRBY", "a", 41)
		conn.Send("GET", "a")
		conn.Send("GETSET", "a", "x")
		vals, err := redigo.Values(conn.Do("EXEC"))
		if err != nil {
			t.Fatalf("%s: EXEC: %v", tt.name, err)
		}
		r := fmt.Sprintf("%q", vals)

		if _, err := conn.Do("WATCH", "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Do("SET", "a", "changed"); err != nil {
			t.Fatal(err)
		}
		conn.Send("MULTI")
		conn.Send("SET", "a", "mine")
		reply, err := conn.Do("EXEC")
		if reply != nil || err != nil {
			t.Errorf("%s: EXEC after a watched key changed: %v %v, want a null reply", tt.name, reply, err)
		}
		v, _ := redigo.String(other.Do("GET", "a"))
		got = append(got, r+" "+v)
	}
	if got[0] != got[1] || !strings.HasSuffix(got[0], " changed") {
		t.Errorf("stampedeless %s, redis-server %s", got[0], got[1])
	}
}

// TestWatchSeesOtherClientsChanges: go-redis's Watch fails with
// TxFailedErr when another client SETs, DELs, FLUSHALLs the watched key,
// or when it expires (set by another client's EXPIRE) before EXEC.
func TestWatchSeesOtherClientsChanges(t *testing.T) {
	ctx := context.Background()
	changes := map[string]func(o *redis.Client) error{
		"set":      func(o *redis.Client) error { return o.Set(ctx, "w", "other", 0).Err() },
		"del":      func(o *redis.Client) error { return o.Del(ctx, "w").Err() },
		"flushall": func(o *redis.Client) error { return o.FlushAll(ctx).Err() },
		"expire then expiry": func(o *redis.Client) error {
			if err := o.PExpire(ctx, "w", 50*time.Millisecond).Err(); err != nil {
				return err
			}
			// Until it is gone for readers, as a client would see it.
			for o.Exists(ctx, "w").Val() == 1 {
				time.Sleep(5 * time.Millisecond)
			}
			return nil
		},
	}
	for _, tt := range txTargets(t) {
		c, o := tt.client(t), tt.client(t)
		for name, change := range changes {
			c.Set(ctx, "w", "v", 0)
			err := c.Watch(ctx, func(tx *redis.Tx) error {
				if err := change(o); err != nil {
					return err
				}
				_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, "w", "mine", 0)
					return nil
				})
				return err
			}, "w")
			if !errors.Is(err, redis.TxFailedErr) {
				t.Errorf("%s: %s between WATCH and EXEC: %v, want %v", tt.name, name, err, redis.TxFailedErr)
			}
			if v, _ := o.Get(ctx, "w").Result(); v == "mine" {
				t.Errorf("%s: %s: the transaction was applied", tt.name, name)
			}
		}
	}
}

// TestDisconnectInsideMulti: a client that leaves inside MULTI applies
// nothing, and its watches are dropped with it; the server goes on.
func TestDisconnectInsideMulti(t *testing.T) {
	ctx := context.Background()
	for _, tt := range txTargets(t) {
		c := tt.client(t)
		r := dialRaw(t, tt.addr)
		for _, args := range [][]string{{"WATCH", "w"}, {"MULTI"}, {"SET", "a", "1"}, {"SET", "b", "2"}} {
			r.do(args...)
		}
		r.nc.Close()
		testwait.For(t, "the connection to be gone", func() bool {
			list, _ := c.ClientList(ctx).Result()
			return strings.Count(list, "\n") == 1
		})
		if n, err := c.Exists(ctx, "a", "b").Result(); n != 0 || err != nil {
			t.Errorf("%s: keys queued by a client that left exist: %d %v", tt.name, n, err)
		}
		if err := c.Set(ctx, "w", "1", 0).Err(); err != nil {
			t.Errorf("%s: SET after the disconnect: %v", tt.name, err)
		}
		if tt.ts != nil {
			tt.ts.changesMu.Lock()
			n := tt.ts.changeConsumers
			tt.ts.changesMu.Unlock()
			if n != 0 {
				t.Errorf("the store's listener is still installed for a client that left")
			}
		}
	}
}

// TestExecIsAtomic: readers' MGETs of two keys that every transaction
// sets together never see one set and the other not yet.
func TestExecIsAtomic(t *testing.T) {
	const transactions = 1500
	ctx := context.Background()
	for _, tt := range txTargets(t) {
		w := tt.client(t)
		// Every client flushes the keyspace when made: all are made before
		// the transactions start.
		rs := []*redis.Client{tt.client(t), tt.client(t)}
		w.MSet(ctx, "x", "0", "y", "0")
		readWhileWriting(t, tt.name, rs, func() error {
			for i := range transactions {
				v := strconv.Itoa(i)
				if _, err := w.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, "x", v, 0)
					for range 4 { // more work between the two
						p.Append(ctx, "scratch", v)
					}
					p.Set(ctx, "y", v, 0)
					return nil
				}); err != nil {
					return fmt.Errorf("EXEC: %w", err)
				}
			}
			return nil
		})
	}
}

// TestMultiKeyCommandsAreAtomic: as in Redis, each command of several keys
// acts on them at one instant. Readers' MGETs and EXISTSs of keys that
// MSET, DEL and FLUSHALL change together never see half of such a write.
// (MGET read its keys one at a time: a FLUSHALL between two reads gave
// x=5 y=<nil>.)
func TestMultiKeyCommandsAreAtomic(t *testing.T) {
	const writes = 3000
	ctx := context.Background()
	keys := []string{"a", "b", "c", "d"} // in one shard of 256 only by a 1 in 2^24 chance
	for _, tt := range txTargets(t) {
		w := tt.client(t)
		rs := []*redis.Client{tt.client(t), tt.client(t)}
		readWhileWriting(t, tt.name, rs, func() error {
			for i := range writes {
				var err error
				switch {
				case i%4 < 2, i%4 == 3 && i%40 != 3:
					var pairs []any
					for _, k := range keys {
						pairs = append(pairs, k, i)
					}
					err = w.MSet(ctx, pairs...).Err()
				case i%4 == 2:
					err = w.Del(ctx, keys...).Err()
				default:
					// One write in 40: a FLUSHALL empties what the
					// others are checking.
					err = w.FlushAll(ctx).Err()
				}
				if err != nil {
					return err
				}
			}
			return nil
		}, keys...)
	}
}

// readWhileWriting runs write and, until it returns, has each of readers
// MGET and EXISTS keys (x and y by default) over and over, failing the test
// if a reply holds different values or some keys and not others.
func readWhileWriting(t *testing.T, name string, readers []*redis.Client, write func() error, keys ...string) {
	t.Helper()
	if len(keys) == 0 {
		keys = []string{"x", "y"}
	}
	ctx := context.Background()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		if err := write(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	})
	for _, r := range readers {
		wg.Go(func() {
			seen := map[string]bool{}
			defer func() { t.Logf("%s: a reader saw %d states", name, len(seen)) }()
			for {
				select {
				case <-done:
					return
				default:
				}
				vals, err := r.MGet(ctx, keys...).Result()
				if err != nil {
					t.Errorf("%s: MGET: %v", name, err)
					return
				}
				for i := range vals {
					if vals[i] != vals[0] {
						t.Errorf("%s: a reader's MGET saw %v = %v: half of a write", name, keys, vals)
						return
					}
				}
				seen[fmt.Sprint(vals[0])] = true
				n, err := r.Exists(ctx, keys...).Result()
				if err != nil {
					t.Errorf("%s: EXISTS: %v", name, err)
					return
				}
				if n != 0 && n != int64(len(keys)) {
					t.Errorf("%s: EXISTS %v = %d: half of a write", name, keys, n)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestPanicInsideExecReleasesTheSection: a command that panics inside EXEC
// closes its connection only; the atomic section is released, so other
// clients' commands and transactions go on.
func TestPanicInsideExecReleasesTheSection(t *testing.T) {
	// In the table before the server serves: its loops read the table.
	boom := commands.Spec{Name: "boom", Arity: 1, Flags: commands.Write, Handler: func(*commands.Ctx, [][]byte) { panic("boom") }}
	ts := startServer(t, Options{Commands: append(keyspace.Commands(), &boom)})
	r := dialRaw(t, ts.addr)
	for _, args := range [][]string{{"MULTI"}, {"SET", "a", "1"}, {"BOOM"}} {
		if got := r.do(args...); got != "+OK" && got != "+QUEUED" {
			t.Fatalf("%v: %q", args, got)
		}
	}
	if got := r.do("EXEC"); got != "[+OK -ERR internal error]" {
		t.Fatalf("EXEC with a panicking command: %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := ts.clientRESP2(t)
	if err := c.Set(ctx, "b", "1", 0).Err(); err != nil {
		t.Fatalf("SET after a panic inside EXEC: %v", err)
	}
	if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "c", "1", 0)
		return nil
	}); err != nil {
		t.Fatalf("EXEC after a panic inside EXEC: %v", err)
	}
}

// TestGetFillInsideMultiDoesNotWait: inside EXEC, GETFILL on a cold key
// answers -TIMEOUT at once, as TIMEOUT 0, and its load runs in the
// background; a later transaction reads the loaded value.
func TestGetFillInsideMultiDoesNotWait(t *testing.T) {
	o := gatedOrigin(t)
	ts, c := fillServer(t, o.origin)
	ctx := context.Background()
	cmds, _ := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "GETFILL", "k:a", 60, 0)
		p.Set(ctx, "after", "1", 0)
		return nil
	})
	if got := replies(cmds); len(got) != 2 || !strings.HasPrefix(got[0], "ERR:TIMEOUT gave up waiting for the load after 0s") || got[1] != "OK" {
		t.Fatalf("EXEC of GETFILL on a cold key: %q", got)
	}
	<-o.arrived // the load started
	o.open()
	testwait.For(t, "the load to be stored", func() bool {
		v, _ := ts.store.Get([]byte("k:a"))
		return string(v) == "k:a@v0"
	})
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "GETFILL", "k:a", 60, 0)
		return nil
	})
	if got := replies(cmds); err != nil || got[0] != "k:a@v0" {
		t.Fatalf("EXEC of GETFILL on a filled key: %q %v", got, err)
	}
}

// TestExecRunsWhileGetFillWaits: a GETFILL waiting for its origin holds
// nothing that EXEC needs.
func TestExecRunsWhileGetFillWaits(t *testing.T) {
	o := gatedOrigin(t)
	_, c := fillServer(t, o.origin)
	ctx := context.Background()
	waiting := make(chan string, 1)
	go func() { waiting <- burst(c, 1, "k:slow", 60, 0)[0] }()
	<-o.arrived
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.TxPipelined(tctx, func(p redis.Pipeliner) error {
		p.Set(tctx, "x", "1", 0)
		return nil
	}); err != nil {
		t.Fatalf("EXEC while a GETFILL waits: %v", err)
	}
	o.open()
	if got := <-waiting; got != "k:slow@v0" {
		t.Fatalf("the waiting GETFILL got %q", got)
	}
}

// gated is an origin whose calls wait until open, and report their
// arrival.
type gated struct {
	*origin
	once sync.Once
}

// gatedOrigin returns an origin whose calls wait for open; a test that
// fails before opening it still ends, as the gate opens at cleanup.
func gatedOrigin(t *testing.T) *gated {
	o := &gated{origin: newOrigin(t)}
	o.gate = make(chan struct{})
	o.arrived = make(chan struct{}, 1)
	t.Cleanup(o.open)
	return o
}

func (o *gated) open() { o.once.Do(func() { close(o.gate) }) }

// TestTransactionMetricsAndInfo: stampedeless_transactions_total counts
// EXECs by result, commands run inside EXEC are counted as themselves, and
// INFO clients shows the watches.
func TestTransactionMetricsAndInfo(t *testing.T) {
	reg := metrics.New()
	ts := startServer(t, Options{Metrics: reg})
	a, b := dialRaw(t, ts.addr), dialRaw(t, ts.addr)
	a.do("WATCH", "k", "shared")
	b.do("WATCH", "shared")
	info := ts.clientRESP2(t).Info(context.Background(), "clients").Val()
	for _, want := range []string{"watching_clients:2\r\n", "total_watched_keys:2\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO clients lacks %q:\n%s", want, info)
		}
	}
	b.do("SET", "shared", "1") // both watchers are now dirty
	for _, c := range []*rawConn{a, b} {
		c.do("MULTI")
		c.do("INCR", "n")
		if got := c.do("EXEC"); got != "(nil array)" {
			t.Fatalf("EXEC after a watched key changed: %s", got)
		}
	}
	a.do("MULTI")
	a.do("INCR", "n")
	a.do("INCR", "shared", "extra") // refused while queuing
	a.do("EXEC")
	a.do("MULTI")
	a.do("INCR", "n")
	a.do("GET", "n")
	a.do("EXEC")
	for result, want := range map[string]float64{"exec": 1, "watch_changed": 2, "execabort": 1} {
		if v := metrics.Value(reg.Transactions.WithLabelValues(result)); v != want {
			t.Errorf("transactions_total{%s} = %v, want %v", result, v, want)
		}
	}
	if v := metrics.Value(reg.Commands.WithLabelValues("incr", "ok")); v != 1 {
		t.Errorf("commands_total{incr,ok} = %v, want the one INCR that ran", v)
	}
	info = ts.clientRESP2(t).Info(context.Background(), "clients").Val()
	for _, want := range []string{"watching_clients:0\r\n", "total_watched_keys:0\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO clients lacks %q:\n%s", want, info)
		}
	}
}

// TestQueueBoundedByMaxMemory: a transaction cannot queue more than the
// memory bound; the command that would go past it gets Redis's OOM error
// and fails the transaction.
func TestQueueBoundedByMaxMemory(t *testing.T) {
	store, err := engine.New(engine.Options{MaxMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	ts := startServer(t, Options{Store: store})
	r := dialRaw(t, ts.addr)
	big := strings.Repeat("v", 600<<10)
	r.do("MULTI")
	if got := r.do("SET", "a", big); got != "+QUEUED" {
		t.Fatalf("first 600 KiB SET: %s", got)
	}
	if got := r.do("SET", "b", big); got != "-OOM command not allowed when used memory > 'maxmemory'." {
		t.Fatalf("second 600 KiB SET into 1 MiB: %s", got)
	}
	if got := r.do("EXEC"); got != "-"+errExecAbort {
		t.Fatalf("EXEC: %s", got)
	}
	if got := r.do("EXISTS", "a"); got != ":0" {
		t.Fatalf("EXISTS a after EXECABORT: %s", got)
	}
}

// TestWatchSeesEviction: a watched key the store evicts to make room has
// changed, as in Redis: EXEC runs nothing.
func TestWatchSeesEviction(t *testing.T) {
	store, err := engine.New(engine.Options{MaxMemory: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	ts := startServer(t, Options{Store: store})
	w, other := dialRaw(t, ts.addr), dialRaw(t, ts.addr)
	w.do("SET", "watched", "v")
	w.do("WATCH", "watched")
	for i := 0; other.do("EXISTS", "watched") == ":1"; i++ {
		if i == 100_000 {
			t.Fatal("100,000 writes into 64 KiB did not evict the watched key")
		}
		other.do("SET", "filler:"+strconv.Itoa(i), strings.Repeat("x", 100))
	}
	w.do("MULTI")
	w.do("SET", "watched", "mine")
	if got := w.do("EXEC"); got != "(nil array)" {
		t.Fatalf("EXEC after the watched key was evicted: %s", got)
	}
}

// TestCompatExecWhenOOM: at the memory bound under noeviction, an EXEC of
// reads runs, and one that queued a command that uses memory is refused
// whole (EXECABORT), as redis-server refuses it, instead of running with
// its writes failing one by one.
func TestCompatExecWhenOOM(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{EventLoops: 4})
	for _, proto := range []int{2, 3} {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		admin := dialCompatPair(t, redisAddr, ts.addr, proto)
		p.flush(t)
		both := func(c compatPair, args ...string) (redis, ours string) {
			return c.redis.run(compatExact, args), c.ours.run(compatExact, args)
		}
		for _, step := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"SET", "x", "value"}} {
			both(admin, step...)
		}
		for _, tx := range [][][]string{
			{{"GET", "x"}, {"PING"}},
			{{"GET", "x"}, {"SET", "y", "1"}},
		} {
			both(p, "MULTI")
			for _, cmd := range tx {
				both(p, cmd...)
			}
			both(admin, "CONFIG", "SET", "maxmemory", "1")
			want, got := both(p, "EXEC")
			both(admin, "CONFIG", "SET", "maxmemory", "0")
			if want != got {
				t.Errorf("RESP%d, EXEC of %v at the bound:\n\tredis: %s\n\tours:  %s", proto, tx, want, got)
			}
			if want, got := both(p, "EXISTS", "y"); want != got {
				t.Errorf("RESP%d, after EXEC of %v: EXISTS y: redis %s, ours %s", proto, tx, want, got)
			}
		}
		both(admin, "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	}
}
