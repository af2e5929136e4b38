//go:build linux

package server

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/metrics"
)

// TestEventLoopServes: plain commands from many clients, spread over two
// loops, are answered, pipelines included, and every acknowledged write is
// read back.
func TestEventLoopServes(t *testing.T) {
	ts := startServer(t, Options{EventLoops: 2})
	ctx := context.Background()
	const clients, keys = 20, 200
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			c := redis.NewClient(&redis.Options{Addr: ts.addr, PoolSize: 1})
			defer c.Close()
			pipe := c.Pipeline()
			for i := range keys {
				pipe.Set(ctx, key(w, i), strconv.Itoa(i), 0)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Error(err)
				return
			}
			for i := range keys {
				if got, err := c.Get(ctx, key(w, i)).Result(); err != nil || got != strconv.Itoa(i) {
					t.Errorf("GET %s = %q, %v", key(w, i), got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	r := dialRaw(t, ts.addr)
	info := r.do("INFO", "clients")
	if !strings.Contains(info, "event_loops:2") || !strings.Contains(info, "waiting_clients:0") {
		t.Errorf("INFO clients of two loops with no command waiting:\n%s", info)
	}
	if n := r.do("DBSIZE"); n != ":"+strconv.Itoa(clients*keys) {
		t.Errorf("DBSIZE = %s, want %d", n, clients*keys)
	}
}

func key(w, i int) string { return "w" + strconv.Itoa(w) + ":" + strconv.Itoa(i) }

// TestEventLoopSlowReader: a client that pipelines more replies than its
// socket takes, and reads none until it has sent everything, waits for its
// socket to drain and gets every reply, in order; its loop, the only one,
// keeps serving others meanwhile.
func TestEventLoopSlowReader(t *testing.T) {
	reg := metrics.New()
	ts := startServer(t, Options{EventLoops: 1, Metrics: reg})
	big := strings.Repeat("v", 256<<10)
	setup := dialRaw(t, ts.addr)
	if got := setup.do("SET", "big", big); got != "+OK" {
		t.Fatal(got)
	}
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	const n = 200 // 50 MiB of replies, far more than socket buffers hold
	go func() {
		var b strings.Builder
		for i := range n {
			b.WriteString(encodeCommand("GET", "big"))
			b.WriteString(encodeCommand("ECHO", strconv.Itoa(i)))
		}
		nc.Write([]byte(b.String()))
	}()
	// While that client's replies pile up, another is still served.
	testwait.For(t, "the slow reader's socket to fill", func() bool {
		return metrics.Value(reg.OutputBlocked) >= 1
	})
	if got := setup.do("PING"); got != "+PONG" {
		t.Fatalf("another client got %q while one did not read", got)
	}
	br := bufio.NewReaderSize(nc, 1<<20)
	nc.SetReadDeadline(time.Now().Add(time.Minute))
	for i := range n {
		v, err := readReply(br)
		if err != nil || v != strconv.Quote(big) {
			t.Fatalf("reply %d to GET: %d bytes, %v", i, len(v), err)
		}
		if e, err := readReply(br); err != nil || e != strconv.Quote(strconv.Itoa(i)) {
			t.Fatalf("reply %d to ECHO: %q, %v", i, e, err)
		}
	}
}

// TestEventLoopParksWaitingCommands: a GETFILL answered from the store runs
// on the loop; one that must wait for the origin parks its connection while
// the loop, the only one, serves another client; then it is answered, and
// what was pipelined behind it, in order.
func TestEventLoopParksWaitingCommands(t *testing.T) {
	o := newOrigin(t)
	o.gate = make(chan struct{})
	o.arrived = make(chan struct{}, 10)
	reg := metrics.New()
	ts := startServer(t, Options{EventLoops: 1, Metrics: reg})
	r := dialRaw(t, ts.addr)
	if got := r.do("LOADER.REGISTER", "k:", o.URL+"/{key}", "TIMEOUT", "5000"); got != "+OK" {
		t.Fatal(got)
	}
	parks := func() float64 { return metrics.Value(reg.Parks) }
	// A miss waits for the origin, which waits for the gate.
	r.send(encodeCommand("SET", "a", "1") + encodeCommand("GETFILL", "k:1", "60", "0") +
		encodeCommand("GET", "a") + encodeCommand("PING"))
	if got := r.reply(); got != "+OK" {
		t.Fatalf("the reply before the wait = %q, want +OK", got)
	}
	<-o.arrived
	other := dialRaw(t, ts.addr)
	if got := other.do("INFO", "clients"); !strings.Contains(got, "waiting_clients:1") {
		t.Errorf("INFO clients while a GETFILL waits:\n%s", got)
	}
	if got := other.do("SET", "b", "2"); got != "+OK" {
		t.Fatalf("another client while one waits: %q", got)
	}
	close(o.gate)
	for i, want := range []string{`"k:1@v0"`, `"1"`, "+PONG"} {
		if got := r.reply(); got != want {
			t.Fatalf("reply %d = %q, want %q", i, got, want)
		}
	}
	if v := parks(); v != 1 {
		t.Errorf("parks = %v, want 1", v)
	}
	// A hit is answered on the loop.
	if got := r.do("GETFILL", "k:1", "60", "0"); got != `"k:1@v0"` {
		t.Fatalf("GETFILL hit = %q", got)
	}
	if v := parks(); v != 1 {
		t.Errorf("a hit parked the connection: parks = %v, want 1", v)
	}
	// A second miss parks again.
	if got := r.do("GETFILL", "k:2", "60", "0"); got != `"k:2@v0"` {
		t.Fatalf("GETFILL = %q", got)
	}
	if v := parks(); v != 2 {
		t.Errorf("parks = %v, want 2", v)
	}
	if v := metrics.Value(reg.Commands.WithLabelValues("getfill", "ok")); v != 3 {
		t.Errorf("commands_total{getfill,ok} = %v, want 3", v)
	}
}
