package netloop

import (
	"errors"
	"io"
	"syscall"
	"time"

	"github.com/stampedeless/stampedeless/resp"
)

// readableEvents are the epoll events after which a read finds input or
// the end of it.
const readableEvents = syscall.EPOLLIN | syscall.EPOLLHUP | syscall.EPOLLERR | syscall.EPOLLRDHUP

// receive makes, in one system call, the first read of every connection in
// events that ready will serve, into its reader's buffer; ready then serves
// what was read. At pipeline depth 1 a read per connection was half of a
// loop turn's system calls. Connections that wait (parked, or for room to
// write), TLS ones (whose reads decrypt) and those whose reader has no
// room read for themselves, as before.
func (l *eventLoop) receive(events []syscall.EpollEvent) {
	batch := l.batch[:0]
	for _, ev := range events {
		c := l.conns[int(ev.Fd)]
		if c == nil || c.ev.parked || c.ev.outBlocked || ev.Events&readableEvents == 0 {
			continue
		}
		if _, plain := c.ev.sock.(rawSocket); !plain {
			continue
		}
		room := c.rd.Room()
		if len(room) == 0 || l.ring.Recv(c.ev.fd, room, uint64(len(batch))) != nil {
			continue
		}
		batch = append(batch, c)
	}
	read := false
	err := l.ring.Submit(func(i uint64, res int32) {
		c := batch[i]
		if syscall.Errno(-res) == syscall.ECANCELED {
			return // not made: ready serves c as epoll said
		}
		c.ev.received = true
		switch {
		case res > 0:
			c.rd.Filled(int(res))
			read = true
			// A full buffer: the socket may hold more, which serve reads.
			c.ev.readable = c.rd.Free() == 0
		case res == 0:
			c.ev.readErr, c.ev.readable = io.EOF, true
		case syscall.Errno(-res) == syscall.EAGAIN:
			c.ev.readable = false
		default:
			c.ev.readErr, c.ev.readable = syscall.Errno(-res), true
		}
	})
	clear(batch)
	l.batch = batch[:0]
	if read {
		// The commands just read run at this time (loopReader.Read).
		l.loops.clock.Read()
	}
	if err != nil {
		l.ringFailed(err)
	}
}

// ringFailed turns the loop's ring off: from now on each read and write is
// its own system call.
func (l *eventLoop) ringFailed(err error) {
	l.loops.log.Warn("event loop: io_uring failed; each socket read and write is a system call of its own from now on", "err", err)
	l.ring.Close()
	l.ring = nil
	l.loops.uring.Add(-1)
}

// ready handles what epoll reported for c.
func (l *eventLoop) ready(c *Conn, events uint32) {
	switch {
	case c.ev.parked:
		if events&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
			// The client left while its command waits: it stops waiting
			// (a load it started goes on for the others).
			c.ev.peerGone = true
			c.ev.cancel()
		}
		if events&syscall.EPOLLOUT != 0 {
			l.sendParked(c)
		}
		l.armParked(c)
		return
	case c.ev.outBlocked:
		if !l.drainOutput(c) {
			return
		}
	}
	if c.ev.received {
		c.ev.received = false // readable says what the read left
	} else {
		c.ev.readable = events&readableEvents != 0
	}
	l.serveSafely(c)
}

// serveSafely is serve, and a panic ends only c's connection: it is
// answered -ERR internal error and closed.
func (l *eventLoop) serveSafely(c *Conn) {
	defer func() {
		if p := recover(); p != nil {
			c.client.Panicked(p)
			c.w.Error("ERR internal error")
			l.drop(c, ClosedPanic, true)
		}
	}()
	l.serve(c)
}

// serve runs the commands c has sent until its input runs out, its socket
// is full, or a command must wait. Whatever calls it (an event, a new
// connection's first bytes, a continuation's end), c now holds a query
// buffer for sweepBuffers to trim or give back.
func (l *eventLoop) serve(c *Conn) {
	l.buffersHeld = true
	for {
		args, err := c.rd.ReadCommand(c.client.ReadLimits())
		switch {
		case err == nil: // the common case, first: no errors.Is calls per command
		case errors.Is(err, errWouldBlock):
			if l.closing && c.rd.Received() > c.ev.drained {
				// It still sends during shutdown: it has a while longer.
				c.ev.drained = c.rd.Received()
				c.ev.drainBy = time.Now().Add(drainWindow)
			}
			return
		case errors.Is(err, errOutputBlocked):
			l.blockOutput(c)
			return
		default:
			l.readFailed(c, err)
			return
		}
		switch c.client.Command(args) {
		case Wait:
			l.park(c)
			return
		case Quit:
			l.drop(c, ClosedQuit, true)
			return
		}
		// A long pipeline of large replies is sent as it goes.
		if c.w.Len() > resp.MaxRetainedReply && !l.send(c) {
			return
		}
	}
}

