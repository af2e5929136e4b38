package server

// CONFIG against redis-server 7.0: every parameter Redis has is here, and
// each that governs nothing here takes and refuses what Redis does, with
// its error texts, and reads back as Redis's.

import (
	"log/slog"
	"slices"
	"testing"

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
