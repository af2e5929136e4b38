package server

import (
	"errors"
	"io"
	"net"
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

// noteHandshakeError logs a TLS connection whose handshake failed (a plain
// client on the TLS port, an untrusted certificate), which the client
// alone would otherwise know of. A client that leaves before sending
// anything is not a failure.
func (s *Server) noteHandshakeError(c *Conn, err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return
	}
	s.logRefused(refusedTLS, "TLS handshake failed", "client", c.remote.String(), "err", err.Error())
}
