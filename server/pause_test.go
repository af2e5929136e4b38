package server

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// CLIENT PAUSE's tests run each scenario against redis-server and against
// this server on four event loops, in RESP2 and RESP3: every reply, and
// whether a command was held, must be what the scenario expects and the
// same on both. Held means no reply within holdWindow, which is long
// enough for a command that is not held to answer on a busy machine.

const holdWindow = 300 * time.Millisecond

// pauseSession is one run of a scenario against one server.
type pauseSession struct {
	t     *testing.T
	name  string // "redis" or "ours"
	addr  string
	proto int

	mu  sync.Mutex
	log []string // what happened, compared between the servers
}

// pauseConn is a connection of a session's, named in its log.
type pauseConn struct {
	s    *pauseSession
	name string
	c    *compatConn
}

func (s *pauseSession) note(format string, args ...any) {
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// conn opens a connection in the session's protocol.
func (s *pauseSession) conn(name string) *pauseConn {
	s.t.Helper()
	c := dialCompat(s.t, s.addr)
	if s.proto == 3 {
		if r, err := c.do("HELLO", "3"); err != nil || r.kind != '%' {
			s.t.Fatalf("%s: HELLO 3: %v %v", s.name, r, err)
		}
	}
	return &pauseConn{s: s, name: name, c: c}
}

// send sends a command without reading its reply.
func (p *pauseConn) send(args ...string) {
	p.s.t.Helper()
	if err := p.c.send(encodeCommand(args...)); err != nil {
		p.s.t.Fatalf("%s: %s: send: %v", p.s.name, p.name, err)
	}
	p.s.note("%s> %s", p.name, strings.Join(args, " "))
}

// read reads the next reply, which must be want (unless want is "").
func (p *pauseConn) read(want string) string {
	p.s.t.Helper()
	r, err := p.c.read()
	got := r.String()
	if err != nil {
		got = renderErr(err)
	}
	p.s.note("%s< %s", p.name, got)
	if want != "" && got != want {
		p.s.t.Errorf("%s: %s: got %s, want %s", p.s.name, p.name, got, want)
	}
	return got
}

// do sends a command and reads its reply, which must be want (unless "").
func (p *pauseConn) do(want string, args ...string) string {
	p.s.t.Helper()
	p.send(args...)
	return p.read(want)
}

// held checks that no reply comes within holdWindow.
func (p *pauseConn) held() {
	p.s.t.Helper()
	p.c.nc.SetReadDeadline(time.Now().Add(holdWindow))
	_, err := p.c.br.Peek(1)
	if err == nil {
		p.s.note("%s: not held", p.name)
		p.s.t.Errorf("%s: %s: a reply came while it should be held: %s", p.s.name, p.name, p.read(""))
		return
	}
	if !isTimeout(err) {
		p.s.t.Fatalf("%s: %s: %v", p.s.name, p.name, err)
	}
	p.s.note("%s: held", p.name)
}

// info returns a field of INFO as this connection reads it.
func (p *pauseConn) info(section, field string) string {
	p.s.t.Helper()
	r, err := p.c.do("INFO", section)
	if err != nil {
		p.s.t.Fatalf("%s: INFO: %v", p.s.name, err)
	}
	for _, line := range strings.Split(r.str, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	p.s.t.Fatalf("%s: INFO %s has no %s", p.s.name, section, field)
	return ""
}

// waitBlocked waits until INFO says n clients are blocked, which those
// CLIENT PAUSE holds count as in Redis.
func (p *pauseConn) waitBlocked(n int) {
	p.s.t.Helper()
	want := strconv.Itoa(n)
	testwait.For(p.s.t, p.s.name+": blocked_clients:"+want, func() bool {
		return p.info("clients", "blocked_clients") == want
	})
	p.s.note("blocked_clients:%d", n)
}

// runPauseScenario runs scenario against redis-server and this server, in
// each protocol, and compares what happened.
func runPauseScenario(t *testing.T, scenario func(s *pauseSession)) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{EventLoops: 4})
	forEachProtocol(t, func(t *testing.T, proto int) {
		var logs [2][]string
		for i, target := range []struct{ name, addr string }{{"redis", redisAddr}, {"ours", ts.addr}} {
			s := &pauseSession{t: t, name: target.name, addr: target.addr, proto: proto}
			admin := s.conn("admin")
			for _, reset := range [][]string{{"CLIENT", "UNPAUSE"}, {"FLUSHALL"}, {"CONFIG", "SET", "maxmemory", "0"}} {
				if r, err := admin.c.do(reset...); err != nil || r.String() != "+OK" {
					t.Fatalf("%s: %v: %v %v", s.name, reset, r, err)
				}
			}
			scenario(s)
			// A scenario that failed half-way leaves nothing paused for the
			// next, nor for the servers' shutdown.
			admin.c.do("CLIENT", "UNPAUSE")
			logs[i] = s.log
		}
		for i := 0; i < max(len(logs[0]), len(logs[1])); i++ {
			var r, o string
			if i < len(logs[0]) {
				r = logs[0][i]
			}
			if i < len(logs[1]) {
				o = logs[1][i]
			}
			if r != o {
				t.Errorf("step %d differs:\n\tredis: %s\n\tours:  %s", i+1, r, o)
				break
			}
		}
	})
}

