package server

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// The operator's commands compared with redis-server: SLOWLOG's entries by
// their shape (ids, times and durations vary; each entry's arguments,
// client address without its port, and client name are compared).

// maskSlowlog renders a SLOWLOG GET reply with each entry's id, time and
// duration checked to be integers and masked, and its client's port
// masked; ids must descend by one, newest first.
func maskSlowlog(t *testing.T, r compatReply) string {
	t.Helper()
	if r.kind == '-' {
		return r.String()
	}
	prev := int64(-1)
	for i := range r.elems {
		e := &r.elems[i]
		if len(e.elems) != 6 {
			t.Fatalf("slowlog entry %d has %d fields: %s", i, len(e.elems), e)
		}
		for j := 0; j < 3; j++ {
			if e.elems[j].kind != ':' {
				t.Fatalf("slowlog entry %d field %d is not an integer: %s", i, j, e)
			}
		}
		id, _ := strconv.ParseInt(e.elems[0].str, 10, 64)
		if prev >= 0 && id != prev-1 {
			t.Fatalf("slowlog ids not consecutive, newest first: %d after %d", id, prev)
		}
		prev = id
		e.elems[0].str, e.elems[1].str, e.elems[2].str = "id", "time", "micros"
		if peer := e.elems[4].str; strings.HasPrefix(peer, "127.0.0.1:") {
			e.elems[4].str = "127.0.0.1:port"
		}
	}
	return r.String()
}

func TestCompatSlowlog(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	long := strings.Repeat("x", 200)
	many := []string{"DEL"}
	for i := range 40 {
		many = append(many, "k"+strconv.Itoa(i))
	}
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		steps := []compatStep{
			cs("CONFIG GET slowlog-log-slower-than"), cs("CONFIG GET slowlog-max-len"),
			cs("CONFIG SET slowlog-log-slower-than -2"), cs("CONFIG SET slowlog-log-slower-than x"),
			cs("CONFIG SET slowlog-max-len -1"),
			cs("SLOWLOG"), cs("SLOWLOG HELP x"), cs("SLOWLOG FOO"), cs("SLOWLOG LEN x"),
			cs("SLOWLOG GET x"), cs("SLOWLOG GET -2"), cs("SLOWLOG GET 1 2"),
			cs("CONFIG SET slowlog-max-len 128"),
		}
		runCompatSteps(t, p, compatScript{name: "slowlog-errors", steps: steps})
		compareHelp(t, p, "SLOWLOG")
		// From here every command is logged, SLOWLOG RESET included.
		cmds := [][]string{
			{"CONFIG", "SET", "slowlog-log-slower-than", "0"},
			{"SLOWLOG", "RESET"},
			{"CLIENT", "SETNAME", "ops"},
			{"SET", "k", long},
			many,
			{"GET", "k"},
			{"MULTI"}, {"SET", "x", "1"}, {"INCR", "x"}, {"EXEC"},
			{"EVAL", "redis.call('set','a','1') return redis.call('get','a')", "0"},
			{"AUTH", "nopass"}, {"AUTH", "u", "p"}, {"HELLO", strconv.Itoa(proto), "AUTH", "default", "pw"},
			{"HELLO", strconv.Itoa(proto), "SETNAME", "ops"},
			{"CONFIG", "SET", "requirepass", ""},
			// MIGRATE's secrets, to a port no one listens on.
			{"MIGRATE", "127.0.0.1", "1", "k", "0", "100", "AUTH", "pw"},
			{"MIGRATE", "127.0.0.1", "1", "k", "0", "100", "COPY", "AUTH2", "user", "pw", "REPLACE"},
			{"MIGRATE", "127.0.0.1", "1", "k", "0", "100", "AUTH", "pw", "BOGUS", "AUTH", "pw2"},
			{"SLOWLOG", "LEN"},
		}
		for _, args := range cmds {
			want, got := p.redis.run(compatExact, args), p.ours.run(compatExact, args)
			if strings.HasPrefix(args[0], "HELLO") {
				continue // its map holds ids and versions; compared below by the log
			}
			if want != got {
				t.Fatalf("%s:\n\tredis: %s\n\tours:  %s", showArgs(args), want, got)
			}
		}
		for _, get := range [][]string{{"SLOWLOG", "GET", "-1"}, {"SLOWLOG", "GET"}, {"SLOWLOG", "GET", "2"}, {"SLOWLOG", "GET", "0"}} {
			rr, err1 := p.redis.do(get...)
			or, err2 := p.ours.do(get...)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: %v %v", showArgs(get), err1, err2)
			}
			if want, got := maskSlowlog(t, rr), maskSlowlog(t, or); want != got {
				t.Fatalf("%s:\n\tredis: %s\n\tours:  %s", showArgs(get), want, got)
			}
		}
		// Trimmed to the new length at once, the newest kept.
		steps = []compatStep{
			cs("CONFIG SET slowlog-max-len 2"), cs("SLOWLOG LEN"),
			cs("CONFIG SET slowlog-log-slower-than -1"), cs("GET k"), cs("SLOWLOG LEN"),
			cs("SLOWLOG RESET"), cs("SLOWLOG LEN"), cs("SLOWLOG GET"),
			cs("CONFIG SET slowlog-log-slower-than 10000"), cs("CONFIG SET slowlog-max-len 128"),
		}
		runCompatSteps(t, p, compatScript{name: "slowlog-trim", steps: steps})
	})
}

