package server

// Keyspace notifications against redis-server: a writer runs a script's
// commands on a server whose notify-keyspace-events is the script's, and a
// subscriber reads every message they sent, up to a sentinel the writer
// publishes last; the writer's replies and the subscriber's messages must
// render the same as Redis's, in RESP2 and RESP3 (pushes).

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// notifyScript is one comparison: classes is notify-keyspace-events, set
// before the subscription; sub is the subscriber's SUBSCRIBE or
// PSUBSCRIBE (of one name); cmds are the writer's.
type notifyScript struct {
	name    string
	classes string
	sub     string
	cmds    []string
	// settle, if set, is polled on the writer (its replies are not
	// compared) until it returns true, after the commands and before the
	// sentinel: for events no command sends (expired).
	settle func(w *compatConn) bool
	// blocked, if set, is sent on a third connection before the commands,
	// which run once it blocks; its reply is read after them.
	blocked string
}

// notifySentinel ends a script's messages: both the subscriptions the
// scripts use receive it.
const notifySentinel = "__keyevent@0__:zz-end"

// notifyTranscript runs sc on addr and renders what the writer and the
// subscriber read.
func notifyTranscript(t *testing.T, addr string, sc notifyScript, resp3 bool) string {
	t.Helper()
	conns, refused := dialPubSub(t, addr, psScript{conns: 3, resp3: resp3})
	if refused != "" {
		t.Fatalf("HELLO 3 refused: %s", refused)
	}
	sub, w := conns[0], conns[1]
	var out []string
	do := func(c *compatConn, args ...string) string {
		if err := c.send(encodeCommand(args...)); err != nil {
			return renderErr(err)
		}
		r, err := readAnyReply(c.br)
		if err != nil {
			return renderErr(err)
		}
		return r
	}
	for _, setup := range [][]string{{"FLUSHALL"}, {"CONFIG", "RESETSTAT"}, {"CONFIG", "SET", "notify-keyspace-events", sc.classes}} {
		if r := do(w, setup...); r != "+OK" {
			t.Fatalf("%v: %s", setup, r)
		}
	}
	subArgs := strings.Fields(sc.sub)
	if sc.sub == "" {
		subArgs = []string{"PSUBSCRIBE", "__key*__:*"}
	}
	out = append(out, "sub: "+do(sub, subArgs...))
	for range subArgs[2:] {
		r, _ := readAnyReply(sub.br)
		out = append(out, "sub: "+r)
	}
	if sc.blocked != "" {
		if err := conns[2].send(encodeCommand(strings.Fields(sc.blocked)...)); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, sc.blocked+" to block", func() bool {
			r, err := w.do("INFO", "clients")
			return err == nil && strings.Contains(r.str, "blocked_clients:1\r\n")
		})
	}
	for _, line := range sc.cmds {
		args := strings.Fields(line)
		for i, a := range args {
			// {empty} is an empty argument; {dump:k} k's DUMP payload.
			switch {
			case a == "{empty}":
				args[i] = ""
			case strings.HasPrefix(a, "{dump:"):
				r, err := w.do("DUMP", strings.TrimSuffix(strings.TrimPrefix(a, "{dump:"), "}"))
				if err != nil || r.kind != '$' {
					t.Fatalf("DUMP: %v %v", r, err)
				}
				args[i] = r.str
			}
		}
		out = append(out, line+" -> "+do(w, args...))
	}
	if sc.blocked != "" {
		conns[2].nc.SetDeadline(time.Now().Add(10 * time.Second))
		r, err := readAnyReply(conns[2].br)
		if err != nil {
			r = renderErr(err)
		}
		out = append(out, sc.blocked+" -> "+r)
	}
	if sc.settle != nil {
		testwait.For(t, sc.name+" to settle on "+addr, func() bool { return sc.settle(w) })
	}
	do(w, "PUBLISH", notifySentinel, "end")
	for {
		sub.nc.SetDeadline(time.Now().Add(10 * time.Second))
		r, err := readAnyReply(sub.br)
		if err != nil {
			t.Fatalf("%s: reading the subscriber: %v (so far: %s)", addr, err, strings.Join(out, "\n"))
		}
		if strings.Contains(r, notifySentinel) {
			break
		}
		out = append(out, "msg: "+r)
	}
	return strings.Join(out, "\n")
}

