package server

// Differential tests of DEBUG and of the small commands clients' test
// suites meet (MODULE, ROLE, REPLICAOF, LOLWUT, SUBSTR), with
// compat_test.go's helpers, against a redis-server started with the same
// enable-debug-command.
//
// Run: go test -count=1 -run 'CompatDebug|CompatSmall' ./server/

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/redistest"
)

func TestCompatDebugRefused(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "debug-refused", steps: []compatStep{
			cs("DEBUG SLEEP 0"), cs("DEBUG HELP"), cs("DEBUG"), cs("debug nosuch"),
			cs("CONFIG GET enable-debug-command"), cs("CONFIG SET enable-debug-command yes"),
			cs("MODULE LOAD /nonexistent.so"), cs("MODULE UNLOAD x"), cs("MODULE LIST"),
		}})
	})
}

func TestCompatDebugLocal(t *testing.T) {
	redisAddr := redistest.Start(t, "--enable-debug-command", "local").Addr()
	ts := startServer(t, Options{EnableDebugCommand: ProtectedLocal})
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "debug-local", steps: []compatStep{
			cs("DEBUG SLEEP 0"), cs("CONFIG GET enable-debug-command"),
		}})
	})
}

func TestCompatDebug(t *testing.T) {
	redisAddr := redistest.Start(t, "--enable-debug-command", "yes", "--maxmemory-policy", "allkeys-lru").Addr()
	ts := startServer(t, Options{EnableDebugCommand: ProtectedYes})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	p.ours.do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "debug", steps: []compatStep{
			cs("DEBUG SLEEP 0"), cs("DEBUG SLEEP 0.05"), cs("DEBUG SLEEP x"), cs("DEBUG SLEEP"),
			cs("DEBUG SET-ACTIVE-EXPIRE 0"), cs("DEBUG SET-ACTIVE-EXPIRE 1"),
			cs("DEBUG QUICKLIST-PACKED-THRESHOLD 1mb"), cs("DEBUG QUICKLIST-PACKED-THRESHOLD 0"),
			cs("DEBUG QUICKLIST-PACKED-THRESHOLD 5gb"), cs("DEBUG QUICKLIST-PACKED-THRESHOLD x"),
			ca("DEBUG", "ERROR", "MYERR some\r\ntext"), ca("DEBUG", "ERROR", ""),
			cs("DEBUG CHANGE-REPL-ID"), cs("DEBUG CHANGE-REPL-ID x"), cs("DEBUG JMAP"), cs("DEBUG NOSUCH"),
			cs("DEBUG STRINGMATCH-TEST"), cs("DEBUG RELOAD FOO"), cs("DEBUG RELOAD NOFLUSH"),
			// Redis stops on a key loaded again: a library shows the
			// error instead.
			ca("FUNCTION", "LOAD", "#!lua name=dbg\nredis.register_function('f', function() return 1 end)"),
			cs("DEBUG RELOAD NOFLUSH"), cs("DEBUG RELOAD NOFLUSH MERGE"), cs("FUNCTION DELETE dbg"),
			cs("DEBUG OBJECT nokey"), cs("DEBUG LISTPACK nokey"),
			cs("DEBUG DIGEST"), cs("DEBUG DIGEST-VALUE nokey"), cs("DEBUG DIGEST-VALUE"),
			cs("SET s hello"), cs("SET n 12345"), cs("SET e v EX 100"),
			cs("RPUSH l a b c"), cs("SADD set x y z"), cs("SADD iset 1 2 3"), cs("HSET h f v g w"),
			cs("ZADD z 1 a 2.5 b 0.1 c"),
			cs("DEBUG DIGEST"), cs("DEBUG DIGEST-VALUE s n e l set iset h z nokey"),
			cs("DEBUG LISTPACK h"), cs("DEBUG LISTPACK s"), cs("DEBUG QUICKLIST l"), cs("DEBUG QUICKLIST h"),
			cs("DEBUG RELOAD"), cs("DEBUG RELOAD NOFLUSH MERGE"),
			cs("DEBUG DIGEST"), cs("GET s"),
		}})
	})
	// DEBUG OBJECT's line has Redis's fields, with this store's encoding
	// and lengths; the address and clock are each server's own.
	p.redis.do("SET", "s", "hello")
	p.ours.do("SET", "s", "hello")
	p.redis.do("SET", "n", "12345")
	p.ours.do("SET", "n", "12345")
	for _, key := range []string{"s", "n"} {
		r, o := p.redis.run(compatExact, []string{"DEBUG", "OBJECT", key}), p.ours.run(compatExact, []string{"DEBUG", "OBJECT", key})
		if fields(r) != fields(o) {
			t.Errorf("DEBUG OBJECT %s: redis %s, ours %s", key, r, o)
		}
	}
}

