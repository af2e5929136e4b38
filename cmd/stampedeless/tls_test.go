package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"math/big"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testcerts"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// clientTLS is a client configuration trusting ca and presenting pair.
func clientTLS(t *testing.T, ca *testcerts.CA, pair testcerts.Pair) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{cert}, ServerName: "localhost"}
}

// tlsPing opens a TLS connection, PINGs on it and returns it with the
// serial number of the server's certificate.
func tlsPing(t *testing.T, addr string, cfg *tls.Config) (*tls.Conn, *bufio.Reader, *big.Int) {
	t.Helper()
	nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(nc)
	ping(t, nc, br)
	return nc, br, nc.ConnectionState().PeerCertificates[0].SerialNumber
}

// ping sends PING on a connection and wants +PONG.
func ping(t *testing.T, w io.Writer, br *bufio.Reader) {
	t.Helper()
	io.WriteString(w, "PING\r\n")
	if line, err := br.ReadString('\n'); err != nil || line != "+PONG\r\n" {
		t.Fatalf("PING: %q, %v", line, err)
	}
}

// TestTLSPort: a TLS port with client certificates required serves go-redis
// and redis-cli --tls; SIGHUP loads a new certificate for new connections
// while an open connection goes on.
func TestTLSPort(t *testing.T) {
	ca := testcerts.New(t)
	server, client := ca.Server("server"), ca.Client("client")
	addr, tlsAddr := redistest.FreeAddr(t), redistest.FreeAddr(t)
	_, tlsPort, _ := net.SplitHostPort(tlsAddr)
	cmd := startBinary(t, nil, "--addr", addr, "--metrics-addr", "", "--tls-port", tlsPort,
		"--tls-cert-file", server.CertFile, "--tls-key-file", server.KeyFile, "--tls-ca-cert-file", ca.File)

	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: clientTLS(t, ca, client)})
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET over TLS: %v", err)
	}
	plain := redis.NewClient(&redis.Options{Addr: addr})
	defer plain.Close()
	if v := plain.Get(ctx, "k").Val(); v != "v" {
		t.Errorf("GET over the plain port = %q", v)
	}
	cli := exec.Command(redistest.Binary(t, "redis-cli"), "-h", "127.0.0.1", "-p", tlsPort, "--tls", "--cacert", ca.File,
		"--cert", client.CertFile, "--key", client.KeyFile, "GET", "k")
	if out, err := cli.CombinedOutput(); err != nil || string(out) != "v\n" {
		t.Errorf("redis-cli --tls GET k: %q, %v", out, err)
	}
	noCert := &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}
	if nc, err := tls.Dial("tcp", tlsAddr, noCert); err == nil {
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = io.WriteString(nc, "PING\r\n")
		if err == nil {
			_, err = bufio.NewReader(nc).ReadString('\n')
		}
		nc.Close()
		if err == nil {
			t.Error("a client without a certificate was served")
		}
	}

	open, openBr, before := tlsPing(t, tlsAddr, clientTLS(t, ca, client))
	if before.Cmp(server.Serial) != 0 {
		t.Fatalf("server certificate serial %v, want %v", before, server.Serial)
	}
	renewed := ca.Server("server") // the same files, a new certificate
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "new connections to get the reloaded certificate", func() bool {
		nc, _, serial := tlsPing(t, tlsAddr, clientTLS(t, ca, client))
		nc.Close()
		return serial.Cmp(renewed.Serial) == 0
	})
	ping(t, open, openBr)
	if got := open.ConnectionState().PeerCertificates[0].SerialNumber; got.Cmp(before) != 0 {
		t.Errorf("the open connection's certificate changed to %v", got)
	}
}

// TestTLSAuthClientsNo: with --tls-auth-clients no, no CA is needed and a
// client without a certificate is served; without it, the CA is required.
func TestTLSAuthClientsNo(t *testing.T) {
	ca := testcerts.New(t)
	server := ca.Server("server")
	tlsAddr := redistest.FreeAddr(t)
	startBinary(t, nil, "--addr", "", "--metrics-addr", "", "--tls-port", tlsAddr,
		"--tls-cert-file", server.CertFile, "--tls-key-file", server.KeyFile, "--tls-auth-clients", "no")
	tlsPing(t, tlsAddr, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-port", "1"}, "--tls-port needs --tls-cert-file and --tls-key-file"},
		{[]string{"--tls-port", "1", "--tls-cert-file", server.CertFile, "--tls-key-file", server.KeyFile},
			"--tls-ca-cert-file must be given to verify client certificates, or --tls-auth-clients must be no"},
		{[]string{"--tls-cert-file", server.CertFile}, "--tls-cert-file and --tls-key-file go together"},
		{[]string{"--tls-ca-cert-file", server.KeyFile}, "no PEM certificate in it"},
		{[]string{"--tls-auth-clients", "maybe", "--tls-ca-cert-file", ca.File}, "--tls-auth-clients: want yes, no or optional"},
	} {
		out, err := exec.Command(binary, append([]string{"--metrics-addr", ""}, tc.args...)...).CombinedOutput()
		if exitStatus(err) != 1 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v: %v, %s; want exit status 1 and %q", tc.args, err, out, tc.want)
		}
	}
}

// TestSharedRedisOverTLS: --redis rediss://user:password@... reaches a
// redis-server that serves only TLS with client certificates and an ACL
// user: a write on the replica is written through to it.
func TestSharedRedisOverTLS(t *testing.T) {
	ca := testcerts.New(t)
	redisCert, client := ca.Server("redis"), ca.Client("client")
	_, redisTLSPort, _ := net.SplitHostPort(redistest.FreeAddr(t))
	redistest.Start(t, "--tls-port", redisTLSPort, "--tls-cert-file", redisCert.CertFile, "--tls-key-file", redisCert.KeyFile,
		"--tls-ca-cert-file", ca.File, "--tls-auth-clients", "yes", "--user", "alice", "on", ">s3cret", "~*", "&*", "+@all",
		"--user", "default", "off")
	addr := redistest.FreeAddr(t)
	startBinary(t, nil, "--addr", addr, "--metrics-addr", "", "--redis", "rediss://alice:s3cret@127.0.0.1:"+redisTLSPort,
		"--tls-ca-cert-file", ca.File, "--tls-cert-file", client.CertFile, "--tls-key-file", client.KeyFile)

	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if err := c.Set(ctx, "k", "through tls", 0).Err(); err != nil {
		t.Fatal(err)
	}
	shared := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + redisTLSPort, Username: "alice", Password: "s3cret",
		TLSConfig: clientTLS(t, ca, client)})
	defer shared.Close()
	if v, err := shared.HGet(ctx, "stampedeless:val:{k}", "v").Result(); err != nil || v != "through tls" {
		t.Errorf("the shared Redis has %q, %v for k", v, err)
	}
	if info := c.Info(ctx, "cluster").Val(); !strings.Contains(info, "cluster_redis_up:1") {
		t.Errorf("INFO cluster:\n%s", info)
	}
}
