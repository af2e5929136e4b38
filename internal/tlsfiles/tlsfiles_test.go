package tlsfiles

import (
	"crypto/tls"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/internal/testcerts"
)

// serial handshakes with a TLS listener using cfg and returns the serial
// number of the certificate the server presented.
func serial(t *testing.T, addr string, cfg *tls.Config) *big.Int {
	t.Helper()
	nc, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	return nc.ConnectionState().PeerCertificates[0].SerialNumber
}

// A failed reload changes nothing; a good one is what the next handshake
// gets.
func TestReload(t *testing.T) {
	ca := testcerts.New(t)
	server, client := ca.Server("server"), ca.Client("client")
	files, err := Load(Files{CertFile: server.CertFile, KeyFile: server.KeyFile, CAFile: ca.File, AuthClients: AuthClientsOptional})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", files.Server())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				nc.(*tls.Conn).Handshake()
				nc.Close()
			}()
		}
	}()
	addr := ln.Addr().String()
	// The client side as a rediss:// --redis gets it: trusting the CA file
	// and presenting the certificate file.
	clientFiles, err := Load(Files{CertFile: client.CertFile, KeyFile: client.KeyFile, CAFile: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientFiles.Client(&tls.Config{ServerName: "localhost"})
	if got := serial(t, addr, cfg); got.Cmp(server.Serial) != 0 {
		t.Fatalf("serial %v, want %v", got, server.Serial)
	}

	if err := os.WriteFile(server.CertFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := files.Reload(); err == nil || !strings.Contains(err.Error(), server.CertFile) {
		t.Errorf("Reload of a broken certificate = %v", err)
	}
	if got := serial(t, addr, cfg); got.Cmp(server.Serial) != 0 {
		t.Errorf("after a failed reload, serial %v, want the old %v", got, server.Serial)
	}
	renewed := ca.Server("server")
	if err := files.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := serial(t, addr, cfg); got.Cmp(renewed.Serial) != 0 {
		t.Errorf("after a reload, serial %v, want %v", got, renewed.Serial)
	}
}

func TestLoadRefuses(t *testing.T) {
	ca := testcerts.New(t)
	server := ca.Server("server")
	for _, tc := range []struct {
		files Files
		want  string
	}{
		{Files{CertFile: server.CertFile, KeyFile: server.KeyFile}, "--tls-ca-cert-file must be given"},
		{Files{CertFile: server.CertFile}, "go together"},
		{Files{CAFile: ca.File, AuthClients: "sometimes"}, "want yes, no or optional"},
		{Files{CertFile: server.KeyFile, KeyFile: server.CertFile, AuthClients: AuthClientsNo}, "--tls-cert-file"},
	} {
		if _, err := Load(tc.files); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%+v) = %v, want %q", tc.files, err, tc.want)
		}
	}
	if _, err := Load(Files{CertFile: server.CertFile, KeyFile: server.KeyFile, AuthClients: AuthClientsNo}); err != nil {
		t.Errorf("without client authentication no CA is needed: %v", err)
	}
}
