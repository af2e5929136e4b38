package server

import (
	"errors"
	"net"
	"strconv"

	"github.com/stampedeless/stampedeless/internal/redisconfig"
)

// errUnableToListen is Redis's text for a port CONFIG SET cannot listen
// on; why is in the log.
var errUnableToListen = errors.New("Unable to listen on this port. Check server logs.")

// setPort is CONFIG SET port: each plain TCP listener moves to port on its
// own address, as Redis's changeListenPort does. The new listeners are
// opened first, and if one cannot be, nothing changes; connections
// already accepted stay. Each Serve call accepts on its listener's
// replacement from then on (movedListener). Port 0, which closes Redis's
// TCP listener, is refused: the server keeps one.
func (s *Server) setPort(v string) error {
	n, err := redisconfig.Integer(v, 0, 65535)
	if err != nil {
		return err
	}
	if n == int64(s.port()) {
		return nil
	}
	if n == 0 {
		return errors.New("stampedeless keeps listening on TCP: port 0 is refused")
	}
	s.mu.Lock()
	var olds []net.Listener
	for _, l := range s.listeners {
		if _, ok := l.Addr().(*net.TCPAddr); ok && !isTLS(l) {
			olds = append(olds, l)
		}
	}
	s.mu.Unlock()
	news := make([]net.Listener, 0, len(olds))
	closeNews := func() {
		for _, l := range news {
			l.Close()
		}
	}
	for _, old := range olds {
		addr := net.JoinHostPort(old.Addr().(*net.TCPAddr).IP.String(), strconv.FormatInt(n, 10))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			closeNews()
			s.log.Warn("CONFIG SET port: could not listen", "addr", addr, "err", err)
			return errUnableToListen
		}
		news = append(news, l)
	}
	s.mu.Lock()
	for i, old := range olds {
		at := -1
		for j, l := range s.listeners {
			if l == old {
				at = j
			}
		}
		if at < 0 || s.closing {
			// Shut down, or moved by another CONFIG SET meanwhile.
			s.mu.Unlock()
			closeNews()
			return errUnableToListen
		}
		s.listeners[at] = news[i]
		if s.moved == nil {
			s.moved = make(map[net.Listener]net.Listener)
		}
		s.moved[old] = news[i]
	}
	s.mu.Unlock()
	for _, old := range olds {
		old.Close() // its Serve call's Accept returns, and it takes the new one
	}
	s.log.Info("listening on a new port", "port", n)
	return nil
}

// movedListener returns the listener that replaced l (setPort), or nil if
// none did.
func (s *Server) movedListener(l net.Listener) net.Listener {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.moved[l]
	delete(s.moved, l)
	return next
}

// isTLS reports whether l is the TLS port's listener.
func isTLS(l net.Listener) bool {
	_, ok := l.(tlsListener)
	return ok
}
