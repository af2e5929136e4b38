package netloop

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// rawSocket is a plain TCP or unix socket, non-blocking.
type rawSocket struct{ fd int }

func (s rawSocket) Read(p []byte) (int, error) { return readFD(s.fd, p) }

func (s rawSocket) Write(p []byte) (int, error) { return writeFD(s.fd, p) }

func (rawSocket) Pending() int        { return 0 }
func (rawSocket) FlushPending() error { return nil }
func (rawSocket) readsAhead() bool    { return false }

func (s rawSocket) blocking() (net.Conn, io.Writer, error) {
	nc, err := fileConn(s.fd)
	return nc, nc, err
}

// readFD reads fd once: errWouldBlock when it has nothing now, io.EOF at
// the end of its input.
func readFD(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, errno := rawSyscall(syscall.SYS_READ, fd, unsafe.Pointer(&p[0]), len(p))
		switch {
		case n > 0:
			return n, nil
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return 0, errWouldBlock
		case errno == 0:
			return 0, io.EOF
		default:
			return 0, errno
		}
	}
}

// writeFD writes p to fd until the socket takes no more: fewer bytes and
// errWouldBlock then.
func writeFD(fd int, p []byte) (int, error) {
	sent := 0
	for sent < len(p) {
		n, errno := rawSyscall(syscall.SYS_WRITE, fd, unsafe.Pointer(&p[sent]), len(p)-sent)
		if n > 0 {
			sent += n
		}
		switch errno {
		case 0, syscall.EINTR:
		case syscall.EAGAIN:
			return sent, errWouldBlock
		default:
			return sent, errno
		}
	}
	return sent, nil
}

// rawSyscall makes a read or write of n bytes at p on a non-blocking
// descriptor without telling Go's scheduler, as syscall.Read and Write
// do: the call never blocks, so nothing needs this thread's P meanwhile,
// and the scheduler's bookkeeping around a call (and the handoff of the P
// to another thread when a call seems slow) costs more than the call.
func rawSyscall(trap uintptr, fd int, p unsafe.Pointer, n int) (int, syscall.Errno) {
	r, _, errno := syscall.RawSyscall(trap, uintptr(fd), uintptr(p), uintptr(n))
	if errno != 0 {
		return 0, errno
	}
	return int(r), 0
}

// pollNow is epoll_wait that does not wait, made as rawSyscall makes its
// calls: a loop busy with work finds its next events without the
// scheduler's handoff, and waits (syscall.EpollWait) only when there are
// none.
func pollNow(ep int, events []syscall.EpollEvent) int {
	r, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_WAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if errno != 0 {
		return 0
	}
	return int(r)
}

// waitHoldingP is epoll_wait (timeout in milliseconds, -1 for none) made
// as rawSyscall makes its calls, although it may wait: the loop's thread
// keeps its P while it sleeps in the kernel. syscall.EpollWait tells the
// scheduler it is in a system call, and each such call (tens of thousands a
// second on a busy loop) wakes Go's monitor thread to check it, every 20
// µs instead of every 10 ms; pollNow before it, which spares that when
// events are ready, is a second epoll_wait when none are. Kept by the
// loop, the P cannot run anything else meanwhile, so the loop does this
// only while the process runs fewer loops than Go has Ps (the rest of the
// process runs on the others: eventLoop.wait). The runtime sees the loop as running and stops it for
// the collector with a signal, which ends the wait (EINTR); the wait also
// ends within holdingWaitMax, so that even with asynchronous preemption
// off (GODEBUG=asyncpreemptoff=1) nothing waits longer than that for it.
func waitHoldingP(ep int, events []syscall.EpollEvent, timeout int) (int, error) {
	if timeout < 0 || timeout > holdingWaitMax {
		timeout = holdingWaitMax
	}
	r, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_WAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(timeout), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

// holdingWaitMax is the longest waitHoldingP waits, in milliseconds: the
// scheduler's own limit on a goroutine running without a pause (10 ms,
// after which it asks it to yield anyway).
const holdingWaitMax = 10

// fileConn is a net.Conn on a duplicate of fd, in Go's poller; fd is
// closed.
func fileConn(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "")
	defer f.Close() // fd; the net.Conn has a duplicate
	return net.FileConn(f)
}

// Handshake runs c's TLS handshake with cfg on nc, which it may wait for
// up to handshakeTimeout; c then speaks TLS on its loop (Loops.Adopt),
// where crypto/tls reads and writes its socket without waiting
// (tlsSocket). On an error nc is left open.
func (c *Conn) Handshake(nc net.Conn, cfg *tls.Config) error {
	stream := &tlsStream{nc: nc, fd: -1}
	conn := tls.Server(stream, cfg)
	nc.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := conn.Handshake(); err != nil {
		return err
	}
	nc.SetDeadline(time.Time{})
	c.ev.sock = &tlsSocket{conn: conn, stream: stream}
	return nil
}

