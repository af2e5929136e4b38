//go:build linux

package netloop

import (
	"bufio"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/clock"
	"github.com/stampedeless/stampedeless/internal/testcerts"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/internal/uring"
	"github.com/stampedeless/stampedeless/resp"
)

// testHost serves a few commands over real loops on a loopback listener:
// PING; ECHO msg; WAIT, which parks its connection until release is
// closed and then answers +WOKE (or -GONE if the client left); SUB,
// which puts the connection in push mode; QUIT; PANIC.
type testHost struct {
	t       *testing.T
	loops   *Loops
	addr    string
	release chan struct{}
	limit   atomic.Pointer[OutputLimit]
	closing atomic.Bool
	// Counted: the loops' events, and the connections open.
	blocked, parks, broken atomic.Int64
	mu                     sync.Mutex
	conns                  map[*testClient]bool
	reasons                []string // of the connections closed, in order
	done                   sync.WaitGroup
}

type counter struct{ n *atomic.Int64 }

func (c counter) Inc() { c.n.Add(1) }

func (h *testHost) Closing() bool            { return h.closing.Load() }
func (h *testHost) IdleTimeout() int64       { return 0 }
func (h *testHost) OutputLimit() OutputLimit { return *h.limit.Load() }
func (h *testHost) OutputLimitBroken()       { h.broken.Add(1) }
func (h *testHost) Clients() int             { h.mu.Lock(); defer h.mu.Unlock(); return len(h.conns) }
func (h *testHost) closedReasons() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.reasons...)
}
func (h *testHost) clientList() []*testClient {
	h.mu.Lock()
	defer h.mu.Unlock()
	return mapKeys(h.conns)
}

func mapKeys(m map[*testClient]bool) []*testClient {
	var out []*testClient
	for c := range m {
		out = append(out, c)
	}
	return out
}

type testClient struct {
	h    *testHost
	link Conn
	quit bool
	wait bool
}

func (c *testClient) ReadLimits() (resp.Limits, bool) { return resp.Limits{MaxBulk: 1 << 20}, true }

func (c *testClient) Command(args [][]byte) Next {
	w := c.link.Writer()
	switch strings.ToUpper(string(args[0])) {
	case "PING":
		w.Status("PONG")
	case "ECHO":
		w.Bulk(args[1])
	case "WAIT":
		c.wait = true
		return Wait
	case "SUB":
		c.link.StartPushing()
		w.Status("OK")
	case "QUIT":
		w.Status("OK")
		return Quit
	case "PANIC":
		panic("on purpose")
	default:
		w.Error("ERR unknown")
	}
	return Serve
}

func (c *testClient) Continue() Next {
	c.wait = false
	select {
	case <-c.h.release:
		c.link.Writer().Status("WOKE")
	case <-c.link.Context().Done():
		c.link.Writer().Error("GONE")
	}
	return Serve
}

func (c *testClient) Panicked(any)    {}
func (c *testClient) Ended() bool     { return false }
func (c *testClient) Listening() bool { return c.link.Pushing() }
func (c *testClient) Queued()         {}
func (c *testClient) Leave()          {}

func (c *testClient) Closed(reason string) {
	h := c.h
	h.mu.Lock()
	delete(h.conns, c)
	h.reasons = append(h.reasons, reason)
	h.mu.Unlock()
}

// startLoops serves the testHost's commands on n loops, plain, or TLS
// with tlsCfg; the loops end with the test.
func startLoops(t *testing.T, n int, noURing bool, tlsCfg *tls.Config) *testHost {
	t.Helper()
	h := &testHost{t: t, release: make(chan struct{}), conns: map[*testClient]bool{}}
	limit := DefaultPubSubOutputLimit
	h.limit.Store(&limit)
	clk := clock.New()
	t.Cleanup(clk.Stop)
	loops, err := New(Config{Loops: n, NoURing: noURing, WriteTimeout: time.Minute, Log: slog.New(slog.DiscardHandler),
		Clock: clk, OutputBlocked: counter{&h.blocked}, Parks: counter{&h.parks}}, h)
	if err != nil {
		t.Fatal(err)
	}
	h.loops = loops
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	h.done.Add(n)
	loops.Start(h.done.Done)
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			c := &testClient{h: h}
			c.link.Init(c, loops, time.Now())
			h.mu.Lock()
			h.conns[c] = true
			h.mu.Unlock()
			go func() {
				if tlsCfg != nil {
					if err := c.link.Handshake(nc, tlsCfg); err != nil {
						nc.Close()
						c.Closed(ClosedByClient)
						return
					}
				}
				if err := loops.Adopt(&c.link, nc); err != nil {
					t.Error(err)
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		h.closing.Store(true)
		loops.Force()
		h.done.Wait()
	})
	return h
}