func runNotifyScripts(t *testing.T, redisAddr, oursAddr string, scripts []notifyScript) {
	t.Helper()
	for _, resp3 := range []bool{false, true} {
		for _, sc := range scripts {
			want := notifyTranscript(t, redisAddr, sc, resp3)
			got := notifyTranscript(t, oursAddr, sc, resp3)
			if want != got {
				t.Errorf("%s (RESP3 %v): %s\nredis:\n%s\nours:\n%s", sc.name, resp3, firstDifference(want, got), want, got)
			}
		}
	}
}

// firstDifference names the first line where two transcripts differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ": redis " + strconv.Quote(a) + ", ours " + strconv.Quote(b)
		}
	}
	return "none"
}

// readUntilGone polls GET key until it is nil: lazy expiry, if the
// sweeper has not expired the key first.
func readUntilGone(key string) func(w *compatConn) bool {
	return func(w *compatConn) bool {
		r, err := w.do("GET", key)
		return err == nil && r.null
	}
}

// sweptKeys polls INFO stats until n keys have expired, without reading
// them: active expiry.
func sweptKeys(n int) func(w *compatConn) bool {
	return func(w *compatConn) bool {
		r, err := w.do("INFO", "stats")
		return err == nil && strings.Contains(r.str, "expired_keys:"+strconv.Itoa(n)+"\r\n")
	}
}

