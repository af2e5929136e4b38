package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// The sixteen databases, against redis-server in the same test: SELECT and
// what every keyspace command sees of it, MOVE, SWAPDB, COPY ... DB,
// FLUSHDB beside FLUSHALL, and the scripts' and transactions' databases.
func TestCompatDatabases(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{EventLoops: 4})
	scripts := []compatScript{
		{name: "select", steps: []compatStep{
			cs("SET k zero"), cs("SELECT 1"), cs("GET k"), cs("SET k one"), cs("GET k"), cs("DBSIZE"),
			cs("SELECT 0"), cs("GET k"), cs("SELECT 15"), cs("GET k"), cs("SELECT 16"), cs("SELECT -1"),
			cs("SELECT x"), cs("SELECT 99999999999"), cs("SELECT 1.5"), cs("GET k"),
			cs("SELECT 1"), cs("KEYS *"), cs("RANDOMKEY"), csScan("SCAN 0"), cs("EXISTS k"), cs("TYPE k"),
			cs("SELECT 2"), cs("KEYS *"), cs("RANDOMKEY"), csScan("SCAN 0"), cs("DBSIZE"),
			cs("SELECT 0"), cs("INFO keyspace"), cs("CONFIG GET databases"),
		}},
		{name: "collections-and-deadlines", steps: []compatStep{
			cs("SELECT 3"), cs("RPUSH l a b c"), cs("SADD s x y"), cs("ZADD z 1 m"), cs("HSET h f v"),
			cs("SET t v EX 100"), cs("TTL t"), cs("DBSIZE"), cs("SELECT 0"), cs("LLEN l"), cs("TTL t"),
			cs("DBSIZE"), cs("SELECT 3"), cs("LRANGE l 0 -1"), csSorted("SMEMBERS s"), cs("RENAME l l2"),
			cs("LRANGE l2 0 -1"), cs("SELECT 0"), cs("EXISTS l2"),
			// Redis's avg_ttl is an estimate its expiry cycle keeps even
			// after the keys with deadlines are gone: counts, not INFO.
			cs("SELECT 3"), cs("DEL t"), cs("DBSIZE"),
		}},
		{name: "move", steps: []compatStep{
			cs("SET k v EX 100"), cs("MOVE k 1"), cs("EXISTS k"), cs("SELECT 1"), cs("GET k"), cs("TTL k"),
			cs("MOVE k 1"), cs("MOVE nokey 0"), cs("SET k2 here"), cs("SELECT 0"), cs("SET k2 there"),
			cs("MOVE k2 1"), cs("GET k2"), cs("MOVE k2 16"), cs("MOVE k2 -1"), cs("MOVE k2 x"),
			cs("MOVE k2 99999999999"), cs("RPUSH big a b c"), cs("MOVE big 2"), cs("SELECT 2"),
			cs("LRANGE big 0 -1"), cs("SELECT 1"), cs("GET k2"),
		}},
		{name: "copy-db", steps: []compatStep{
			cs("SET a v"), cs("COPY a a DB 1"), cs("SELECT 1"), cs("GET a"), cs("SELECT 0"),
			cs("COPY a a DB 1"), cs("COPY a a DB 1 REPLACE"), cs("COPY a a"), cs("COPY a b DB 16"),
			cs("COPY a b DB -1"), cs("COPY a b DB x"), cs("SADD s m"), cs("COPY s s DB 4"), cs("SELECT 4"),
			csSorted("SMEMBERS s"), cs("SCARD s"),
		}},
		{name: "flushdb", steps: []compatStep{
			cs("SET a 0"), cs("SELECT 1"), cs("SET a 1"), cs("SADD s m"), cs("FLUSHDB"), cs("DBSIZE"),
			cs("SELECT 0"), cs("GET a"), cs("SELECT 1"), cs("SET b 1"), cs("SELECT 0"), cs("FLUSHDB"),
			cs("SELECT 1"), cs("GET b"), cs("FLUSHALL"), cs("DBSIZE"), cs("SELECT 0"), cs("DBSIZE"),
		}},
		{name: "swapdb", steps: []compatStep{
			cs("SET a zero"), cs("RPUSH l x y"), cs("SET t v EX 100"), cs("SELECT 1"), cs("SET a one"),
			cs("SADD s m"), cs("SWAPDB 0 1"), cs("GET a"), cs("LRANGE l 0 -1"), cs("TTL t"), csSorted("SMEMBERS s"),
			cs("SELECT 0"), cs("GET a"), csSorted("SMEMBERS s"), cs("EXISTS l"), cs("SWAPDB 0 1"), cs("GET a"),
			cs("SWAPDB 0 0"), cs("SWAPDB 0 16"), cs("SWAPDB x 1"), cs("SWAPDB 1 y"), cs("SWAPDB 99999999999 1"),
			cs("SWAPDB 5 6"), cs("GET a"), cs("DEL t"), cs("DBSIZE"), cs("SELECT 1"), cs("DBSIZE"),
		}},
		{name: "transactions-and-scripts", steps: []compatStep{
			cs("MULTI"), cs("SET k zero"), cs("SELECT 1"), cs("SET k one"), cs("EXEC"), cs("GET k"),
			cs("SELECT 0"), cs("GET k"),
			ca("EVAL", "redis.call('select', 2); redis.call('set', 'k', 'two'); return redis.call('get', 'k')", "0"),
			cs("GET k"), cs("SELECT 2"), cs("GET k"),
			ca("EVAL", "return redis.call('get', 'k')", "0"),
			cs("SELECT 0"),
		}},
	}
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range scripts {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// dbClients are go-redis clients, in their default configuration, of
// database db on each server: the URL form an application uses.
func dbClient(t *testing.T, addr string, db int) *redis.Client {
	opts, err := redis.ParseURL(fmt.Sprintf("redis://%s/%d", addr, db))
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestDatabasesKeepTheirWaitersWatchesAndEvents: a client blocked on a key
// of database 1 is served by a push there, not by one to the same name in
// database 0; a WATCH of database 1's key is not touched by a write of
// database 0's; keyspace events name the database; CLIENT LIST says it.
func TestDatabasesKeepTheirWaitersWatchesAndEvents(t *testing.T) {
	ctx := context.Background()
	redisAddr := startRedis(t)
	ts := startServer(t, Options{EventLoops: 4})
	for _, target := range []struct{ name, addr string }{{"redis", redisAddr}, {"ours", ts.addr}} {
		t.Run(target.name, func(t *testing.T) {
			db0, db1 := dbClient(t, target.addr, 0), dbClient(t, target.addr, 1)
			db0.FlushAll(ctx)

			// Blocking.
			popped := make(chan []string, 1)
			go func() { popped <- db1.BLPop(ctx, 5*time.Second, "q").Val() }()
			testwait.For(t, "the BLPOP to block", func() bool {
				return strings.Contains(db0.Info(ctx, "clients").Val(), "blocked_clients:1")
			})
			db0.LPush(ctx, "q", "in-db0")
			select {
			case got := <-popped:
				t.Fatalf("a push in database 0 served a client blocked in database 1: %v", got)
			case <-time.After(100 * time.Millisecond):
			}
			db1.LPush(ctx, "q", "in-db1")
			if got := <-popped; len(got) != 2 || got[1] != "in-db1" {
				t.Errorf("BLPOP in database 1 got %v, want [q in-db1]", got)
			}
			if n := db0.LLen(ctx, "q").Val(); n != 1 {
				t.Errorf("database 0's list has %d elements, want the 1 pushed there", n)
			}

			// WATCH.
			err := db1.Watch(ctx, func(tx *redis.Tx) error {
				db0.Set(ctx, "w", "database 0's", 0)
				_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, "w", "mine", 0)
					return nil
				})
				return err
			}, "w")
			if err != nil {
				t.Errorf("a write of database 0's w aborted a transaction watching database 1's: %v", err)
			}
			err = db1.Watch(ctx, func(tx *redis.Tx) error {
				db1.Set(ctx, "w", "another's", 0)
				_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, "w", "mine", 0)
					return nil
				})
				return err
			}, "w")
			if err != redis.TxFailedErr {
				t.Errorf("a write of the watched key did not abort the transaction: %v", err)
			}

			// Keyspace events.
			db0.ConfigSet(ctx, "notify-keyspace-events", "KEA")
			defer db0.ConfigSet(ctx, "notify-keyspace-events", "")
			sub := db0.PSubscribe(ctx, "__key*__:*")
			defer sub.Close()
			if _, err := sub.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			db1.Set(ctx, "ev", "v", 0)
			db1.Move(ctx, "ev", 5)
			var got []string
			for len(got) < 6 {
				m, err := sub.ReceiveMessage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, m.Channel+" "+m.Payload)
			}
			want := []string{
				"__keyspace@1__:ev set", "__keyevent@1__:set ev",
				"__keyspace@1__:ev move_from", "__keyevent@1__:move_from ev",
				"__keyspace@5__:ev move_to", "__keyevent@5__:move_to ev",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}

			// CLIENT LIST.
			if info := db1.ClientInfo(ctx).Val(); info == nil || info.DB != 1 {
				t.Errorf("CLIENT INFO of a database 1 client: %+v", info)
			}
		})
	}
}

