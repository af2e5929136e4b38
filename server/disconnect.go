package server

import (
	"context"
	"errors"
	"net"
	"time"
)

// connReader is what a connection's Reader reads from: bytes a disconnect
// watcher took off the socket first, then the socket.
type connReader struct{ c *Conn }

func (r connReader) Read(p []byte) (int, error) {
	if c := r.c; len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return r.c.nc.Read(p)
}

// watchDisconnect returns a context that is cancelled if the client closes
// its connection while the command waits, so a GETFILL caller who left
// stops waiting for its flight (the flight itself goes on). The returned
// stop must be called before the connection reads again: it ends the watch
// and keeps any bytes the client pipelined meanwhile for the Reader.
func (c *Conn) watchDisconnect() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	if c.rd.Buffered() > 0 {
		// The client already sent more: it is there, and the watcher
		// could not tell a close from the next request anyway.
		return ctx, cancel
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 512)
		n, err := c.nc.Read(buf)
		c.pending = append(c.pending, buf[:n]...)
		if n == 0 && err != nil && !isTimeout(err) {
			cancel() // closed or reset by the client
		}
	}()
	return ctx, func() {
		// A deadline in the past wakes the watcher's Read; then the
		// deadline the server wants (none, or the shutdown drain) is put back.
		c.nc.SetReadDeadline(time.Now())
		<-done
		cancel()
		if c.srv.isClosing() {
			c.nc.SetReadDeadline(time.Now().Add(drainWindow))
		} else {
			c.nc.SetReadDeadline(time.Time{})
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