// WRITE holds a write (and PUBLISH, which may replicate) but not a read;
// UNPAUSE lets it run.
func TestPauseWriteHoldsWritesNotReads(t *testing.T) {
	runPauseScenario(t, func(s *pauseSession) {
		admin, w, p, r := s.conn("admin"), s.conn("writer"), s.conn("publisher"), s.conn("reader")
		r.do("+OK", "SET", "k", "before")
		admin.do("+OK", "CLIENT", "PAUSE", "60000", "WRITE")
		w.send("SET", "k", "after")
		w.held()
		p.send("PUBLISH", "ch", "m")
		p.held()
		r.do(`"before"`, "GET", "k")
		r.do("", "PING")
		r.do(":0", "EXISTS", "nosuch")
		admin.waitBlocked(2)
		admin.do("+OK", "CLIENT", "UNPAUSE")
		w.read("+OK")
		p.read(":0")
		r.do(`"after"`, "GET", "k")
		admin.waitBlocked(0)
	})
}

// ALL holds every command, CLIENT UNPAUSE included (as in Redis 7.0): the
// pause ends at its timeout, with no client sending anything, and the
// held commands run then.
func TestPauseAllHoldsEveryCommandUntilItsTimeout(t *testing.T) {
	runPauseScenario(t, func(s *pauseSession) {
		admin, w, r, u := s.conn("admin"), s.conn("writer"), s.conn("reader"), s.conn("unpauser")
		admin.do("+OK", "SET", "k", "before")
		start := time.Now()
		admin.do("+OK", "CLIENT", "PAUSE", "1500", "ALL")
		// Each arrives before the next is sent: INFO, which would tell,
		// is held too.
		r.send("GET", "k")
		r.held()
		w.send("SET", "k", "after")
		w.held()
		u.send("CLIENT", "UNPAUSE")
		u.held()
		r.read(`"before"`)
		w.read("+OK")
		u.read("+OK")
		if waited := time.Since(start); waited < 1400*time.Millisecond {
			s.t.Errorf("%s: held commands answered after %v, before the pause's 1500ms", s.name, waited)
		}
		admin.do(`"after"`, "GET", "k")
	})
}

// A later pause makes the pause in force longer and WRITE into ALL, as
// Redis's pauseClients keeps the latest end and the stricter mode; a
// shorter or weaker one changes nothing. Bad arguments get Redis's errors.
func TestPauseExtendsAndTightens(t *testing.T) {
	runPauseScenario(t, func(s *pauseSession) {
		admin, r := s.conn("admin"), s.conn("reader")
		admin.do("-ERR timeout is not an integer or out of range", "CLIENT", "PAUSE", "soon")
		admin.do("-ERR timeout is negative", "CLIENT", "PAUSE", "-1", "WRITE")
		admin.do("-ERR CLIENT PAUSE mode must be WRITE or ALL", "CLIENT", "PAUSE", "soon", "READ")
		admin.do("", "CLIENT", "PAUSE", "1", "WRITE", "x")
		admin.do("", "CLIENT", "UNPAUSE", "x")
		admin.do("", "CLIENT", "PAUSE")
		// 0, and a timeout past int64 once added to the clock, are
		// pauses already over.
		admin.do("+OK", "CLIENT", "PAUSE", "0")
		admin.do("+OK", "CLIENT", "PAUSE", "9223372036854775807", "WRITE")
		r.do("+OK", "SET", "k", "v")

		start := time.Now()
		admin.do("+OK", "CLIENT", "PAUSE", "800", "write")
		admin.do("+OK", "CLIENT", "PAUSE", "100", "all")
		r.send("GET", "k")
		r.held()
		r.read(`"v"`)
		if waited := time.Since(start); waited < 700*time.Millisecond {
			s.t.Errorf("%s: the pause ended after %v: the longer end was not kept", s.name, waited)
		}
		// ALL with WRITE after it stays ALL.
		admin.do("+OK", "CLIENT", "PAUSE", "500", "ALL")
		admin.send("CLIENT", "PAUSE", "500", "WRITE")
		admin.held() // ALL holds CLIENT PAUSE too
		admin.read("+OK")
	})
}