// fields is a DEBUG OBJECT line without its address and LRU clock.
func fields(line string) string {
	var out []string
	for _, f := range strings.Fields(line) {
		if !strings.HasPrefix(f, "at:") && !strings.HasPrefix(f, "lru:") {
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}

// TestDebugSleepParks checks that DEBUG SLEEP leaves the event loop
// serving others: a PING sent while another connection sleeps is answered
// before the sleep ends.
func TestDebugSleepParks(t *testing.T) {
	ts := startServer(t, Options{EnableDebugCommand: ProtectedYes, EventLoops: 1})
	sleeper, other := dialCompat(t, ts.addr), dialCompat(t, ts.addr)
	if err := sleeper.send("*3\r\n$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$2\r\n30\r\n"); err != nil {
		t.Fatal(err)
	}
	if got := other.run(compatExact, []string{"PING"}); got != "+PONG" {
		t.Fatalf("PING while another connection sleeps: %s", got)
	}
	// Nothing has come back on the sleeping connection yet.
	sleeper.nc.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := sleeper.br.ReadByte(); !isTimeout(err) {
		t.Fatalf("the sleeping connection answered or closed early: %v", err)
	}
}

func TestCompatSmallCommands(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "small", steps: []compatStep{
			cs("MODULE LIST"), cs("MODULE NOSUCH"), cs("MODULE LIST x"),
			cs("MODULE LOAD"), cs("MODULE"),
			cs("ROLE"), cs("ROLE x"), cs("REPLICAOF NO ONE"), cs("SLAVEOF no one"), cs("REPLICAOF NO"),
			cs("REPLICAOF 127.0.0.1 99999"), cs("SLAVEOF 127.0.0.1 x"),
			cs("SET k hello"), cs("SUBSTR k 1 3"), cs("SUBSTR k -3 -1"), cs("SUBSTR k 0 -1"), cs("SUBSTR nokey 0 1"),
			cs("SUBSTR k x 1"), cs("SUBSTR k 1"), cs("RPUSH l a"), cs("SUBSTR l 0 1"),
			cs("LOLWUT VERSION x"), cs("LOLWUT VERSION 5 x"), cs("LOLWUT VERSION 6 10 x"), cs("LOLWUT VERSION 5 1 2 x"),
		}})
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "small-divergent",
			divergence: "LOLWUT's version line says each server's version; there is no replication to start",
			steps: []compatStep{
				{args: []string{"LOLWUT"}, redisWant: lolwutLine(proto, "7.0.15"), oursWant: lolwutLine(proto, RedisVersion)},
				{args: []string{"LOLWUT", "VERSION", "7"}, redisWant: lolwutLine(proto, "7.0.15"), oursWant: lolwutLine(proto, RedisVersion)},
				{args: []string{"LOLWUT", "VERSION"}, redisWant: lolwutLine(proto, "7.0.15"), oursWant: lolwutLine(proto, RedisVersion)},
			}})
	})
	// Redis would become a replica: ours alone.
	c := dialCompat(t, ts.addr)
	if got := c.run(compatExact, strings.Fields("REPLICAOF 127.0.0.1 6379")); got != "-ERR REPLICAOF is not supported: this server has no replication (REPLICAOF NO ONE is accepted)" {
		t.Errorf("REPLICAOF host port: %s", got)
	}
}

