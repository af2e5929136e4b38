// Package tlsfiles keeps the TLS settings read from certificate files
// (--tls-cert-file, --tls-key-file, --tls-ca-cert-file) and reads them
// again on Reload (SIGHUP). The tls.Configs it hands out look the files'
// contents up at each handshake, so new connections get what was last
// loaded while open connections go on with what they negotiated.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
)

// Who must present a client certificate (--tls-auth-clients), as Redis's
// tls-auth-clients.
const (
	AuthClientsYes      = "yes"      // required, and verified against the CA
	AuthClientsNo       = "no"       // not asked for
	AuthClientsOptional = "optional" // verified against the CA if presented
)

// Files names the files to load. CertFile and KeyFile come together or
// not at all.
type Files struct {
	CertFile, KeyFile string
	// CAFile verifies client certificates, and the shared Redis's
	// certificate in Client.
	CAFile string
	// AuthClients is one of the AuthClients constants; empty means yes.
	AuthClients string
}

// Config is what Files held when they were last loaded. It is safe for
// concurrent use.
type Config struct {
	files Files
	auth  tls.ClientAuthType
	cur   atomic.Pointer[loaded]
}

// loaded is one reading of the files.
type loaded struct {
	cert   *tls.Certificate // nil without CertFile
	pool   *x509.CertPool   // nil without CAFile
	server *tls.Config
}

// Load reads the files.
func Load(f Files) (*Config, error) {
	c := &Config{files: f}
	switch f.AuthClients {
	case AuthClientsYes, "":
		c.auth = tls.RequireAndVerifyClientCert
	case AuthClientsOptional:
		c.auth = tls.VerifyClientCertIfGiven
	case AuthClientsNo:
		c.auth = tls.NoClientCert
	default:
		return nil, fmt.Errorf("--tls-auth-clients: want yes, no or optional, got %q", f.AuthClients)
	}
	if (f.CertFile == "") != (f.KeyFile == "") {
		return nil, errors.New("--tls-cert-file and --tls-key-file go together")
	}
	if c.auth != tls.NoClientCert && f.CertFile != "" && f.CAFile == "" {
		return nil, errors.New("--tls-ca-cert-file must be given to verify client certificates, or --tls-auth-clients must be no")
	}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// Reload reads the files again. On an error nothing changes: connections
// go on getting what was loaded before.
func (c *Config) Reload() error {
	var l loaded
	if c.files.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.files.CertFile, c.files.KeyFile)
		if err != nil {
			return fmt.Errorf("--tls-cert-file %s, --tls-key-file %s: %w", c.files.CertFile, c.files.KeyFile, err)
		}
		l.cert = &cert
	}
	if c.files.CAFile != "" {
		pem, err := os.ReadFile(c.files.CAFile)
		if err != nil {
			return fmt.Errorf("--tls-ca-cert-file: %w", err)
		}
		l.pool = x509.NewCertPool()
		if !l.pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("--tls-ca-cert-file %s: no PEM certificate in it", c.files.CAFile)
		}
	}
	l.server = &tls.Config{
		MinVersion: tls.VersionTLS12, // Redis's default tls-protocols
		ClientAuth: c.auth,
		ClientCAs:  l.pool,
	}
	if l.cert != nil {
		l.server.Certificates = []tls.Certificate{*l.cert}
	}
	c.cur.Store(&l)
	return nil
}

// Server returns the configuration of a TLS listener: each handshake
// takes the certificate, CA and client authentication last loaded.
func (c *Config) Server() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return c.cur.Load().server, nil
		},
	}
}

// Client completes base, a client configuration such as a rediss:// URL
// gives, as Redis configures its own outgoing TLS: the CA file, if any,
// verifies the server instead of the system's roots, and the certificate
// file, if any, is the client certificate (the one last loaded at each
// handshake). The CA is read once, here.
func (c *Config) Client(base *tls.Config) *tls.Config {
	cfg := base.Clone()
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	l := c.cur.Load()
	if l.pool != nil {
		cfg.RootCAs = l.pool
	}
	if l.cert != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return c.cur.Load().cert, nil
		}
	}
	return cfg
}
