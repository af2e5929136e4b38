//go:build linux

package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/internal/uring"
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

// TestLoopTurnsBatchTheirSockets: many connections ready in the same turn
// are read, and answered, together (through io_uring where the kernel
// allows it, a system call each with it off): slow readers' long
// pipelines answered in order, the replies their sockets could not take
// sent as they drain; clients that send and shut their side at once
// answered before their connections close; and INFO says how the loops
// make their reads and writes.
func TestLoopTurnsBatchTheirSockets(t *testing.T) {
	ring, err := uring.New(1)
	if err == nil {
		ring.Close()
	}
	for _, off := range []bool{false, true} {
		t.Run("io-uring="+strconv.FormatBool(!off), func(t *testing.T) {
			ts := startServer(t, Options{NoURing: off})
			r := dialRaw(t, ts.addr)
			want := "epoll+io_uring"
			if off || err != nil {
				want = "epoll"
			}
			if info := r.do("INFO", "server"); !strings.Contains(info, "multiplexing_api:"+want+`\r\n`) {
				t.Errorf("INFO server with io_uring %v (available: %v) lacks multiplexing_api:%s:\n%s", !off, err == nil, want, info)
			}
			value := strings.Repeat("v", 100)
			if got := r.do("SET", "k", value); got != "+OK" {
				t.Fatalf("SET k: %s", got)
			}
			// Each client pipelines far more replies than its small
			// receive buffer holds before it reads one, so the loop
			// finds many sockets ready at once, and each turn's replies
			// (a read's worth, under resp.MaxRetainedReply: the turn's
			// end sends them) overfill the sockets, then go as they drain.
			const clients, gets = 10, 20000
			dialer := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
				return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10) })
			}}
			conns := make([]*rawConn, clients)
			for i := range conns {
				nc, err := dialer.Dial("tcp", ts.addr)
				if err != nil {
					t.Fatal(err)
				}
				conns[i] = wrapRaw(t, nc)
				// A slow reader: a few bytes per read.
				conns[i].br = bufio.NewReaderSize(nc, 16)
			}
			pipeline := strings.Repeat(encodeCommand("GET", "k"), gets)
			var wg sync.WaitGroup
			for w, c := range conns {
				// Written while the replies are read: the loop stops
				// reading a client whose socket is full.
				wg.Go(func() { io.WriteString(c.nc, pipeline) })
				wg.Go(func() {
					for i := range gets {
						if s, _ := readReply(c.br); s != strconv.Quote(value) {
							t.Errorf("client %d, GET %d: %.40q", w, i, s)
							return
						}
					}
				})
			}
			wg.Wait()
			// Each sends a command and shuts its side at once: the read
			// finds the command and the end of input together.
			for w := range conns {
				c := dialRaw(t, ts.addr)
				conns[w] = c
			}
			for _, c := range conns {
				wg.Go(func() {
					c.send(encodeCommand("INCR", "ended"))
					c.nc.(*net.TCPConn).CloseWrite()
				})
			}
			wg.Wait()
			for w, c := range conns {
				if s, err := readReply(c.br); err != nil || !strings.HasPrefix(s, ":") {
					t.Errorf("client %d, INCR before its end of input: %q, %v", w, s, err)
				}
				c.expectClosed()
			}
			if got := r.do("GET", "ended"); got != strconv.Quote(strconv.Itoa(clients)) {
				t.Errorf("GET ended = %s, want %d: every INCR before an end of input ran", got, clients)
			}
		})
	}
}
