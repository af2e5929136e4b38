package server

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/internal/logtest"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testcerts"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/internal/tlsfiles"
)

// TestAuthFailuresLoggedRateLimited: a wrong password is logged with the
// user and the client, and 1,000 of them are one line.
func TestAuthFailuresLoggedRateLimited(t *testing.T) {
	var logs logtest.Buffer
	ts := startServer(t, Options{RequirePass: "pw", Logger: logs.JSON(slog.LevelInfo)})
	r := dialRaw(t, ts.addr)
	for range 1000 {
		if got := r.do("AUTH", "wrong"); !strings.HasPrefix(got, "-WRONGPASS") {
			t.Fatalf("AUTH wrong = %s", got)
		}
	}
	lines := logs.With(t, "authentication failed")
	if len(lines) != 1 {
		t.Fatalf("1,000 failed AUTHs logged %d lines, want 1", len(lines))
	}
	if l := lines[0]; l["level"] != "WARN" || l["user"] != "default" || !strings.HasPrefix(fmt.Sprint(l["client"]), "127.0.0.1:") {
		t.Errorf("the line: %v; want WARN, user default and the client's address", l)
	}
}

// TestLoaderChangesLogged: LOADER.REGISTER and UNREGISTER are logged with
// the prefix, the URL without its password, the user and the client; a
// header's value is not logged, and neither is an UNREGISTER that changed
// nothing.
func TestLoaderChangesLogged(t *testing.T) {
	var logs logtest.Buffer
	ts := startServer(t, Options{Logger: logs.JSON(slog.LevelInfo)})
	r := dialRaw(t, ts.addr)
	if got := r.do("LOADER.REGISTER", "demo:", "http://app:s3cret@127.0.0.1:8081/{key}", "HEADER", "Authorization", "Bearer t0ken"); got != "+OK" {
		t.Fatal(got)
	}
	if got := r.do("LOADER.UNREGISTER", "demo:"); got != ":1" {
		t.Fatal(got)
	}
	r.do("LOADER.UNREGISTER", "demo:")
	reg, unreg := logs.With(t, "loader registered"), logs.With(t, "loader unregistered")
	if len(reg) != 1 || reg[0]["prefix"] != "demo:" || reg[0]["url"] != "http://app:xxxxx@127.0.0.1:8081/{key}" ||
		reg[0]["user"] != "default" || !strings.HasPrefix(fmt.Sprint(reg[0]["client"]), "127.0.0.1:") {
		t.Errorf("registration lines %v", reg)
	}
	if len(unreg) != 1 || unreg[0]["prefix"] != "demo:" || unreg[0]["user"] != "default" {
		t.Errorf("unregistration lines %v; want one", unreg)
	}
	all := logs.String()
	if strings.Contains(all, "t0ken") || strings.Contains(all, "s3cret") {
		t.Errorf("a secret reached the log:\n%s", all)
	}
}

// TestTLSHandshakeFailureLogged: a plain-text client on the TLS port is
// logged as a failed handshake, with its address.
func TestTLSHandshakeFailureLogged(t *testing.T) {
	ca := testcerts.New(t)
	server := ca.Server("server")
	files, err := tlsfiles.Load(tlsfiles.Files{CertFile: server.CertFile, KeyFile: server.KeyFile, CAFile: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	var logs logtest.Buffer
	ts := startServer(t, Options{Logger: logs.JSON(slog.LevelInfo)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go ts.ServeTLS(ln, files.Server())
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	nc.Write([]byte("PING\r\n"))
	readUntilClosed(t, nc)
	testwait.For(t, "the failed handshake's log line", func() bool { return len(logs.With(t, "TLS handshake failed")) > 0 })
	if l := logs.With(t, "TLS handshake failed")[0]; !strings.Contains(fmt.Sprint(l["err"]), "tls") || l["client"] == nil {
		t.Errorf("the line: %v; want the TLS error and the client", l)
	}
	// A TLS client that completes its handshake is not logged.
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
	if err == nil {
		c.Close()
	}
}

// TestProtectedModeRefusalLogged: a client protected mode refuses is
// logged with its address.
func TestProtectedModeRefusalLogged(t *testing.T) {
	ext := redistest.ExternalIP(t)
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs logtest.Buffer
	ts := serveListener(t, ln, Options{ProtectedMode: true, Logger: logs.JSON(slog.LevelInfo)})
	readUntilClosed(t, redistest.DialFrom(t, ext, ext, ts.addr))
	testwait.For(t, "the refusal's log line", func() bool { return len(logs.With(t, "protected mode refused")) > 0 })
	if l := logs.With(t, "protected mode refused")[0]; !strings.HasPrefix(fmt.Sprint(l["client"]), ext.String()+":") {
		t.Errorf("the line: %v; want the client %s", l, ext)
	}
}
