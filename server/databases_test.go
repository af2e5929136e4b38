package server

import (
	"context"
	"fmt"
	"strings"
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

// TestReadThroughIsDatabaseZeros: the read-through commands refuse to run
// in another database, saying which one they work in.
func TestReadThroughIsDatabaseZeros(t *testing.T) {
	ts := startServer(t, Options{EventLoops: 4})
	c := dbClient(t, ts.addr, 3)
	err := c.Do(context.Background(), "GETFILL", "k", "60", "10").Err()
	if err == nil || !strings.Contains(err.Error(), "database 0 only") {
		t.Errorf("GETFILL in database 3: %v, want a refusal naming database 0", err)
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