func lolwutLine(proto int, version string) string {
	text := "Redis ver. " + version + "\n"
	if proto == 3 {
		return "=txt:" + strconv.Quote(text)
	}
	return strconv.Quote(text)
}

// TestCompatIdleTimeout checks CONFIG SET timeout against redis-server:
// both close an idle client, and neither closes a subscriber, a monitor
// or a client blocked in BLPOP.
func TestCompatIdleTimeout(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "timeout-config", steps: []compatStep{
			cs("CONFIG GET timeout"), cs("CONFIG SET timeout -1"), cs("CONFIG SET timeout x"),
			cs("CONFIG SET timeout 2147483648"), cs("CONFIG SET timeout 0"), cs("CONFIG GET timeout"),
		}})
	})
	for _, addr := range []string{redisAddr, ts.addr} {
		admin := dialCompat(t, addr)
		idle, sub, mon, blocked := dialCompat(t, addr), dialCompat(t, addr), dialCompat(t, addr), dialCompat(t, addr)
		for _, step := range []struct {
			c    *compatConn
			args []string
		}{{idle, []string{"PING"}}, {sub, []string{"SUBSCRIBE", "ch"}}, {mon, []string{"MONITOR"}}} {
			if r := step.c.run(compatExact, step.args); strings.HasPrefix(r, "-") || strings.HasPrefix(r, "<") {
				t.Fatalf("%s: %v: %s", addr, step.args, r)
			}
		}
		if err := blocked.send(encodeCommand("BLPOP", "nolist", "0")); err != nil {
			t.Fatal(err)
		}
		if r := admin.run(compatExact, []string{"CONFIG", "SET", "timeout", "1"}); r != "+OK" {
			t.Fatalf("%s: CONFIG SET timeout 1: %s", addr, r)
		}
		// Redis closes a client idle for more than a second at its next
		// look, within a second more; the test waits far longer.
		if !idle.closed(10 * time.Second) {
			t.Errorf("%s: the idle client was not closed", addr)
		}
		for name, c := range map[string]*compatConn{"subscriber": sub, "monitor": mon, "blocked": blocked} {
			if c.closed(100 * time.Millisecond) {
				t.Errorf("%s: the %s was closed", addr, name)
			}
		}
		admin.run(compatExact, []string{"CONFIG", "SET", "timeout", "0"})
	}
}

// TestCompatCommandList runs Redis's own COMMAND LIST tests
// (introspection.tcl) on both servers: subcommands are listed after their
// command, and each is kept or not by the filter on its own.
func TestCompatCommandList(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "command-list", steps: []compatStep{
			cs("COMMAND LIST bad_arg"), cs("COMMAND LIST FILTERBY bad_arg"), cs("COMMAND LIST FILTERBY bad_arg bad_arg2"),
			cs("COMMAND LIST FILTERBY ACLCAT non_existing_category"),
			cs("COMMAND LIST FILTERBY PATTERN set"), cs("COMMAND LIST FILTERBY PATTERN get"),
			csSorted("COMMAND LIST FILTERBY PATTERN config*"), csSorted("COMMAND LIST FILTERBY PATTERN CONFIG*"),
			csSorted("COMMAND LIST FILTERBY PATTERN acl|*"), csSorted("COMMAND LIST FILTERBY PATTERN *|list"),
			csSorted("COMMAND LIST FILTERBY PATTERN non_exists"), cs("COMMAND LIST FILTERBY MODULE non_existing_module"),
			csSorted("COMMAND LIST FILTERBY ACLCAT scripting"),
		}})
	})
}

// TestCompatDebugLazyExpire: with DEBUG SET-ACTIVE-EXPIRE 0, keys past
// their deadline are counted by DBSIZE until a read removes them, as
// redis-server's are (the Tcl suite's "Redis should lazy expire keys").
func TestCompatDebugLazyExpire(t *testing.T) {
	redisAddr := redistest.Start(t, "--enable-debug-command", "yes").Addr()
	ts := startServer(t, Options{EnableDebugCommand: ProtectedYes})
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "lazy-expire", steps: []compatStep{
			cs("DEBUG SET-ACTIVE-EXPIRE 0"), cs("PSETEX k1 100 a"), cs("PSETEX k2 100 a"), cs("SET k3 a"),
			cs("DBSIZE"), csSleep(300 * time.Millisecond), cs("DBSIZE"), cs("GET k1"), cs("DBSIZE"),
			cs("MGET k2 k3"), cs("DBSIZE"), cs("DEBUG SET-ACTIVE-EXPIRE 1"), cs("DBSIZE"),
		}})
	})
}