// compareHelp compares a command's HELP with Redis's, all but the last
// line, where 7.0 says "Prints this help." and 7.2 "Print this help.".
func compareHelp(t *testing.T, p compatPair, cmd string) {
	t.Helper()
	rr, err1 := p.redis.do(cmd, "HELP")
	or, err2 := p.ours.do(cmd, "HELP")
	if err1 != nil || err2 != nil || len(rr.elems) != len(or.elems) || len(or.elems) < 3 {
		t.Fatalf("%s HELP: redis %s %v\nours %s %v", cmd, rr, err1, or, err2)
	}
	for i := range len(rr.elems) - 1 {
		if rr.elems[i].String() != or.elems[i].String() {
			t.Errorf("%s HELP line %d: redis %s, ours %s", cmd, i, rr.elems[i], or.elems[i])
		}
	}
}

// maskLatest renders LATENCY LATEST with each event's times and latencies
// checked (integers; the latest at least the threshold, the worst at
// least the latest) and masked.
func maskLatest(t *testing.T, r compatReply, threshold int64) string {
	t.Helper()
	for i := range r.elems {
		e := &r.elems[i]
		if len(e.elems) != 4 {
			t.Fatalf("LATENCY LATEST event %d: %s", i, e)
		}
		last, _ := strconv.ParseInt(e.elems[2].str, 10, 64)
		worst, _ := strconv.ParseInt(e.elems[3].str, 10, 64)
		if e.elems[1].kind != ':' || last < threshold || worst < last {
			t.Fatalf("LATENCY LATEST event %d: %s", i, e)
		}
		e.elems[1].str, e.elems[2].str, e.elems[3].str = "time", "latest", "max"
	}
	return r.String()
}