func notifyScripts() []notifyScript {
	return []notifyScript{
		{name: "string", classes: "KEA", cmds: []string{
			"SET s v", "SET s w NX", "SET s w XX GET", "SET s v EX 100", "SETEX s 100 v", "PSETEX s 100000 v",
			"SETNX s v", "SETNX s2 v", "GETSET s x", "MSET a 1 b 2", "MSETNX a 1 c 3", "MSETNX c 3 d 4",
			"APPEND s yz", "SETRANGE s 1 QQ", "SETRANGE s 1 {empty}", "SETRANGE nope 1 {empty}", "INCR n", "DECR n", "INCRBY n 5", "DECRBY n 2",
			"INCRBYFLOAT f 1.5", "INCR s", "GETDEL s", "GETDEL s", "GET a",
		}},
		{name: "generic", classes: "KEA", cmds: []string{
			"SET k v", "EXPIRE k 100", "PEXPIRE k 100000", "EXPIREAT k 4000000000", "EXPIRE k 100 NX", "PERSIST k",
			"PERSIST k", "SET g v", "GETEX g EX 100", "GETEX g PERSIST", "GETEX g PERSIST", "GETEX g", "GETEX g PX 0",
			"RENAME k k2", "RENAME k2 k2", "SET k3 v", "RENAMENX k2 k3", "RENAMENX k2 k4", "COPY k4 k5", "COPY k4 k5",
			"COPY k4 k5 REPLACE", "DEL k4 nope k5", "DEL nope", "EXPIRE k3 -1", "UNLINK k3", "SET t v", "TOUCH t",
		}},
		{name: "list", classes: "KEA", cmds: []string{
			"LPUSH l a b c", "RPUSH l d", "LPUSHX nope a", "RPUSHX l e", "LINSERT l BEFORE a x", "LINSERT l BEFORE zz x",
			"LSET l 0 y", "LREM l 0 x", "LREM l 0 nope", "LPOP l", "RPOP l 2", "LPOP l 0", "LMOVE l m LEFT RIGHT",
			"RPOPLPUSH l l", "LTRIM l 0 0", "LTRIM nope 0 0", "LTRIM l 1 0", "RPUSH q 1 2", "LMPOP 2 nope q LEFT COUNT 5",
			"RPUSH q 1", "BLPOP q 0", "RPUSH q 1 2", "BRPOP q 0", "BLMOVE q m RIGHT LEFT 0", "BLMPOP 0 1 m RIGHT COUNT 1",
			"LRANGE m 0 -1",
		}},
		{name: "set", classes: "KEA", cmds: []string{
			"SADD s a b c", "SADD s a", "SREM s a nope", "SREM s nope", "SMOVE s t b", "SMOVE s t nope", "SADD t c",
			"SMOVE s t c", "SREM t b", "SPOP t", "SADD u x", "SPOP u 5", "SPOP u 0", "SADD s1 a b", "SADD s2 b c",
			"SINTERSTORE d s1 s2", "SUNIONSTORE d s1 s2", "SDIFFSTORE d s1 s2", "SINTERSTORE d s1 nope",
			"SINTERSTORE d s1 nope", "SMOVE s1 s1 a",
		}},
		{name: "hash", classes: "KEA", cmds: []string{
			"HSET h a 1 b 2", "HSET h a 1", "HMSET h c 3", "HSETNX h a 9", "HSETNX h d 4", "HINCRBY h a 5",
			"HINCRBYFLOAT h b 0.5", "HINCRBY h z 1", "HDEL h nope", "HDEL h a b", "HDEL h c d z", "HGET h a",
		}},
		{name: "zset", classes: "KEA", cmds: []string{
			"ZADD z 1 a 2 b 3 c", "ZADD z 1 a", "ZADD z NX 5 a", "ZADD z XX CH 5 a", "ZINCRBY z 1 a", "ZINCRBY z 0 a",
			"ZADD z INCR 1 b", "ZREM z nope", "ZREM z c", "ZPOPMIN z", "ZPOPMAX z 5", "ZPOPMIN z",
			"ZADD y 1 a 2 b 3 c 4 d 5 e 6 f 7 g", "ZREMRANGEBYRANK y 0 0", "ZREMRANGEBYSCORE y 2 2", "ZREMRANGEBYLEX y [c [c",
			"ZREMRANGEBYSCORE y 100 200", "ZMPOP 2 nope y MIN COUNT 1", "BZPOPMIN y 0", "BZPOPMAX y 0",
			"ZADD a1 1 x 2 y", "ZADD a2 1 y", "ZUNIONSTORE d 2 a1 a2", "ZINTERSTORE d 2 a1 a2", "ZDIFFSTORE d 2 a1 a2",
			"ZINTERSTORE d 2 a1 nope", "ZINTERSTORE d 2 a1 nope", "ZRANGESTORE r a1 0 -1", "ZRANGESTORE r a1 5 6",
			"BZMPOP 0 1 a1 MAX COUNT 5",
		}},
		{name: "geo", classes: "KEA", cmds: []string{
			"GEOADD g 13.361389 38.115556 palermo 15.087269 37.502669 catania", "GEOADD g 13.361389 38.115556 palermo",
			"GEOADD g XX CH 13 38 palermo", "GEOADD g 200 1 bad", "GEORADIUS g 15 37 200 km STORE d", "GEORADIUS g 15 37 200 km STOREDIST d",
			"GEORADIUS g 15 37 200 km", "GEOSEARCHSTORE d2 g FROMLONLAT 15 37 BYRADIUS 200 km", "GEOSEARCHSTORE d2 g FROMLONLAT 0 0 BYRADIUS 1 km",
			"GEOSEARCHSTORE d2 g FROMLONLAT 0 0 BYRADIUS 1 km", "GEORADIUS nope 0 0 1 km STORE d", "GEORADIUSBYMEMBER g palermo 1 km STORE d",
			"GEORADIUSBYMEMBER g nope 1 km STORE d",
		}},
		{name: "hll and bitmap", classes: "KEA", cmds: []string{
			"PFADD p a b", "PFADD p a", "PFADD p2 c", "PFMERGE p3 p p2", "SETBIT b 7 1", "SETBIT b 7 1", "SETBIT b 7 0",
			"SETBIT b 100 0", "BITFIELD bf SET u8 0 255", "BITFIELD bf SET u8 0 255", "BITFIELD bf SET u4 0 15 SET u4 4 15", "BITFIELD bf GET u8 0", "BITFIELD bf OVERFLOW FAIL INCRBY u8 0 1",
			"BITFIELD bf INCRBY u8 0 1", "SET x1 ab", "BITOP AND x2 x1 b", "BITOP OR x2 nope", "BITOP OR x2 nope",
			"RESTORE r 0 {dump:x1}", "RESTORE r 0 {dump:x1} REPLACE", "RESTORE r 100000 {dump:x1} REPLACE",
		}},
		// Each class alone, and K or E alone: only its events are sent.
		{name: "sort", classes: "KEA", cmds: []string{
			"RPUSH l 3 1 2", "SORT l", "SORT l STORE d", "SORT l STORE d", "SORT nope STORE d", "SORT nope STORE d",
			"SORT_RO l", "LRANGE d 0 -1",
		}},
		{name: "keyspace channel only", classes: "Kg$", cmds: []string{"SET a 1", "DEL a", "LPUSH l x"}},
		{name: "keyevent channel only", classes: "El", cmds: []string{"SET a 1", "LPUSH l x", "RPOP l"}},
		{name: "no channel", classes: "A", cmds: []string{"SET a 1", "DEL a"}},
		{name: "string class", classes: "K$", cmds: []string{"SET a 1", "EXPIRE a 10", "LPUSH l x", "DEL a l"}},
		{name: "list class", classes: "El", cmds: []string{"SADD s x", "LPUSH l x", "RPOP l", "HSET h a 1"}},
		{name: "set class", classes: "Es", cmds: []string{"SADD s x", "ZADD z 1 x", "SREM s x"}},
		{name: "hash class", classes: "Kh", cmds: []string{"HSET h a 1", "SET a 1", "HDEL h a"}},
		{name: "zset class", classes: "Kz", cmds: []string{"ZADD z 1 x", "ZREM z x", "SADD s x"}},
		{name: "generic class", classes: "Eg", cmds: []string{"SET a 1", "EXPIRE a 10", "RENAME a b", "DEL b"}},
		{name: "channel", classes: "KEA", sub: "SUBSCRIBE __keyspace@0__:a " + notifySentinel, cmds: []string{
			"SET a 1", "SET b 1", "PUBLISH __keyspace@0__:a zz-end-not", "DEL a",
		}},
		{name: "multi and scripts", classes: "KEA", cmds: []string{
			"MULTI", "SET a 1", "INCR a", "LPUSH l x", "EXEC",
			"EVAL redis.call('set','e','1');redis.call('del','e');return'ok' 0",
			"EVAL redis.call('hset',KEYS[1],'f','v');return'ok' 1 h",
		}},
		{name: "blocked pop", classes: "KEA", blocked: "BLPOP q 0", cmds: []string{"RPUSH q x y"}},
		{name: "blocked pop emptying", classes: "KEA", blocked: "BRPOP q 0", cmds: []string{"LPUSH q x"}},
		{name: "blocked move", classes: "KEA", blocked: "BLMOVE q d LEFT RIGHT 0", cmds: []string{"RPUSH q x"}},
		{name: "blocked zpop", classes: "KEA", blocked: "BZPOPMIN z 0", cmds: []string{"ZADD z 1 a"}},
		{name: "expired lazily", classes: "KEA", cmds: []string{"SET x v PX 1"}, settle: readUntilGone("x")},
		{name: "expired alone", classes: "Ex", sub: "SUBSCRIBE __keyevent@0__:expired " + notifySentinel,
			// One key: the sweeper's order is its own.
			cmds: []string{"SET x v PX 1", "SET y v"}, settle: sweptKeys(1)},
	}
}

