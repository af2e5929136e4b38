package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stampedeless/stampedeless/resp"
)

// eventLoop serves connections the way redis-server does: one OS thread
// waits on epoll for sockets with input, reads each once, runs every whole
// command read and writes the replies, with no goroutine switch between a
// request and its reply.
//
// It serves only what cannot wait. A connection moves to a goroutine of its
// own when a GETFILL must wait for the origin (Conn.resume) or when its
// socket does not take all its replies at once; the
// goroutine gives it back once it has answered everything the client sent.
// A connection that ends in any way (QUIT, end of input, a protocol error,
// a panic) or is open at shutdown leaves for good. The goroutine's path,
// which handles all of those, takes over with nothing lost.
type eventLoop struct {
	srv  *Server
	ep   int    // epoll instance
	wake [2]int // a pipe: adopt and Shutdown write to it to wake the loop

	mu      sync.Mutex
	adopted []*Conn // accepted, not yet registered
	kills   []*Conn // to close, for CLIENT KILL
	stopped bool    // the loop has handed everything on and takes no more

	conns   map[int]*Conn // by file descriptor; the loop goroutine's alone
	clients atomic.Int64  // len(conns), for INFO and metrics
	// revocations is the server's count of revocations the loop has
	// looked for revoked connections after (acl.go).
	revocations int64
}

// What a loop connection's reader returns when its socket has no more input
// for now (errWouldBlock), and its flush when the socket takes no more
// output (errOutputBlocked, which sends it to a goroutine).
var (
	errWouldBlock    = errors.New("server: would block")
	errOutputBlocked = errors.New("server: output would block")
)

func newEventLoop(s *Server) (*eventLoop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("event loop: epoll_create1: %w", err)
	}
	l := &eventLoop{srv: s, ep: ep, conns: make(map[int]*Conn)}
	if err := syscall.Pipe2(l.wake[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		syscall.Close(ep)
		return nil, fmt.Errorf("event loop: pipe2: %w", err)
	}
	if err := l.watch(l.wake[0]); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

func (l *eventLoop) watch(fd int) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("event loop: epoll_ctl: %w", err)
	}
	return nil
}

// clientCount is how many connections the loop serves now.
func (l *eventLoop) clientCount() int64 { return l.clients.Load() }

func (l *eventLoop) close() {
	syscall.Close(l.ep)
	syscall.Close(l.wake[0])
	syscall.Close(l.wake[1])
}

// notify wakes the loop; a full pipe already will.
func (l *eventLoop) notify() {
	syscall.Write(l.wake[1], []byte{0})
}

// adopt takes an accepted connection into the loop, or serves it on a
// goroutine if the loop cannot take it.
func (l *eventLoop) adopt(c *Conn) {
	if !l.take(c) {
		go l.srv.serveConn(c, nil)
	}
}

// take moves c into the loop and reports whether it did. Its socket is
// duplicated out of Go's network poller, so that only the loop's epoll
// watches it, and the net.Conn is closed. The loop takes nothing once it has
// stopped (the server is closing: the goroutine path drains c, and Shutdown
// has set its deadline).
func (l *eventLoop) take(c *Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	fd, err := detach(c.nc)
	if err != nil {
		l.srv.log.Warn("event loop: cannot take a connection; serving it on a goroutine", "err", err)
		return false
	}
	c.ev.fd = fd
	l.srv.mu.Lock() // Shutdown reads c.nc
	c.nc = loopNetConn{}
	l.srv.mu.Unlock()
	c.rd.SetSource(loopReader{c})
	c.rd.BeforeBlock = c.loopFlush
	c.ev.backToLoop = false
	c.ev.looped = true
	l.adopted = append(l.adopted, c)
	l.notify()
	return true
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
// connection has been handed to a goroutine.
func (l *eventLoop) run() {
	defer l.srv.wg.Done()
	defer l.close()
	// The loop thread does the serving; nothing else should be scheduled on
	// it between a read and its reply.
	runtime.LockOSThread()
	events := make([]syscall.EpollEvent, 256)
	for {
		n, err := syscall.EpollWait(l.ep, events, -1)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			l.srv.log.Error("event loop: epoll_wait failed; handing its connections to goroutines", "err", err)
			l.ejectAll()
			return
		}
		for _, ev := range events[:max(n, 0)] {
			fd := int(ev.Fd)
			if fd == l.wake[0] {
				l.drainWake()
				continue
			}
			if c := l.conns[fd]; c != nil {
				c.ev.readable = true
				l.serveSafely(c)
			}
		}
		if l.srv.isClosing() {
			l.ejectAll()
			return
		}
	}
}