func TestCompatLatency(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	// A script that runs for tens of milliseconds on either server: a
	// "command" spike past a threshold of 1 ms.
	const spin = "local i = 0 while i < 3000000 do i = i + 1 end return i"
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		steps := []compatStep{
			cs("CONFIG GET latency-monitor-threshold"), cs("CONFIG SET latency-monitor-threshold -1"),
			cs("CONFIG SET latency-monitor-threshold x"),
			cs("LATENCY"), cs("LATENCY FOO"), cs("LATENCY LATEST x"), cs("LATENCY HISTORY"), cs("LATENCY HELP x"),
			cs("LATENCY RESET"), cs("LATENCY LATEST"), cs("LATENCY HISTORY command"), cs("LATENCY DOCTOR"),
			// Off: nothing is recorded.
			ca("EVAL", spin, "0"), cs("LATENCY LATEST"),
			cs("CONFIG SET latency-monitor-threshold 1"), cs("LATENCY LATEST"),
			ca("EVAL", spin, "0"), cs("PING"),
		}
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "latency", steps: steps})
		// GRAPH and HISTOGRAM are not here: ours lists the rest in Redis's words.
		rr, _ := p.redis.do("LATENCY", "HELP")
		or, _ := p.ours.do("LATENCY", "HELP")
		theirs := strings.Split(rr.String(), " +")
		for _, line := range strings.Split(or.String(), " +") {
			if !slices.Contains(theirs, line) && line != "    Print this help.]" {
				t.Errorf("LATENCY HELP: %q is not Redis's", line)
			}
		}
		rr, err1 := p.redis.do("LATENCY", "LATEST")
		or, err2 := p.ours.do("LATENCY", "LATEST")
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if want, got := maskLatest(t, rr, 1), maskLatest(t, or, 1); want != got || !strings.Contains(got, `"command"`) {
			t.Fatalf("LATENCY LATEST:\n\tredis: %s\n\tours:  %s", want, got)
		}
		for _, c := range []*compatConn{p.redis, p.ours} {
			h, err := c.do("LATENCY", "HISTORY", "command")
			if err != nil || len(h.elems) != 1 || len(h.elems[0].elems) != 2 {
				t.Fatalf("LATENCY HISTORY command: %s %v", h, err)
			}
			d, err := c.do("LATENCY", "DOCTOR")
			if err != nil || !strings.HasPrefix(d.str, "Dave, I have observed latency spikes in this Redis instance.") ||
				!strings.Contains(d.str, "\n1. command: 1 latency spikes (average ") {
				t.Fatalf("LATENCY DOCTOR: %q %v", d.str, err)
			}
		}
		steps = []compatStep{
			cs("LATENCY RESET fast-command nothing"), cs("LATENCY RESET COMMAND command"), cs("LATENCY LATEST"),
			cs("CONFIG SET latency-monitor-threshold 0"),
		}
		runCompatSteps(t, p, compatScript{name: "latency-reset", steps: steps})
	})
}

// monitorLine matches a MONITOR line's timestamp and client port, which
// differ between the servers.
var monitorLine = regexp.MustCompile(`^\+\d+\.\d{6} \[0 (127\.0\.0\.1:\d+|lua)\] `)

// maskMonitor renders a MONITOR line with its timestamp and port masked.
func maskMonitor(t *testing.T, r compatReply) string {
	t.Helper()
	m := monitorLine.FindStringSubmatch("+" + r.str)
	if r.kind != '+' || m == nil {
		t.Fatalf("not a MONITOR line: %s", r)
	}
	who := m[1]
	if who != "lua" {
		who = "127.0.0.1:port"
	}
	return "[0 " + who + "] " + r.str[len(m[0])-1:]
}

// readMonitor reads a monitor's lines up to the one that ends with end.
func readMonitor(t *testing.T, c *compatConn, end string) []string {
	t.Helper()
	var lines []string
	for {
		r, err := c.read()
		if err != nil {
			t.Fatalf("MONITOR: %v after %q", err, lines)
		}
		lines = append(lines, maskMonitor(t, r))
		if strings.HasSuffix(r.str, end) {
			return lines
		}
	}
}

