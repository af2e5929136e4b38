package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stampedeless/stampedeless/internal/uring"
	"github.com/stampedeless/stampedeless/resp"
)

// eventLoop serves its share of the connections the way redis-server serves
// all of them: one OS thread waits on epoll for sockets with input, reads
// each once, runs every whole command read and, once every socket it was
// told of has been read, writes each connection's replies once (sendDue),
// with no goroutine switch between a request and its reply. The server runs
// DefaultEventLoops loops unless told otherwise (Options.EventLoops) and
// gives each new connection to the next loop in turn; a connection stays on
// its loop until it closes.
//
// Nothing on a loop waits. A command that must (a GETFILL waiting for its
// origin, a blocked list pop, a command waiting for the atomic section, a
// script, a write through to the shared tier) leaves the rest of its work
// in Conn.next; the loop parks the connection, runs that on a goroutine of
// its own, and resumes the connection when it ends (park, resume). A
// socket that takes less output than it is given is watched for room and
// its input left unread until it drains (blockOutput). Messages pushed to
// a connection by other goroutines (pub/sub, invalidations, MONITOR) are
// queued in its outbox and sent by its loop, which they wake (Conn.wake).
type eventLoop struct {
	srv  *Server
	ep   int    // epoll instance
	wake [2]int // a pipe written to wake the loop (post)

	mu       sync.Mutex
	adopted  []*Conn // accepted, not yet registered
	attend   []*Conn // woken by another goroutine (Conn.wake)
	resumed  []*Conn // their continuation has ended (park)
	forcing  bool    // Shutdown's deadline passed (force)
	signaled atomic.Bool

	// The loop goroutine's alone.
	conns   map[int]*Conn // by file descriptor
	blocked int           // connections waiting for their socket to take output
	// idleSweptAt is when tick last looked for idle clients (timeout).
	idleSweptAt time.Time
	due         []*Conn // served this turn, their replies not yet sent
	closing     bool    // the server is closing: connections drain and close
	forced      bool    // Shutdown's deadline passed: everything closes now
	events      []syscall.EpollEvent
	// ring makes a turn's reads, and its writes, in one system call each
	// (receive, sendDue); nil where io_uring is off or unavailable, and
	// each is its own. batch is the connections in the ring now.
	ring  *uring.Ring
	batch []*Conn

	// waiting counts the connections parked on a continuation, for INFO
	// and metrics.
	waiting atomic.Int64
}

// Interest sets a connection is registered with: serving (input),
// blocked (waiting for room to write), parked (only the client leaving,
// and room to write when output is queued; one-shot, re-armed by the loop).
const (
	interestIn     = syscall.EPOLLIN
	interestOut    = syscall.EPOLLOUT
	interestParked = syscall.EPOLLRDHUP | syscall.EPOLLONESHOT
	epollOneShot   = syscall.EPOLLONESHOT
)

func newEventLoop(s *Server) (*eventLoop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("event loop: epoll_create1: %w", err)
	}
	l := &eventLoop{srv: s, ep: ep, conns: make(map[int]*Conn), events: make([]syscall.EpollEvent, 256)}
	if err := syscall.Pipe2(l.wake[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		syscall.Close(ep)
		return nil, fmt.Errorf("event loop: pipe2: %w", err)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(l.wake[0])}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, l.wake[0], &ev); err != nil {
		l.close()
		return nil, fmt.Errorf("event loop: epoll_ctl: %w", err)
	}
	if !s.opts.NoURing {
		// As many reads or writes per system call as one epoll_wait
		// reports sockets.
		l.ring, err = uring.New(uint32(len(l.events)))
		if err != nil {
			s.log.Info("event loop: no io_uring; each socket read and write is a system call of its own", "err", err)
		} else {
			s.uringLoops.Add(1)
		}
	}
	return l, nil
}

func (l *eventLoop) close() {
	syscall.Close(l.ep)
	syscall.Close(l.wake[0])
	syscall.Close(l.wake[1])
	if l.ring != nil {
		l.ring.Close()
		l.srv.uringLoops.Add(-1)
	}
}

// post queues c on list for the loop and wakes it; one wake per turn is
// enough however many goroutines post.
func (l *eventLoop) post(list *[]*Conn, c *Conn) {
	l.mu.Lock()
	*list = append(*list, c)
	l.mu.Unlock()
	l.notify()
}

// notify wakes the loop unless a wake is already pending.
func (l *eventLoop) notify() {
	if !l.signaled.Swap(true) {
		syscall.Write(l.wake[1], []byte{0})
	}
}

