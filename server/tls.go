package server

import (
	"crypto/tls"
	"net"
	"time"
)

// ServeTLS accepts connections on l as Serve does, speaking TLS with cfg
// (whose GetConfigForClient may hand out reloaded certificates). The
// handshake runs on a goroutine of its own, which may wait for the client
// a while (netloop.Conn.Handshake); the connection then joins an event
// loop, where crypto/tls reads and writes its socket without waiting.
func (s *Server) ServeTLS(l net.Listener, cfg *tls.Config) error {
	return s.serve(tlsListener{l}, cfg)
}

// cutHandshakes ends the TLS handshakes under way: past Shutdown's
// deadline a client that connected and said nothing does not hold the
// server for the rest of its handshake's time.
func (s *Server) cutHandshakes() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for nc := range s.shaking {
		nc.SetDeadline(time.Now())
	}
}

// tlsListener marks a listener as TLS, so that the port of the plain
// listener is the one CONFIG GET port and INFO report.
type tlsListener struct{ net.Listener }

// handshake runs c's TLS handshake on nc, then gives c to an event loop.
func (s *Server) handshake(c *Conn, nc net.Conn, cfg *tls.Config) {
	err := c.link.Handshake(nc, cfg)
	s.mu.Lock()
	delete(s.shaking, nc)
	s.mu.Unlock()
	if err != nil {
		s.noteHandshakeError(c, err)
		nc.Close()
		s.finish(c, closedByClient)
		return
	}
	s.adopt(c, nc)
}