func TestCompatMonitor(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		mon := dialCompatPair(t, redisAddr, ts.addr, proto)
		runCompatSteps(t, mon, compatScript{name: "monitor", steps: []compatStep{cs("MONITOR")}})
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		steps := []compatStep{
			ca("SET", "k", "x y\"\\\n\r\t\a\b\x01\xc3\xa9~ \x7f"), cs("GET k"), cs("get k"),
			cs("MULTI"), cs("SET x 1"), cs("INCR x"), cs("EXEC"),
			cs("MULTI"), cs("SET x"), cs("EXEC"),
			cs("MULTI"), cs("MONITOR"), cs("EXEC"),
			ca("EVAL", "redis.call('set','a','1') return redis.call('get', KEYS[1])", "1", "a"),
			cs("AUTH nopass"), cs("AUTH u p"), cs("AUTH a b c"),
			cs("CONFIG SET slowlog-max-len 128"), cs("SLOWLOG LEN"), cs("CLIENT KILL ID 999999"),
			cs("CLIENT SETNAME mon"), cs("NOSUCH x"), cs("GET"), cs("PING"),
		}
		runCompatSteps(t, p, compatScript{name: "monitored", steps: steps})
		// HELLO's reply holds ids and versions: only its line is compared.
		for _, c := range []*compatConn{p.redis, p.ours} {
			if _, err := c.do("HELLO", strconv.Itoa(proto), "AUTH", "default", "pw", "SETNAME", "x"); err != nil {
				t.Fatal(err)
			}
		}
		runCompatSteps(t, p, compatScript{name: "monitored-end", steps: []compatStep{cs("ECHO end")}})
		want, got := readMonitor(t, mon.redis, `"end"`), readMonitor(t, mon.ours, `"end"`)
		if testing.Verbose() {
			t.Logf("%q", got)
		}
		if !slices.Equal(want, got) {
			t.Fatalf("MONITOR lines:\n\tredis: %q\n\tours:  %q", want, got)
		}
		// A monitor stays off the keyspace; RESET ends its monitoring.
		runCompatSteps(t, mon, compatScript{name: "monitor-commands", steps: []compatStep{
			cs("GET k"), cs("SET k v"), cs("PUBLISH ch m"),
		}})
		// MONITOR again gets no reply at all: the ECHO's is next.
		for _, c := range []*compatConn{mon.redis, mon.ours} {
			if err := c.send(encodeCommand("MONITOR")); err != nil {
				t.Fatal(err)
			}
		}
		runCompatSteps(t, mon, compatScript{name: "monitor-again", steps: []compatStep{cs("ECHO own")}})
		// Its own command's line follows the reply.
		want, got = readMonitor(t, mon.redis, `"own"`), readMonitor(t, mon.ours, `"own"`)
		if !slices.Equal(want, got) {
			t.Fatalf("MONITOR lines:\n\tredis: %q\n\tours:  %q", want, got)
		}
		runCompatSteps(t, mon, compatScript{name: "monitor-reset", steps: []compatStep{cs("RESET"), cs("GET x")}})
	})
}

// pipelineReplies sends cmds in one write, then ECHO end, and renders
// every reply up to end's.
func pipelineReplies(t *testing.T, c *compatConn, cmds [][]string) []string {
	t.Helper()
	var b strings.Builder
	for _, args := range cmds {
		b.WriteString(encodeCommand(args...))
	}
	b.WriteString(encodeCommand("ECHO", "end"))
	if err := c.send(b.String()); err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		r, err := c.read()
		if err != nil {
			t.Fatalf("after %q: %v", out, err)
		}
		out = append(out, r.String())
		if r.String() == `"end"` {
			return out
		}
	}
}

func TestCompatClientReply(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		runCompatSteps(t, p, compatScript{name: "client-reply-errors", steps: []compatStep{
			cs("CLIENT REPLY"), cs("CLIENT REPLY maybe"), cs("CLIENT REPLY on x"), cs("CLIENT REPLY ON"),
		}})
		for _, cmds := range [][][]string{
			{{"CLIENT", "REPLY", "OFF"}, {"SET", "a", "1"}, {"GET", "a"}, {"NOSUCH"}, {"INCR", "x", "y"},
				{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"GET", "a"}},
			{{"CLIENT", "REPLY", "SKIP"}, {"GET", "a"}, {"GET", "a"}},
			{{"CLIENT", "REPLY", "SKIP"}, {"NOSUCH"}, {"GET", "a"}},
			{{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "SKIP"}, {"GET", "a"}, {"GET", "a"}},
			{{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "OFF"}, {"GET", "a"}, {"CLIENT", "REPLY", "ON"}},
			{{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"GET", "a"}},
			{{"CLIENT", "REPLY", "OFF"}, {"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"GET", "a"}},
			{{"CLIENT", "REPLY", "SKIP"}, {"MULTI"}, {"GET", "a"}, {"EXEC"}},
			{{"CLIENT", "REPLY", "SKIP"}, {"EVAL", "return redis.call('get', 'a')", "0"}, {"PING"}},
		} {
			want, got := pipelineReplies(t, p.redis, cmds), pipelineReplies(t, p.ours, cmds)
			if !slices.Equal(want, got) {
				t.Fatalf("%q:\n\tredis: %q\n\tours:  %q", cmds, want, got)
			}
		}
	})
}

// clientFields parses a CLIENT INFO line into its field names, in order,
// and values.
func clientFields(line string) ([]string, map[string]string) {
	var names []string
	values := map[string]string{}
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		names = append(names, k)
		values[k] = v
	}
	return names, values
}