// adopt takes an accepted connection into the loop: its socket is
// duplicated out of Go's network poller, so that only the loop's epoll
// watches it, and the net.Conn is closed.
func (l *eventLoop) adopt(c *Conn, nc net.Conn) error {
	fd, err := detach(nc)
	if err != nil {
		return err
	}
	c.ev.fd = fd
	if c.ev.sock == nil {
		c.ev.sock = rawSocket{fd}
	} else { // TLS, after its handshake
		c.ev.sock.(*tlsSocket).stream.fd = fd
		c.ev.sock.(*tlsSocket).stream.nc = nil
	}
	c.fd.Store(int64(fd))
	c.ev.loop = l
	c.rd.SetSource(loopReader{c})
	c.rd.BeforeBlock = c.sendLater
	c.looped = true
	l.post(&l.adopted, c)
	return nil
}

// detach returns a duplicate of nc's socket, non-blocking and close-on-exec,
// and closes nc. On an error nc is left as it was.
func detach(nc net.Conn) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("%T has no file descriptor", nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, dupErr := -1, error(nil)
	if err := rc.Control(func(s uintptr) { fd, dupErr = syscall.Dup(int(s)) }); err != nil {
		return -1, err
	}
	if dupErr != nil {
		return -1, dupErr
	}
	syscall.CloseOnExec(fd)
	// The duplicate shares the socket's file status, which Go made
	// non-blocking; setting it again costs nothing and states the need.
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	nc.Close()
	return fd, nil
}

// run is the loop goroutine. It exits once the server is closing and every
// connection of the server has closed.
func (l *eventLoop) run() {
	defer l.srv.wg.Done()
	defer l.close()
	// The loop is not locked to its thread. Go's monitor sees a loop that
	// waits keeping its P (waitHoldingP) as running, and asks it to yield
	// every 10 ms; a locked goroutine's yield hands its P to another thread
	// and back (four futex calls and two switches each), which were most
	// of a serving process's futex calls. Unlocked, it yields in place.
	runningLoops.Add(1)
	defer runningLoops.Add(-1)
	procs := int32(runtime.GOMAXPROCS(0))
	emptyWaits := 0 // in a row
	for {
		timeout := -1
		switch {
		case l.closing:
			timeout = int(drainWindow / 4 / time.Millisecond)
		case l.blocked > 0 || l.srv.idleTimeout.Load() > 0:
			timeout = 1000 // write and idle timeouts are counted in seconds
		}
		n, err := l.wait(procs, timeout, emptyWaits >= restAfter)
		if n > 0 {
			emptyWaits = 0
		} else {
			emptyWaits++
		}
		if err != nil && !errors.Is(err, syscall.EINTR) {
			// Nothing the loop serves can be served any more.
			l.srv.log.Error("event loop: epoll_wait failed; closing its connections", "err", err)
			l.forced = true
			l.closeAll()
			return
		}
		if l.ring != nil && n > 1 {
			l.receive(l.events[:n])
		}
		for _, ev := range l.events[:max(n, 0)] {
			fd := int(ev.Fd)
			if fd == l.wake[0] {
				l.drainWake()
				continue
			}
			if c := l.conns[fd]; c != nil {
				l.ready(c, ev.Events)
			}
		}
		l.sendDue()
		if l.closing || l.blocked > 0 || l.srv.idleTimeout.Load() > 0 {
			l.tick()
		}
		// A connection accepted before the close, or shaking hands
		// (TLS), may still come to this loop: it goes once the server
		// has none left.
		if l.closing && len(l.conns) == 0 && l.emptyInbox() && l.srv.connectedClients() == 0 {
			return
		}
	}
}

// wait waits up to timeout milliseconds (-1: no limit) for the loop's
// events. While the process runs fewer loops than Go has Ps, the loop
// waits keeping its own (waitHoldingP: see there), as whatever else runs
// (the collector, continuations, a test's clients) has a P no loop can
// take; otherwise (--event-loops as many as the cores, or several servers
// in one process, as in tests) it waits as a system call, first checking
// for events without one (pollNow). A resting loop, one that has found
// nothing for a while, also waits as a system call when it has no
// timeout: holding its P, it would wake every 10 ms (holdingWaitMax, and
// Go's monitor's signal), which made most of an idle server's wakings.
func (l *eventLoop) wait(procs int32, timeout int, resting bool) (int, error) {
	if runningLoops.Load() < procs && !(resting && timeout < 0) {
		return waitHoldingP(l.ep, l.events, timeout)
	}
	if n := pollNow(l.ep, l.events); n > 0 {
		return n, nil
	}
	return syscall.EpollWait(l.ep, l.events, timeout)
}

