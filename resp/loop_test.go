//go:build linux

package resp

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

	"github.com/stampedeless/stampedeless/metrics"
)

// TestEventLoopServes: with EventLoop, plain commands from many clients are
// answered by the loop (INFO counts them there), pipelines included, and
// every acknowledged write is read back.
func TestEventLoopServes(t *testing.T) {
	ts := startServer(t, Options{EventLoop: true})
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
	if !strings.Contains(info, "event_loop:1") || !strings.Contains(info, "event_loop_clients:1") {
		t.Errorf("INFO clients with one client on the loop:\n%s", info)
	}
	if n := r.do("DBSIZE"); n != ":"+strconv.Itoa(clients*keys) {
		t.Errorf("DBSIZE = %s, want %d", n, clients*keys)
	}
}

func key(w, i int) string { return "w" + strconv.Itoa(w) + ":" + strconv.Itoa(i) }

// TestEventLoopSlowReader: a client that pipelines more replies than its
// socket takes, and reads none until it has sent everything, is handed to a
// goroutine and gets every reply, in order; the loop keeps serving others.
func TestEventLoopSlowReader(t *testing.T) {
	reg := metrics.New()
	ts := startServer(t, Options{EventLoop: true, Metrics: reg})
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
	waitFor(t, "the slow reader to leave the loop", func() bool {
		return metrics.Value(reg.EventLoopHandoffs.WithLabelValues(handoffOutput)) >= 1
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

// TestEventLoopHandsOffWaitingCommands: a command that may wait (GETFILL)
// moves its connection to a goroutine, which answers it and what was
// pipelined behind it, in order, and then gives the connection back.
func TestEventLoopHandsOffWaitingCommands(t *testing.T) {
	reg := metrics.New()
	ts := startServer(t, Options{EventLoop: true, Metrics: reg})
	r := dialRaw(t, ts.addr)
	r.send(encodeCommand("SET", "a", "1") + encodeCommand("GETFILL", "nosuch:k", "10", "0") +
		encodeCommand("GET", "a") + encodeCommand("PING"))
	want := []string{"+OK", "-NOLOADER ", `"1"`, "+PONG"}
	for i, w := range want {
		if got := r.reply(); !strings.HasPrefix(got, w) {
			t.Fatalf("reply %d = %q, want %q", i, got, w)
		}
	}
	if v := metrics.Value(reg.EventLoopHandoffs.WithLabelValues(handoffCommand)); v != 1 {
		t.Errorf("handoffs for a command = %v, want 1", v)
	}
	// The goroutine counts the return after it sent the last reply.
	waitFor(t, "the connection to come back to the loop", func() bool {
		return metrics.Value(reg.EventLoopReturns) == 1
	})
	if info := r.do("INFO", "clients"); !strings.Contains(info, "event_loop_clients:1") {
		t.Errorf("INFO clients after the connection came back:\n%s", info)
	}
	// And it can leave and come back again.
	if got := r.do("GETFILL", "nosuch:k", "10", "0"); !strings.HasPrefix(got, "-NOLOADER ") {
		t.Fatalf("GETFILL = %q", got)
	}
	if got := r.do("PING"); got != "+PONG" {
		t.Fatalf("PING = %q", got)
	}
	waitFor(t, "the connection to come back again", func() bool {
		return metrics.Value(reg.EventLoopReturns) == 2
	})
}
