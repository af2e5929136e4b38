package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/metrics"
)

// readUntilClosed reads what a server sends until it closes the connection.
func readUntilClosed(t testing.TB, nc net.Conn) string {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(nc)
	nc.Close()
	if err != nil {
		t.Fatalf("reading until the server closed: %v (read %q)", err, b)
	}
	return string(b)
}

// TestProtectedMode: with no password, a client from outside loopback gets
// -DENIED and is closed; loopback clients (all of 127.0.0.0/8, as Redis
// 7.2 counts them) are served, and so is the outside client once a password
// is set or protected mode is off.
func TestProtectedMode(t *testing.T) {
	ext := redistest.ExternalIP(t)
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := metrics.New()
	ts := serveListener(t, ln, Options{ProtectedMode: true, Metrics: reg})

	if got := readUntilClosed(t, redistest.DialFrom(t, ext, ext, ts.addr)); got != deniedProtectedMode {
		t.Fatalf("a client from %s read %q, want the -DENIED reply", ext, got)
	}
	local := wrapRaw(t, redistest.DialFrom(t, net.IPv4(127, 0, 0, 2), net.IPv4(127, 0, 0, 1), ts.addr))
	if got := local.do("PING"); got != "+PONG" {
		t.Fatalf("a client from 127.0.0.2: %s", got)
	}
	if got := local.do("CONFIG", "GET", "protected-mode"); got != `["protected-mode" "yes"]` {
		t.Errorf("CONFIG GET protected-mode = %s", got)
	}
	if info := local.do("INFO", "stats"); !strings.Contains(info, `rejected_connections:1\r\n`) {
		t.Errorf("INFO stats does not count the refusal:\n%s", info)
	}
	if m := metricsText(t, reg); !strings.Contains(m, "stampedeless_connections_denied_total 1") {
		t.Errorf("/metrics lacks the refusal")
	}

	// With a password, the outside client is served (and must AUTH).
	if got := local.do("CONFIG", "SET", "requirepass", "pw"); got != "+OK" {
		t.Fatal(got)
	}
	c := redis.NewClient(&redis.Options{Addr: ts.addr, Password: "pw", Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return redistest.DialFrom(t, ext, ext, addr), nil
	}})
	defer c.Close()
	if err := c.Set(context.Background(), "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET from outside with a password: %v", err)
	}
	// Without one and with protected mode off, too.
	for _, args := range [][]string{{"CONFIG", "SET", "requirepass", ""}, {"CONFIG", "SET", "protected-mode", "no"}} {
		if got := local.do(args...); got != "+OK" {
			t.Fatalf("%v: %s", args, got)
		}
	}
	outside := wrapRaw(t, redistest.DialFrom(t, ext, ext, ts.addr))
	if got := outside.do("GET", "k"); got != `"v"` {
		t.Errorf("GET from outside with protected mode off = %s", got)
	}
	if got := local.do("CONFIG", "SET", "protected-mode", "maybe"); got != "-ERR CONFIG SET failed (possibly related to argument 'protected-mode') - argument must be 'yes' or 'no'" {
		t.Errorf("CONFIG SET protected-mode maybe = %s", got)
	}
}

// TestProtectedModeReplyIsRedis: the -DENIED text is redis-server's own,
// word for word, but for the phrases that name Redis's configuration.
func TestProtectedModeReplyIsRedis(t *testing.T) {
	ext := redistest.ExternalIP(t)
	rs := redistest.Start(t, "--bind", "0.0.0.0", "--protected-mode", "yes")
	// Redis 7.2 (whose text stampedeless sends) corrected 7.0's "Setup a an".
	redisText := strings.Replace(readUntilClosed(t, redistest.DialFrom(t, ext, ext, rs.Addr())), "4) Setup a an ", "4) Set up an ", 1)
	back := make([]string, len(protectedModeAdaptations))
	for i := 0; i < len(back); i += 2 {
		back[i], back[i+1] = protectedModeAdaptations[i+1], protectedModeAdaptations[i]
	}
	if got := strings.NewReplacer(back...).Replace(deniedProtectedMode); got != redisText {
		t.Errorf("the -DENIED reply, adaptations undone:\n%q\nredis-server's:\n%q", got, redisText)
	}
	if deniedProtectedMode == redisText {
		t.Error("no adaptation applied")
	}
}

// TestUnixSocket: a unix socket listener serves like TCP, counts as local
// for protected mode and the loader commands, and shows as Redis shows it
// in CLIENT LIST.
func TestUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	serveListener(t, ln, Options{ProtectedMode: true})
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: path})
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET over the unix socket = %q, %v", v, err)
	}
	if info := c.ClientInfo(ctx).Val(); info == nil || info.Addr != "/unixsocket:0" || info.LAddr != "/unixsocket:0" {
		t.Errorf("CLIENT INFO addr = %+v, want /unixsocket:0 as Redis", info)
	}
	if err := c.Do(ctx, "LOADER.REGISTER", "u:", "http://127.0.0.1:1/{key}").Err(); err != nil {
		t.Errorf("LOADER.REGISTER over the unix socket: %v", err)
	}
}

// metricsText is the registry's /metrics page.
func metricsText(t testing.TB, reg *metrics.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	reg.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// docs/security.md quotes the -DENIED reply; it must be the one sent.
func TestProtectedModeReplyInDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(deniedProtectedMode, "\r\n"); !strings.Contains(string(doc), "\n"+want+"\n") {
		t.Errorf("docs/security.md does not quote the -DENIED reply:\n%s", want)
	}
}
