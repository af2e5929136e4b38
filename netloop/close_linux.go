package netloop

import (
	"syscall"
	"time"
)

// ended reports whether c must close, and why: its outbox died (the
// reason is the outbox's), Shutdown's deadline passed, or the server
// wants it closed (Client.Ended; ClosedByClient: the server names the
// reason).
func (l *eventLoop) ended(c *Conn) (reason string, ended bool) {
	if dead := c.closedFor(); dead != "" {
		return dead, true
	}
	return ClosedByClient, l.forced || c.client.Ended()
}

// closeIfEnded closes c if it must close (ended), and reports whether it
// did.
func (l *eventLoop) closeIfEnded(c *Conn) bool {
	reason, ended := l.ended(c)
	if ended {
		l.drop(c, reason, false)
	}
	return ended
}

// tick closes what has waited too long: at shutdown, connections that sent
// nothing for drainWindow; always, those whose client took no output for
// the write timeout; and, once a second, clients idle for longer than
// the Host's IdleTimeout, as Redis's clientsCron closes them: listening
// clients (subscribers, monitors: Client.Listening) and clients waiting
// for a command (blocked, or held by CLIENT PAUSE: parked) are not idle.
func (l *eventLoop) tick() {
	now := time.Now()
	timeout := l.loops.cfg.WriteTimeout
	idle := l.loops.host.IdleTimeout()
	sweepIdle := idle > 0 && now.Sub(l.idleSweptAt) >= time.Second
	if sweepIdle {
		l.idleSweptAt = now
	}
	for _, c := range l.conns {
		switch {
		case c.ev.parked:
		case sweepIdle && now.Unix()-c.lastActive.Load() > idle &&
			!c.ev.outBlocked && !c.client.Listening():
			l.drop(c, ClosedIdle, false)
		case c.ev.outBlocked:
			if timeout > 0 && now.Sub(c.ev.blockedAt) >= timeout {
				l.drop(c, ClosedWriteError, false)
			}
		case l.closing && now.After(c.ev.drainBy):
			l.drop(c, ClosedByClient, true)
		}
	}
}

// queryBufferIdle is how many seconds a connection sends nothing before
// its query buffer is given back (Redis's 2).
const queryBufferIdle = 2

// bufferSweepEvery is how often sweepBuffers looks at the loop's
// connections: Redis's clientsCron sees each of a few clients ten times a
// second, and a buffer grown for one large command shrinks two looks after
// it (resp.Reader.Trim).
const bufferSweepEvery = 250 * time.Millisecond

// sweepBuffers gives back the query buffer of each connection quiet for
// queryBufferIdle, as Redis's clientsCron frees it, so that idle
// connections hold no buffer, and trims the buffers of the others to
// their recent peak; buffersHeld says whether any still holds one (a turn
// sets it again).
func (l *eventLoop) sweepBuffers() {
	now := time.Now()
	if now.Sub(l.buffersSweptAt) < bufferSweepEvery {
		return
	}
	l.buffersSweptAt = now
	l.buffersHeld = false
	for _, c := range l.conns {
		if c.ev.parked || c.rd.Size() == 0 {
			continue
		}
		if now.Unix()-c.lastActive.Load() >= queryBufferIdle && c.rd.Release() {
			c.bufs.qbuf.Store(0)
			c.bufs.qbufFree.Store(0)
			continue
		}
		size := c.rd.Size()
		if c.rd.Trim(); c.rd.Size() != size {
			c.bufs.qbufFree.Store(int64(c.rd.Free()))
		}
		l.buffersHeld = true
	}
}

// drainWindow is how long a connection waits for more of a client's
// requests during shutdown before it closes.
const drainWindow = 100 * time.Millisecond

// beginClosing starts the shutdown drain: until drainWindow passes, a
// connection still runs what its client sends, and each batch extends its
// window, so a pipeline in flight is answered; a quiet one closes.
func (l *eventLoop) beginClosing() {
	l.closing = true
	by := time.Now().Add(drainWindow)
	for _, c := range l.conns {
		c.ev.drainBy, c.ev.drained = by, c.rd.Received()
	}
}

// force has the loop close every connection now: Shutdown's deadline
// passed.
func (l *eventLoop) force() {
	l.mu.Lock()
	l.forcing = true
	l.mu.Unlock()
	l.notify()
}

// closeAll closes every connection now (Shutdown's deadline passed); a
// parked one is told to stop waiting and closes when it resumes.
func (l *eventLoop) closeAll() {
	for _, c := range l.conns {
		if c.ev.parked {
			c.ev.cancel()
			continue
		}
		l.drop(c, ClosedByClient, false)
	}
}

// drop closes c and forgets it. With graceful, its last replies are sent
// and the socket lingers (lingerClose), on a goroutine of its own that
// may wait for the client; without, the socket is closed at once.
func (l *eventLoop) drop(c *Conn, reason string, graceful bool) {
	if l.conns[c.ev.fd] != c {
		return // dropped already
	}
	syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, c.ev.fd, nil)
	delete(l.conns, c.ev.fd)
	if c.ev.outBlocked {
		c.ev.outBlocked = false
		l.blocked--
	}
	c.client.Leave()
	c.StopPushing()
	l.loops.keepPeak(c)
	if !graceful || c.w.Err() != nil || c.closedFor() != "" {
		c.ev.sock = nil
		syscall.Close(c.ev.fd)
		c.client.Closed(reason)
		return
	}
	c.w.Flush()
	out := c.out.takeAll()
	nc, w, err := c.ev.sock.blocking()
	c.ev.sock = nil
	if err != nil {
		c.client.Closed(reason)
		return
	}
	go func() {
		nc.SetWriteDeadline(time.Now().Add(l.loops.cfg.WriteTimeout))
		w.Write(out)
		LingerClose(nc)
		c.client.Closed(reason)
	}()
}