// Held commands run in the order they arrived, whether UNPAUSE or the
// timeout lets them go, across connections on every event loop.
func TestPauseReleasesInArrivalOrder(t *testing.T) {
	for _, end := range []string{"unpause", "timeout"} {
		t.Run(end, func(t *testing.T) {
			runPauseScenario(t, func(s *pauseSession) {
				admin := s.conn("admin")
				timeout := "60000"
				if end == "timeout" {
					timeout = "2500"
				}
				admin.do("+OK", "CLIENT", "PAUSE", timeout, "WRITE")
				const n = 8
				clients := make([]*pauseConn, n)
				for i := range clients {
					clients[i] = s.conn("client" + strconv.Itoa(i))
					clients[i].send("RPUSH", "order", strconv.Itoa(i))
					// The next arrives once this one waits.
					admin.waitBlocked(i + 1)
				}
				if end == "unpause" {
					admin.do("+OK", "CLIENT", "UNPAUSE")
				}
				for i, c := range clients {
					c.read(":" + strconv.Itoa(i+1))
				}
				admin.do("", "LRANGE", "order", "0", "-1")
			})
		})
	}
}

// A held command keeps its connection's pipeline in order: what came
// before it has answered, what comes after runs after it.
func TestPauseKeepsPipelineOrder(t *testing.T) {
	runPauseScenario(t, func(s *pauseSession) {
		admin, c := s.conn("admin"), s.conn("pipeliner")
		admin.do("+OK", "CLIENT", "PAUSE", "60000", "WRITE")
		var pipeline strings.Builder
		for _, cmd := range [][]string{{"GET", "k"}, {"SET", "k", "1"}, {"GET", "k"}, {"INCR", "k"}, {"GET", "k"}} {
			pipeline.WriteString(encodeCommand(cmd...))
		}
		if err := c.c.send(pipeline.String()); err != nil {
			s.t.Fatal(err)
		}
		s.note("pipeliner> GET k; SET k 1; GET k; INCR k; GET k")
		c.read("") // GET k, before the SET: nil in the protocol's form
		c.held()
		admin.do("", "GET", "k") // nothing of the pipeline after GET ran
		admin.waitBlocked(1)
		admin.do("+OK", "CLIENT", "UNPAUSE")
		c.read("+OK")
		c.read(`"1"`)
		c.read(":2")
		c.read(`"2"`)
	})
}

// MULTI/EXEC is held whole at EXEC when it writes, and none of it runs
// before the pause ends; one that only reads runs. A write queued during
// the pause is held as it is queued, as in Redis.
func TestPauseHoldsExecWhole(t *testing.T) {
	runPauseScenario(t, func(s *pauseSession) {
		admin, tx, ro, other := s.conn("admin"), s.conn("tx"), s.conn("ro"), s.conn("other")
		admin.do("+OK", "SET", "a", "0")
		tx.do("+OK", "MULTI")
		tx.do("+QUEUED", "INCR", "a")
		tx.do("+QUEUED", "SET", "b", "1")
		tx.do("+QUEUED", "GET", "a")
		admin.do("+OK", "CLIENT", "PAUSE", "60000", "WRITE")
		tx.send("EXEC")
		tx.held()
		other.do(`"0"`, "GET", "a")
		other.do("", "GET", "b")
		ro.do("+OK", "MULTI")
		ro.do("+QUEUED", "GET", "a")
		ro.do("+QUEUED", "PING")
		ro.do("", "EXEC") // runs during the pause
		ro.do("+OK", "MULTI")
		ro.send("SET", "c", "1")
		ro.held() // queuing a write waits
		admin.waitBlocked(2)
		admin.do("+OK", "CLIENT", "UNPAUSE")
		tx.read("") // [1 OK "1"] in the protocol's form
		ro.read("+QUEUED")
		ro.do("", "EXEC")
		other.do(`"1"`, "GET", "a")
	})
}

