package server

// Differential tests of MULTI, EXEC, DISCARD, WATCH and UNWATCH: the same
// commands to a real redis-server and to our server, reply for reply, as
// compat_test.go does (RESP2).

import (
	"strings"
	"testing"
	"time"
)

func compatTransactionScripts() []compatScript {
	return []compatScript{
		{name: "multi-exec", steps: []compatStep{
			cs("MULTI"), cs("SET a 1"), cs("INCR a"), cs("GET a"), cs("MGET a b"), cs("PING"), cs("EXEC"), cs("GET a"),
			cs("multi"), cs("exec"),
		}},
		{name: "nested-multi-and-watch-inside-multi-do-not-fail-it", steps: []compatStep{
			cs("MULTI"), cs("MULTI"), cs("SET a 1"), cs("WATCH a"), cs("UNWATCH"), cs("EXEC"), cs("GET a"),
		}},
		{name: "exec-and-discard-without-multi", steps: []compatStep{
			cs("EXEC"), cs("DISCARD"), cs("exec"), cs("UNWATCH"),
		}},
		{name: "execabort-unknown-command", steps: []compatStep{
			cs("MULTI"), cs("SET a 1"), cs("NOSUCH x"), cs("SET b 2"), cs("EXEC"), cs("GET a"), cs("GET b"), cs("EXEC"),
		}},
		{name: "execabort-arity", steps: []compatStep{
			cs("MULTI"), cs("SET a 1"), cs("GET a b"), cs("EXEC"), cs("GET a"),
			cs("MULTI"), cs("SET a 1"), cs("SET a"), cs("EXEC"), cs("GET a"),
		}},
		{name: "execabort-unknown-subcommand", steps: []compatStep{
			cs("MULTI"), cs("SET a 1"), cs("CLIENT NOSUCH"), cs("CONFIG"), cs("EXEC"), cs("GET a"),
		}},
		{name: "exec-refused-ends-the-transaction", steps: []compatStep{
			cs("MULTI"), cs("SET a 1"), cs("EXEC x"), cs("EXEC"), cs("GET a"), cs("EXEC x y"), cs("DISCARD x"),
			cs("MULTI x"), cs("WATCH"), cs("UNWATCH x"),
		}},
		{name: "runtime-errors-inside-exec", steps: []compatStep{
			cs("SET s text"),
			cs("MULTI"), cs("INCR s"), cs("SET b 1"), cs("SET c v BADOPT"), cs("EXPIRE b abc"), cs("GETEX b PX -1"),
			cs("INCRBY b 9223372036854775807"), cs("INCR b"), cs("SETRANGE b -1 x"), cs("GET b"), cs("EXEC"),
			cs("GET b"), cs("EXISTS c"),
		}},
		{name: "discard", steps: []compatStep{
			cs("MULTI"), cs("SET a 1"), cs("DISCARD"), cs("GET a"), cs("EXEC"), cs("DISCARD"),
			cs("MULTI"), cs("NOSUCH"), cs("DISCARD"), cs("MULTI"), cs("SET a 2"), cs("EXEC"), cs("GET a"),
		}},
		{name: "empty-transaction", steps: []compatStep{cs("MULTI"), cs("EXEC"), cs("MULTI"), cs("DISCARD")}},
		{name: "watch-own-write", steps: []compatStep{
			cs("SET a 1"), cs("WATCH a"), cs("SET a 2"), cs("MULTI"), cs("GET a"), cs("EXEC"), cs("GET a"),
			// EXEC unwatched: the next transaction runs.
			cs("MULTI"), cs("GET a"), cs("EXEC"),
		}},
		{name: "watch-missing-key-then-created", steps: []compatStep{
			cs("WATCH n"), cs("SET n 1"), cs("MULTI"), cs("SET x 1"), cs("EXEC"), cs("EXISTS x"),
		}},
		{name: "unwatch", steps: []compatStep{
			cs("WATCH a b"), cs("SET a 1"), cs("UNWATCH"), cs("MULTI"), cs("SET x 1"), cs("EXEC"),
		}},
		{name: "discard-unwatches", steps: []compatStep{
			cs("WATCH a"), cs("SET a 1"), cs("MULTI"), cs("DISCARD"), cs("MULTI"), cs("SET x 1"), cs("EXEC"),
		}},
		{name: "watch-twice-and-many-keys", steps: []compatStep{
			cs("WATCH a a b"), cs("WATCH a c"), cs("SET c 1"), cs("MULTI"), cs("PING"), cs("EXEC"),
		}},
		{name: "execabort-also-unwatches", steps: []compatStep{
			cs("WATCH a"), cs("MULTI"), cs("NOSUCH"), cs("EXEC"), cs("SET a 1"), cs("MULTI"), cs("PING"), cs("EXEC"),
		}},
		{name: "watch-unchanged-by-writes-that-change-nothing", steps: []compatStep{
			cs("SET a 1"), cs("WATCH a m"), cs("GET a"), cs("SET a 2 NX"), cs("SET m 1 XX"), cs("DEL m"),
			cs("PERSIST a"), cs("GETEX a PERSIST"), cs("EXPIRE m 100"), cs("EXPIRE a 100 XX"), cs("MSETNX a 1 x 1"),
			cs("MULTI"), cs("GET a"), cs("EXEC"),
		}},
		{name: "watch-expire", steps: []compatStep{
			cs("SET a 1"), cs("WATCH a"), cs("EXPIRE a 100"), cs("MULTI"), cs("GET a"), cs("EXEC"),
			cs("WATCH a"), cs("PERSIST a"), cs("MULTI"), cs("GET a"), cs("EXEC"),
			cs("WATCH a"), cs("GETEX a EX 100"), cs("MULTI"), cs("GET a"), cs("EXEC"),
		}},
		{name: "watch-delete", steps: []compatStep{
			cs("SET a 1"), cs("WATCH a"), cs("DEL a"), cs("MULTI"), cs("SET a 2"), cs("EXEC"), cs("GET a"),
			cs("WATCH a"), cs("GETDEL a"), cs("MULTI"), cs("PING"), cs("EXEC"),
		}},
		{name: "watch-flushall", steps: []compatStep{
			cs("SET a 1"), cs("WATCH a"), cs("FLUSHALL"), cs("MULTI"), cs("SET a 2"), cs("EXEC"), cs("GET a"),
			// A key that did not exist is not changed by FLUSHALL.
			cs("WATCH missing"), cs("FLUSHALL"), cs("MULTI"), cs("SET b 1"), cs("EXEC"), cs("GET b"),
		}},
		{name: "watch-key-that-expires", steps: []compatStep{
			cs("SET a 1 PX 100"), cs("WATCH a"), csSleep(200 * time.Millisecond), cs("MULTI"), cs("PING"), cs("EXEC"),
		}},
		{name: "watch-key-already-expired", steps: []compatStep{
			cs("SET a 1 PX 20"), csSleep(100 * time.Millisecond), cs("WATCH a"), cs("MULTI"), cs("PING"), cs("EXEC"),
			// Removing the expired key changes nothing either.
			cs("SET b 1 PX 20"), csSleep(100 * time.Millisecond), cs("WATCH b"), cs("GET b"), cs("MULTI"), cs("PING"), cs("EXEC"),
			cs("SET c 1 PX 20"), csSleep(100 * time.Millisecond), cs("WATCH c"), cs("FLUSHALL"), cs("MULTI"), cs("PING"), cs("EXEC"),
		}},
		{name: "transaction-commands-arity", steps: []compatStep{
			cs("WATCH"), cs("MULTI a"), cs("UNWATCH a"), cs("DISCARD a"),
		}},
	}
}

