// Package testcerts makes a certificate authority and certificates signed by
// it for tests of TLS: a server certificate for localhost, 127.0.0.1 and
// ::1, and a client certificate, written as PEM files.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority that signs certificates for one test.
type CA struct {
	t    testing.TB
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// File is the CA certificate's PEM file.
	File string
	// Pool holds the CA certificate.
	Pool *x509.CertPool
}

// Pair is a certificate and its key, as PEM files.
type Pair struct {
	CertFile, KeyFile string
	// Serial tells certificates apart.
	Serial *big.Int
}

// New makes a CA whose files are in a temporary directory of t.
func New(t testing.TB) *CA {
	t.Helper()
	ca := &CA{t: t, dir: t.TempDir()}
	ca.key = newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "stampedeless test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &ca.key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	if ca.cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	ca.File = filepath.Join(ca.dir, "ca.crt")
	writePEM(t, ca.File, "CERTIFICATE", der)
	ca.Pool = x509.NewCertPool()
	ca.Pool.AddCert(ca.cert)
	return ca
}

// Server issues a server certificate for localhost, 127.0.0.1 and ::1,
// written to name.crt and name.key (replacing files of that name).
func (ca *CA) Server(name string) Pair {
	return ca.issue(name, x509.ExtKeyUsageServerAuth)
}

// Client issues a client certificate, written to name.crt and name.key.
func (ca *CA) Client(name string) Pair {
	return ca.issue(name, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issue(name string, usage x509.ExtKeyUsage) Pair {
	t := ca.t
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := Pair{CertFile: filepath.Join(ca.dir, name+".crt"), KeyFile: filepath.Join(ca.dir, name+".key"), Serial: tmpl.SerialNumber}
	writePEM(t, p.CertFile, "CERTIFICATE", der)
	writePEM(t, p.KeyFile, "PRIVATE KEY", keyDER)
	return p
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// writePEM replaces path through a rename, so a reader never sees half a
// file.
func writePEM(t testing.TB, path, kind string, der []byte) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