// readFailed closes c, whose input ended or could not be read.
func (l *eventLoop) readFailed(c *Conn, err error) {
	var pe resp.ProtocolError
	switch dead := c.closedFor(); {
	case dead != "":
		l.drop(c, dead, false)
	case errors.As(err, &pe):
		c.w.Error("ERR " + pe.Error())
		l.drop(c, ClosedProtocol, true)
	case c.w.Err() != nil:
		l.drop(c, ClosedWriteError, false)
	default: // the client closed or reset its connection
		l.drop(c, ClosedByClient, false)
	}
}

// blockOutput stops reading c until its socket has taken what is queued.
func (l *eventLoop) blockOutput(c *Conn) {
	if !c.ev.outBlocked {
		c.ev.outBlocked = true
		c.ev.blockedAt = time.Now()
		l.blocked++
		l.loops.cfg.OutputBlocked.Inc()
	}
	l.arm(c, interestOut)
}

// drainOutput sends what c's socket has room for now, and reports whether
// it took everything: c is then read again.
func (l *eventLoop) drainOutput(c *Conn) bool {
	before := c.queuedOutput()
	err := c.sendBatch()
	switch {
	case errors.Is(err, errOutputBlocked):
		if c.queuedOutput() < before {
			c.ev.blockedAt = time.Now()
		}
		return false
	case err != nil:
		l.drop(c, ClosedWriteError, false)
		return false
	}
	c.ev.outBlocked = false
	l.blocked--
	l.arm(c, interestIn)
	return true
}

// send sends c's replies, and reports whether the socket took them all: if
// not, c is left waiting for room (blockOutput) or dropped.
func (l *eventLoop) send(c *Conn) bool { return l.sent(c, c.sendBatch()) }

// sent handles the end of a send of c's replies, as send.
func (l *eventLoop) sent(c *Conn, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, errOutputBlocked):
		l.blockOutput(c)
	default:
		l.drop(c, ClosedWriteError, false)
	}
	return false
}

// sendLater is a loop connection's reader's BeforeBlock: c's replies so
// far go out at the end of the loop turn (sendDue), after every socket
// epoll reported is read, as redis-server writes in beforeSleep. A
// pipelining client woken by the first reply then finds the others'
// replies there too: one epoll_wait of the load generator's for many
// sockets, where writing each as it was served made it wake for each.
func (c *Conn) sendLater() error {
	if !c.ev.sendDue {
		c.ev.sendDue = true
		l := c.ev.loop
		l.due = append(l.due, c)
	}
	return nil
}

// sendDue sends the replies of the connections served this turn, except
// those that closed, parked (their outbox is theirs to send) or wait for
// room (drainOutput sends for them). With a ring, the plain writes
// (sendsPlainly) are made in one system call, and what a socket did not
// take is sent again as any send is (and then waits for room).
func (l *eventLoop) sendDue() {
	batch := l.batch[:0]
	together := l.ring != nil && len(l.due) > 1
	for i, c := range l.due {
		l.due[i] = nil
		c.ev.sendDue = false
		if l.conns[c.ev.fd] != c || c.ev.parked || c.ev.outBlocked {
			continue
		}
		if !together || !c.sendsPlainly() || l.ring.Send(c.ev.fd, c.w.Buffered(), uint64(len(batch))) != nil {
			l.send(c)
			continue
		}
		c.noteSend()
		batch = append(batch, c)
	}
	l.due = l.due[:0]
	if len(batch) == 0 {
		return
	}
	err := l.ring.Submit(func(i uint64, res int32) {
		c := batch[i]
		switch {
		case res >= 0:
			c.w.Sent(int(res))
			if c.w.Len() > 0 {
				l.send(c)
			}
		case syscall.Errno(-res) == syscall.EAGAIN, syscall.Errno(-res) == syscall.ECANCELED:
			l.send(c) // what it can take now, or wait for room
		default:
			l.sent(c, c.sendFailed(syscall.Errno(-res)))
		}
	})
	if err != nil {
		l.ringFailed(err)
	}
	clear(batch)
	l.batch = batch[:0]
}

// sendsPlainly reports whether c's next send is its writer's replies
// alone, written straight to a plain socket (what sendBatch does first when
// nothing is queued before them), so its loop may make it with the
// others' in one system call (eventLoop.sendDue).
func (c *Conn) sendsPlainly() bool {
	_, plain := c.ev.sock.(rawSocket)
	return plain && c.w.Len() > 0 && c.out.empty()
}

// loopReader reads a loop connection's socket: once per readiness event,
// as level-triggered epoll reports input again; a TLS socket until it would
// block, for it may have decrypted input epoll cannot see.
type loopReader struct{ c *Conn }

func (r loopReader) Read(p []byte) (int, error) {
	c := r.c
	if err := c.ev.readErr; err != nil { // what the loop's receive found
		c.ev.readErr, c.ev.readable = nil, false
		return 0, err
	}
	if !c.ev.readable {
		return 0, errWouldBlock
	}
	n, err := c.ev.sock.Read(p)
	if n > 0 {
		// The commands just read run at this time: one reading for a
		// pipeline of them (internal/clock).
		c.loops.clock.Read()
	}
	if !c.ev.sock.readsAhead() || err != nil {
		c.ev.readable = false
	}
	return n, err
}