// drainWake empties the wake pipe and registers adopted connections.
func (l *eventLoop) drainWake() {
	var buf [64]byte
	for {
		if n, _ := syscall.Read(l.wake[0], buf[:]); n <= 0 {
			break
		}
	}
	l.mu.Lock()
	adopted, kills := l.adopted, l.kills
	l.adopted, l.kills = nil, nil
	l.mu.Unlock()
	defer l.closeKilled(kills)
	for _, c := range adopted {
		if err := l.watch(c.ev.fd); err != nil {
			l.srv.log.Warn("event loop: cannot watch a connection; serving it on a goroutine", "err", err)
			l.eject(c, nil, handoffError)
			continue
		}
		l.conns[c.ev.fd] = c
		l.clients.Add(1)
		// It may have sent something before it was watched.
		c.ev.readable = true
		l.serveSafely(c)
	}
	// A connection whose user was deleted closes now, not at its next
	// command: its goroutine closes it on errRevoked.
	if n := l.srv.acl.revocations.Load(); n != l.revocations {
		l.revocations = n
		for _, c := range l.conns {
			if c.revoked.Load() {
				l.eject(c, errRevoked, handoffEnd)
			}
		}
	}
}

// kill has the loop close c if it serves c (CLIENT KILL, which has marked
// c killed). A connection that left the loop meanwhile is closed by
// eject, or was closed by Server.kill.
func (l *eventLoop) kill(c *Conn) {
	l.mu.Lock()
	l.kills = append(l.kills, c)
	l.mu.Unlock()
	l.notify()
}

// closeKilled hands the killed connections the loop still serves to their
// goroutines, which close them: eject closes a killed connection's socket.
func (l *eventLoop) closeKilled(kills []*Conn) {
	for _, c := range kills {
		for _, served := range l.conns {
			if served == c {
				l.eject(c, nil, handoffEnd)
				break
			}
		}
	}
}

// Reasons a connection leaves the loop, the label of
// stampedeless_event_loop_handoffs_total. After the first two it comes back
// (stampedeless_event_loop_returns_total) when its goroutine is idle.
const (
	handoffCommand  = "command"  // a GETFILL that waits for the origin
	handoffOutput   = "output"   // the socket did not take every reply
	handoffEnd      = "end"      // QUIT, end of input, a protocol error, a panic or CLIENT KILL
	handoffShutdown = "shutdown" // the server is closing
	handoffError    = "error"    // the loop could not serve it
)

// serveSafely is serve, and a panic ends only c's connection, as on a
// goroutine: the goroutine it is handed to answers and closes it.
func (l *eventLoop) serveSafely(c *Conn) {
	defer func() {
		if p := recover(); p != nil {
			l.srv.logPanic(c, p)
			l.eject(c, errPanicked, handoffEnd)
		}
	}()
	l.serve(c)
}

// serve runs the commands c has sent until its input runs out.
func (l *eventLoop) serve(c *Conn) {
	for {
		args, err := c.rd.ReadCommand(c.limits(), c.authenticated())
		switch {
		case errors.Is(err, errWouldBlock):
			return
		case errors.Is(err, errOutputBlocked):
			l.eject(c, nil, handoffOutput)
			return
		case err != nil:
			l.eject(c, err, handoffEnd)
			return
		}
		l.srv.dispatch(c, args)
		if c.next.run != nil { // a command that must wait
			l.eject(c, nil, handoffCommand)
			return
		}
		if c.quit {
			l.eject(c, nil, handoffEnd)
			return
		}
		if c.w.Len() > resp.MaxRetainedReply {
			if err := c.loopFlush(); err != nil {
				l.eject(c, nil, handoffOutput)
				return
			}
		}
	}
}

