package netloop

import (
	"context"
	"errors"
)

// park leaves c waiting for its continuation (Client.Continue), which runs on a
// goroutine of its own; the loop resumes c when it ends. c's replies so
// far are queued in its outbox, so the loop may send them, and what is
// pushed to c, while the goroutine has c's writer.
func (l *eventLoop) park(c *Conn) {
	c.w.Flush()
	if err := c.sendQueued(); err != nil && !errors.Is(err, errOutputBlocked) {
		c.w.Fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.ev.ctx, c.ev.cancel = ctx, cancel
	c.ev.parked, c.ev.peerGone = true, false
	if c.ev.outBlocked {
		c.ev.outBlocked = false
		l.blocked--
	}
	l.waiting.Add(1)
	l.loops.cfg.Parks.Inc()
	l.armParked(c)
	go l.continueOffLoop(c)
}

// armParked re-arms a parked connection: for the client leaving, unless it
// did, and for room to write, if output is queued.
func (l *eventLoop) armParked(c *Conn) {
	var events uint32
	if !c.ev.peerGone {
		events = interestParked
	}
	if c.queuedOutput() > 0 {
		events |= interestOut | epollOneShot
	}
	if events == 0 {
		events = epollOneShot // nothing: a disarmed registration
	}
	l.arm(c, events)
}

// sendParked sends a parked connection's queued output.
func (l *eventLoop) sendParked(c *Conn) {
	if err := c.sendQueued(); err != nil && !errors.Is(err, errOutputBlocked) {
		c.w.Fail(err)
	}
}

// resume takes c back from its continuation's goroutine.
func (l *eventLoop) resume(c *Conn) {
	c.ev.parked = false
	c.ev.cancel()
	c.ev.ctx, c.ev.cancel = nil, nil
	l.waiting.Add(-1)
	switch {
	case c.ev.panicked:
		c.ev.panicked = false
		c.w.Error("ERR internal error")
		l.drop(c, ClosedPanic, true)
		return
	case c.ev.after == Wait: // its continuation left another wait
		l.park(c)
		return
	case c.ev.after == Quit:
		l.drop(c, ClosedQuit, true)
		return
	case c.w.Err() != nil:
		l.drop(c, c.writeFailure(), false)
		return
	case l.closeIfEnded(c):
		return
	}
	l.arm(c, interestIn)
	// Its replies are sent, and the commands it pipelined meanwhile run.
	c.ev.readable = c.ev.peerGone
	l.serveSafely(c)
}

// attendTo handles a connection another goroutine woke: it was killed, its
// user revoked, its outbox died, or a message was pushed to it.
func (l *eventLoop) attendTo(c *Conn) {
	c.ev.attention.Store(false)
	if c.ev.parked {
		if _, ended := l.ended(c); ended {
			c.ev.cancel() // it closes once its continuation has ended
			return
		}
		l.sendParked(c)
		l.armParked(c)
		return
	}
	if l.closeIfEnded(c) || c.ev.outBlocked {
		return
	}
	l.send(c)
}

// continueOffLoop runs c's continuation on the goroutine park started and
// gives c back to its loop.
func (l *eventLoop) continueOffLoop(c *Conn) {
	defer func() {
		if p := recover(); p != nil {
			c.client.Panicked(p)
			c.ev.panicked = true
		}
		l.post(&l.resumed, c)
	}()
	c.ev.after = c.client.Continue()
}
