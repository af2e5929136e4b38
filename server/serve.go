package server

import (
	"fmt"
	"runtime"
	"time"
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
	closedIdle        = "idle"   // idle past CONFIG SET timeout
	// A connection whose user was deleted, or whose channels were taken
	// away while it was subscribed (acl.go).
	closedRevoked = "acl_revoked"
)

// runContinuation runs the rest of a command that had to wait (c.next),
// on the goroutine its loop started for it (eventLoop.park), and counts and
// observes the command once it has answered.
func (s *Server) runContinuation(c *Conn) {
	resume, counted, before := c.next.run, c.next.counted, c.w.Len()
	call, gate := c.next.call, c.next.gate
	c.next = continuation{}
	timer := s.startCall()
	resume()
	// What it left to wait for once its handler returned (Conn.Await).
	for c.next.run != nil {
		next := c.next.run
		c.next.run = nil
		next()
	}
	if c.postponed { // held once inside the section: its rerun counted
		c.postponed = false
		call, counted = nil, nil
	}
	if call != nil {
		s.observed(c, call.cmd, call.args, timer)
	}
	if counted != nil {
		c.endCaching(counted)
		countReply(counted, c, before)
	}
	if gate {
		c.gateReply(before)
	}
}

// leaveServer ends what a closing connection holds beside its socket: no
// message is pushed to it, it is no subscriber, tracks nothing and is no
// redirect target any more.
func (c *Conn) leaveServer() {
	s := c.srv
	c.gone.Store(true)
	s.monitors.remove(c)
	c.leavePubSub()
	s.tracking.disable(c)
	c.stopPushing()
	s.keepPeak(c)
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