// handshakeTimeout bounds a TLS handshake, so that a client that connects
// and says nothing does not hold a goroutine for good.
const handshakeTimeout = 10 * time.Second

// tlsSocket is a TLS connection served by an event loop: crypto/tls over a
// stream (tlsStream) that reads and writes the raw socket without waiting.
type tlsSocket struct {
	conn   *tls.Conn
	stream *tlsStream
}

// errTLSWouldBlock is what tlsStream's Read returns when the socket has no
// input now; crypto/tls keeps a partial record and returns the error,
// which a temporary net.Error does not make sticky.
var errTLSWouldBlock net.Error = tlsWouldBlock{}

type tlsWouldBlock struct{}

func (tlsWouldBlock) Error() string   { return "netloop: tls read would block" }
func (tlsWouldBlock) Timeout() bool   { return true }
func (tlsWouldBlock) Temporary() bool { return true }

func (s *tlsSocket) Read(p []byte) (int, error) {
	n, err := s.conn.Read(p)
	if n == 0 && errors.Is(err, errTLSWouldBlock) {
		return 0, errWouldBlock
	}
	return n, err
}

// Write encrypts p whole; what the socket does not take waits in the
// stream (Pending). crypto/tls makes any write error permanent, so the
// stream never reports a full socket to it.
func (s *tlsSocket) Write(p []byte) (int, error) {
	n, err := s.conn.Write(p)
	if err == nil && s.stream.Pending() > 0 {
		return n, errWouldBlock
	}
	return n, err
}

func (s *tlsSocket) Pending() int        { return s.stream.Pending() }
func (s *tlsSocket) FlushPending() error { return s.stream.flush() }
func (s *tlsSocket) readsAhead() bool    { return true }

func (s *tlsSocket) blocking() (net.Conn, io.Writer, error) {
	nc, err := fileConn(s.stream.fd)
	if err != nil {
		return nil, nil, err
	}
	// The ciphertext already encrypted goes first, then the rest through
	// TLS, both waiting for the client now.
	pending := s.stream.out
	s.stream.out, s.stream.fd, s.stream.nc = nil, -1, nc
	if _, err := nc.Write(pending); err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, s.conn, nil
}

// tlsStream is the transport under a TLS connection. During the handshake,
// which runs before the connection joins a loop, and at its close it is
// nc, which waits; on the loop it is the raw descriptor fd, which does not:
// a read that would block returns errTLSWouldBlock, and what the socket
// does not take of a write is kept in out and sent by flush.
type tlsStream struct {
	nc  net.Conn
	fd  int
	out []byte
}

func (t *tlsStream) Read(p []byte) (int, error) {
	if t.nc != nil {
		return t.nc.Read(p)
	}
	n, err := readFD(t.fd, p)
	if errors.Is(err, errWouldBlock) {
		return 0, errTLSWouldBlock
	}
	return n, err
}

func (t *tlsStream) Write(p []byte) (int, error) {
	if t.nc != nil {
		return t.nc.Write(p)
	}
	if len(t.out) == 0 {
		n, err := writeFD(t.fd, p)
		if err != nil && !errors.Is(err, errWouldBlock) {
			return n, err
		}
		p = p[n:]
	}
	t.out = append(t.out, p...)
	return len(p), nil
}

// Pending is the ciphertext the socket has not taken yet.
func (t *tlsStream) Pending() int { return len(t.out) }

func (t *tlsStream) flush() error {
	if len(t.out) == 0 {
		return nil
	}
	n, err := writeFD(t.fd, t.out)
	t.out = t.out[n:]
	if len(t.out) == 0 {
		t.out = nil
	}
	return err
}

func (t *tlsStream) Close() error {
	if t.nc != nil {
		return t.nc.Close()
	}
	return nil
}

func (t *tlsStream) LocalAddr() net.Addr  { return t.addr(net.Conn.LocalAddr) }
func (t *tlsStream) RemoteAddr() net.Addr { return t.addr(net.Conn.RemoteAddr) }

func (t *tlsStream) addr(of func(net.Conn) net.Addr) net.Addr {
	if t.nc != nil {
		return of(t.nc)
	}
	return nil
}

func (t *tlsStream) SetDeadline(d time.Time) error {
	if t.nc != nil {
		return t.nc.SetDeadline(d)
	}
	return nil
}

func (t *tlsStream) SetReadDeadline(d time.Time) error {
	if t.nc != nil {
		return t.nc.SetReadDeadline(d)
	}
	return nil
}

func (t *tlsStream) SetWriteDeadline(d time.Time) error {
	if t.nc != nil {
		return t.nc.SetWriteDeadline(d)
	}
	return nil
}
