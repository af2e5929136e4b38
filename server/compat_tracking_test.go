package server

// Differential tests of client-side caching (CLIENT TRACKING, CACHING,
// GETREDIR, TRACKINGINFO) against a real redis-server: the commands' replies
// and errors in both protocols (compat_test.go's scripts), and the
// invalidation messages several connections read (pubsub_compat_test.go's
// scripts): RESP3 pushes on the tracking connection, and RESP2's messages on
// __redis__:invalidate through REDIRECT.

import (
	"crypto/sha1"
	"fmt"
	"strings"
	"testing"
)

func compatTrackingScripts() []compatScript {
	return []compatScript{
		{name: "tracking-errors", steps: []compatStep{
			cs("CLIENT TRACKINGINFO"), cs("CLIENT GETREDIR"), cs("CLIENT CACHING YES"), cs("CLIENT CACHING maybe"),
			cs("CLIENT TRACKING"), cs("CLIENT TRACKING foo"), cs("CLIENT TRACKING ON NOSUCH"), cs("CLIENT TRACKING ON PREFIX"),
			cs("CLIENT TRACKING ON REDIRECT"), cs("CLIENT TRACKING ON REDIRECT x"), cs("CLIENT TRACKING ON REDIRECT 999999"),
			cs("CLIENT TRACKING ON REDIRECT 0"), cs("CLIENT TRACKING OFF REDIRECT 999999"),
			cs("CLIENT TRACKING ON PREFIX a"), cs("CLIENT TRACKING ON BCAST OPTIN"), cs("CLIENT TRACKING ON BCAST OPTOUT"),
			cs("CLIENT TRACKING ON OPTIN OPTOUT"), cs("CLIENT TRACKING ON BCAST PREFIX a PREFIX ab"),
			cs("CLIENT TRACKING ON BCAST PREFIX ab PREFIX a"), cs("CLIENT TRACKING ON BCAST PREFIX a PREFIX a"),
			cs("CLIENT TRACKINGINFO"), cs("CLIENT GETREDIR"), cs("CLIENT TRACKINGINFO x"), cs("CLIENT GETREDIR x"),
			cs("CLIENT CACHING"), cs("CLIENT CACHING YES NO"),
		}},
		{name: "tracking-modes", steps: []compatStep{
			cs("CLIENT TRACKING on"), cs("CLIENT TRACKINGINFO"), cs("CLIENT GETREDIR"),
			cs("CLIENT CACHING YES"), cs("CLIENT CACHING NO"), cs("CLIENT CACHING maybe"),
			cs("CLIENT TRACKING ON BCAST"), cs("CLIENT TRACKING ON OPTIN"), cs("CLIENT TRACKINGINFO"),
			cs("CLIENT CACHING no"), cs("CLIENT CACHING yes"), cs("CLIENT TRACKINGINFO"),
			// CACHING lasts until a command other than CLIENT.
			cs("CLIENT GETREDIR"), cs("CLIENT TRACKINGINFO"), cs("GET k"), cs("CLIENT TRACKINGINFO"),
			cs("CLIENT CACHING YES"), cs("NOSUCH"), cs("CLIENT TRACKINGINFO"),
			cs("CLIENT CACHING YES"), cs("MULTI"), cs("GET k"), cs("CLIENT TRACKINGINFO"), cs("EXEC"), cs("CLIENT TRACKINGINFO"),
			cs("CLIENT TRACKING ON OPTOUT"), cs("CLIENT TRACKING ON NOLOOP"), cs("CLIENT TRACKINGINFO"),
			cs("CLIENT TRACKING OFF"), cs("CLIENT TRACKING ON OPTOUT NOLOOP"), cs("CLIENT CACHING NO"), cs("CLIENT TRACKINGINFO"),
			cs("CLIENT TRACKING ON OPTIN"), cs("CLIENT TRACKING OFF"), cs("CLIENT TRACKING OFF"), cs("CLIENT TRACKINGINFO"),
			cs("CLIENT GETREDIR"),
			cs("MULTI"), cs("CLIENT TRACKING ON OPTIN"), cs("GET k"), cs("CLIENT TRACKINGINFO"), cs("EXEC"),
			cs("CLIENT TRACKINGINFO"), cs("CLIENT TRACKING OFF"),
		}},
		{name: "tracking-bcast-prefixes", steps: []compatStep{
			cs("CLIENT TRACKING ON BCAST PREFIX b PREFIX a"), cs("CLIENT TRACKINGINFO"),
			cs("CLIENT TRACKING ON BCAST PREFIX abc"), cs("CLIENT TRACKING ON BCAST PREFIX b"), cs("CLIENT TRACKING ON BCAST PREFIX c"),
			cs("CLIENT TRACKINGINFO"), cs("CLIENT TRACKING ON BCAST PREFIX c"), cs("CLIENT TRACKING ON"),
			cs("CLIENT TRACKING ON BCAST NOLOOP"), cs("CLIENT TRACKINGINFO"), cs("CLIENT TRACKING ON BCAST PREFIX d"),
			cs("CLIENT TRACKING OFF"), cs("CLIENT TRACKING ON BCAST"), cs("CLIENT TRACKINGINFO"),
			cs("CLIENT TRACKING ON BCAST PREFIX x"), cs("CLIENT TRACKING ON BCAST"), cs("CLIENT TRACKING ON BCAST PREFIX x PREFIX y"),
			cs("CLIENT TRACKING OFF"), cs("CLIENT TRACKINGINFO"),
		}},
		{name: "tracking-table-max-keys", steps: []compatStep{
			cs("CONFIG GET tracking-table-max-keys"), cs("CONFIG SET tracking-table-max-keys 10"),
			cs("CONFIG GET tracking-table-max-keys"), cs("CONFIG SET tracking-table-max-keys -1"),
			cs("CONFIG SET tracking-table-max-keys x"), cs("CONFIG SET tracking-table-max-keys 1000000"),
		}},
	}
}

