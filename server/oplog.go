package server

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
)

// Kinds of refused clients the server logs, each rate-limited on its own
// (Server.refusals): a scan or a misconfigured client retrying in a loop
// costs one line per interval, which counts the refusals.
const (
	refusedTLS       = "tls"
	refusedAuth      = "auth"
	refusedProtected = "protected-mode"
)

// logRefused logs a refused client of kind, rate-limited per kind.
func (s *Server) logRefused(kind, msg string, attrs ...any) {
	n, ok := s.refusals.Allow(kind)
	if !ok {
		return
	}
	s.log.Warn(msg, append(attrs, "refusals", n)...)
}

// noteReadError logs a TLS connection whose handshake failed (a plain
// client on the TLS port, an untrusted certificate), which the client
// alone would otherwise know of. A client that leaves before sending
// anything is not a failure.
func (s *Server) noteReadError(c *Conn, err error) {
	tc, ok := c.nc.(*tls.Conn)
	if !ok || tc.ConnectionState().HandshakeComplete || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return
	}
	s.logRefused(refusedTLS, "TLS handshake failed", "client", c.remote.String(), "err", err.Error())
}

// logLoaderChange logs a LOADER.REGISTER or UNREGISTER that changed the
// loaders, with who made it. The URL's password, if any, is masked; header
// values are never logged.
func (c *Conn) logLoaderChange(msg, prefix, rawURL string) {
	attrs := []any{"prefix", prefix}
	if rawURL != "" {
		attrs = append(attrs, "url", redactURL(rawURL))
	}
	c.srv.log.Info(msg, append(attrs, "user", c.user.Load().Name(), "client", c.remote.String())...)
}

// redactURL masks the password of a URL's user information, as
// url.URL.Redacted does, but leaves the rest as written: a loader's URL
// has {key}, which Redacted would escape.
func redactURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return raw
	}
	name, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return raw
	}
	return scheme + "://" + name + ":xxxxx" + rest[at:]
}