// eject hands c to a goroutine of its own, with the error that ended its
// reading, if any.
func (l *eventLoop) eject(c *Conn, handed error, reason string) {
	s := l.srv
	s.metrics.EventLoopHandoffs.WithLabelValues(reason).Inc()
	if _, ok := l.conns[c.ev.fd]; ok {
		syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, c.ev.fd, nil)
		delete(l.conns, c.ev.fd)
		l.clients.Add(-1)
	}
	f := os.NewFile(uintptr(c.ev.fd), "")
	nc, err := net.FileConn(f) // a duplicate, in Go's poller
	f.Close()
	c.ev.fd = -1
	if err != nil {
		s.log.Warn("event loop: cannot hand a connection to a goroutine; closing it", "err", err)
		s.finish(c, closedByClient)
		return
	}
	s.mu.Lock()
	c.nc = nc
	closing := s.closing
	if c.killed && !c.quit {
		// Killed by another client: its goroutine's first read fails, and
		// it finishes. One that killed itself closes after its reply.
		nc.Close()
	}
	s.mu.Unlock()
	c.w.SetConn(nc)
	c.rd.SetSource(connReader{c})
	c.rd.BeforeBlock = c.flush
	c.ev.looped = false
	if closing {
		nc.SetReadDeadline(time.Now().Add(drainWindow))
	}
	// A connection that left to wait, or to wait for its client, comes
	// back once its goroutine has nothing left to do.
	c.ev.backToLoop = reason == handoffCommand || reason == handoffOutput
	go s.serveConn(c, handed)
}

// ejectAll hands every connection to a goroutine, at shutdown.
func (l *eventLoop) ejectAll() {
	l.mu.Lock()
	adopted := l.adopted
	l.adopted = nil
	l.stopped = true
	l.mu.Unlock()
	for _, c := range adopted {
		l.eject(c, nil, handoffShutdown)
	}
	for _, c := range l.conns {
		l.eject(c, nil, handoffShutdown)
	}
}

// loopReader reads a loop connection's socket once per readiness event.
type loopReader struct{ c *Conn }

func (r loopReader) Read(p []byte) (int, error) {
	c := r.c
	if !c.ev.readable {
		return 0, errWouldBlock
	}
	c.ev.readable = false
	for {
		n, err := syscall.Read(c.ev.fd, p)
		switch {
		case n > 0:
			return n, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return 0, errWouldBlock
		case err == nil:
			return 0, io.EOF
		default:
			return 0, err
		}
	}
}

// loopFlush writes a loop connection's pending replies without waiting.
// What the socket does not take stays in the writer, and errOutputBlocked
// sends the connection to a goroutine, whose flush waits for the client.
func (c *Conn) loopFlush() error {
	w := c.w
	if w.Len() == 0 {
		return nil
	}
	now := time.Now().Unix()
	c.lastActive.Store(now)
	c.bufs.observe(c, now)
	sent, out := 0, w.Buffered()
	for sent < len(out) {
		n, err := syscall.Write(c.ev.fd, out[sent:])
		if n > 0 {
			sent += n
		}
		switch {
		case err == nil || errors.Is(err, syscall.EINTR):
		case errors.Is(err, syscall.EAGAIN):
			w.Sent(sent)
			return errOutputBlocked
		default:
			w.Fail(err)
			return err
		}
	}
	w.Sent(sent)
	return nil
}

// loopNetConn stands in for a loop connection's net.Conn, which was closed
// when its socket was taken into the loop. Only Shutdown reaches it, to set
// a drain deadline the loop applies itself when it hands the connection on.
type loopNetConn struct{}

func (loopNetConn) Read([]byte) (int, error)         { return 0, net.ErrClosed }
func (loopNetConn) Write([]byte) (int, error)        { return 0, net.ErrClosed }
func (loopNetConn) Close() error                     { return nil }
func (loopNetConn) LocalAddr() net.Addr              { return nil }
func (loopNetConn) RemoteAddr() net.Addr             { return nil }
func (loopNetConn) SetDeadline(time.Time) error      { return nil }
func (loopNetConn) SetReadDeadline(time.Time) error  { return nil }
func (loopNetConn) SetWriteDeadline(time.Time) error { return nil }