// TestCompatClientInfoFields: CLIENT INFO has Redis 7.0's fields in its
// order (and 7.2's watch, lib-name and lib-ver), and a fresh connection's
// values that do not depend on the server's layout are Redis's.
func TestCompatClientInfoFields(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		info := func(c *compatConn) ([]string, map[string]string) {
			r, err := c.do("CLIENT", "INFO")
			if err != nil {
				t.Fatal(err)
			}
			return clientFields(r.str)
		}
		rn, rv := info(p.redis)
		on, ov := info(p.ours)
		ours := slices.DeleteFunc(slices.Clone(on), func(k string) bool { return k == "watch" || k == "lib-name" || k == "lib-ver" })
		if !slices.Equal(rn, ours) {
			t.Fatalf("CLIENT INFO fields:\n\tredis: %q\n\tours:  %q", rn, on)
		}
		for _, k := range []string{"name", "flags", "db", "sub", "psub", "ssub", "multi", "argv-mem", "obl", "oll", "omem", "events", "cmd", "user", "redir", "resp"} {
			if rv[k] != ov[k] {
				t.Errorf("CLIENT INFO %s: redis %s, ours %s", k, rv[k], ov[k])
			}
		}
		if n, err := strconv.Atoi(ov["rbs"]); err != nil || n < 0 {
			t.Errorf("CLIENT INFO rbs=%s", ov["rbs"])
		}
		for _, k := range []string{"fd", "qbuf-free", "tot-mem"} {
			if n, err := strconv.Atoi(ov[k]); err != nil || n <= 0 {
				t.Errorf("CLIENT INFO %s=%s, want a positive number", k, ov[k])
			}
		}
		// A transaction's queued commands are its multi-mem, as another
		// connection's CLIENT LIST sees it.
		other := dialCompatPair(t, redisAddr, ts.addr, proto)
		for i, c := range []*compatConn{p.redis, p.ours} {
			_, self := info(c)
			c.do("MULTI")
			c.do("SET", "k", strings.Repeat("v", 1000))
			r, err := []*compatConn{other.redis, other.ours}[i].do("CLIENT", "LIST", "ID", self["id"])
			if err != nil {
				t.Fatal(err)
			}
			_, v := clientFields(r.str)
			if n, _ := strconv.Atoi(v["multi-mem"]); n < 1000 || v["multi"] != "1" || v["flags"] != "x" {
				t.Errorf("CLIENT LIST of a client in MULTI: %s", r.str)
			}
			c.do("DISCARD")
		}
	})
}

// TestCompatInfoKeyspaceAvgTTL: INFO keyspace's avg_ttl is the mean time
// left to the deadlines, in milliseconds, on both servers. Redis's is an
// estimate its expiry cycle updates from samples (0 until the first cycle
// that samples the key), so the test waits for it, and both must lie
// between the keys' shortest and longest TTL; ours is exact.
func TestCompatInfoKeyspaceAvgTTL(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	avgTTL := func(c *compatConn) int64 {
		r, err := c.do("INFO", "keyspace")
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`\r\ndb0:keys=3,expires=2,avg_ttl=(\d+)\r\n`).FindStringSubmatch(r.str)
		if m == nil {
			t.Fatalf("INFO keyspace: %q, want db0:keys=3,expires=2,avg_ttl=<ms>", r.str)
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	for _, c := range []*compatConn{p.redis, p.ours} {
		for _, args := range [][]string{{"SET", "a", "v", "EX", "60"}, {"SET", "b", "v", "EX", "120"}, {"SET", "p", "v"}} {
			if r, err := c.do(args...); err != nil || r.String() != "+OK" {
				t.Fatalf("%q: %s, %v", args, r, err)
			}
		}
	}
	testwait.For(t, "redis-server's expiry cycle to sample the keys", func() bool { return avgTTL(p.redis) > 0 })
	for name, c := range map[string]*compatConn{"redis": p.redis, "ours": p.ours} {
		// The keys' TTLs are 60 s and 120 s: their mean is below 90 s and,
		// at any time the test may take, above the shortest.
		if got := avgTTL(c); got <= 50_000 || got > 90_000 {
			t.Errorf("%s: avg_ttl=%d, want the mean ms left to the deadlines, within (50000, 90000]", name, got)
		}
	}
}
