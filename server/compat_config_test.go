package server

// CONFIG against redis-server 7.0: every parameter Redis has is here, and
// each that governs nothing here takes and refuses what Redis does, with
// its error texts, and reads back as Redis's.

import (
	"log/slog"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/redisconfig"
)

// configDiffers are the parameters whose values differ by nature: what
// each server was started with, or listens on, or what this one fixes
// (docs/commands.md). CONFIG SET of them is compared elsewhere.
var configDiffers = map[string]bool{
	"bind": true, "port": true, "dir": true, "databases": true, "maxmemory": true, "maxmemory-policy": true,
	"save": true, "hz": true, "tls-port": true,
	"unixsocket": true, "aclfile": true, "logfile": true, "pidfile": true, "daemonize": true, "protected-mode": true,
}

// TestCompatConfigEveryParameter: CONFIG GET * names the same parameters
// on both servers, with the same values but for configDiffers; and for
// each parameter that governs nothing here, and eviction's, CONFIG SET of a range of
// values (good, bad, out of range, other kinds') answers as Redis does,
// and CONFIG GET reads back the same.
func TestCompatConfigEveryParameter(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		want, got := configValues(t, p.redis), configValues(t, p.ours)
		for name, v := range want {
			g, ok := got[name]
			switch {
			case !ok:
				t.Errorf("CONFIG GET *: %s missing (redis: %s)", name, v)
			case g != v && !configDiffers[name]:
				t.Errorf("CONFIG GET %s: redis %s, ours %s", name, v, g)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("CONFIG GET *: %s is not Redis 7.0's", name)
			}
		}
	})
	// The matrix in RESP2: the replies are simple strings and errors, and
	// CONFIG GET's map is compared above in both protocols.
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	values := []string{"YES", "no", "zzbad", "-1", "0", "1", "99", "100", "65535", "65536", "2147483648",
		"9223372036854775807", "1mb", "2GB", "10%", "100%", "101%", "9999999999999%", "everysec", "ALWAYS", "allchannels", "swapdb", "hostname",
		"50 99", "1 2 3", "-100 0 2001", "0 200", "a b c", "", "{title} {port}", "{title}", "x{{y}}", "{nope}", "{port", "a}b", "a-b.c"}
	// The inert parameters, and the eviction's, which govern the store
	// here as in Redis.
	names := []string{"maxmemory-samples", "maxmemory-eviction-tenacity", "lfu-log-factor", "lfu-decay-time"}
	// Hidden ones among them: CONFIG GET * leaves them out on both
	// (above), and answers them by name.
	for _, p := range redisconfig.Params {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	for _, name := range names {
		if configDiffers[name] || name == "oom-score-adj" {
			// oom-score-adj: Redis applies it to its own process.
			continue
		}
		for _, v := range values {
			for _, args := range [][]string{{"CONFIG", "SET", name, v}, {"CONFIG", "GET", name}} {
				if w, g := p.redis.run(compatExact, args), p.ours.run(compatExact, args); w != g {
					t.Errorf("%q: redis %s, ours %s", args, w, g)
				}
			}
		}
	}
}

// TestCompatConfigSetToItself: CONFIG SET of every parameter to the value
// CONFIG GET shows succeeds here wherever it does on redis-server (Redis's
// introspection.tcl sets them all so), and fails where it fails there.
func TestCompatConfigSetToItself(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{LogLevel: new(slog.LevelVar)})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	want, got := configValues(t, p.redis), configValues(t, p.ours)
	for name, v := range want {
		w := p.redis.run(compatExact, []string{"CONFIG", "SET", name, v})
		g := p.ours.run(compatExact, []string{"CONFIG", "SET", name, got[name]})
		if (w == "+OK") != (g == "+OK") {
			t.Errorf("CONFIG SET %s to itself: redis %s, ours %s", name, w, g)
		}
	}
}

// configValues is CONFIG GET * of a connection, by parameter name.
func configValues(t *testing.T, c *compatConn) map[string]string {
	t.Helper()
	r, err := c.do("CONFIG", "GET", "*")
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]string)
	for i := 0; i+1 < len(r.elems); i += 2 {
		m[r.elems[i].str] = r.elems[i+1].str
	}
	return m
}