// client is a test's connection to a testHost.
type client struct {
	nc net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(time.Minute))
	return &client{nc: nc, br: bufio.NewReader(nc)}
}

// command is args as a client sends them: an array of bulk strings.
func command(args ...string) string {
	var w resp.Writer
	w.Array(len(args))
	for _, a := range args {
		w.BulkString(a)
	}
	return string(w.Buffered())
}

func (c *client) send(t *testing.T, cmds ...string) {
	t.Helper()
	if _, err := io.WriteString(c.nc, strings.Join(cmds, "")); err != nil {
		t.Fatal(err)
	}
}

// reply reads one reply: a status or error line, or a bulk string's
// contents.
func (c *client) reply(t *testing.T) string {
	t.Helper()
	line, err := c.br.ReadString('\n')
	if err != nil {
		t.Fatalf("reading a reply: %v", err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line[0] != '$' {
		return line
	}
	n, _ := strconv.Atoi(line[1:])
	b := make([]byte, n+2)
	if _, err := io.ReadFull(c.br, b); err != nil {
		t.Fatal(err)
	}
	return string(b[:n])
}

func (c *client) expectClosed(t *testing.T) {
	t.Helper()
	if b, err := c.br.ReadByte(); err == nil {
		t.Fatalf("read %q, want the connection closed", b)
	}
}

// TestLoopsServe: clients spread over four loops pipeline commands and
// get every reply in order, with io_uring's batched reads and writes (where
// the kernel has it) and without.
func TestLoopsServe(t *testing.T) {
	ring, err := uring.New(1)
	if err == nil {
		ring.Close()
	}
	for _, noURing := range []bool{false, true} {
		t.Run("io-uring="+strconv.FormatBool(!noURing), func(t *testing.T) {
			h := startLoops(t, 4, noURing, nil)
			if got, want := h.loops.URing(), !noURing && err == nil; got != want {
				t.Errorf("URing() = %v, want %v", got, want)
			}
			if h.loops.Len() != 4 {
				t.Errorf("Len() = %d, want 4", h.loops.Len())
			}
			const clients, n = 16, 500
			var wg sync.WaitGroup
			for w := range clients {
				c := dial(t, h.addr)
				wg.Go(func() {
					var b strings.Builder
					for i := range n {
						b.WriteString(command("ECHO", strconv.Itoa(w*n+i)))
					}
					c.send(t, b.String())
					for i := range n {
						if got := c.reply(t); got != strconv.Itoa(w*n+i) {
							t.Errorf("client %d, reply %d = %q", w, i, got)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

// TestLoopsSlowReader: a client that reads none of its replies until it
// has sent every command fills its socket; its loop, the only one, waits
// for room (OutputBlocked) and serves another client meanwhile; then every
// reply arrives, in order.
func TestLoopsSlowReader(t *testing.T) {
	h := startLoops(t, 1, false, nil)
	big := strings.Repeat("v", 256<<10)
	slow := dial(t, h.addr)
	const n = 200 // 50 MiB of replies, far more than socket buffers hold
	go func() {
		var b strings.Builder
		for i := range n {
			b.WriteString(command("ECHO", big))
			b.WriteString(command("ECHO", strconv.Itoa(i)))
		}
		io.WriteString(slow.nc, b.String())
	}()
	testwait.For(t, "the slow reader's socket to fill", func() bool { return h.blocked.Load() >= 1 })
	other := dial(t, h.addr)
	other.send(t, command("PING"))
	if got := other.reply(t); got != "+PONG" {
		t.Fatalf("another client got %q while one did not read", got)
	}
	for i := range n {
		if got := slow.reply(t); got != big {
			t.Fatalf("reply %d: %d bytes", i, len(got))
		}
		if got := slow.reply(t); got != strconv.Itoa(i) {
			t.Fatalf("reply %d = %q", i, got)
		}
	}
}

// TestLoopsPark: a command that waits parks its connection while the
// loop, the only one, serves another; its reply comes once it ends, then
// those of the commands pipelined behind it. A parked client that leaves
// ends its command's context.
func TestLoopsPark(t *testing.T) {
	h := startLoops(t, 1, false, nil)
	c := dial(t, h.addr)
	c.send(t, command("PING"), command("WAIT"), command("ECHO", "after"))
	if got := c.reply(t); got != "+PONG" {
		t.Fatalf("the reply before the wait = %q", got)
	}
	testwait.For(t, "the connection to park", func() bool { return h.loops.Waiting() == 1 })
	other := dial(t, h.addr)
	other.send(t, command("PING"))
	if got := other.reply(t); got != "+PONG" {
		t.Fatalf("another client while one waits: %q", got)
	}
	close(h.release)
	for _, want := range []string{"+WOKE", "after"} {
		if got := c.reply(t); got != want {
			t.Fatalf("reply = %q, want %q", got, want)
		}
	}
	if h.parks.Load() != 1 || h.loops.Waiting() != 0 {
		t.Errorf("parks = %d, waiting = %d; want 1, 0", h.parks.Load(), h.loops.Waiting())
	}

	h2 := startLoops(t, 1, false, nil)
	gone := dial(t, h2.addr)
	gone.send(t, command("WAIT"))
	testwait.For(t, "the connection to park", func() bool { return h2.loops.Waiting() == 1 })
	gone.nc.Close()
	testwait.For(t, "the parked client's leaving to close it", func() bool { return h2.Clients() == 0 })
	if r := h2.closedReasons(); len(r) != 1 || r[0] != ClosedByClient {
		t.Errorf("closed for %q, want [%s]", r, ClosedByClient)
	}
}

// TestLoopsClose: QUIT is answered, then the connection closes; a
// protocol error is answered -ERR and closes it; a command's panic is
// answered -ERR internal error and closes only its connection. Each is
// reported with its reason.
func TestLoopsClose(t *testing.T) {
	h := startLoops(t, 4, false, nil)
	for _, tc := range []struct {
		send, reply, reason string
	}{
		{command("QUIT"), "+OK", ClosedQuit},
		{"*1\r\n$x\r\n", "-ERR Protocol error: invalid bulk length", ClosedProtocol},
		{command("PANIC"), "-ERR internal error", ClosedPanic},
	} {
		before := len(h.closedReasons())
		c := dial(t, h.addr)
		c.send(t, tc.send)
		if got := c.reply(t); got != tc.reply {
			t.Errorf("reply = %q, want %q", got, tc.reply)
		}
		c.expectClosed(t)
		c.nc.Close() // the server's linger ends
		testwait.For(t, "the close to be reported", func() bool { return len(h.closedReasons()) > before })
		if r := h.closedReasons()[before]; r != tc.reason {
			t.Errorf("closed for %q, want %q", r, tc.reason)
		}
	}
	other := dial(t, h.addr)
	other.send(t, command("PING"))
	if got := other.reply(t); got != "+PONG" {
		t.Errorf("after the others closed: %q", got)
	}
}

// TestLoopsPush: messages pushed from other goroutines to a connection in
// push mode reach it whole and in order, after the reply queued before
// them; one that reads nothing is closed once its queue breaks the
// Host's OutputLimit, and the Host is told.
func TestLoopsPush(t *testing.T) {
	h := startLoops(t, 4, false, nil)
	h.limit.Store(&OutputLimit{Hard: 1 << 20})
	sub := dial(t, h.addr)
	sub.send(t, command("SUB"))
	if got := sub.reply(t); got != "+OK" {
		t.Fatal(got)
	}
	var link *Conn
	for _, c := range h.clientList() {
		if c.link.Pushing() {
			link = &c.link
		}
	}
	if link == nil {
		t.Fatal("no connection in push mode")
	}
	const n = 1000
	for i := range n {
		if !link.Push(func(w *resp.Writer) { w.Bulk([]byte(strconv.Itoa(i))) }) {
			t.Fatalf("push %d refused", i)
		}
	}
	for i := range n {
		if got := sub.reply(t); got != strconv.Itoa(i) {
			t.Fatalf("push %d = %q", i, got)
		}
	}
	// Not read: once the socket's buffers are full, the queue grows past
	// the 1 MiB limit, and the pushes are refused from then on.
	big := []byte(strings.Repeat("p", 64<<10))
	for i := 0; link.Push(func(w *resp.Writer) { w.Bulk(big) }); i++ {
		if i == 4096 {
			t.Fatal("256 MiB pushed to a client that reads nothing, and it was not closed")
		}
	}
	testwait.For(t, "the subscriber to close", func() bool { return h.Clients() == 0 })
	if h.broken.Load() != 1 {
		t.Errorf("OutputLimitBroken told %d times, want 1", h.broken.Load())
	}
	if r := h.closedReasons(); len(r) != 1 || r[0] != ClosedOutputLimit {
		t.Errorf("closed for %q, want [%s]", r, ClosedOutputLimit)
	}
	if link.Push(func(w *resp.Writer) { w.Bulk(big) }) {
		t.Error("a push to a closed connection was queued")
	}
}

// TestLoopsTLS: a TLS client's handshake, then commands served on the
// loop, a pipeline's replies larger than the socket holds included.
func TestLoopsTLS(t *testing.T) {
	ca := testcerts.New(t)
	pair := ca.Server("server")
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	h := startLoops(t, 4, false, &tls.Config{Certificates: []tls.Certificate{cert}})
	nc, err := tls.Dial("tcp", h.addr, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(time.Minute))
	c := &client{nc: nc, br: bufio.NewReader(nc)}
	big := strings.Repeat("t", 1<<20)
	const n = 20
	go func() {
		for range n {
			io.WriteString(nc, command("ECHO", big))
		}
		io.WriteString(nc, command("PING"))
	}()
	for i := range n {
		if got := c.reply(t); got != big {
			t.Fatalf("reply %d: %d bytes", i, len(got))
		}
	}
	if got := c.reply(t); got != "+PONG" {
		t.Fatalf("PING over TLS = %q", got)
	}
}

// TestLoopsReleaseIdleBuffers: a connection quiet for queryBufferIdle
// seconds holds no query buffer (Redis's clientsCron frees it), and serves
// its next command with a new one; a busy one keeps its buffer.
func TestLoopsReleaseIdleBuffers(t *testing.T) {
	h := startLoops(t, 2, false, nil)
	quiet, busy := dial(t, h.addr), dial(t, h.addr)
	for _, c := range []*client{quiet, busy} {
		c.send(t, command("PING"))
		if got := c.reply(t); got != "+PONG" {
			t.Fatalf("PING = %q", got)
		}
	}
	held := func(c *testClient) int64 { b := c.link.Buffers(false); return b.QBuf + b.QBufFree }
	var quietLink, busyLink *testClient
	testwait.For(t, "both connections to be known", func() bool { return len(h.clientList()) == 2 })
	for _, c := range h.clientList() {
		if held(c) == 0 {
			t.Fatalf("a connection that just read a command holds no buffer")
		}
	}
	// Tell them apart: the busy one keeps sending.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				busy.send(t, command("PING"))
				busy.reply(t)
			}
		}
	}()
	testwait.For(t, "the quiet connection's buffer to be given back", func() bool {
		quietLink, busyLink = nil, nil
		for _, c := range h.clientList() {
			if held(c) == 0 {
				quietLink = c
			} else {
				busyLink = c
			}
		}
		return quietLink != nil && busyLink != nil
	})
	close(stop)
	<-done
	quiet.send(t, command("ECHO", "again"))
	if got := quiet.reply(t); got != "again" {
		t.Fatalf("ECHO after the release = %q", got)
	}
}
