package server

import (
	"fmt"
	"runtime"
	"time"

	"github.com/stampedeless/stampedeless/netloop"
	"github.com/stampedeless/stampedeless/resp"
)

// Close reasons, the label of stampedeless_connections_closed_total: the
// event loop's (netloop.ClosedQuit and the others), and the server's own.
const (
	closedByClient = netloop.ClosedByClient
	closedShutdown = "shutdown"
	closedKilled   = "killed" // by CLIENT KILL
	// A connection whose user was deleted, or whose channels were taken
	// away while it was subscribed (acl.go).
	closedRevoked = "acl_revoked"
)

// OutputLimit bounds the output a connection in push mode (a subscriber)
// has queued and not yet sent (netloop.OutputLimit).
type OutputLimit = netloop.OutputLimit

// DefaultPubSubOutputLimit is Redis's default for pub/sub clients:
// 32mb hard, 8mb soft for 60 seconds.
var DefaultPubSubOutputLimit = netloop.DefaultPubSubOutputLimit

// ParseOutputLimit parses "hard soft seconds", the notation of one class of
// Redis's client-output-buffer-limit ("32mb 8mb 60").
func ParseOutputLimit(s string) (OutputLimit, error) { return netloop.ParseOutputLimit(s) }

// loopClient is a connection as its event loop sees it: the commands it
// reads, run by dispatch, and the rest of those that wait.
type loopClient Conn

func (lc *loopClient) ReadLimits() (resp.Limits, bool) {
	c := (*Conn)(lc)
	return c.limits(), c.authenticated()
}

func (lc *loopClient) Command(args [][]byte) netloop.Next {
	c := (*Conn)(lc)
	c.looped = true
	c.srv.dispatch(c, args)
	return c.after()
}

func (lc *loopClient) Continue() netloop.Next {
	c := (*Conn)(lc)
	c.looped = false
	c.srv.runContinuation(c)
	return c.after()
}

// after is what c's loop does once c's command returned: park c while a
// wait it left runs (c.next), close it after QUIT, or read on.
func (c *Conn) after() netloop.Next {
	switch {
	case c.next.run != nil:
		return netloop.Wait
	case c.quit:
		return netloop.Quit
	}
	return netloop.Serve
}

func (lc *loopClient) Panicked(p any) {
	c := (*Conn)(lc)
	c.srv.logPanic(c, p)
	c.next = continuation{}
}

// Ended: CLIENT KILL closed c, or c's user was revoked.
func (lc *loopClient) Ended() bool {
	c := (*Conn)(lc)
	s := c.srv
	s.mu.Lock()
	killed := c.killed
	s.mu.Unlock()
	return killed || c.revoked.Load()
}

// Listening: subscribers and monitors are not idle.
func (lc *loopClient) Listening() bool {
	return lc.monitoring.Load() || lc.subs.Total() != 0
}

func (lc *loopClient) Queued() {
	if lc.track.Tracked() {
		// Invalidations held back until these replies were queued.
		lc.srv.tracking.Release((*Conn)(lc).tracker())
	}
}

// Leave ends what a closing connection holds beside its socket: it is no
// subscriber, monitor or redirect target any more and tracks nothing.
func (lc *loopClient) Leave() {
	c := (*Conn)(lc)
	s := c.srv
	c.gone.Store(true)
	s.monitors.remove(c)
	c.leavePubSub()
	s.tracking.Disable(c.tracker())
}

func (lc *loopClient) Closed(reason string) {
	c := (*Conn)(lc)
	s := c.srv
	if reason == netloop.ClosedOutputLimit {
		s.log.Warn("client closed for overcoming its pubsub output buffer limit",
			"client", c.remote.String(), "id", c.id, "limit", s.pubsubLimit.Load().String())
	}
	s.finish(c, reason)
}

// loopHost is the server as its event loops see it.
type loopHost Server

func (h *loopHost) Closing() bool { return (*Server)(h).isClosing() }

func (h *loopHost) Clients() int { return (*Server)(h).connectedClients() }

func (h *loopHost) IdleTimeout() int64 { return h.idleTimeout.Load() }

func (h *loopHost) OutputLimit() netloop.OutputLimit { return *h.pubsubLimit.Load() }

func (h *loopHost) OutputLimitBroken() { h.outputLimitCloses.Add(1) }

// runContinuation runs the rest of a command that had to wait (c.next),
// on the goroutine its loop started for it (loopClient.Continue), and counts and
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
	var usec int64
	if call != nil {
		usec = s.observed(c, call.cmd, call.args, timer)
	}
	if counted != nil {
		c.endCaching(counted)
		countReply(counted, c, before, usec)
	}
	if gate {
		c.gateReply(before)
	}
}

// recentMaxOutputBuffer is the largest output buffer any connection had
// queued in the last peakSeconds.
func (s *Server) recentMaxOutputBuffer() int64 {
	now := time.Now().Unix()
	m := s.loops.ClosedMaxOutput(now)
	for _, c := range s.clients() {
		_, peak := c.link.OutputBuffer(now)
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
