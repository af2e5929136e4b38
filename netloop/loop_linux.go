package netloop

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stampedeless/stampedeless/internal/uring"
)

// eventLoop serves its share of the connections the way redis-server serves
// all of them: one OS thread waits on epoll for sockets with input, reads
// each once, runs every whole command read and, once every socket it was
// told of has been read, writes each connection's replies once (sendDue),
// with no goroutine switch between a request and its reply. A server runs
// as many loops as it is told (Config.Loops) and gives each new connection
// to the next loop in turn (Loops.Adopt); a connection stays on its loop
// until it closes.
//
// Nothing on a loop waits. A command that must (a GETFILL waiting for its
// origin, a blocked list pop, a command waiting for the atomic section, a
// script, a write through to the shared tier) leaves the rest of its work
// to Client.Continue (Client.Command returns Wait); the loop parks the
// connection, runs that on a goroutine of its own, and resumes the
// connection when it ends (park, resume). A socket that takes less output than it is given is watched for room and
// its input left unread until it drains (blockOutput). Messages pushed to
// a connection by other goroutines (pub/sub, invalidations, MONITOR) are
// queued in its outbox and sent by its loop, which they wake (Conn.Wake).
type eventLoop struct {
	loops *Loops
	ep    int    // epoll instance
	wake  [2]int // a pipe written to wake the loop (post)

	mu       sync.Mutex
	adopted  []*Conn // accepted, not yet registered
	attend   []*Conn // woken by another goroutine (Conn.Wake)
	resumed  []*Conn // their continuation has ended (park)
	forcing  bool    // Shutdown's deadline passed (force)
	signaled atomic.Bool

	// The loop goroutine's alone.
	conns   map[int]*Conn // by file descriptor
	blocked int           // connections waiting for their socket to take output
	// idleSweptAt is when tick last looked for idle clients (timeout).
	idleSweptAt time.Time
	// buffersHeld: a connection may hold a query buffer sweepBuffers
	// would trim or give back (set by serve, cleared by sweepBuffers,
	// which last looked at buffersSweptAt).
	buffersHeld    bool
	buffersSweptAt time.Time
	due            []*Conn // served this turn, their replies not yet sent
	closing        bool    // the server is closing: connections drain and close
	forced         bool    // Shutdown's deadline passed: everything closes now
	events         []syscall.EpollEvent
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

func newEventLoop(g *Loops) (*eventLoop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("event loop: epoll_create1: %w", err)
	}
	l := &eventLoop{loops: g, ep: ep, conns: make(map[int]*Conn), events: make([]syscall.EpollEvent, 256)}
	if err := syscall.Pipe2(l.wake[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		syscall.Close(ep)
		return nil, fmt.Errorf("event loop: pipe2: %w", err)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(l.wake[0])}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, l.wake[0], &ev); err != nil {
		l.close()
		return nil, fmt.Errorf("event loop: epoll_ctl: %w", err)
	}
	if !g.cfg.NoURing {
		// As many reads or writes per system call as one epoll_wait
		// reports sockets.
		l.ring, err = uring.New(uint32(len(l.events)))
		if err != nil {
			g.log.Info("event loop: no io_uring; each socket read and write is a system call of its own", "err", err)
		} else {
			g.uring.Add(1)
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
		l.loops.uring.Add(-1)
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
	c.rd.BeforeBlock = c.sendLater
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
		case l.blocked > 0 || l.loops.host.IdleTimeout() > 0 || l.buffersHeld:
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
			l.loops.log.Error("event loop: epoll_wait failed; closing its connections", "err", err)
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
		if l.closing || l.blocked > 0 || l.loops.host.IdleTimeout() > 0 {
			l.tick()
		}
		if l.buffersHeld {
			l.sweepBuffers()
		}
		// A connection accepted before the close, or shaking hands
		// (TLS), may still come to this loop: it goes once the server
		// has none left.
		if l.closing && len(l.conns) == 0 && l.emptyInbox() && l.loops.host.Clients() == 0 {
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
	if !l.closing && l.loops.host.Closing() {
		l.beginClosing()
	}
	for _, c := range adopted {
		ev := syscall.EpollEvent{Events: interestIn, Fd: int32(c.ev.fd)}
		if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, c.ev.fd, &ev); err != nil {
			l.loops.log.Warn("event loop: cannot watch a connection; closing it", "err", err)
			syscall.Close(c.ev.fd)
			c.client.Closed(ClosedByClient)
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

// arm registers c for events, if that is not what it is registered for.
func (l *eventLoop) arm(c *Conn, events uint32) {
	if c.ev.interest == events && events&epollOneShot == 0 {
		return
	}
	ev := syscall.EpollEvent{Events: events, Fd: int32(c.ev.fd)}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_MOD, c.ev.fd, &ev); err != nil {
		l.loops.log.Warn("event loop: epoll_ctl failed; closing the connection", "err", err)
	}
	c.ev.interest = events
}

// Wake asks c's loop to look at c: a message was pushed to it, or it was
// killed, its user revoked or its outbox closed. Any goroutine may call it;
// one wake is pending at a time.
func (c *Conn) Wake() {
	if c.ev.loop == nil || c.ev.attention.Swap(true) {
		return
	}
	c.ev.loop.post(&c.ev.loop.attend, c)
}