// Scripts are held unless their flags say they do not write.
func TestPauseHoldsWritingScripts(t *testing.T) {
	runPauseScenario(t, func(s *pauseSession) {
		admin, w, r := s.conn("admin"), s.conn("writer"), s.conn("reader")
		admin.do("+OK", "SET", "x", "y")
		admin.do("+OK", "CLIENT", "PAUSE", "60000", "WRITE")
		r.do(`"y"`, "EVAL", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", "1", "x")
		r.do(`"y"`, "EVAL_RO", "return redis.call('get', KEYS[1])", "1", "x")
		w.send("EVAL", "return redis.call('get', KEYS[1])", "1", "x")
		w.held()
		admin.waitBlocked(1)
		admin.do("+OK", "CLIENT", "UNPAUSE")
		w.read(`"y"`)
	})
}

// During a pause no key expires: a read of a key past its deadline
// answers nil, but it stays, and expired_keys does not count it until the
// pause ends, when the next read removes it. DBSIZE here counts only live
// keys (README), so INFO's expired_keys shows what Redis's DBSIZE would.
func TestPauseKeepsExpiredKeys(t *testing.T) {
	runPauseScenario(t, func(s *pauseSession) {
		admin, r := s.conn("admin"), s.conn("reader")
		before, _ := strconv.Atoi(admin.info("stats", "expired_keys"))
		admin.do("+OK", "MULTI")
		admin.do("+QUEUED", "SET", "foo", "bar", "PX", "100")
		admin.do("+QUEUED", "SET", "baz", "qux", "PX", "100")
		admin.do("+QUEUED", "CLIENT", "PAUSE", "60000", "WRITE")
		admin.do("", "EXEC")
		time.Sleep(400 * time.Millisecond) // past the deadlines; the sweeps run
		r.do("", "GET", "foo")
		r.do("", "GET", "baz")
		r.do(":0", "EXISTS", "foo", "baz")
		if got, _ := strconv.Atoi(admin.info("stats", "expired_keys")); got != before {
			s.t.Errorf("%s: %d keys expired during the pause", s.name, got-before)
		}
		admin.do("+OK", "CLIENT", "UNPAUSE")
		r.do("", "GET", "foo")
		r.do("", "GET", "baz")
		if got, _ := strconv.Atoi(admin.info("stats", "expired_keys")); got != before+2 {
			s.t.Errorf("%s: %d keys expired after the pause, want 2", s.name, got-before)
		}
	})
}

// During a pause nothing is evicted, even under a bound the keys exceed;
// once it ends, writes evict again.
func TestPauseEvictsNothing(t *testing.T) {
	runPauseScenario(t, func(s *pauseSession) {
		admin := s.conn("admin")
		admin.do("+OK", "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
		value := strings.Repeat("v", 1000)
		for i := range 200 {
			admin.do("+OK", "SET", "key:"+strconv.Itoa(i), value)
		}
		before, _ := strconv.Atoi(admin.info("stats", "evicted_keys"))
		admin.do("+OK", "CLIENT", "PAUSE", "60000", "WRITE")
		admin.do("+OK", "CONFIG", "SET", "maxmemory", "1")
		time.Sleep(300 * time.Millisecond)
		admin.do(":200", append([]string{"EXISTS"}, keyNames("key:", 200)...)...)
		if got, _ := strconv.Atoi(admin.info("stats", "evicted_keys")); got != before {
			s.t.Errorf("%s: %d keys evicted during the pause", s.name, got-before)
		}
		admin.do("+OK", "CLIENT", "UNPAUSE")
		// Its reply differs (an OOM error from Redis, whose own use is
		// past 1 byte): it is the eviction that is compared.
		admin.c.do("SET", "after", "pause")
		testwait.For(s.t, s.name+": keys evicted once the pause ended", func() bool {
			got, _ := strconv.Atoi(admin.info("stats", "evicted_keys"))
			return got > before
		})
		admin.do("+OK", "CONFIG", "SET", "maxmemory", "0")
		s.note("evicted after the pause")
	})
}

func keyNames(prefix string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = prefix + strconv.Itoa(i)
	}
	return keys
}

// CLIENT LIST shows a held client as blocked, on the command it waits
// with, as Redis does.
func TestPauseClientList(t *testing.T) {
	runPauseScenario(t, func(s *pauseSession) {
		admin, w := s.conn("admin"), s.conn("writer")
		w.do("+OK", "CLIENT", "SETNAME", "held")
		admin.do("+OK", "CLIENT", "PAUSE", "60000", "WRITE")
		w.send("SET", "k", "v")
		admin.waitBlocked(1)
		r, err := admin.c.do("CLIENT", "LIST")
		if err != nil {
			s.t.Fatal(err)
		}
		var line string
		for _, l := range strings.Split(r.str, "\n") {
			if strings.Contains(l, " name=held ") {
				line = l
			}
		}
		var fields []string
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "flags=") || strings.HasPrefix(f, "cmd=") {
				fields = append(fields, f)
			}
		}
		s.note("held client: %s", strings.Join(fields, " "))
		if got := strings.Join(fields, " "); got != "flags=b cmd=set" {
			s.t.Errorf("%s: CLIENT LIST shows the held client with %q", s.name, got)
		}
		admin.do("+OK", "CLIENT", "UNPAUSE")
		w.read("+OK")
	})
}