func TestCompatTracking(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatTrackingScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// The tracking scripts' Lua, without spaces (ps splits on them): a read of
// the first declared key, and a write of it.
const (
	luaGetKey  = "return(redis.call('get',KEYS[1]))"
	luaSetKey  = "return(redis.call('set',KEYS[1],'x'))"
	luaSetKeys = "redis.call('set',KEYS[2],'x');redis.call('del',KEYS[3]);return(redis.call('set',KEYS[1],'y'))"
)

// luaGetKeySHA is luaGetKey's SHA1, for EVALSHA and EVALSHA_RO after EVAL
// has cached it.
var luaGetKeySHA = fmt.Sprintf("%x", sha1.Sum([]byte(luaGetKey)))

// psIDs is a step whose arguments or replies name connections' client ids.
func psIDs(conn int, line string) psStep {
	st := ps(conn, line)
	st.ids = true
	return st
}

// trackingScripts: connection 0 tracks (or, with REDIRECT, receives), the
// others write. A step that reads a connection with nothing sent to it
// would wait: a PING on the tracking connection shows that no message came
// before its reply.
func trackingScripts() []psScript {
	return []psScript{
		{name: "resp3 default mode", conns: 2, resp3: true, steps: []psStep{
			ps(0, "CLIENT TRACKING ON"), ps(1, "SET a 1"), ps(0, "GET a"), ps(0, "MGET b c"),
			ps(1, "SET a 2"), psRead(0, 1),
			// a is no longer tracked until it is read again.
			ps(1, "SET a 3"), ps(0, "PING"),
			ps(1, "SET b 1"), psRead(0, 1), ps(1, "MSET c 1 b 2"), psRead(0, 1), ps(0, "PING"),
			// Writes that change nothing send nothing.
			ps(0, "GET a"), ps(1, "SET a 4 NX"), ps(1, "DEL nokey"), ps(0, "PING"),
			ps(1, "EXPIRE a 100"), psRead(0, 1), ps(0, "GET a"), ps(1, "PERSIST a"), psRead(0, 1),
			ps(0, "STRLEN a"), ps(1, "APPEND a x"), psRead(0, 1), ps(0, "EXISTS e"), ps(1, "INCR e"), psRead(0, 1),
			ps(0, "TTL a"), ps(1, "DEL a"), psRead(0, 1),
			// Writes are not reads.
			ps(0, "SET w 1"), ps(1, "SET w 2"), ps(0, "PING"),
			// The client's own write: the reply, then the invalidation.
			ps(0, "GET a"), psN(0, 2, "SET a 5"), ps(0, "PING"),
			ps(0, "GET a"), ps(0, "GET b"), ps(1, "FLUSHALL"), psRead(0, 1), ps(1, "SET a 6"), ps(0, "PING"),
			ps(0, "GET a"), psN(0, 2, "FLUSHALL"),
			// In a transaction, after EXEC's whole reply.
			ps(0, "GET a"), ps(0, "MULTI"), ps(0, "SET a 7"), ps(0, "INCR a"), psN(0, 2, "EXEC"), ps(0, "PING"),
			ps(0, "GET a"), ps(0, "CLIENT TRACKING OFF"), ps(1, "SET a 7"), ps(0, "PING"),
		}},
		{name: "resp3 optin and optout", conns: 2, resp3: true, steps: []psStep{
			ps(0, "CLIENT TRACKING ON OPTIN"), ps(0, "GET a"), ps(1, "SET a 1"), ps(0, "PING"),
			ps(0, "CLIENT CACHING YES"), ps(0, "GET a"), ps(1, "SET a 2"), psRead(0, 1),
			ps(0, "CLIENT CACHING YES"), ps(0, "MULTI"), ps(0, "GET b"), ps(0, "GET c"), ps(0, "EXEC"),
			ps(1, "SET c 1"), psRead(0, 1), ps(1, "SET b 1"), psRead(0, 1),
			ps(0, "CLIENT TRACKING OFF"), ps(0, "CLIENT TRACKING ON OPTOUT"),
			ps(0, "GET a"), ps(0, "CLIENT CACHING NO"), ps(0, "GET b"), ps(1, "SET b 2"), ps(0, "PING"),
			ps(1, "SET a 3"), psRead(0, 1),
		}},
		{name: "resp3 noloop", conns: 2, resp3: true, steps: []psStep{
			ps(0, "CLIENT TRACKING ON NOLOOP"), ps(0, "GET a"), ps(0, "SET a 1"), ps(0, "PING"),
			ps(1, "SET a 2"), ps(0, "PING"), ps(0, "GET a"), ps(1, "SET a 3"), psRead(0, 1),
		}},
		{name: "resp3 bcast", conns: 2, resp3: true, steps: []psStep{
			ps(0, "CLIENT TRACKING ON BCAST PREFIX user: PREFIX s:"), ps(1, "SET user:1 x"), psRead(0, 1),
			ps(1, "SET other x"), ps(1, "SET s:1 x"), psRead(0, 1), ps(1, "DEL user:1"), psRead(0, 1),
			ps(1, "DEL user:1"), ps(0, "PING"), psN(0, 2, "SET user:2 y"),
			// BCAST again without PREFIX adds the empty prefix, as Redis does,
			// though it overlaps: a key under user: is then sent twice.
			ps(0, "CLIENT TRACKING ON BCAST NOLOOP"), ps(0, "CLIENT TRACKINGINFO"),
			ps(0, "SET user:3 z"), ps(0, "PING"), ps(1, "SET user:3 w"), psRead(0, 2), ps(0, "PING"),
			ps(1, "FLUSHALL"), psRead(0, 1), ps(0, "PING"),
		}},
		// What one command, transaction or script changes under a prefix
		// is one message, its keys sorted and each once, as Redis 7.0
		// sends a prefix's keys once per event loop iteration.
		{name: "resp3 bcast batches", conns: 2, resp3: true, steps: []psStep{
			ps(0, "CLIENT TRACKING ON BCAST"), ps(1, "MSET c 1 a 2 b 3"), psRead(0, 1), ps(0, "PING"),
			ps(1, "MSET b 1 a 2 b 3"), psRead(0, 1), ps(1, "DEL a nokey c"), psRead(0, 1), ps(0, "PING"),
			ps(1, "MULTI"), ps(1, "SET y 1"), ps(1, "INCR y"), ps(1, "SET x 1"), ps(1, "DEL b"), ps(1, "GET x"), ps(1, "EXEC"),
			psRead(0, 1), ps(0, "PING"),
			ps(1, "EVAL "+luaSetKeys+" 3 s r x"), psRead(0, 1), ps(0, "PING"),
			ps(1, "RPUSH l a b c"), psRead(0, 1), ps(1, "LPOP l 3"), psRead(0, 1),
			// Its own: the reply, then one message.
			psN(0, 2, "MSET p 1 q 2"), ps(0, "PING"),
			ps(0, "MULTI"), ps(0, "SET q 3"), ps(0, "SET p 2"), psN(0, 2, "EXEC"), ps(0, "PING"),
			ps(0, "CLIENT TRACKING OFF"), ps(0, "CLIENT TRACKING ON BCAST PREFIX b: PREFIX a:"),
			ps(1, "MULTI"), ps(1, "INCR a:2"), ps(1, "INCR b:1"), ps(1, "INCR c:1"), ps(1, "INCR a:1"), ps(1, "EXEC"),
			psRead(0, 2), ps(0, "PING"), ps(1, "MSET a:3 1 c:2 1 b:2 1"), psRead(0, 2),
			// NOLOOP leaves its own keys out, and sends nothing if all were.
			ps(0, "CLIENT TRACKING OFF"), ps(0, "CLIENT TRACKING ON BCAST NOLOOP"),
			ps(0, "MSET a 1 b 2"), ps(0, "PING"), ps(1, "MSET a 2 b 3"), psRead(0, 1),
			ps(0, "EVAL "+luaSetKeys+" 3 a b c"), ps(0, "PING"),
		}},
		{name: "resp2 bcast batches", conns: 3, steps: []psStep{
			ps(0, "SUBSCRIBE __redis__:invalidate"), psIDs(1, "CLIENT TRACKING ON BCAST REDIRECT {id0}"),
			ps(2, "MSET c 1 a 2 b 3"), psRead(0, 1), ps(1, "MSET a 3 d 1"), psRead(0, 1), ps(0, "PING"),
			ps(1, "MULTI"), ps(1, "SET y 1"), ps(1, "DEL a"), ps(1, "EXEC"), psRead(0, 1),
			ps(2, "EVAL "+luaSetKeys+" 3 s r x"), psRead(0, 1), ps(0, "PING"),
		}},
		{name: "resp2 redirect", conns: 3, steps: []psStep{
			ps(0, "SUBSCRIBE __redis__:invalidate"), psIDs(1, "CLIENT TRACKING ON REDIRECT {id0}"),
			psIDs(1, "CLIENT GETREDIR"), psIDs(1, "CLIENT TRACKINGINFO"),
			ps(1, "GET a"), ps(2, "SET a 1"), psRead(0, 1),
			ps(1, "GET a"), ps(1, "SET a 2"), psRead(0, 1),
			ps(1, "GET a"), ps(2, "FLUSHALL"), psRead(0, 1),
			ps(1, "GET a"), ps(0, "QUIT"), ps(2, "SET a 3"), psIDs(1, "CLIENT TRACKINGINFO"), psIDs(1, "CLIENT GETREDIR"),
		}},
		{name: "resp2 without redirect", conns: 2, steps: []psStep{
			ps(0, "CLIENT TRACKING ON"), ps(0, "GET a"), ps(1, "SET a 1"), ps(0, "PING"), ps(0, "GET a"), ps(0, "SET a 2"), ps(0, "PING"),
		}},
		// A script's reads are its client's (Redis 7.0 tracks the declared
		// keys once the script has run a read command; 7.2, the keys its
		// reads name: these scripts read what they declare).
		{name: "resp3 scripts", conns: 2, resp3: true, steps: []psStep{
			ps(0, "CLIENT TRACKING ON"), ps(1, "SET k 1"),
			ps(0, "EVAL_RO "+luaGetKey+" 1 k"), ps(1, "SET k 2"), psRead(0, 1),
			ps(0, "EVAL "+luaGetKey+" 1 k"), ps(1, "SET k 3"), psRead(0, 1),
			ps(0, "EVALSHA_RO "+luaGetKeySHA+" 1 k"), ps(1, "DEL k"), psRead(0, 1),
			ps(0, "EVALSHA "+luaGetKeySHA+" 1 k"), ps(1, "SET k 4"), psRead(0, 1),
			ps(0, "EVAL_RO "+luaGetKey+" 2 a b"), ps(1, "SET b 1"), psRead(0, 1), ps(1, "SET a 1"), psRead(0, 1),
			// A script that reads nothing, or only writes, tracks nothing.
			ps(0, "EVAL return(1) 1 n"), ps(1, "SET n 1"), ps(0, "PING"),
			ps(0, "EVAL "+luaSetKey+" 1 w"), ps(1, "SET w 2"), ps(0, "PING"),
			// Its client's own write: the reply, then the invalidation.
			ps(0, "EVAL_RO "+luaGetKey+" 1 o"), psN(0, 2, "EVAL "+luaSetKey+" 1 o"), ps(0, "PING"),
			ps(0, "MULTI"), ps(0, "EVAL_RO "+luaGetKey+" 1 m"), ps(0, "EXEC"), ps(1, "SET m 1"), psRead(0, 1),
			ps(0, "EVAL_RO "+luaGetKey+" 1 f"), ps(1, "FLUSHALL"), psRead(0, 1), ps(0, "PING"),
		}},
		// A function's reads are its client's, as a script's are.
		{name: "resp3 functions", conns: 2, resp3: true, steps: []psStep{
			{conn: 1, args: []string{"FUNCTION", "LOAD", "REPLACE", "#!lua name=tracked\n" +
				"redis.register_function{function_name='tget', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}}\n" +
				"redis.register_function('tset', function(keys) return redis.call('set', keys[1], 'x') end)"}, replies: 1},
			ps(0, "CLIENT TRACKING ON"), ps(1, "SET k 1"),
			ps(0, "FCALL_RO tget 1 k"), ps(1, "SET k 2"), psRead(0, 1),
			ps(0, "FCALL tget 1 k"), ps(1, "DEL k"), psRead(0, 1),
			ps(0, "FCALL tset 1 w"), ps(1, "SET w 2"), ps(0, "PING"),
			ps(0, "FCALL_RO tget 1 o"), psN(0, 2, "FCALL tset 1 o"), ps(0, "PING"),
		}},
		{name: "resp3 scripts optin and optout", conns: 2, resp3: true, steps: []psStep{
			ps(0, "CLIENT TRACKING ON OPTIN"), ps(0, "EVAL_RO "+luaGetKey+" 1 a"), ps(1, "SET a 1"), ps(0, "PING"),
			ps(0, "CLIENT CACHING YES"), ps(0, "EVAL_RO "+luaGetKey+" 1 a"), ps(1, "SET a 2"), psRead(0, 1),
			ps(0, "CLIENT CACHING YES"), ps(0, "MULTI"), ps(0, "EVAL_RO "+luaGetKey+" 1 b"), ps(0, "EXEC"),
			ps(1, "SET b 1"), psRead(0, 1),
			ps(0, "CLIENT TRACKING OFF"), ps(0, "CLIENT TRACKING ON OPTOUT"),
			ps(0, "CLIENT CACHING NO"), ps(0, "EVAL_RO "+luaGetKey+" 1 c"), ps(1, "SET c 1"), ps(0, "PING"),
			ps(0, "EVAL_RO "+luaGetKey+" 1 c"), ps(1, "SET c 2"), psRead(0, 1),
		}},
		{name: "resp3 scripts noloop and bcast", conns: 2, resp3: true, steps: []psStep{
			ps(0, "CLIENT TRACKING ON NOLOOP"), ps(0, "EVAL_RO "+luaGetKey+" 1 a"), ps(0, "EVAL "+luaSetKey+" 1 a"), ps(0, "PING"),
			ps(1, "SET a 2"), ps(0, "PING"), ps(0, "EVAL "+luaGetKey+" 1 a"), ps(1, "EVAL "+luaSetKey+" 1 a"), psRead(0, 1),
			ps(0, "CLIENT TRACKING OFF"), ps(0, "CLIENT TRACKING ON BCAST PREFIX user:"),
			ps(1, "EVAL "+luaSetKey+" 1 user:1"), psRead(0, 1), ps(1, "EVAL "+luaSetKey+" 1 other"), ps(0, "PING"),
			ps(0, "EVAL_RO "+luaGetKey+" 1 x"), ps(1, "SET x 1"), ps(0, "PING"),
			psN(0, 2, "EVAL "+luaSetKey+" 1 user:2"),
		}},
		{name: "resp2 scripts redirect", conns: 3, steps: []psStep{
			ps(0, "SUBSCRIBE __redis__:invalidate"), psIDs(1, "CLIENT TRACKING ON REDIRECT {id0}"),
			ps(1, "EVAL_RO "+luaGetKey+" 1 a"), ps(2, "SET a 1"), psRead(0, 1),
			ps(1, "EVAL "+luaGetKey+" 1 a"), ps(1, "EVAL "+luaSetKey+" 1 a"), psRead(0, 1),
			ps(1, "EVAL return(1) 1 a"), ps(2, "SET a 2"), ps(1, "PING"), ps(0, "PING"),
		}},
		{name: "resp3 redirect", conns: 3, resp3: true, steps: []psStep{
			ps(0, "SUBSCRIBE __redis__:invalidate"), psIDs(1, "CLIENT TRACKING ON REDIRECT {id0}"),
			ps(1, "GET a"), ps(2, "SET a 1"), psRead(0, 1), ps(1, "PING"),
			ps(1, "GET a"), ps(0, "QUIT"), ps(2, "SET a 2"), psIDs(1, "PING"), psIDs(1, "CLIENT TRACKINGINFO"),
		}},
		// A RESP3 client gets the invalidations redirected to it without
		// subscribing, with CLIENT REPLY OFF too.
		{name: "resp3 redirect without subscribing", conns: 3, resp3: true, steps: []psStep{
			psIDs(1, "CLIENT TRACKING ON REDIRECT {id0}"), ps(1, "GET a"), ps(2, "SET a 1"), psRead(0, 1),
			ps(1, "GET a"), psN(0, 0, "CLIENT REPLY OFF"), ps(2, "SET a 2"), psRead(0, 1),
			ps(0, "CLIENT REPLY ON"), ps(0, "PING"),
		}},
		// Keys read before tracking went off are forgotten at the flush
		// (Redis's tracking.tcl reuses one client through its tests so).
		{name: "table flushed while no one tracks", conns: 3, steps: []psStep{
			ps(0, "SUBSCRIBE __redis__:invalidate"), psIDs(1, "CLIENT TRACKING ON REDIRECT {id0}"),
			ps(1, "GET a"), ps(1, "CLIENT TRACKING OFF"), ps(1, "FLUSHALL"),
			psIDs(1, "CLIENT TRACKING ON REDIRECT {id0}"), ps(2, "SET a 1"), ps(0, "PING"),
			ps(1, "GET a"), ps(2, "SET a 2"), psRead(0, 1),
		}},
	}
}

func TestCompatTrackingMessages(t *testing.T) {
	for _, sc := range trackingScripts() {
		t.Run(sc.name, func(t *testing.T) {
			runPubSubScript(t, startRedis(t), startServer(t, Options{}).addr, sc)
		})
	}
}

// TestCompatTrackingEvictionMessage: a write that takes the store past its
// bound under a volatile policy with one volatile key to give. Redis
// evicts it before the next command, whose reply follows the invalidation;
// this server evicts it as the write runs and holds the message back until
// the write's reply is queued: the connection reads the same three things
// in the same order on both (Redis's tracking.tcl, "Tracking invalidation
// message of eviction keys should be before response").
func TestCompatTrackingEvictionMessage(t *testing.T) {
	p := dialCompatPair(t, startRedis(t), startServer(t, Options{}).addr, 3)
	for _, side := range []struct {
		name string
		c    *compatConn
	}{{"redis", p.redis}, {"ours", p.ours}} {
		c := side.c
		t.Cleanup(func() {
			c.do("CONFIG", "SET", "maxmemory", "0")
			c.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
		})
		// A key with no deadline holds most of the bound, as a server's
		// own memory does on redis-server, so that the big key passes the
		// bound without exceeding it alone.
		got := []string{c.run(compatExact, []string{"SET", "pad", strings.Repeat("p", 1<<20)}),
			c.run(compatExact, []string{"CLIENT", "TRACKING", "on"})}
		used := c.infoInt(t, "memory", "used_memory") - c.infoInt(t, "memory", "mem_not_counted_for_evict")
		for _, args := range [][]string{
			{"CONFIG", "SET", "maxmemory", fmt.Sprint(used + 100<<10)},
			{"CONFIG", "SET", "maxmemory-policy", "volatile-random"},
			{"SETEX", "volatile-key", "10000", "x"},
			{"GET", "volatile-key"},
			{"SETBIT", "big-key", "1600000", "0"}, // 200 KB: past the bound
			{"GETBIT", "big-key", "0"},
		} {
			got = append(got, c.run(compatExact, args))
		}
		// GETBIT's run read the message; its reply comes next.
		r, err := c.read()
		if err != nil {
			t.Fatalf("%s: %q, then %v", side.name, got, err)
		}
		got = append(got, r.String(), c.run(compatExact, []string{"EXISTS", "volatile-key"}))
		want := []string{"+OK", "+OK", "+OK", "+OK", "+OK", `"x"`, ":0", `>["invalidate" ["volatile-key"]]`, ":0", ":0"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s:\n\tgot  %q\n\twant %q", side.name, got, want)
		}
	}
}