// TestReadThroughPerDatabase: each database is a read-through cache of its
// own, on four event loops. A burst of GETFILLs of one key in database 3
// calls the origin once, and the same name in database 0 once more; the
// fill is database 3's key (GET, TTL, FILL.INFO there and not elsewhere); a
// DEL in database 0 leaves it; PURGE.TAG in database 0 purges database 0's
// keys only; a lease in database 2 and one in database 0 on the same name
// are both granted; SWAPDB carries the fill, tags and all, to the other
// database; FLUSHDB forgets the origin's "no such key" of its database.
func TestReadThroughPerDatabase(t *testing.T) {
	var calls atomic.Int64
	var status atomic.Int64
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		time.Sleep(50 * time.Millisecond) // long enough for the burst to meet one flight
		if s := status.Load(); s != 0 {
			w.WriteHeader(int(s))
			return
		}
		w.Header().Set("Surrogate-Key", "t")
		io.WriteString(w, r.Header.Get("X-Stampedeless-Key")+"@origin")
	}))
	t.Cleanup(o.Close)
	ts := startServer(t, Options{EventLoops: 4})
	ctx := context.Background()
	db0, db2, db3 := dbClient(t, ts.addr, 0), dbClient(t, ts.addr, 2), dbClient(t, ts.addr, 3)
	if err := db3.Do(ctx, "LOADER.REGISTER", "k:", o.URL+"/{key}").Err(); err != nil {
		t.Fatal(err)
	}
	db3.Options().PoolSize = 50
	allEqual(t, burst(db3, 50, "k:a", 60, 30), "k:a@origin")
	if n := calls.Load(); n != 1 {
		t.Fatalf("50 GETFILLs in database 3 made %d origin calls, want 1", n)
	}
	if v := db0.Get(ctx, "k:a").Val(); v != "" {
		t.Errorf("database 0 holds %q after a fill in database 3", v)
	}
	if v := db3.Get(ctx, "k:a").Val(); v != "k:a@origin" {
		t.Errorf("GET in database 3 after its fill: %q", v)
	}
	if got := fmt.Sprint(db0.Do(ctx, "FILL.INFO", "k:a").Val()); !strings.Contains(got, "state:missing") {
		t.Errorf("FILL.INFO in database 0: %s, want missing", got)
	}
	if got := fmt.Sprint(db3.Do(ctx, "FILL.INFO", "k:a").Val()); !strings.Contains(got, "state:fresh") || !strings.Contains(got, "tags:[t]") {
		t.Errorf("FILL.INFO in database 3: %s, want fresh with tag t", got)
	}
	if v := db0.Do(ctx, "GETFILL", "k:a", 60, 30).Val(); v != "k:a@origin" || calls.Load() != 2 {
		t.Errorf("GETFILL in database 0: %v after %d origin calls, want its own fill (2 calls)", v, calls.Load())
	}
	db0.Del(ctx, "k:a")
	if v := db3.Do(ctx, "GETFILL", "k:a", 60, 30).Val(); v != "k:a@origin" || calls.Load() != 2 {
		t.Errorf("GETFILL in database 3 after a DEL in database 0: %v, %d origin calls, want a hit", v, calls.Load())
	}
	db0.Do(ctx, "GETFILL", "k:a", 60, 30)
	if n := db0.Do(ctx, "PURGE.TAG", "t").Val(); n != int64(1) {
		t.Errorf("PURGE.TAG in database 0 purged %v keys, want 1 (its own)", n)
	}
	if db0.Exists(ctx, "k:a").Val() != 0 || db3.Exists(ctx, "k:a").Val() != 1 {
		t.Errorf("after PURGE.TAG in database 0: database 0 has k:a %d, database 3 %d; want 0 and 1",
			db0.Exists(ctx, "k:a").Val(), db3.Exists(ctx, "k:a").Val())
	}

	// Leases: one per key per database.
	for _, c := range []*redis.Client{db0, db2} {
		got, err := c.Do(ctx, "FILL.LEASE", "app:x", 60, 30).Slice()
		if err != nil || len(got) != 2 || got[0] != nil {
			t.Errorf("FILL.LEASE app:x in database %d: %v %v, want a lease", c.Options().DB, got, err)
			continue
		}
		if err := c.Do(ctx, "FILL.SET", "app:x", got[1], fmt.Sprint("db", c.Options().DB)).Err(); err != nil {
			t.Errorf("FILL.SET in database %d: %v", c.Options().DB, err)
		}
	}
	if a, b := db0.Get(ctx, "app:x").Val(), db2.Get(ctx, "app:x").Val(); a != "db0" || b != "db2" {
		t.Errorf("leased fills: database 0 %q, database 2 %q", a, b)
	}

	// SWAPDB carries the fill with its tags.
	if err := db0.Do(ctx, "SWAPDB", 3, 4).Err(); err != nil {
		t.Fatal(err)
	}
	db4 := dbClient(t, ts.addr, 4)
	if got := fmt.Sprint(db4.Do(ctx, "FILL.INFO", "k:a").Val()); !strings.Contains(got, "state:fresh") || !strings.Contains(got, "tags:[t]") {
		t.Errorf("FILL.INFO in database 4 after SWAPDB 3 4: %s, want fresh with tag t", got)
	}

	// The origin's "no such key" is its database's, and FLUSHDB forgets it.
	status.Store(http.StatusNotFound)
	before := calls.Load()
	for range 2 {
		if err := db3.Do(ctx, "GETFILL", "k:gone", 60, 30).Err(); err != redis.Nil {
			t.Fatalf("GETFILL of a key the origin does not have: %v", err)
		}
	}
	if n := calls.Load() - before; n != 1 {
		t.Errorf("two GETFILLs of a missing key made %d origin calls, want 1 (the second remembered)", n)
	}
	db0.Do(ctx, "GETFILL", "k:gone", 60, 30)
	if n := calls.Load() - before; n != 2 {
		t.Errorf("database 0's GETFILL of the name database 3 remembers as missing: %d origin calls in all, want 2", n)
	}
	db3.FlushDB(ctx)
	db3.Do(ctx, "GETFILL", "k:gone", 60, 30)
	if n := calls.Load() - before; n != 3 {
		t.Errorf("after FLUSHDB a GETFILL in database 3: %d origin calls in all, want 3", n)
	}
}