// TestCompatDebugProtocol: DEBUG PROTOCOL's samples of each reply type,
// from a client and, with DEBUG SET-DISABLE-DENY-SCRIPTS, from scripts of
// either protocol (Redis's scripting.tcl reads them so); and string.dump's
// chunk, which loadstring refuses.
func TestCompatDebugProtocol(t *testing.T) {
	redisAddr := redistest.Start(t, "--enable-debug-command", "yes").Addr()
	ts := startServer(t, Options{EnableDebugCommand: ProtectedYes})
	types := []string{"string", "integer", "double", "bignum", "null", "array", "set", "map",
		"attrib", "push", "verbatim", "true", "false", "nosuch"}
	steps := []compatStep{ca("EVAL", "return redis.call('debug', 'protocol', 'true')", "0")}
	for _, ty := range types {
		if ty != "push" { // its push message is read as a message
			steps = append(steps, cs("DEBUG PROTOCOL "+ty))
		}
	}
	steps = append(steps, cs("DEBUG PROTOCOL"), cs("DEBUG SET-DISABLE-DENY-SCRIPTS 1"))
	for _, resp := range []string{"2", "3"} {
		for _, ty := range types {
			if ty != "push" && ty != "attrib" {
				steps = append(steps, ca("EVAL", "redis.setresp("+resp+"); return redis.call('debug', 'protocol', '"+ty+"')", "0"))
			}
		}
	}
	steps = append(steps,
		ca("EVAL", "return redis.call('multi')", "0"),
		cs("DEBUG SET-DISABLE-DENY-SCRIPTS 0"),
		ca("EVAL", "return redis.call('debug', 'protocol', 'true')", "0"),
		ca("EVAL", "return loadstring(string.dump(function() return 1 end))()", "0"),
		ca("EVAL", "return {loadstring(string.dump(function() return 1 end))}", "0"),
		ca("EVAL", "return string.dump(function() return 1 end):sub(1, 4)", "0"),
		ca("EVAL", "return string.dump(tostring)", "0"),
	)
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "debug-protocol", steps: steps})
	})
}

// TestCompatDebugObjectPastDeadline: with active expiry off, DEBUG OBJECT
// finds a key past its deadline until a read removes it, as Redis's looks
// in its dictionary (Redis's scripting.tcl checks a key is still there so).
func TestCompatDebugObjectPastDeadline(t *testing.T) {
	redisAddr := redistest.Start(t, "--enable-debug-command", "yes").Addr()
	ts := startServer(t, Options{EnableDebugCommand: ProtectedYes})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	for _, c := range []*compatConn{p.redis, p.ours} {
		for _, args := range [][]string{{"DEBUG", "SET-ACTIVE-EXPIRE", "0"}, {"SET", "k", "v", "PX", "1"}} {
			if r, err := c.do(args...); err != nil || r.String() != "+OK" {
				t.Fatalf("%s: %s %v", showArgs(args), r, err)
			}
		}
	}
	time.Sleep(10 * time.Millisecond) // past the key's deadline
	encoding := func(line string) string {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "encoding:") || strings.HasPrefix(f, "-ERR") {
				return f
			}
		}
		return line
	}
	for _, args := range [][]string{{"DEBUG", "OBJECT", "k"}, {"GET", "k"}, {"DEBUG", "OBJECT", "k"}} {
		r, o := p.redis.run(compatExact, args), p.ours.run(compatExact, args)
		if encoding(r) != encoding(o) {
			t.Errorf("%s: redis %s, ours %s", showArgs(args), r, o)
		}
	}
}
