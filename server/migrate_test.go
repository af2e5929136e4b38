package server

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// migrateStep is one command of a MIGRATE comparison, sent to the source
// ('S') or to the target ('D'), "$H", "$P" and "$DEAD" standing for the
// target's host and port and a port nothing listens on. norm, if set,
// renders the reply for the comparison; until, if set, makes the step
// poll until its rendered reply is that (state settling on the target).
type migrateStep struct {
	on    byte
	args  []string
	norm  func(string) string
	until string
}

func onSource(args ...string) migrateStep { return migrateStep{on: 'S', args: args} }
func onTarget(args ...string) migrateStep { return migrateStep{on: 'D', args: args} }

// sortedReply renders an array reply with its elements sorted: a set's
// or a hash's, whose order is each server's own.
func sortedReply(r string) string {
	if !strings.HasPrefix(r, "[") {
		return r
	}
	parts := strings.Fields(strings.Trim(r, "[]"))
	slices.Sort(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

var cachedSockets = regexp.MustCompile(`migrate_cached_sockets:\d+`)

// cachedSocketsOf renders INFO's reply as its migrate_cached_sockets.
func cachedSocketsOf(r string) string { return cachedSockets.FindString(r) }

var (
	connectedClients = regexp.MustCompile(`connected_clients:\d+`)
	keyspaceReads    = regexp.MustCompile(`keyspace_(hits|misses):\d+`)
)

// ttlWithin renders a PTTL reply as whether it is what is left of 100 s
// set a moment before.
func ttlWithin(r string) string {
	n, err := strconv.Atoi(strings.TrimPrefix(r, ":"))
	if err != nil || n <= 0 || n > 100000 {
		return "bad TTL " + r
	}
	return "TTL kept"
}

// migrateSteps compare MIGRATE's replies, and what it leaves on both
// sides, step by step.
func migrateSteps() []migrateStep {
	sorted := func(s migrateStep) migrateStep { s.norm = sortedReply; return s }
	info := onSource("INFO", "stats")
	info.norm = cachedSocketsOf
	ttl := onTarget("PTTL", "s")
	ttl.norm = ttlWithin
	alone := onTarget("INFO", "clients")
	alone.norm = connectedClients.FindString
	alone.until = "connected_clients:1"
	kill := onTarget("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	kill.norm = func(string) string { return "killed" } // how many: the target's own connections
	reads := onSource("INFO", "stats")
	reads.norm = func(r string) string { return strings.Join(keyspaceReads.FindAllString(r, -1), " ") }
	return []migrateStep{
		info,
		// A string with its TTL; the connection is cached.
		onSource("SET", "s", "v", "PX", "100000"), onSource("MIGRATE", "$H", "$P", "s", "0", "5000"), info,
		onSource("EXISTS", "s"), onTarget("GET", "s"), ttl,
		// Every type, in the KEYS form.
		onSource("HSET", "h", "a", "1", "b", "2"), onSource("RPUSH", "l", "a", "b", "c"),
		onSource("SADD", "set", "x", "y", "z", "1"), onSource("ZADD", "z", "1", "a", "2.5", "b"),
		onSource("XADD", "x", "1-1", "f", "v"), onSource("XADD", "x", "1-2", "g", "w"),
		onSource("XGROUP", "CREATE", "x", "grp", "0"), onSource("XREADGROUP", "GROUP", "grp", "c", "COUNT", "1", "STREAMS", "x", ">"),
		// XREADGROUP counts one keyspace hit less here than in Redis; the
		// hits and misses compared last are those counted from here on.
		onSource("CONFIG", "RESETSTAT"),
		onSource("MIGRATE", "$H", "$P", "", "0", "5000", "KEYS", "h", "l", "set", "z", "x"),
		onSource("EXISTS", "h", "l", "set", "z", "x"), sorted(onTarget("HGETALL", "h")), onTarget("LRANGE", "l", "0", "-1"),
		sorted(onTarget("SMEMBERS", "set")), onTarget("ZRANGE", "z", "0", "-1", "WITHSCORES"), onTarget("XRANGE", "x", "-", "+"),
		onTarget("XPENDING", "x", "grp"), onTarget("TTL", "h"), onTarget("TYPE", "x"),
		// Nothing to migrate.
		onSource("MIGRATE", "$H", "$P", "s", "0", "5000"), onSource("MIGRATE", "$H", "$P", "", "0", "5000", "KEYS", "n1", "n2"),
		onSource("MIGRATE", "$H", "$P", "", "0", "5000"), onSource("MIGRATE", "$H", "$P", "", "0", "5000", "KEYS"),
		// KEYS with some missing.
		onSource("MSET", "k1", "v1", "k2", "v2"), onSource("MIGRATE", "$H", "$P", "", "0", "5000", "KEYS", "n1", "k1", "n2", "k2"),
		onSource("EXISTS", "k1", "k2"), onTarget("MGET", "k1", "k2"),
		// BUSYKEY without REPLACE; COPY; REPLACE.
		onSource("SET", "b", "2"), onTarget("SET", "b", "x"), onSource("MIGRATE", "$H", "$P", "b", "0", "5000"), onSource("GET", "b"),
		onSource("MIGRATE", "$H", "$P", "b", "0", "5000", "COPY"), onSource("MIGRATE", "$H", "$P", "b", "0", "5000", "COPY", "REPLACE"),
		onSource("GET", "b"), onTarget("GET", "b"), onSource("MIGRATE", "$H", "$P", "b", "0", "5000", "replace"), onSource("EXISTS", "b"),
		// Only the keys the target took are deleted; a key named twice.
		onSource("MSET", "c", "1", "d", "2", "e", "3"), onTarget("SET", "d", "_"),
		onSource("MIGRATE", "$H", "$P", "", "0", "5000", "KEYS", "c", "d", "e"), onSource("MGET", "c", "d", "e"), onTarget("MGET", "c", "d", "e"),
		onSource("SET", "dup", "v"), onSource("MIGRATE", "$H", "$P", "", "0", "5000", "KEYS", "dup", "dup"), onSource("EXISTS", "dup"),
		// Databases: the SELECT, and the target's error.
		onSource("SET", "f", "1"), onSource("MIGRATE", "$H", "$P", "f", "1", "5000"), onTarget("SELECT", "1"), onTarget("GET", "f"),
		onTarget("SELECT", "0"), onSource("SET", "f2", "1"), onSource("MIGRATE", "$H", "$P", "f2", "99", "5000"), onSource("EXISTS", "f2"),
		onSource("MIGRATE", "$H", "$P", "f2", "0", "-5"), onTarget("GET", "f2"), info,
		// Redis's argument checks.
		onSource("SET", "a", "1"),
		onSource("MIGRATE", "$H", "$P", "NotEmpty", "0", "5000", "KEYS", "a", "b"),
		onSource("MIGRATE", "$H", "$P", "a", "0", "5000", "BOGUS"), onSource("MIGRATE", "$H", "$P", "a", "0", "5000", "AUTH"),
		onSource("MIGRATE", "$H", "$P", "a", "0", "5000", "AUTH2", "u"), onSource("MIGRATE", "$H", "$P", "a", "0", "5000", "COPY", "KEYS", "a"),
		onSource("MIGRATE", "$H", "$P", "a", "x", "5000"), onSource("MIGRATE", "$H", "$P", "a", "0", "x"),
		onSource("MIGRATE", "$H", "$P", "a", "x", "y"), onSource("MIGRATE", "$H", "$P", "a", "0"),
		onSource("MIGRATE", "$H", "$P", "a", "0", "5000", "KEYS", "x", "AUTH"), onSource("EXISTS", "a"),
		// Its keys, as COMMAND GETKEYS finds them.
		onSource("COMMAND", "GETKEYS", "MIGRATE", "h", "p", "", "0", "5000", "KEYS", "a", "b"),
		onSource("COMMAND", "GETKEYS", "MIGRATE", "h", "p", "", "0", "5000", "AUTH", "KEYS", "KEYS", "a"),
		onSource("COMMAND", "GETKEYS", "MIGRATE", "h", "p", "k", "0", "5000", "KEYS", "a"),
		onSource("COMMAND", "GETKEYS", "MIGRATE", "h", "p", "", "0", "5000"),
		onSource("COMMAND", "GETKEYS", "MIGRATE", "h", "p", "k", "0", "5000", "COPY", "REPLACE"),
		onSource("COMMAND", "GETKEYSANDFLAGS", "MIGRATE", "h", "p", "", "0", "5000", "AUTH2", "u", "KEYS", "KEYS", "a", "b"),
		// A target no one listens on.
		onSource("SET", "g", "1"), onSource("MIGRATE", "$H", "$DEAD", "g", "0", "1000"), onSource("EXISTS", "g"), info,
		// AUTH: the cached connection is closed by the target, so the
		// next MIGRATE tries a new one, which must authenticate.
		onTarget("CONFIG", "SET", "requirepass", "foobar"), onTarget("AUTH", "foobar"), kill, alone,
		onSource("MIGRATE", "$H", "$P", "g", "0", "5000"), onSource("EXISTS", "g"),
		onSource("MIGRATE", "$H", "$P", "g", "0", "5000", "AUTH", "foobar"), onSource("EXISTS", "g"), onTarget("GET", "g"),
		onSource("SET", "w", "1"), onSource("MIGRATE", "$H", "$P", "w", "0", "5000", "AUTH", "wrong"), onSource("EXISTS", "w"),
		// AUTH2, as an ACL user.
		onTarget("ACL", "SETUSER", "mig", "on", ">mpass", "+@all", "~*"), kill, alone,
		onSource("SET", "u", "1"), onSource("MIGRATE", "$H", "$P", "u", "0", "5000", "AUTH2", "mig", "mpass"),
		onSource("EXISTS", "u"), onTarget("GET", "u"), onSource("SET", "u2", "1"),
		onSource("MIGRATE", "$H", "$P", "u2", "0", "5000", "AUTH2", "mig", "bad"), onSource("EXISTS", "u2"), info,
		onTarget("CONFIG", "SET", "requirepass", ""),
		// A target that does not answer in time: its writes are held.
		onSource("SET", "t1", "1"), onSource("MIGRATE", "$H", "$P", "t1", "0", "5000", "AUTH", "foobar"),
		onTarget("CLIENT", "PAUSE", "60000", "WRITE"), onSource("SET", "t2", "1"),
		onSource("MIGRATE", "$H", "$P", "t2", "0", "200"), onSource("EXISTS", "t2"), info,
		onTarget("CLIENT", "UNPAUSE"), onSource("SET", "t3", "1"), onSource("MIGRATE", "$H", "$P", "t3", "0", "5000"),
		onTarget("GET", "t3"), info,
		// Each key MIGRATE looks for is a keyspace hit or miss, as a read.
		reads,
	}
}

// migrateTranscript runs migrateSteps with a source and a target and
// renders every reply.
func migrateTranscript(t *testing.T, source, target, dead string) []string {
	t.Helper()
	host, port, _ := strings.Cut(target, ":")
	_, deadPort, _ := strings.Cut(dead, ":")
	conns := map[byte]*rawConn{'S': dialRaw(t, source), 'D': dialRaw(t, target)}
	var out []string
	for _, st := range migrateSteps() {
		args := slices.Clone(st.args)
		for i, a := range args {
			args[i] = strings.NewReplacer("$H", host, "$P", port, "$DEAD", deadPort).Replace(a)
		}
		c := conns[st.on]
		reply := func() string {
			r := c.do(args...)
			if st.norm != nil {
				r = st.norm(r)
			}
			return r
		}
		r := reply()
		if st.until != "" {
			testwait.For(t, strings.Join(args, " ")+" to answer "+st.until, func() bool { r = reply(); return r == st.until })
		}
		out = append(out, string(st.on)+": "+strings.Join(st.args, " ")+" -> "+r)
	}
	return out
}

// TestCompatMigrate: MIGRATE from our server, on 4 event loops, to a
// redis-server and to another of our servers, and from a redis-server to
// ours (its RESTOREs), answers step by step as a redis-server migrating
// to a redis-server does, and leaves the same keys on both sides: every
// type, the TTL, COPY, REPLACE, BUSYKEY, KEYS with missing keys, NOKEY,
// the argument checks, a target that is not there, one that refuses or
// asks for AUTH and AUTH2, one that does not answer in time, and the
// cached connection in INFO.
func TestCompatMigrate(t *testing.T) {
	dead := redistest.FreeAddr(t)
	redisSource := func() string { return startRedis(t) }
	oursSource := func() string { return startServer(t, Options{EventLoops: 4}).addr }
	redisTarget := func() string { return startRedis(t) }
	oursTarget := func() string { return startServer(t, Options{EventLoops: 4}).addr }
	want := migrateTranscript(t, redisSource(), redisTarget(), dead)
	for _, pair := range []struct {
		name           string
		source, target func() string
	}{
		{"ours to redis", oursSource, redisTarget},
		{"ours to ours", oursSource, oursTarget},
		{"redis to ours", redisSource, oursTarget},
	} {
		t.Run(pair.name, func(t *testing.T) {
			got := migrateTranscript(t, pair.source(), pair.target(), dead)
			for i := range max(len(want), len(got)) {
				if i >= len(want) || i >= len(got) || want[i] != got[i] {
					t.Fatalf("step %d:\nredis to redis: %s\n%15s: %s", i+1, at(want, i), pair.name, at(got, i))
				}
			}
		})
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

// TestMigrateNotifies: MIGRATE sends a del event for each key it deleted
// here, none with COPY, as Redis does (RESP2 and RESP3).
func TestMigrateNotifies(t *testing.T) {
	target := startRedis(t)
	mig := "MIGRATE " + strings.Replace(target, ":", " ", 1)
	runNotifyScripts(t, startRedis(t), startServer(t, Options{EventLoops: 4}).addr, []notifyScript{
		{name: "migrate", classes: "KEA", cmds: []string{
			"SET a 1", mig + " a 0 5000 REPLACE", "SET b 1", mig + " b 0 5000 COPY REPLACE",
			"MSET c 1 d 2", mig + " {empty} 0 5000 REPLACE KEYS c nokey d", mig + " nokey 0 5000",
		}},
	})
}

// TestMigrateKeepsWritesMadeMeanwhile: a key written while MIGRATE waits
// for its target stays here with that write (the target has the value
// MIGRATE copied); the keys no one wrote are moved; a client tracking a
// key moved is told, and a transaction watching it fails. The target
// holds its writes (CLIENT PAUSE WRITE) until the write is made, so the
// order is certain: the target's connection count says MIGRATE has
// copied its keys and connected.
func TestMigrateKeepsWritesMadeMeanwhile(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, Options{EventLoops: 4})
	target := startRedis(t)
	src, dst := ts.client(t), redis.NewClient(&redis.Options{Addr: target})
	t.Cleanup(func() { dst.Close() })
	src.MSet(ctx, "moved", "1", "written", "old")
	tracked := dialCompat(t, ts.addr)
	for _, cmd := range [][]string{{"HELLO", "3"}, {"CLIENT", "TRACKING", "on"}, {"GET", "moved"}} {
		if _, err := tracked.do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	watcher := dialRaw(t, ts.addr)
	watcher.do("WATCH", "moved")
	if err := dst.Do(ctx, "CLIENT", "PAUSE", "60000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	clients := func() string { return connectedClients.FindString(dst.Info(ctx, "clients").Val()) }
	before := clients()
	host, port, _ := strings.Cut(target, ":")
	mc := dialRaw(t, ts.addr)
	var reply string
	var err error
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err = mc.nc.Write([]byte(encodeCommand("MIGRATE", host, port, "", "0", "60000", "KEYS", "moved", "written"))); err == nil {
			reply, err = readReply(mc.br)
		}
	})
	testwait.For(t, "MIGRATE to connect to its target", func() bool { return clients() != before })
	if err := src.Set(ctx, "written", "newer", 0).Err(); err != nil {
		t.Fatal(err)
	}
	dst.ClientUnpause(ctx)
	wg.Wait()
	if reply != "+OK" {
		t.Fatalf("MIGRATE answered %q, %v", reply, err)
	}
	if n := src.Exists(ctx, "moved").Val(); n != 0 {
		t.Error("the key no one wrote was not deleted here")
	}
	if v := src.Get(ctx, "written").Val(); v != "newer" {
		t.Errorf("the key written meanwhile is %q here, want the write's value", v)
	}
	if v := dst.MGet(ctx, "moved", "written").Val(); len(v) != 2 || v[0] != "1" || v[1] != "old" {
		t.Errorf("the target has %v, want the values copied", v)
	}
	tracked.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if r, err := readAnyReply(tracked.br); err != nil || !strings.Contains(r, "invalidate") || !strings.Contains(r, "moved") {
		t.Errorf("the tracking client got %q, %v; want an invalidation of moved", r, err)
	}
	watcher.do("MULTI")
	watcher.do("GET", "moved")
	if r := watcher.do("EXEC"); r != "(nil array)" {
		t.Errorf("EXEC watching a key MIGRATE moved answered %s, want a null array", r)
	}
}

// TestMigrateTimeoutAgainstAStoppedTarget: a target that answers nothing
// (a stopped redis-server, as dump.tcl's DEBUG SLEEP makes it) is an
// IOERR after the timeout, the key stays, and the connection is closed
// rather than cached; once the target runs again, MIGRATE works.
func TestMigrateTimeoutAgainstAStoppedTarget(t *testing.T) {
	ts := startServer(t, Options{EventLoops: 4})
	target := redistest.Start(t)
	host, port, _ := strings.Cut(target.Addr(), ":")
	c := dialRaw(t, ts.addr)
	c.do("MSET", "k", "v", "k2", "v")
	if r := c.do("MIGRATE", host, port, "k", "0", "5000"); r != "+OK" {
		t.Fatalf("MIGRATE: %s", r)
	}
	target.Pause()
	r := c.do("MIGRATE", host, port, "k2", "0", "100")
	target.Resume()
	if r != "-IOERR error or timeout reading to target instance" {
		t.Fatalf("MIGRATE to a stopped target: %s", r)
	}
	if got := cachedSocketsOf(c.do("INFO", "stats")); got != "migrate_cached_sockets:0" {
		t.Errorf("after the timeout: %s", got)
	}
	if r := c.do("EXISTS", "k2"); r != ":1" {
		t.Errorf("EXISTS k2 after the timeout: %s", r)
	}
	if r := c.do("MIGRATE", host, port, "k2", "0", "5000", "REPLACE"); r != "+OK" {
		t.Errorf("MIGRATE once the target runs again: %s", r)
	}
}

// TestMigrateRefusedInTransactions: inside MULTI and a script, where
// nothing may wait, MIGRATE is refused and the key stays.
func TestMigrateRefusedInTransactions(t *testing.T) {
	ts := startServer(t, Options{EventLoops: 4})
	host, port, _ := strings.Cut(startRedis(t), ":")
	c := dialRaw(t, ts.addr)
	c.do("SET", "k", "v")
	const refused = "-ERR MIGRATE cannot run inside MULTI or a script here: it waits for the target, and nothing may wait there"
	c.do("MULTI")
	c.do("MIGRATE", host, port, "k", "0", "5000")
	if r := c.do("EXEC"); r != "["+refused+"]" {
		t.Errorf("EXEC: %s", r)
	}
	if r := c.do("EVAL", "return redis.pcall('MIGRATE', ARGV[1], ARGV[2], 'k', '0', '5000')", "0", host, port); r != refused {
		t.Errorf("EVAL: %s", r)
	}
	if r := c.do("EXISTS", "k"); r != ":1" {
		t.Errorf("EXISTS k: %s", r)
	}
}

// TestMigrateLargeValues: values whose payloads span several of the 64 KiB
// chunks MIGRATE writes (a long string, a list of 40,000 elements, a hash
// of 2,000 fields, as dump.tcl's large values) arrive whole, at a
// redis-server and at another of ours.
func TestMigrateLargeValues(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, Options{EventLoops: 4})
	src := ts.client(t)
	big := strings.Repeat("0123456789abcdef", 20000)
	elems := make([]any, 40000)
	fields := make([]any, 0, 4000)
	for i := range elems {
		elems[i] = "item " + strconv.Itoa(i)
	}
	for i := range 2000 {
		fields = append(fields, "f"+strconv.Itoa(i), strings.Repeat("v", i%50))
	}
	for _, target := range []struct{ name, addr string }{
		{"redis", startRedis(t)}, {"ours", startServer(t, Options{EventLoops: 4}).addr},
	} {
		t.Run(target.name, func(t *testing.T) {
			src.Set(ctx, "big", big, 0)
			src.RPush(ctx, "list", elems...)
			src.HSet(ctx, "hash", fields...)
			host, port, _ := strings.Cut(target.addr, ":")
			if err := src.Do(ctx, "MIGRATE", host, port, "", "0", "10000", "KEYS", "big", "list", "hash").Err(); err != nil {
				t.Fatalf("MIGRATE: %v", err)
			}
			if n := src.Exists(ctx, "big", "list", "hash").Val(); n != 0 {
				t.Errorf("%d keys left here", n)
			}
			dst := redis.NewClient(&redis.Options{Addr: target.addr})
			defer dst.Close()
			if v := dst.Get(ctx, "big").Val(); v != big {
				t.Errorf("the string arrived with %d bytes, want %d", len(v), len(big))
			}
			got := dst.LRange(ctx, "list", 0, -1).Val()
			if len(got) != len(elems) || got[0] != "item 0" || got[len(got)-1] != "item 39999" {
				t.Errorf("the list arrived with %d elements", len(got))
			}
			if h := dst.HGetAll(ctx, "hash").Val(); len(h) != 2000 || h["f1999"] != strings.Repeat("v", 1999%50) {
				t.Errorf("the hash arrived with %d fields", len(h))
			}
		})
	}
}