// restAfter is how many empty waits in a row (of up to holdingWaitMax
// each) make a loop resting (eventLoop.wait).
const restAfter = 10

// runningLoops counts the event loops running in the process, of every
// server.
var runningLoops atomic.Int32

// emptyInbox reports whether nothing is posted to the loop.
func (l *eventLoop) emptyInbox() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.adopted) == 0 && len(l.attend) == 0 && len(l.resumed) == 0
}

// drainWake empties the wake pipe and handles what was posted: new
// connections, ended continuations, connections woken by others.
func (l *eventLoop) drainWake() {
	var buf [64]byte
	for {
		if n, _ := syscall.Read(l.wake[0], buf[:]); n <= 0 {
			break
		}
	}
	// Before taking the lists: a post after this wakes the loop again.
	l.signaled.Store(false)
	l.mu.Lock()
	adopted, attend, resumed := takeSome(&l.adopted), takeSome(&l.attend), takeSome(&l.resumed)
	more := len(l.adopted)+len(l.attend)+len(l.resumed) > 0
	l.forced = l.forced || l.forcing
	l.mu.Unlock()
	if more {
		// The rest next turn, after the sockets epoll reports: a
		// stampede's thousands of answers do not hold up the others.
		l.notify()
	}
	if !l.closing && l.srv.isClosing() {
		l.beginClosing()
	}
	for _, c := range adopted {
		ev := syscall.EpollEvent{Events: interestIn, Fd: int32(c.ev.fd)}
		if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, c.ev.fd, &ev); err != nil {
			l.srv.log.Warn("event loop: cannot watch a connection; closing it", "err", err)
			syscall.Close(c.ev.fd)
			l.srv.finish(c, closedByClient)
			continue
		}
		c.ev.interest = interestIn
		l.conns[c.ev.fd] = c
		if l.closing {
			c.ev.drainBy = time.Now().Add(drainWindow)
		}
		// It may have sent something before it was watched.
		c.ev.readable = true
		l.serveSafely(c)
	}
	for _, c := range resumed {
		l.resume(c)
	}
	for _, c := range attend {
		if l.conns[c.ev.fd] == c {
			l.attendTo(c)
		}
	}
	if l.forced {
		l.closeAll()
	}
}

// turnShare bounds the connections of each posted list a loop turn takes,
// so that one turn's work, and the wait of a socket behind it, stays short.
const turnShare = 256

// takeSome takes up to turnShare connections from the front of list.
func takeSome(list *[]*Conn) []*Conn {
	l := *list
	if len(l) <= turnShare {
		*list = nil
		return l
	}
	taken := l[:turnShare:turnShare]
	*list = l[turnShare:]
	return taken
}

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
		l.srv.clock.Read()
	}
	if err != nil {
		l.ringFailed(err)
	}
}

// ringFailed turns the loop's ring off: from now on each read and write is
// its own system call.
func (l *eventLoop) ringFailed(err error) {
	l.srv.log.Warn("event loop: io_uring failed; each socket read and write is a system call of its own from now on", "err", err)
	l.ring.Close()
	l.ring = nil
	l.srv.uringLoops.Add(-1)
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

// arm registers c for events, if that is not what it is registered for.
func (l *eventLoop) arm(c *Conn, events uint32) {
	if c.ev.interest == events && events&epollOneShot == 0 {
		return
	}
	ev := syscall.EpollEvent{Events: events, Fd: int32(c.ev.fd)}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_MOD, c.ev.fd, &ev); err != nil {
		l.srv.log.Warn("event loop: epoll_ctl failed; closing the connection", "err", err)
	}
	c.ev.interest = events
}

// serveSafely is serve, and a panic ends only c's connection: it is
// answered -ERR internal error and closed.
func (l *eventLoop) serveSafely(c *Conn) {
	defer func() {
		if p := recover(); p != nil {
			l.srv.logPanic(c, p)
			c.w.Error("ERR internal error")
			l.drop(c, closedPanic, true)
		}
	}()
	l.serve(c)
}