// startNotifyServers starts a redis-server and ours, each started with
// classes as notify-keyspace-events, and returns their addresses.
func startNotifyServers(t *testing.T, classes string) (redisAddr, oursAddr string) {
	t.Helper()
	events, err := commands.ParseEventClasses(classes)
	if err != nil {
		t.Fatal(err)
	}
	ours := startServer(t, withDefaults(t, Options{NotifyKeyspaceEvents: events}))
	return redistest.Start(t, "--notify-keyspace-events", classes).Addr(), ours.addr
}

func TestCompatNotifyEvents(t *testing.T) {
	redisAddr, oursAddr := startNotifyServers(t, "KEA")
	runNotifyScripts(t, redisAddr, oursAddr, notifyScripts())
}

// TestCompatNotifyConfig compares CONFIG GET's canonical form of the
// classes and CONFIG SET's refusal of a letter that is none.
func TestCompatNotifyConfig(t *testing.T) {
	redisAddr, oursAddr := startNotifyServers(t, "Ex")
	steps := []compatStep{cs("CONFIG GET notify-keyspace-events")}
	for _, v := range []string{"KEA", "A", "KEA$mn", "gx$lshzetdnmKE", "g$lshzxetdn", "EKg$", "Kn", "nmd", "t", "m", "xxKK",
		"", "Q", "KEAQ", "a", "k"} {
		steps = append(steps, ca("CONFIG", "SET", "notify-keyspace-events", v), cs("CONFIG GET notify-keyspace-events"))
	}
	steps = append(steps, cs("CONFIG GET notify-*"))
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatSteps(t, dialCompatPair(t, redisAddr, oursAddr, proto), compatScript{name: "notify-config", steps: steps})
	})
}