// The pause cuts writes cleanly on several event loops: once CLIENT PAUSE
// has answered, no write lands, whether a plain command, EXEC or a
// script, though each was racing the pause; every write acknowledged
// before or after it is there at the end.
func TestPauseCutsConcurrentWrites(t *testing.T) {
	ts := startServer(t, Options{EventLoops: 4})
	writes := [][]string{
		{"INCR", "n"},
		{"EVAL", "return redis.call('incr', KEYS[1])", "1", "n"},
		{"MULTI"}, // MULTI, INCR n, EXEC
	}
	stop := make(chan struct{})
	var acked atomic.Int64
	var wg sync.WaitGroup
	for i := range 9 {
		c := dialCompat(t, ts.addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				w := writes[i%len(writes)]
				if w[0] == "MULTI" {
					c.do("MULTI")
					c.do("INCR", "n")
					w = []string{"EXEC"}
				}
				if r, err := c.do(w...); err != nil || r.kind == '-' {
					t.Errorf("%v: %v %v", w, r, err)
					return
				}
				acked.Add(1)
			}
		}()
	}
	admin := dialRaw(t, ts.addr)
	for round := range 5 {
		testwait.For(t, "writes between pauses", func() bool { return acked.Load() > int64(50*(round+1)) })
		if r := admin.do("CLIENT", "PAUSE", "60000", "WRITE"); r != "+OK" {
			t.Fatalf("CLIENT PAUSE: %s", r)
		}
		first := admin.do("GET", "n")
		time.Sleep(100 * time.Millisecond)
		if then := admin.do("GET", "n"); then != first {
			t.Fatalf("round %d: n went from %s to %s during the pause", round, first, then)
		}
		admin.do("CLIENT", "UNPAUSE")
	}
	close(stop)
	wg.Wait()
	if got, want := admin.do("GET", "n"), strconv.Quote(strconv.FormatInt(acked.Load(), 10)); got != want {
		t.Errorf("n = %s after %s acknowledged increments", got, want)
	}
}

// GETFILL, which may write its fill, is held by WRITE as Redis holds
// GETEX or PFCOUNT, and calls no origin meanwhile; FILL.INFO, a read,
// runs.
func TestPauseHoldsGetFill(t *testing.T) {
	o := newOrigin(t)
	ts := startServer(t, Options{EventLoops: 4})
	admin := dialRaw(t, ts.addr)
	if r := admin.do("LOADER.REGISTER", "k:", o.URL+"/{key}", "TIMEOUT", "5000"); r != "+OK" {
		t.Fatal(r)
	}
	admin.do("CLIENT", "PAUSE", "60000", "WRITE")
	filler := dialRaw(t, ts.addr)
	filler.send(encodeCommand("GETFILL", "k:x", "60", "0"))
	testwait.For(t, "GETFILL held", func() bool { return ts.pause.Held() == 1 })
	if r := admin.do("FILL.INFO", "k:x"); !strings.Contains(r, "missing") {
		t.Errorf("FILL.INFO during the pause: %s", r)
	}
	time.Sleep(holdWindow)
	if n := o.calls.Load(); n != 0 {
		t.Fatalf("%d origin calls during the pause", n)
	}
	admin.do("CLIENT", "UNPAUSE")
	if r := filler.reply(); r != `"k:x@v0"` {
		t.Errorf("GETFILL after the pause: %s", r)
	}
}

// A server shut down while paused does not run what the pause held: the
// held client's connection closes unanswered and its write is not made,
// as Redis's shutdown closes the clients it holds. Other connections
// drain as usual.
func TestPauseShutdownDropsHeldCommands(t *testing.T) {
	opts := withDefaults(t, Options{EventLoops: 4})
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	admin, w := dialRaw(t, ln.Addr().String()), dialRaw(t, ln.Addr().String())
	admin.do("CLIENT", "PAUSE", "60000", "WRITE")
	w.send(encodeCommand("SET", "k", "v") + encodeCommand("PING"))
	testwait.For(t, "SET held", func() bool { return srv.pause.Held() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	<-served
	w.expectClosed()
	if _, ok := opts.Store.Get([]byte("k")); ok {
		t.Error("the held SET was made at shutdown")
	}
	if opts.Store.Frozen() {
		t.Error("the store is still frozen after shutdown")
	}
}