// serve runs the commands c has sent until its input runs out, its socket
// is full, or a command must wait.
func (l *eventLoop) serve(c *Conn) {
	for {
		args, err := c.rd.ReadCommand(c.limits(), c.authenticated())
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
		l.srv.dispatch(c, args)
		if c.next.run != nil { // a command that must wait
			l.park(c)
			return
		}
		if c.quit {
			l.drop(c, closedQuit, true)
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
		l.drop(c, closedProtocol, true)
	case c.w.Err() != nil:
		l.drop(c, closedWriteError, false)
	default: // the client closed or reset its connection
		l.drop(c, closedByClient, false)
	}
}

// blockOutput stops reading c until its socket has taken what is queued.
func (l *eventLoop) blockOutput(c *Conn) {
	if !c.ev.outBlocked {
		c.ev.outBlocked = true
		c.ev.blockedAt = time.Now()
		l.blocked++
		l.srv.metrics.OutputBlocked.Inc()
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
		l.drop(c, closedWriteError, false)
		return false
	}
	c.ev.outBlocked = false
	l.blocked--
	l.arm(c, interestIn)
	return true
}

// park leaves c waiting for its continuation (c.next), which runs on a
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
	c.looped = false
	l.waiting.Add(1)
	l.srv.metrics.Parks.Inc()
	l.armParked(c)
	go l.srv.continueOffLoop(c)
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
	c.looped = true
	l.waiting.Add(-1)
	switch {
	case c.ev.panicked:
		c.ev.panicked = false
		c.w.Error("ERR internal error")
		l.drop(c, closedPanic, true)
		return
	case c.next.run != nil: // its continuation left another wait
		l.park(c)
		return
	case c.quit:
		l.drop(c, closedQuit, true)
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
		l.drop(c, closedWriteError, false)
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

// ended reports whether c must close, and why: its outbox died (the
// reason is the outbox's), it was killed, its user revoked, or Shutdown's
// deadline passed (closedByClient: finish names the reason).
func (l *eventLoop) ended(c *Conn) (reason string, ended bool) {
	if dead := c.closedFor(); dead != "" {
		return dead, true
	}
	s := l.srv
	s.mu.Lock()
	killed := c.killed
	s.mu.Unlock()
	return closedByClient, killed || c.revoked.Load() || l.forced
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
// CONFIG SET timeout's seconds, as Redis's clientsCron closes them:
// subscribers, monitors and clients waiting for a command (blocked, or
// held by CLIENT PAUSE: parked) are not idle.
func (l *eventLoop) tick() {
	now := time.Now()
	timeout := l.srv.opts.WriteTimeout
	idle := l.srv.idleTimeout.Load()
	sweepIdle := idle > 0 && now.Sub(l.idleSweptAt) >= time.Second
	if sweepIdle {
		l.idleSweptAt = now
	}
	for _, c := range l.conns {
		switch {
		case c.ev.parked:
		case sweepIdle && now.Unix()-c.lastActive.Load() > idle &&
			!c.monitoring.Load() && c.subs.total() == 0 && !c.ev.outBlocked:
			l.drop(c, closedIdle, false)
		case c.ev.outBlocked:
			if timeout > 0 && now.Sub(c.ev.blockedAt) >= timeout {
				l.drop(c, closedWriteError, false)
			}
		case l.closing && now.After(c.ev.drainBy):
			l.drop(c, closedByClient, true)
		}
	}
}

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
		l.drop(c, closedByClient, false)
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
	s := l.srv
	if reason == closedOutputLimit {
		s.log.Warn("client closed for overcoming its pubsub output buffer limit",
			"client", c.remote.String(), "id", c.id, "limit", s.pubsubLimit.Load().String())
	}
	c.leaveServer()
	if !graceful || c.w.Err() != nil || c.closedFor() != "" {
		c.ev.sock = nil
		syscall.Close(c.ev.fd)
		s.finish(c, reason)
		return
	}
	c.w.Flush()
	out := c.out.takeAll()
	nc, w, err := c.ev.sock.blocking()
	c.ev.sock = nil
	if err != nil {
		s.finish(c, reason)
		return
	}
	go func() {
		nc.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
		w.Write(out)
		lingerClose(nc)
		s.finish(c, reason)
	}()
}

// wake asks c's loop to look at c: a message was pushed to it, or it was
// killed, its user revoked or its outbox closed. Any goroutine may call it;
// one wake is pending at a time.
func (c *Conn) wake() {
	if c.ev.loop == nil || c.ev.attention.Swap(true) {
		return
	}
	c.ev.loop.post(&c.ev.loop.attend, c)
}

// continueOffLoop runs c's continuation on the goroutine park started and
// gives c back to its loop.
func (s *Server) continueOffLoop(c *Conn) {
	defer func() {
		if p := recover(); p != nil {
			s.logPanic(c, p)
			c.next = continuation{}
			c.ev.panicked = true
		}
		l := c.ev.loop
		l.post(&l.resumed, c)
	}()
	s.runContinuation(c)
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
		c.srv.clock.Read()
	}
	if !c.ev.sock.readsAhead() || err != nil {
		c.ev.readable = false
	}
	return n, err
}
