package server

import (
	"crypto/tls"
	"net"
)

// ServeTLS accepts connections on l as Serve does, speaking TLS with cfg
// (whose GetConfigForClient may hand out reloaded certificates). TLS
// connections are commands.Always served by a goroutine each, never by the event
// loop, which reads and writes raw sockets.
func (s *Server) ServeTLS(l net.Listener, cfg *tls.Config) error {
	return s.Serve(tlsListener{tls.NewListener(l, cfg)})
}

// tlsListener marks a listener as TLS, so that the port of the plain
// listener is the one CONFIG GET port and INFO report.
type tlsListener struct{ net.Listener }

// isTLS reports whether nc is a TLS connection.
func isTLS(nc net.Conn) bool {
	_, ok := nc.(*tls.Conn)
	return ok
}