// TestNotifyEvicted fills a small store until keys are evicted: each
// evicted key is announced on __keyevent@0__:evicted, and is gone.
func TestNotifyEvicted(t *testing.T) {
	store, err := engine.New(engine.Options{MaxMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	events, _ := commands.ParseEventClasses("Ee")
	ours := startServer(t, withDefaults(t, Options{Store: store, NotifyKeyspaceEvents: events}))
	sub := dialCompat(t, ours.addr)
	if r, err := sub.do("SUBSCRIBE", "__keyevent@0__:evicted"); err != nil || r.kind != '*' {
		t.Fatalf("SUBSCRIBE: %v %v", r, err)
	}
	w := dialCompat(t, ours.addr)
	value := strings.Repeat("v", 1000)
	n := 0
	evicted := func() bool {
		for range 100 {
			if r, err := w.do("SET", "key:"+strconv.Itoa(n), value); err != nil || r.kind != '+' {
				t.Fatalf("SET: %v %v", r, err)
			}
			n++
		}
		r, err := w.do("DBSIZE")
		return err == nil && r.str != strconv.Itoa(n)
	}
	testwait.For(t, "a key to be evicted", evicted)
	sub.nc.SetDeadline(time.Now().Add(10 * time.Second))
	r, err := sub.read()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.elems) != 3 || r.elems[0].str != "message" || r.elems[1].str != "__keyevent@0__:evicted" ||
		!strings.HasPrefix(r.elems[2].str, "key:") {
		t.Fatalf("evicted event: %v", r)
	}
	if got, err := w.do("EXISTS", r.elems[2].str); err != nil || got.str != "0" {
		t.Fatalf("EXISTS of evicted %s: %v %v", r.elems[2].str, got, err)
	}
}

// TestNotifyFill: a key that GETFILL stores, and its refresh, notify as the
// write they are: "set", of class $. A read that stores nothing does not.
func TestNotifyFill(t *testing.T) {
	o := newOrigin(t)
	ts, c := fillServer(t, o)
	w := dialCompat(t, ts.addr)
	if r, err := w.do("CONFIG", "SET", "notify-keyspace-events", "E$"); err != nil || r.str != "OK" {
		t.Fatalf("CONFIG SET: %v %v", r, err)
	}
	sub := dialCompat(t, ts.addr)
	if r, err := sub.do("SUBSCRIBE", "__keyevent@0__:set"); err != nil || r.kind != '*' {
		t.Fatalf("SUBSCRIBE: %v %v", r, err)
	}
	next := func(what string) string {
		t.Helper()
		sub.nc.SetDeadline(time.Now().Add(10 * time.Second))
		r, err := sub.read()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return r.String()
	}
	const want = `["message" "__keyevent@0__:set" "k:s"]`
	allEqual(t, burst(c, 1, "k:s", 1, 60), "k:s@v0")
	if got := next("the fill's event"); got != want {
		t.Fatalf("fill: %s, want %s", got, want)
	}
	allEqual(t, burst(c, 1, "k:s", 1, 60), "k:s@v0") // fresh: served, not stored
	testwait.For(t, "the entry to go stale", func() bool {
		env, ok := ts.store.Peek([]byte("k:s"))
		return ok && time.Now().UnixNano() >= env.FreshUntil
	})
	o.version.Store(1)
	allEqual(t, burst(c, 1, "k:s", 1, 60), "k:s@v0")
	if got := next("the refresh's event"); got != want {
		t.Fatalf("refresh: %s, want %s", got, want)
	}
	// Nothing else was sent: the next message is this SET's.
	if r, err := w.do("SET", "after", "1"); err != nil || r.str != "OK" {
		t.Fatalf("SET: %v %v", r, err)
	}
	if got := next("SET's event"); got != `["message" "__keyevent@0__:set" "after"]` {
		t.Fatalf("after the refresh: %s", got)
	}
}

// TestCompatNotifyOwnWrites: a RESP3 subscriber that writes gets its own
// events first, then the reply, as from Redis 7.0 for the commands that
// notify before they reply (SET, INCR; RPUSH, which replies first, is
// docs/commands.md's difference).
func TestCompatNotifyOwnWrites(t *testing.T) {
	redisAddr, oursAddr := startNotifyServers(t, "KEA")
	runPubSubScript(t, redisAddr, oursAddr, psScript{name: "own writes", conns: 1, resp3: true, steps: []psStep{
		ps(0, "PSUBSCRIBE __key*__:*"),
		psN(0, 3, "SET a 1"),
		psN(0, 3, "INCR a"),
		psN(0, 5, "SET a 2 EX 100"),
		ps(0, "GET a"),
	}})
}

// TestCompatNotifyNewAndMiss: with n and m on, every script above sends
// Redis's "new" where it creates a key and "keymiss" where it reads one
// that is missing, each in its place among the others; a script of reads
// of missing keys, of every type and every shape of lookup, sends
// keymiss where Redis's lookupKeyRead misses, and not for the writes that
// find no key, for OBJECT or for a blocked client's wait.
func TestCompatNotifyNewAndMiss(t *testing.T) {
	redisAddr, oursAddr := startNotifyServers(t, "KEA")
	var scripts []notifyScript
	for _, sc := range notifyScripts() {
		if sc.classes != "KEA" {
			continue
		}
		sc.classes = "KEAnm"
		// MSET's and SMOVE's new keys are told before their other events
		// (docs/commands.md): compared in "new alone", without the others.
		sc.cmds = slices.DeleteFunc(slices.Clone(sc.cmds), func(c string) bool {
			return strings.HasPrefix(c, "MSET") || strings.HasPrefix(c, "SMOVE")
		})
		scripts = append(scripts, sc)
	}
	scripts = append(scripts,
		notifyScript{name: "reads of missing keys", classes: "KEm", cmds: []string{
			"GET nope", "MGET a b c", "SET a 1", "MGET a b", "EXISTS a b", "TYPE nope", "STRLEN nope", "GETRANGE nope 0 1",
			"GETEX nope", "GETDEL nope", "GETBIT nope 1", "BITCOUNT nope", "BITPOS nope 1", "BITFIELD_RO nope GET u8 0",
			"HGET nope f", "HGETALL nope", "HEXISTS nope f", "HLEN nope", "HMGET nope a b", "HRANDFIELD nope",
			"LRANGE nope 0 -1", "LLEN nope", "LINDEX nope 0", "LPOS nope a", "LPOP nope", "RPOPLPUSH nope d",
			"SMEMBERS nope", "SCARD nope", "SISMEMBER nope a", "SMISMEMBER nope a", "SRANDMEMBER nope", "SPOP nope",
			"SINTER a nope", "SUNION nope nope2", "SINTERCARD 2 nope nope2", "SINTERSTORE d nope nope2", "SMOVE nope d m",
			"ZRANGE nope 0 -1", "ZSCORE nope m", "ZCARD nope", "ZRANK nope m", "ZUNION 2 nope nope2", "ZINTERCARD 1 nope",
			"ZRANDMEMBER nope", "ZPOPMIN nope", "ZUNIONSTORE d 2 nope nope2", "ZRANGESTORE d nope 0 -1",
			"PFCOUNT nope nope2", "PFMERGE d nope", "LCS nope nope2", "DUMP nope", "TTL nope", "PTTL nope", "EXPIRETIME nope",
			"TOUCH nope a", "OBJECT ENCODING nope", "OBJECT FREQ nope", "COPY nope d", "RENAME nope d", "EXPIRE nope 10",
			"PERSIST nope", "DEL nope", "INCR n", "APPEND ap x", "SETRANGE sr 0 x", "LPUSHX nope x", "SETNX nx v",
			"SORT nope", "RPUSH l 2 1", "SORT l BY w_* GET o_* GET #", "SORT_RO nope",
			"EVAL return(redis.call('get','ev')) 0", "MULTI", "GET m1", "HGET m2 f", "EXEC", "CLIENT NO-EVICT on",
		}},
		notifyScript{name: "blocked wait", classes: "KEm", blocked: "BLPOP q 0", cmds: []string{"RPUSH q x"}},
		notifyScript{name: "new alone", classes: "En", cmds: []string{
			"SET a 1", "SET a 2", "DEL a", "SET a 1", "RENAME a b", "SET c 1", "RENAME b c", "COPY c d", "COPY c d REPLACE",
			"LPUSH l x", "LPUSH l y", "HSET h f v", "SADD s m", "ZADD z 1 m", "PFADD p x", "SETBIT b 1 1", "INCR i",
			"INCRBYFLOAT f 1", "APPEND ap x", "SETRANGE sr 1 x", "MSET m1 1 m2 2 c 3", "MSETNX m3 1", "GETSET g v",
			"SINTERSTORE si s s", "SUNIONSTORE si s", "ZUNIONSTORE zu 1 z", "SMOVE s s2 m", "LMOVE l l2 LEFT LEFT",
			"RPOPLPUSH l2 l2", "HSETNX hn f v", "ZRANGESTORE zr z 0 -1", "BITFIELD bf SET u8 0 1", "SETEX se 10 v",
			"LINSERT nope BEFORE a b", "SINTERSTORE e1 nope s", "EVAL redis.call('set','ev','1') 0",
			"BITOP OR bo b", "PFMERGE pm p", "RESTORE r 0 {dump:c}", "RESTORE r 0 {dump:c} REPLACE", "SORT l STORE so",
			"SET ex v EX 100", "SET ex v XX", "SET nx v NX", "HINCRBY hi f 1", "ZINCRBY zi 1 m", "GET gone",
		}},
	)
	runNotifyScripts(t, redisAddr, oursAddr, scripts)
}
