package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/commands/keyspace"
	"github.com/stampedeless/stampedeless/commands/readthrough"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/radar"
	"github.com/stampedeless/stampedeless/swr"
)

// testServer is a real server on an ephemeral loopback port.
type testServer struct {
	*Server
	addr  string
	store *engine.Store
	// fill is what its read-through family serves with.
	fill readthrough.Options
	done chan error
}

// startServer starts a server for the test; opts.Store may be nil. Its
// read-through family serves with rt, if given (withReadThrough). It is
// shut down when the test ends.
func startServer(t testing.TB, opts Options, rt ...readthrough.Options) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveListener(t, ln, opts, rt...)
}

// serveListener starts a server for the test on ln, as startServer does.
func serveListener(t testing.TB, ln net.Listener, opts Options, rt ...readthrough.Options) *testServer {
	t.Helper()
	var fill readthrough.Options
	if len(rt) > 0 {
		fill = rt[0]
	}
	opts, fill = withReadThrough(t, opts, fill)
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: srv, addr: ln.Addr().String(), store: opts.Store, fill: fill, done: make(chan error, 1)}
	go func() { ts.done <- ts.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ts.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-ts.done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return ts
}

// withDefaults completes opts as cmd/stampedeless wires a server: a store,
// metrics, a quiet logger, and the families' commands, the read-through
// family's with a loader registry and its Filler.
func withDefaults(t testing.TB, opts Options) Options {
	opts, _ = withReadThrough(t, opts, readthrough.Options{})
	return opts
}

// withReadThrough is withDefaults with the read-through family serving
// with rt, whose Loaders and Filler it makes when nil.
func withReadThrough(t testing.TB, opts Options, rt readthrough.Options) (Options, readthrough.Options) {
	t.Helper()
	if opts.Store == nil {
		// 64 MiB: room for every test.
		store, err := engine.New(engine.Options{MaxMemory: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(store.Close)
		opts.Store = store
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if rt.Loaders == nil {
		rt.Loaders = loader.NewRegistry(loader.Options{MaxValueSize: opts.MaxValueSize})
	}
	if rt.Metrics == nil {
		rt.Metrics = opts.Metrics.Fill
	}
	if rt.Logger == nil {
		rt.Logger = opts.Logger
	}
	if rt.Filler == nil {
		if rt.Radar == nil {
			rt.Radar = radar.New(radar.Options{})
		}
		rt.Filler = swr.New(swr.Options{Store: opts.Store, Loaders: rt.Loaders, Metrics: rt.Metrics, Logger: opts.Logger,
			Radar: rt.Radar})
	}
	if opts.Commands == nil {
		opts.Commands = append(keyspace.Commands(), readthrough.Commands(rt)...)
		opts.InfoSections = readthrough.InfoSections(rt)
	}
	return opts, rt
}

// client returns a go-redis client in its default configuration, which
// sends HELLO 3 and CLIENT SETINFO on connect and speaks RESP3.
func (ts *testServer) client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: ts.addr})
	t.Cleanup(func() { c.Close() })
	return c
}

// clientRESP2 returns a go-redis client that speaks RESP2 from the start.
func (ts *testServer) clientRESP2(t testing.TB, mutate ...func(*redis.Options)) *redis.Client {
	t.Helper()
	o := &redis.Options{Addr: ts.addr, Protocol: 2}
	for _, m := range mutate {
		m(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// rawConn is a raw TCP connection for speaking and reading RESP by hand.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return wrapRaw(t, nc)
}

// wrapRaw makes nc a rawConn, closed when the test ends.
func wrapRaw(t testing.TB, nc net.Conn) *rawConn {
	t.Cleanup(func() { nc.Close() })
	// So failing tests don't just hang.
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.nc, s); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// do sends a command as a multibulk and returns its reply rendered by render.
func (r *rawConn) do(args ...string) string {
	r.t.Helper()
	r.send(encodeCommand(args...))
	return r.reply()
}

func encodeCommand(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// reply reads one RESP2 reply and renders it compactly: +OK, -ERR ...,
// :1, "bulk", (nil), [a b ...].
func (r *rawConn) reply() string {
	r.t.Helper()
	s, err := readReply(r.br)
	if err != nil {
		r.t.Fatalf("read reply: %v", err)
	}
	return s
}

func readReply(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("empty reply line")
	}
	switch line[0] {
	case '+', '-', ':':
		return line, nil
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", err
		}
		if n < 0 {
			return "(nil)", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return "", err
		}
		return strconv.Quote(string(buf[:n])), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", err
		}
		if n < 0 {
			return "(nil array)", nil
		}
		parts := make([]string, n)
		for i := range parts {
			if parts[i], err = readReply(br); err != nil {
				return "", err
			}
		}
		return "[" + strings.Join(parts, " ") + "]", nil
	}
	return "", fmt.Errorf("bad reply line %q", line)
}

// expectClosed checks that the server closed the connection.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 1)
	if n, err := r.br.Read(buf); err == nil {
		r.t.Fatalf("connection still open: read %q", buf[:n])
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		r.t.Fatal("connection still open after 10s")
	}
}

// startRedis starts a real redis-server for the test and returns its
// address.
func startRedis(t testing.TB) string {
	t.Helper()
	return redistest.Start(t).Addr()
}

// servedSpecs are the commands a server wired as withDefaults wires it
// serves: its own and the families'.
func servedSpecs() []*commands.Spec {
	return append(append(commandTable(), keyspace.Commands()...), readthrough.Commands(readthrough.Options{})...)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