// TestDatabasesOffered: a store of four databases (--databases 4) offers
// four to SELECT, MOVE and CONFIG GET, as redis-server started with
// "databases 4" does.
func TestDatabasesOffered(t *testing.T) {
	st, err := engine.New(engine.Options{Databases: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	ts := startServer(t, Options{Store: st})
	redisAddr := redistest.Start(t, "--databases", "4").Addr()
	runCompatScript(t, redisAddr, ts.addr, 2, compatScript{name: "databases 4", steps: []compatStep{
		cs("SELECT 3"), cs("SELECT 4"), cs("SET k v"), cs("MOVE k 4"), cs("MOVE k 3"), cs("SWAPDB 0 4"),
		cs("COPY k k DB 4"), cs("CONFIG GET databases"),
	}})
}

// TestCompatSwapDBWatches: SWAPDB touches a watched key as Redis's
// touchAllWatchedKeysInDb decides, with keys past their deadline kept
// (DEBUG SET-ACTIVE-EXPIRE 0): a key that exists in either database is
// touched, one in neither is not; a stale key replaced by nothing, or by
// another stale key, and nothing replaced by a stale key, are no change.
func TestCompatSwapDBWatches(t *testing.T) {
	redisAddr := redistest.Start(t, "--enable-debug-command", "yes").Addr()
	ts := startServer(t, Options{EventLoops: 4, EnableDebugCommand: ProtectedYes})
	exec := []compatStep{cs("MULTI"), cs("PING"), cs("EXEC")}
	script := func(name string, steps ...compatStep) compatScript {
		head := []compatStep{cs("FLUSHALL"), cs("SELECT 0"), cs("DEBUG SET-ACTIVE-EXPIRE 0")}
		tail := []compatStep{cs("DEBUG SET-ACTIVE-EXPIRE 1"), cs("FLUSHALL")}
		return compatScript{name: name, steps: append(append(head, steps...), tail...)}
	}
	scripts := []compatScript{
		script("exists", append([]compatStep{cs("SET x 30"), cs("WATCH x"), cs("SWAPDB 0 1")}, exec...)...),
		script("created", append([]compatStep{cs("SELECT 1"), cs("SET x 30"), cs("SELECT 0"), cs("WATCH x"),
			cs("SWAPDB 0 1")}, exec...)...),
		script("in neither", append([]compatStep{cs("WATCH x"), cs("SWAPDB 0 1")}, exec...)...),
		script("stale replaced by nothing", append([]compatStep{cs("SELECT 1"), cs("SET x foo PX 1"),
			csSleep(20 * time.Millisecond), cs("WATCH x"), cs("SWAPDB 0 1")}, exec...)...),
		script("nothing replaced by stale", append([]compatStep{cs("SET x foo PX 1"), csSleep(20 * time.Millisecond),
			cs("SELECT 1"), cs("WATCH x"), cs("SWAPDB 0 1")}, exec...)...),
		script("stale replaced by stale", append([]compatStep{cs("SELECT 1"), cs("SET x foo PX 1"), cs("SELECT 0"),
			cs("SET x bar PX 1"), csSleep(20 * time.Millisecond), cs("SELECT 1"), cs("WATCH x"), cs("SWAPDB 0 1")}, exec...)...),
		script("stale replaced by live", append([]compatStep{cs("SELECT 1"), cs("SET x foo PX 1"), cs("SELECT 0"),
			cs("SET x bar"), csSleep(20 * time.Millisecond), cs("SELECT 1"), cs("WATCH x"), cs("SWAPDB 0 1")}, exec...)...),
		script("stale swapped twice", append([]compatStep{cs("SELECT 1"), cs("SET x foo PX 1"),
			csSleep(20 * time.Millisecond), cs("WATCH x"), cs("SWAPDB 0 1"), cs("SWAPDB 0 1")}, exec...)...),
	}
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range scripts {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}
