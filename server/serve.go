package server

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"time"

	"github.com/stampedeless/stampedeless/resp"
)

// Close reasons, the label of stampedeless_connections_closed_total.
const (
	closedByClient   = "client"
	closedQuit       = "quit"
	closedProtocol   = "protocol_error"
	closedWriteError = "write_error"
	closedPanic      = "panic"
	closedShutdown   = "shutdown"
	// A subscriber whose queued output broke the pubsub output buffer
	// limit (outbox.go).
	closedOutputLimit = "output_buffer_limit"
	closedKilled      = "killed" // by CLIENT KILL
	// A connection whose user was deleted, or whose channels were taken
	// away while it was subscribed (acl.go).
	closedRevoked = "acl_revoked"
)

// errPanicked is the error the event loop hands over with a connection whose
// command panicked; the goroutine answers and closes it.
var errPanicked = errors.New("server: command panicked")

// serveConn serves c on its own goroutine until it closes. handed is the
// error that ended the event loop's reading of c, if it had c first; a
// command it left to wait is in c.next.run.
func (s *Server) serveConn(c *Conn, handed error) {
	reason := closedByClient
	returned := false // to the event loop, which serves c from now on
	defer func() {
		if returned {
			return
		}
		if p := recover(); p != nil {
			reason = closedPanic
			s.logPanic(c, p)
		}
		if reason == closedPanic {
			c.w.Error("ERR internal error")
			c.w.Flush()
		}
		// No message is pushed to c once it has left; its writer goroutine
		// ends once the socket is closed, and what it had queued is lost
		// with the connection.
		s.monitors.remove(c)
		c.leavePubSub()
		s.tracking.disable(c)
		c.nc.Close()
		c.stopPushing(false)
		s.keepPeak(c)
		if reason == closedOutputLimit {
			s.log.Warn("client closed for overcoming its pubsub output buffer limit",
				"client", c.remote.String(), "id", c.id, "limit", s.pubsubLimit.Load().String())
		}
		s.finish(c, reason)
	}()
	var drained int64 // bytes received when the drain deadline last passed
	for {
		if c.quit {
			reason = closedQuit
			c.closeGracefully()
			return
		}
		if c.next.run != nil {
			resume, counted, before := c.next.run, c.next.counted, c.w.Len()
			call := c.next.call
			c.next.run, c.next.counted, c.next.call = nil, nil, nil
			timer := s.startCall()
			resume()
			if call != nil {
				s.observed(c, call.cmd, call.args, timer)
			}
			countReply(counted, c, before)
			if c.next.gate {
				c.next.gate = false
				c.gateReply(before)
			}
		}
		err := handed
		handed = nil
		// Input the reader holds, or the disconnect watcher read off the
		// socket, is this goroutine's to serve first.
		if err == nil && c.ev.backToLoop && !c.pushing() && c.rd.Buffered() == 0 && len(c.pending) == 0 {
			if err := c.flush(); err != nil {
				reason = c.writeFailure()
				return
			}
			if s.loop.take(c) {
				s.metrics.EventLoopReturns.Inc()
				returned = true
				return
			}
			c.ev.backToLoop = false
		}
		var args [][]byte
		if err == nil {
			args, err = c.rd.ReadCommand(c.limits(), c.authenticated())
		}
		if err != nil {
			s.noteReadError(c, err)
			var pe resp.ProtocolError
			var ne net.Error
			dead := c.closedFor()
			switch {
			case dead != "":
				reason = dead
			case errors.Is(err, errPanicked):
				reason = closedPanic
			case errors.As(err, &pe):
				reason = closedProtocol
				c.w.Error("ERR " + pe.Error())
				c.closeGracefully()
			case c.w.Err() != nil:
				reason = closedWriteError
			case errors.As(err, &ne) && ne.Timeout() && s.isClosing():
				if c.rd.Received() > drained {
					drained = c.rd.Received()
					c.nc.SetReadDeadline(time.Now().Add(drainWindow))
					continue
				}
				c.closeGracefully()
			}
			return
		}
		s.dispatch(c, args)
		// A long pipeline of large replies is sent as it goes, not held.
		if c.w.Len() > resp.MaxRetainedReply {
			if c.w.Flush() != nil {
				reason = c.writeFailure()
				return
			}
		}
	}
}

// writeFailure is the close reason of a connection whose reply could not
// be flushed.
func (c *Conn) writeFailure() string {
	if dead := c.closedFor(); dead != "" {
		return dead
	}
	return closedWriteError
}

// keepPeak keeps a closing connection's recent largest output buffer for
// INFO's client_recent_max_output_buffer.
func (s *Server) keepPeak(c *Conn) {
	now := time.Now().Unix()
	_, peak := c.outputBuffer(now)
	s.peakMu.Lock()
	s.peak.observe(now, peak)
	s.peakMu.Unlock()
}

// recentMaxOutputBuffer is the largest output buffer any connection had
// queued in the last peakSeconds.
func (s *Server) recentMaxOutputBuffer() int64 {
	now := time.Now().Unix()
	s.peakMu.Lock()
	m := s.peak.max(now)
	s.peakMu.Unlock()
	for _, c := range s.clients() {
		_, peak := c.outputBuffer(now)
		m = max(m, peak)
	}
	return m
}

// logPanic reports a command's panic; the connection is then closed.
func (s *Server) logPanic(c *Conn, p any) {
	buf := make([]byte, 64<<10)
	buf = buf[:runtime.Stack(buf, false)]
	s.log.Error("panic serving client; closing its connection",
		"client", c.remote.String(), "panic", fmt.Sprint(p), "stack", string(buf))
}

// finish forgets a closed connection. A transaction it left open is
// discarded: nothing it queued runs.
func (s *Server) finish(c *Conn, reason string) {
	c.gone.Store(true)
	c.endTransaction()
	s.mu.Lock()
	delete(s.conns, c)
	switch {
	case c.killed:
		reason = closedKilled
	case c.revoked.Load():
		reason = closedRevoked
	case s.closing && reason == closedByClient:
		reason = closedShutdown
	}
	s.mu.Unlock()
	s.metrics.ConnectionsClosed.WithLabelValues(reason).Inc()
	s.wg.Done()
}
