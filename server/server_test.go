package server

import (
	"context"
	"errors"
	"fmt"

	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/commands/keyspace"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/metrics"
)

func TestGoRedisDefaultAndRESP2(t *testing.T) {
	ts := startServer(t, Options{})
	ctx := context.Background()
	for name, c := range map[string]*redis.Client{"default": ts.client(t), "resp2": ts.clientRESP2(t)} {
		t.Run(name, func(t *testing.T) {
			if err := c.Set(ctx, name, "v", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			if v, err := c.Get(ctx, name).Result(); err != nil || v != "v" {
				t.Fatalf("GET = %q, %v", v, err)
			}
			if _, err := c.Get(ctx, "missing").Result(); !errors.Is(err, redis.Nil) {
				t.Fatalf("GET missing: %v, want redis.Nil", err)
			}
			if ttl, err := c.TTL(ctx, name).Result(); err != nil || ttl != time.Minute {
				t.Fatalf("TTL = %v, %v", ttl, err)
			}
			if n, err := c.IncrBy(ctx, name+":n", 41).Result(); err != nil || n != 41 {
				t.Fatalf("INCRBY = %d, %v", n, err)
			}
			vals, err := c.MGet(ctx, name, "missing", name+":n").Result()
			if err != nil || vals[0] != "v" || vals[1] != nil || vals[2] != "41" {
				t.Fatalf("MGET = %v, %v", vals, err)
			}
		})
	}
	// go-redis named itself with CLIENT SETINFO; the default client speaks
	// RESP3.
	list, err := ts.clientRESP2(t).ClientList(ctx).Result()
	if err != nil || !strings.Contains(list, "lib-name=go-redis") || !strings.Contains(list, " resp=3 ") ||
		!strings.Contains(list, " resp=2 ") {
		t.Fatalf("CLIENT LIST = %q, %v; want go-redis's lib-name, resp=3 and resp=2", list, err)
	}
}

func TestPipelineAndInline(t *testing.T) {
	ts := startServer(t, Options{})
	r := dialRaw(t, ts.addr)
	// A pipeline in one write, mixing multibulk and inline commands.
	r.send(encodeCommand("SET", "p", "1") + "INCR p\r\n" + encodeCommand("GET", "p") + "PING\r\n")
	for _, want := range []string{"+OK", ":2", `"2"`, "+PONG"} {
		if got := r.reply(); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
}

// TestPipelinedOverwrite: two pipelined Sets of a new key and a GET read
// the second value.
func TestPipelinedOverwrite(t *testing.T) {
	ts := startServer(t, Options{})
	r := dialRaw(t, ts.addr)
	const rounds = 1000
	var b strings.Builder
	for i := range rounds {
		k := fmt.Sprintf("ow:%d", i)
		b.WriteString(encodeCommand("SET", k, "1") + encodeCommand("SET", k, "2") + encodeCommand("GET", k))
	}
	r.send(b.String())
	for i := range rounds {
		r.reply()
		r.reply()
		if got := r.reply(); got != `"2"` {
			t.Fatalf("round %d: GET = %s, want \"2\"", i, got)
		}
	}
}

// TestReadYourWritesAcrossConnections has 50 connections write distinct new
// keys; each write, once acknowledged, must be visible on another connection.
func TestReadYourWritesAcrossConnections(t *testing.T) {
	ts := startServer(t, Options{})
	ctx := context.Background()
	writer := redis.NewClient(&redis.Options{Addr: ts.addr, PoolSize: 50, Protocol: 2})
	reader := redis.NewClient(&redis.Options{Addr: ts.addr, PoolSize: 50, Protocol: 2})
	t.Cleanup(func() { writer.Close(); reader.Close() })
	const workers, perWorker = 50, 400
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				k := fmt.Sprintf("ryw:%d:%d", w, i)
				if err := writer.Set(ctx, k, k, 0).Err(); err != nil {
					errs <- err
					return
				}
				if v, err := reader.Get(ctx, k).Result(); err != nil || v != k {
					errs <- fmt.Errorf("GET %s right after SET = %q, %v", k, v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := reader.DBSize(ctx).Val(); n != workers*perWorker {
		t.Fatalf("DBSIZE = %d, want %d", n, workers*perWorker)
	}
	for w := range workers {
		for i := range perWorker {
			k := fmt.Sprintf("ryw:%d:%d", w, i)
			if v := reader.Get(ctx, k).Val(); v != k {
				t.Fatalf("later GET %s = %q", k, v)
			}
		}
	}
}

// TestProtocolErrorsCloseOnlyThatConnection sends each kind of bad input on
// its own connection while another client keeps working.
func TestProtocolErrorsCloseOnlyThatConnection(t *testing.T) {
	ts := startServer(t, Options{})
	ctx := context.Background()
	bystander := ts.clientRESP2(t)
	if err := bystander.Set(ctx, "safe", "yes", 0).Err(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, input, want string
	}{
		{"huge multibulk count", "*4000000000000000000\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"bulk length 2^40", "*1\r\n$1099511627776\r\n", "-ERR Protocol error: invalid bulk length"},
		{"negative bulk length", "*1\r\n$-2\r\n", "-ERR Protocol error: invalid bulk length"},
		{"declared 2GB bulk", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2147483648\r\n", "-ERR Protocol error: invalid bulk length"},
		{"not a bulk", "*1\r\nPING\r\n", "-ERR Protocol error: expected '$', got 'P'"},
		{"unbalanced quotes", "SET \"k v\r\n", "-ERR Protocol error: unbalanced quotes in request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := dialRaw(t, ts.addr)
			r.send(tt.input)
			if got := r.reply(); got != tt.want {
				t.Fatalf("reply %q, want %q", got, tt.want)
			}
			r.expectClosed()
			if v, err := bystander.Get(ctx, "safe").Result(); err != nil || v != "yes" {
				t.Fatalf("bystander GET = %q, %v", v, err)
			}
		})
	}
}

// TestHugeMultibulkDoesNotPinACore checks the 20-byte request that makes
// redcon loop forever costs nothing here: the server answers at once and,
// with the client gone, runs no goroutine for it.
func TestHugeMultibulkDoesNotPinACore(t *testing.T) {
	ts := startServer(t, Options{})
	before := runtime.NumGoroutine()
	for range 20 {
		r := dialRaw(t, ts.addr)
		r.send("*4000000000000000000\r\n")
		r.reply()
		r.expectClosed()
		r.nc.Close()
	}
	testwait.For(t, "connection goroutines to exit", func() bool {
		return ts.connectedClients() == 0 && runtime.NumGoroutine() <= before+2
	})
}

// TestLongInlineLine streams a 10 MB line with no newline: the server refuses
// it at 64 KB, without buffering the rest.
func TestLongInlineLine(t *testing.T) {
	ts := startServer(t, Options{})
	r := dialRaw(t, ts.addr)
	go func() {
		// The server closes the connection early, so this write fails
		// part way; that is the point.
		r.nc.Write([]byte(strings.Repeat("a", 10<<20)))
	}()
	if got := r.reply(); got != "-ERR Protocol error: too big inline request" {
		t.Fatalf("reply %q", got)
	}
	r.expectClosed()
}

// TestStreamingOversizeBulkRefusedAtHeader declares a bulk over
// --max-value-size: the server refuses it before reading its bytes.
func TestStreamingOversizeBulkRefusedAtHeader(t *testing.T) {
	ts := startServer(t, Options{MaxValueSize: 1 << 20})
	r := dialRaw(t, ts.addr)
	r.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
	if got := r.reply(); got != "-ERR Protocol error: invalid bulk length" {
		t.Fatalf("reply %q", got)
	}
	r.expectClosed()
	// A value of exactly the limit is accepted.
	c := ts.clientRESP2(t)
	if err := c.Set(context.Background(), "k", strings.Repeat("x", 1<<20), 0).Err(); err != nil {
		t.Fatalf("SET of max-value-size bytes: %v", err)
	}
}

func TestPanicInHandlerClosesOnlyThatConnection(t *testing.T) {
	// In the table before the server serves: its loops read the table.
	ts := startServer(t, Options{Commands: append(keyspace.Commands(), &commands.Spec{Name: "boom", Arity: 1, Handler: func(*commands.Ctx, [][]byte) { panic("boom") }})})
	ctx := context.Background()
	bystander := ts.clientRESP2(t)
	r := dialRaw(t, ts.addr)
	if got := r.do("BOOM"); got != "-ERR internal error" {
		t.Fatalf("reply %q", got)
	}
	r.expectClosed()
	if err := bystander.Ping(ctx).Err(); err != nil {
		t.Fatalf("server stopped serving after a handler panic: %v", err)
	}
}

func TestMaxClients(t *testing.T) {
	ts := startServer(t, Options{MaxClients: 2})
	a, b := dialRaw(t, ts.addr), dialRaw(t, ts.addr)
	a.do("PING")
	b.do("PING")
	c := dialRaw(t, ts.addr)
	if got := c.reply(); got != "-ERR max number of clients reached" {
		t.Fatalf("third client got %q", got)
	}
	c.expectClosed()
	a.do("QUIT")
	a.expectClosed()
	testwait.For(t, "a slot to free up", func() bool { return ts.connectedClients() == 1 })
	d := dialRaw(t, ts.addr)
	if got := d.do("PING"); got != "+PONG" {
		t.Fatalf("after a client left, a new one got %q", got)
	}
}

func TestArityAndUnknownCommands(t *testing.T) {
	ts := startServer(t, Options{})
	r := dialRaw(t, ts.addr)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"GET"}, "-ERR wrong number of arguments for 'get' command"},
		{[]string{"get", "a", "b"}, "-ERR wrong number of arguments for 'get' command"},
		{[]string{"SET", "k"}, "-ERR wrong number of arguments for 'set' command"},
		{[]string{"FOO", "a", "b"}, "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' "},
		{[]string{"INCRBY", "k", "x"}, "-ERR value is not an integer or out of range"},
		{[]string{"EXPIRE", "k", "1.5"}, "-ERR value is not an integer or out of range"},
		{[]string{"SELECT", "16"}, "-ERR DB index is out of range"},
		{[]string{"HELLO", "4"}, "-NOPROTO unsupported protocol version"},
		{[]string{"PING"}, "+PONG"},
	}
	for _, tt := range tests {
		if got := r.do(tt.args...); got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestAuth(t *testing.T) {
	ts := startServer(t, Options{RequirePass: "s3cret"})
	r := dialRaw(t, ts.addr)
	if got := r.do("GET", "k"); got != "-NOAUTH Authentication required." {
		t.Fatalf("before AUTH: %q", got)
	}
	// Before AUTH, Redis's smaller limits apply.
	if got := r.do("AUTH", "wrong"); got != "-WRONGPASS invalid username-password pair or user is disabled." {
		t.Fatalf("wrong password: %q", got)
	}
	if got := r.do("AUTH", "default", "s3cret"); got != "+OK" {
		t.Fatalf("AUTH default: %q", got)
	}
	if got := r.do("SET", "k", strings.Repeat("x", 20000)); got != "+OK" {
		t.Fatalf("after AUTH: %q", got)
	}

	u := dialRaw(t, ts.addr)
	u.send(encodeCommand("SET", "k", strings.Repeat("x", 20000)))
	if got := u.reply(); got != "-ERR Protocol error: unauthenticated bulk length" {
		t.Fatalf("big bulk before AUTH: %q", got)
	}
	u.expectClosed()

	h := dialRaw(t, ts.addr)
	if got := h.do("HELLO", "2"); !strings.HasPrefix(got, "-NOAUTH HELLO must be called") {
		t.Fatalf("HELLO without AUTH: %q", got)
	}
	if got := h.do("HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "me"); !strings.HasPrefix(got, `["server" "redis"`) {
		t.Fatalf("HELLO 2 AUTH: %q", got)
	}
	if got := h.do("CLIENT", "GETNAME"); got != `"me"` {
		t.Fatalf("CLIENT GETNAME after HELLO SETNAME: %q", got)
	}

	// go-redis authenticates with HELLO 3 AUTH by default, with AUTH in
	// RESP2.
	for _, c := range []*redis.Client{
		ts.clientRESP2(t, func(o *redis.Options) { o.Password = "s3cret" }),
		redis.NewClient(&redis.Options{Addr: ts.addr, Password: "s3cret"}),
	} {
		defer c.Close()
		if err := c.Ping(context.Background()).Err(); err != nil {
			t.Fatalf("go-redis with password: %v", err)
		}
	}
	d := ts.client(t)
	if err := d.Ping(context.Background()).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("go-redis without password: %v, want NOAUTH", err)
	}
}

// TestShutdownDrains checks Shutdown lets an in-flight pipeline finish and
// closes idle connections promptly.
func TestShutdownDrains(t *testing.T) {
	store, err := engine.New(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	srv, err := New(withDefaults(t, Options{Store: store, Metrics: metrics.New()}))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	idle := dialRaw(t, ln.Addr().String())
	idle.do("PING")
	busy := dialRaw(t, ln.Addr().String())
	var pipeline strings.Builder
	const n = 5000
	for i := range n {
		pipeline.WriteString(encodeCommand("SET", fmt.Sprint("drain:", i), "v"))
	}
	busy.send(pipeline.String())
	busy.reply() // the pipeline is being served

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
	for i := 1; i < n; i++ {
		if got := busy.reply(); got != "+OK" {
			t.Fatalf("reply %d of the in-flight pipeline: %q", i, got)
		}
	}
	busy.expectClosed()
	idle.expectClosed()
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve returned %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("still accepting after Shutdown")
	}
	if got := store.Len(); got != n {
		t.Fatalf("%d keys stored, want all %d acknowledged", got, n)
	}
}

func TestQuitFlushesAndCloses(t *testing.T) {
	ts := startServer(t, Options{})
	r := dialRaw(t, ts.addr)
	r.send(encodeCommand("SET", "q", "1") + encodeCommand("QUIT") + encodeCommand("GET", "q"))
	if got := r.reply(); got != "+OK" {
		t.Fatal(got)
	}
	if got := r.reply(); got != "+OK" {
		t.Fatal(got)
	}
	r.expectClosed()
}

// TestEvictionIsCountedAndVisible fills a small store far past its bound:
// keys are evicted or refused, INFO counts them, and DBSIZE, KEYS and SCAN
// agree with what GET can read.
func TestEvictionIsCountedAndVisible(t *testing.T) {
	store, err := engine.New(engine.Options{MaxMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ts := startServer(t, Options{Store: store})
	ctx := context.Background()
	c := ts.clientRESP2(t)
	const n = 20000
	value := strings.Repeat("v", 100)
	pipe := c.Pipeline()
	for i := range n {
		pipe.Set(ctx, fmt.Sprint("ev:", i), value, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if st := store.Stats(); st.Cost > st.MaxCost {
		t.Fatalf("cost %d over the bound %d", st.Cost, st.MaxCost)
	}
	info := c.Info(ctx, "stats").Val()
	var evicted int
	for _, line := range strings.Split(info, "\r\n") {
		fmt.Sscanf(line, "evicted_keys:%d", &evicted)
	}
	if evicted == 0 {
		t.Fatalf("INFO evicted_keys = 0 after writing %d keys into 1 MiB:\n%s", n, info)
	}
	readable := 0
	for i := range n {
		if c.Get(ctx, fmt.Sprint("ev:", i)).Val() == value {
			readable++
		}
	}
	keys := c.Keys(ctx, "*").Val()
	var scanned []string
	iter := c.Scan(ctx, 0, "", 1000).Iterator()
	for iter.Next(ctx) {
		scanned = append(scanned, iter.Val())
	}
	size := int(c.DBSize(ctx).Val())
	if readable != size || len(keys) != size || len(scanned) != size {
		t.Fatalf("readable %d, DBSIZE %d, KEYS %d, SCAN %d: all must agree", readable, size, len(keys), len(scanned))
	}
	if readable+evicted != n {
		t.Fatalf("readable %d + evicted %d != written %d: a write was lost without a counter", readable, evicted, n)
	}
}

func TestMetricsCountCommands(t *testing.T) {
	reg := metrics.New()
	ts := startServer(t, Options{Metrics: reg})
	r := dialRaw(t, ts.addr)
	r.do("SET", "m", "x")
	r.do("GET", "m")
	r.do("INCR", "m")             // ran and failed
	r.do("INCR", "m", "extra")    // refused before it ran
	r.do("NOSUCH")                // refused: no such command
	r.do("CONFIG", "GET", "port") // a subcommand is counted as itself
	r.do("CONFIG", "NOSUCH")      // and an unknown one as unknown
	for _, c := range []struct {
		command, result string
		want            float64
	}{
		{"get", "ok", 1}, {"incr", "error", 1}, {"incr", "rejected", 1}, {"incr", "ok", 0},
		{"unknown", "rejected", 2}, {"config|get", "ok", 1}, {"config", "ok", 0},
	} {
		if v := metrics.Value(reg.Commands.WithLabelValues(c.command, c.result)); v != c.want {
			t.Errorf("commands_total{%s,%s} = %v, want %v", c.command, c.result, v, c.want)
		}
	}
}

func TestClientCommands(t *testing.T) {
	ts := startServer(t, Options{})
	r := dialRaw(t, ts.addr)
	if got := r.do("CLIENT", "SETNAME", "bad name"); got != "-ERR Client names cannot contain spaces, newlines or special characters." {
		t.Fatalf("SETNAME with a space: %q", got)
	}
	r.do("CLIENT", "SETNAME", "worker-1")
	r.do("CLIENT", "SETINFO", "LIB-NAME", "mylib")
	id := r.do("CLIENT", "ID")
	list := r.do("CLIENT", "LIST")
	if !strings.Contains(list, "id="+strings.TrimPrefix(id, ":")+" ") || !strings.Contains(list, "name=worker-1") ||
		!strings.Contains(list, "lib-name=mylib") || !strings.Contains(list, "cmd=client") {
		t.Fatalf("CLIENT LIST = %s", list)
	}
	if got := r.do("CLIENT", "INFO"); !strings.Contains(got, "name=worker-1") {
		t.Fatalf("CLIENT INFO = %s", got)
	}
}

func TestCommandDocsAndInfo(t *testing.T) {
	ts := startServer(t, Options{})
	r := dialRaw(t, ts.addr)
	if got := r.do("COMMAND", "COUNT"); got != fmt.Sprintf(":%d", len(ts.table)) {
		t.Fatalf("COMMAND COUNT = %s", got)
	}
	info := r.do("COMMAND", "INFO", "get", "nosuch")
	// GET's key spec as Redis 7.0's COMMAND INFO gives it.
	if info != `[["get" :2 [+readonly +fast] :1 :1 :1 [+@read +@string +@fast] [] [["flags" [+RO +access] "begin_search" ["type" "index" "spec" ["index" :1]] "find_keys" ["type" "range" "spec" ["lastkey" :0 "keystep" :1 "limit" :0]]]] []] (nil)]` {
		t.Fatalf("COMMAND INFO = %s", info)
	}
	docs := r.do("COMMAND", "DOCS", "set")
	for _, want := range []string{`"summary"`, `"arguments"`, `"name" "key" "type" "key"`,
		`"type" "oneof" "flags" [+optional]`, `"name" "seconds" "type" "integer" "token" "EX"`,
		`"name" "keepttl" "type" "pure-token" "token" "KEEPTTL"`} {
		if !strings.Contains(docs, want) {
			t.Errorf("COMMAND DOCS set lacks %s:\n%s", want, docs)
		}
	}
	// Without names, every command: this is what redis-cli asks on start.
	all := r.do("COMMAND", "DOCS")
	for name := range ts.table {
		if !strings.Contains(all, `"`+name+`" ["summary"`) {
			t.Errorf("COMMAND DOCS lacks %s", name)
		}
	}
	if mset := r.do("COMMAND", "DOCS", "mset"); !strings.Contains(mset,
		`"name" "data" "type" "block" "flags" [+multiple] "arguments" [["name" "key" "type" "key" "key_spec_index" :0] ["name" "value" "type" "string"]]`) {
		t.Errorf("COMMAND DOCS mset: %s", mset)
	}
	mget := r.do("COMMAND", "DOCS", "mget")
	if !strings.Contains(mget, `"name" "key" "type" "key" "key_spec_index" :0 "flags" [+multiple]`) {
		t.Errorf("COMMAND DOCS mget: %s", mget)
	}
}

func TestConfig(t *testing.T) {
	ts := startServer(t, Options{})
	r := dialRaw(t, ts.addr)
	if got := r.do("CONFIG", "GET", "maxmemory"); got != fmt.Sprintf(`["maxmemory" "%d"]`, ts.store.MaxMemory()) {
		t.Fatalf("CONFIG GET maxmemory = %s", got)
	}
	if got := r.do("CONFIG", "GET", "save"); got != `["save" ""]` {
		t.Fatalf("CONFIG GET save = %s", got)
	}
	if got := r.do("CONFIG", "SET", "maxmemory", "64mb"); got != "+OK" {
		t.Fatalf("CONFIG SET maxmemory = %s", got)
	}
	if ts.store.MaxMemory() != 64<<20 {
		t.Fatalf("max memory = %d after CONFIG SET 64mb", ts.store.MaxMemory())
	}
	// A bad value in a multi-parameter SET changes nothing.
	if got := r.do("CONFIG", "SET", "maxmemory", "1gb", "maxclients", "zero"); !strings.HasPrefix(got, "-ERR CONFIG SET failed (possibly related to argument 'maxclients')") {
		t.Fatalf("CONFIG SET with a bad value = %s", got)
	}
	if ts.store.MaxMemory() != 64<<20 {
		t.Fatalf("a failed CONFIG SET changed maxmemory to %d", ts.store.MaxMemory())
	}
	// 0 is no bound, as in Redis, in CONFIG GET and INFO alike.
	if got := r.do("CONFIG", "SET", "maxmemory", "0"); got != "+OK" {
		t.Fatalf("CONFIG SET maxmemory 0 = %s", got)
	}
	if got := r.do("CONFIG", "GET", "maxmemory"); got != `["maxmemory" "0"]` {
		t.Fatalf("CONFIG GET maxmemory after CONFIG SET 0 = %s", got)
	}
	if info := r.do("INFO", "memory"); !strings.Contains(info, `\r\nmaxmemory:0\r\n`) {
		t.Fatalf("INFO memory after CONFIG SET maxmemory 0 lacks maxmemory:0: %s", info)
	}
	r.do("CONFIG", "SET", "maxmemory", "64mb")
	if got := r.do("CONFIG", "SET", "databases", "4"); !strings.Contains(got, "can't set immutable config") {
		t.Fatalf("CONFIG SET databases = %s", got)
	}
	if got := r.do("CONFIG", "SET", "requirepass", "pw"); got != "+OK" {
		t.Fatal(got)
	}
	if got := dialRaw(t, ts.addr).do("PING"); got != "-NOAUTH Authentication required." {
		t.Fatalf("after CONFIG SET requirepass, a new client got %q", got)
	}
}

func TestInfoSections(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.clientRESP2(t)
	ctx := context.Background()
	c.Set(ctx, "a", "1", time.Hour)
	c.Get(ctx, "a")
	c.Get(ctx, "missing")
	all := c.Info(ctx).Val()
	for _, want := range []string{"# Server", "redis_version:", "# Clients", "connected_clients:1",
		"# Memory", "used_memory:", "maxmemory:", "# Stats", "keyspace_hits:1", "keyspace_misses:1",
		"evicted_keys:0", "# Keyspace", "db0:keys=1,expires=1"} {
		if !strings.Contains(all, want) {
			t.Errorf("INFO lacks %q", want)
		}
	}
	if only := c.Info(ctx, "keyspace").Val(); strings.Contains(only, "# Server") || !strings.Contains(only, "db0:") {
		t.Errorf("INFO keyspace = %q", only)
	}
}

// TestInfoMemoryNotCountedForEvict: used_memory less
// mem_not_counted_for_evict is what the memory bound counts
// (cache_cost_bytes), as Redis's test suite computes a maxmemory from it.
func TestInfoMemoryNotCountedForEvict(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.clientRESP2(t)
	ctx := context.Background()
	c.Set(ctx, "a", strings.Repeat("x", 10000), 0)
	fields := map[string]int64{}
	for _, line := range strings.Split(c.Info(ctx, "memory").Val(), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				fields[k] = n
			}
		}
	}
	used, other, cost := fields["used_memory"], fields["mem_not_counted_for_evict"], fields["cache_cost_bytes"]
	if cost == 0 || used-other != cost {
		t.Errorf("used_memory %d - mem_not_counted_for_evict %d != cache_cost_bytes %d", used, other, cost)
	}
}