func TestCompatTransactions(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatTransactionScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// TestCompatWatchOtherClient: a write by another connection between WATCH
// and EXEC makes EXEC answer a null array; one before WATCH does not.
func TestCompatWatchOtherClient(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	for _, write := range []string{"SET a 2", "DEL a", "EXPIRE a 100", "FLUSHALL", "APPEND a x", "MSET a 3 b 3", "INCR a", "RENAME a c"} {
		t.Run(write, func(t *testing.T) {
			forEachProtocol(t, func(t *testing.T, proto int) {
				watcher := dialCompatPair(t, redisAddr, ts.addr, proto)
				other := dialCompatPair(t, redisAddr, ts.addr, proto)
				watcher.flush(t)
				runCompatSteps(t, other, compatScript{name: "before", steps: []compatStep{cs("SET a 1"), cs(write)}})
				runCompatSteps(t, watcher, compatScript{name: "watch", steps: []compatStep{cs("SET a 1"), cs("WATCH a")}})
				runCompatSteps(t, other, compatScript{name: "other", steps: []compatStep{cs(write)}})
				runCompatSteps(t, watcher, compatScript{name: "exec", steps: []compatStep{
					cs("MULTI"), cs("SET b 1"), cs("EXEC"), cs("EXISTS b"),
				}})
			})
		})
	}
}

// TestCompatClientInfoTransaction compares CLIENT INFO's flags= and multi=
// fields in and out of MULTI, and with a watched key changed.
func TestCompatClientInfoTransaction(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	p.flush(t)
	fields := func(info string) string {
		var out []string
		for _, f := range strings.Fields(info) {
			if strings.HasPrefix(f, "flags=") || strings.HasPrefix(f, "multi=") {
				out = append(out, f)
			}
		}
		return strings.Join(out, " ")
	}
	check := func(what string, steps ...compatStep) {
		t.Helper()
		var last [2]string
		for _, st := range steps {
			for i, c := range []*compatConn{p.redis, p.ours} {
				r, err := c.do(st.args...)
				if err != nil {
					t.Fatalf("%s: %s: %v", what, showArgs(st.args), err)
				}
				last[i] = r.String()
			}
		}
		if want, got := fields(last[0]), fields(last[1]); want != got || want == "" {
			t.Errorf("%s: CLIENT INFO fields: redis %q, ours %q", what, want, got)
		}
	}
	check("idle", cs("CLIENT INFO"))
	// Run inside EXEC, CLIENT INFO still sees the transaction.
	check("inside exec", cs("MULTI"), cs("SET a 1"), cs("PING"), cs("CLIENT INFO"), cs("EXEC"))
	check("after exec", cs("CLIENT INFO"))
	check("dirty", cs("WATCH a"), cs("SET a 2"), cs("CLIENT INFO"))
	check("after unwatch", cs("WATCH a"), cs("SET a 3"), cs("UNWATCH"), cs("CLIENT INFO"))
}
