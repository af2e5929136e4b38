package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/testcerts"
	"github.com/stampedeless/stampedeless/internal/tlsfiles"
)

// startTLSServer starts a server for the test, as startServer does, and
// serves TLS too, requiring client certificates: it returns the TLS
// port's address and a client's configuration with a certificate.
func startTLSServer(t *testing.T, opts Options) (ts *testServer, tlsAddr string, client *tls.Config) {
	t.Helper()
	ca := testcerts.New(t)
	server, cc := ca.Server("server"), ca.Client("client")
	files, err := tlsfiles.Load(tlsfiles.Files{CertFile: server.CertFile, KeyFile: server.KeyFile, CAFile: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go ts.ServeTLS(ln, files.Server())
	cert, err := tls.LoadX509KeyPair(cc.CertFile, cc.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return ts, ln.Addr().String(), &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{cert}, ServerName: "localhost"}
}

// TestServeTLS: go-redis with a client certificate is served over TLS, on
// the event loops as plain clients are; a client without a certificate
// fails the handshake.
func TestServeTLS(t *testing.T) {
	plain, tlsAddr, clientTLS := startTLSServer(t, Options{})
	c := redis.NewClient(&redis.Options{Addr: tlsAddr, Protocol: 2, TLSConfig: clientTLS})
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "over tls", 0).Err(); err != nil {
		t.Fatalf("SET over TLS: %v", err)
	}
	if v := plain.client(t).Get(ctx, "k").Val(); v != "over tls" {
		t.Errorf("GET over plain TCP = %q", v)
	}
	info := c.Info(ctx, "clients").Val()
	if want := "connected_clients:2"; !strings.Contains(info, want) {
		t.Errorf("INFO clients lacks %s:\n%s", want, info)
	}
	// CONFIG GET port is the plain port, not the TLS one.
	if _, want, _ := net.SplitHostPort(plain.addr); c.ConfigGet(ctx, "port").Val()["port"] != want {
		t.Errorf("CONFIG GET port = %v, want the plain port %s", c.ConfigGet(ctx, "port").Val(), want)
	}

	noCertTLS := clientTLS.Clone()
	noCertTLS.Certificates = nil
	noCert := redis.NewClient(&redis.Options{Addr: tlsAddr, Protocol: 2, MaxRetries: -1, TLSConfig: noCertTLS})
	defer noCert.Close()
	err := noCert.Ping(ctx).Err()
	var alert tls.AlertError
	if err == nil || !errors.As(err, &alert) && !strings.Contains(err.Error(), "certificate") {
		t.Errorf("PING without a client certificate: %v, want a TLS alert", err)
	}
}

// TestTLSSlowReaderAndWaits: over TLS, a client that pipelines far more
// replies than the socket holds, reading none until it has sent them all,
// gets every one in order (the loop keeps the ciphertext the socket did
// not take and sends it as the socket drains), and a command that waits
// (BLPOP, parked off the loop) is answered over the same TLS stream.
func TestTLSSlowReaderAndWaits(t *testing.T) {
	ts, tlsAddr, clientTLS := startTLSServer(t, Options{EventLoops: 1})
	dial := func() *tls.Conn {
		c, err := tls.Dial("tcp", tlsAddr, clientTLS)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	big := strings.Repeat("v", 512<<10)
	if got := dialRaw(t, ts.addr).do("SET", "big", big); got != "+OK" {
		t.Fatal(got)
	}
	slow := dial()
	const n = 60 // 30 MiB of replies
	sent := make(chan error, 1)
	go func() {
		var b strings.Builder
		for i := range n {
			b.WriteString(encodeCommand("GET", "big"))
			b.WriteString(encodeCommand("ECHO", strconv.Itoa(i)))
		}
		_, err := slow.Write([]byte(b.String()))
		sent <- err
	}()
	// Another TLS client waits on the loop's other side meanwhile.
	waiter := dial()
	if _, err := waiter.Write([]byte(encodeCommand("BLPOP", "q", "0"))); err != nil {
		t.Fatal(err)
	}
	if got := dialRaw(t, ts.addr).do("RPUSH", "q", "x"); got != ":1" {
		t.Fatal(got)
	}
	waiter.SetReadDeadline(time.Now().Add(time.Minute))
	if got, err := readReply(bufio.NewReader(waiter)); err != nil || got != `["q" "x"]` {
		t.Fatalf("BLPOP over TLS = %q, %v", got, err)
	}
	br := bufio.NewReaderSize(slow, 1<<20)
	slow.SetReadDeadline(time.Now().Add(time.Minute))
	for i := range n {
		if v, err := readReply(br); err != nil || v != strconv.Quote(big) {
			t.Fatalf("reply %d to GET over TLS: %d bytes, %v", i, len(v), err)
		}
		if e, err := readReply(br); err != nil || e != strconv.Quote(strconv.Itoa(i)) {
			t.Fatalf("reply %d to ECHO over TLS: %q, %v", i, e, err)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}

// TestShutdownCutsHandshakes: past Shutdown's deadline, a client that
// connected to the TLS port and sent nothing is closed at once, and
// Shutdown returns, instead of both waiting out the handshake's own
// timeout.
func TestShutdownCutsHandshakes(t *testing.T) {
	srv, tlsAddr, _ := startTLSServer(t, Options{})
	silent, err := net.Dial("tcp", tlsAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	for srv.connectedClients() == 0 { // accepted, shaking hands
		time.Sleep(time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(ctx) }()
	// Well inside the handshake's timeout (netloop's, 10s): without the
	// cut both wait for it.
	const halfHandshake = 5 * time.Second
	silent.SetReadDeadline(time.Now().Add(halfHandshake))
	if n, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the silent client read %d bytes, %v; want the server to close it", n, err)
	}
	select {
	case err := <-shut:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown = %v, want its deadline's error", err)
		}
	case <-time.After(halfHandshake):
		t.Fatal("Shutdown still waits for the handshake")
	}
}
