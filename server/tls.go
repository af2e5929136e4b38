package server

import (
	"crypto/tls"
	"net"
	"time"
)

// ServeTLS accepts connections on l as Serve does, speaking TLS with cfg
// (whose GetConfigForClient may hand out reloaded certificates). The
// handshake runs on a goroutine of its own, which may wait for the client
// up to handshakeTimeout; the connection then joins an event loop, where
// crypto/tls reads and writes its socket without waiting (tlsSocket).
func (s *Server) ServeTLS(l net.Listener, cfg *tls.Config) error {
	return s.serve(tlsListener{l}, cfg)
}

// handshakeTimeout bounds a TLS handshake, so that a client that connects
// and says nothing does not hold a goroutine for good.
const handshakeTimeout = 10 * time.Second

// cutHandshakes ends the TLS handshakes under way: past Shutdown's
// deadline a client that connected and said nothing does not hold the
// server for the rest of its handshakeTimeout.
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
	stream := &tlsStream{nc: nc, fd: -1}
	conn := tls.Server(stream, cfg)
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	err := conn.Handshake()
	s.mu.Lock()
	delete(s.shaking, nc)
	s.mu.Unlock()
	if err != nil {
		s.noteHandshakeError(c, err)
		nc.Close()
		s.finish(c, closedByClient)
		return
	}
	nc.SetDeadline(time.Time{})
	c.ev.sock = &tlsSocket{conn: conn, stream: stream}
	s.adopt(c, nc)
}