// TestCompatConfigSetPort: CONFIG SET port moves the server's listener as
// Redis's does: new connections on the new port, none on the old, the
// connections already made still served; a port another socket holds is
// refused with Redis's text, and every parameter of that CONFIG SET rolls
// back (Redis's introspection.tcl, "CONFIG SET rollback on apply error");
// as are a bad port's texts.
func TestCompatConfigSetPort(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	usedPort := strconv.Itoa(held.Addr().(*net.TCPAddr).Port)
	for _, side := range []struct{ name, addr string }{{"redis", redisAddr}, {"ours", ts.addr}} {
		c := dialCompat(t, side.addr)
		run := func(args ...string) string { return c.run(compatExact, args) }
		before := run("CONFIG", "GET", "maxmemory")
		for _, step := range []struct{ args, want []string }{
			{[]string{"CONFIG", "SET", "maxmemory", "10000001", "port", usedPort}, []string{
				"-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs."}},
			{[]string{"CONFIG", "SET", "port", "x"}, []string{
				"-ERR CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer"}},
			{[]string{"CONFIG", "SET", "port", "65536"}, []string{
				"-ERR CONFIG SET failed (possibly related to argument 'port') - argument must be between 0 and 65535 inclusive"}},
		} {
			if got := run(step.args...); got != step.want[0] {
				t.Errorf("%s: %s: %s, want %s", side.name, showArgs(step.args), got, step.want[0])
			}
		}
		if got := run("CONFIG", "GET", "maxmemory"); got != before {
			t.Errorf("%s: maxmemory %s after the failed CONFIG SET, was %s", side.name, got, before)
		}

		// A free port: find one, and let it go just before the move.
		free, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		oldPort, newPort := portOf(t, side.addr), strconv.Itoa(free.Addr().(*net.TCPAddr).Port)
		free.Close()
		if got := run("CONFIG", "SET", "port", newPort); got != "+OK" {
			t.Fatalf("%s: CONFIG SET port %s: %s", side.name, newPort, got)
		}
		if got := run("CONFIG", "GET", "port"); got != `["port" "`+newPort+`"]` {
			t.Errorf("%s: CONFIG GET port: %s", side.name, got)
		}
		if got := run("PING"); got != "+PONG" {
			t.Errorf("%s: the connection made before the move: %s", side.name, got)
		}
		moved := dialCompat(t, net.JoinHostPort("127.0.0.1", newPort))
		if got := moved.run(compatExact, []string{"PING"}); got != "+PONG" {
			t.Errorf("%s: a connection to the new port: %s", side.name, got)
		}
		if nc, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", oldPort), time.Second); err == nil {
			nc.Close()
			t.Errorf("%s: the old port %s still accepts", side.name, oldPort)
		}
		// Back where it was, so that the test's cleanup finds it.
		if got := run("CONFIG", "SET", "port", oldPort); got != "+OK" {
			t.Fatalf("%s: CONFIG SET port %s: %s", side.name, oldPort, got)
		}
		if got := dialCompat(t, side.addr).run(compatExact, []string{"PING"}); got != "+PONG" {
			t.Errorf("%s: back on the old port: %s", side.name, got)
		}
	}
}

// portOf is addr's port.
func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// TestCompatMinReplicas: with min-replicas-to-write and
// min-replicas-max-lag set, a primary with no replicas, as this server
// always is, refuses every write with NOREPLICAS: write commands, a
// transaction queueing one, scripts whose shebang may write, and the write
// calls of a script without one, while reads and no-writes scripts run
// (Redis's scripting.tcl, "not enough good replicas").
func TestCompatMinReplicas(t *testing.T) {
	const (
		noWrites = "#!lua flags=no-writes\nreturn redis.call('get','x')"
		shebang  = "#!lua\nreturn redis.call('get','x')"
		compat   = "return redis.call('get','x')"
		writes   = "return redis.call('set','x',1)"
	)
	sc := compatScript{name: "min-replicas", steps: []compatStep{
		cs("SET x value"), cs("CONFIG GET min-replicas-to-write"), cs("CONFIG GET min-slaves-max-lag"),
		cs("CONFIG SET min-replicas-to-write 1"), cs("CONFIG GET min-slaves-to-write"),
		cs("GET x"), cs("SET x 1"), cs("DEL x"), cs("INCR n"), cs("PING"),
		cs("MULTI"), cs("GET x"), cs("SET x 2"), cs("EXEC"),
		ca("EVAL", noWrites, "1", "x"), ca("EVAL", compat, "1", "x"), ca("EVAL", shebang, "1", "x"), ca("EVAL", writes, "1", "x"),
		ca("EVAL", "return redis.pcall('set','x',1)", "1", "x"),
		ca("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('f', function() return 1 end)"),
		cs("FCALL f 0"), cs("FUNCTION DELETE lib"),
		cs("CONFIG SET min-replicas-max-lag 0"), cs("SET x 3"), cs("CONFIG SET min-slaves-max-lag 10"), cs("SET x 4"),
		cs("CONFIG SET min-slaves-to-write 0"), cs("SET x 5"), cs("GET x"),
	}}
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, sc)
	})
}
