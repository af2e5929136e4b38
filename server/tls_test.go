package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/testcerts"
	"github.com/stampedeless/stampedeless/internal/tlsfiles"
)

// TestServeTLS: go-redis with a client certificate is served over TLS, by
// a goroutine even when the server has an event loop; a client without a
// certificate fails the handshake.
func TestServeTLS(t *testing.T) {
	ca := testcerts.New(t)
	server, client := ca.Server("server"), ca.Client("client")
	files, err := tlsfiles.Load(tlsfiles.Files{CertFile: server.CertFile, KeyFile: server.KeyFile, CAFile: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	plain := startServer(t, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go plain.ServeTLS(ln, files.Server())

	cert, err := tls.LoadX509KeyPair(client.CertFile, client.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), Protocol: 2,
		TLSConfig: &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{cert}, ServerName: "localhost"}})
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

	noCert := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), Protocol: 2, MaxRetries: -1,
		TLSConfig: &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}})
	defer noCert.Close()
	err = noCert.Ping(ctx).Err()
	var alert tls.AlertError
	if err == nil || !errors.As(err, &alert) && !strings.Contains(err.Error(), "certificate") {
		t.Errorf("PING without a client certificate: %v, want a TLS alert", err)
	}
}
