package netloop

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/resp"
)

// Conn is one connection as the loops serve it: its reader and writer,
// its outbox, and its loop's state. Its zero value is a connection no
// loop serves (a script's), with no context of its own; Init makes it one
// a loop may adopt.
type Conn struct {
	client Client
	loops  *Loops
	rd     *resp.Reader
	w      *resp.Writer
	// ev is the loop's state for this connection.
	ev loopState
	// out queues the connection's output in push mode (outbox.go).
	out outbox
	// fd is the socket's descriptor CLIENT LIST shows, -1 until its loop
	// has it (a TLS connection's handshake).
	fd         atomic.Int64
	lastActive atomic.Int64 // unix seconds when the last batch was answered
	bufs       bufferStats
}

// loopState is what the event loop keeps on a connection (loop_linux.go
// and the files beside it), the loop goroutine's alone but for attention.
type loopState struct {
	loop *eventLoop
	// fd is the socket, duplicated out of Go's poller; sock reads and
	// writes it; interest is what it is registered with in epoll;
	// readable: epoll said it has input, which the next read reads.
	fd       int
	sock     socket
	interest uint32
	readable bool
	// received: this turn's read was made with the others' (receive),
	// which set readable; readErr is what that read ended in (the end of
	// input, a socket error), for the reader's next read to return.
	received bool
	readErr  error
	// sendDue: c is in its loop's list of replies to send this turn.
	sendDue bool
	// outBlocked: the socket did not take all output, and input is left
	// unread until it has, since blockedAt (or the last progress).
	outBlocked bool
	blockedAt  time.Time
	// parked: a goroutine runs the command's continuation; ctx ends when
	// the client leaves (peerGone) or the connection must close. after
	// is what the continuation returned, panicked whether it panicked.
	parked   bool
	peerGone bool
	panicked bool
	after    Next
	ctx      context.Context
	cancel   context.CancelFunc
	// During shutdown: the connection closes once quiet past drainBy;
	// drained is what it had received when drainBy was last set.
	drainBy time.Time
	drained int64
	// attention: another goroutine woke the loop for this connection,
	// which the loop has not looked at yet (Conn.Wake).
	attention atomic.Bool
}

// Init makes c a connection of loops for client, created at created.
func (c *Conn) Init(client Client, loops *Loops, created time.Time) {
	c.client, c.loops = client, loops
	c.w = resp.NewWriter(outboxConn{c: c}, 0)
	c.rd = resp.NewReader(loopReader{c})
	c.fd.Store(-1)
	c.lastActive.Store(created.Unix())
}

// Writer is where c's replies are written; its loop sends them.
func (c *Conn) Writer() *resp.Writer { return c.w }

// Context ends when c's client leaves, or c must close, while a command
// of c's waits (Client.Continue); elsewhere it is the background.
func (c *Conn) Context() context.Context {
	if c.ev.ctx != nil {
		return c.ev.ctx
	}
	return context.Background()
}

// FD is c's socket's descriptor, -1 before its loop has it.
func (c *Conn) FD() int64 { return c.fd.Load() }

// LastActive is the unix second c's last batch of replies was sent.
func (c *Conn) LastActive() int64 { return c.lastActive.Load() }

// Lingering after the last reply: how long, and how many bytes of further
// input to discard at most.
const (
	lingerTime  = time.Second
	lingerBytes = 64 << 20
)

// LingerClose sends FIN, discards input for up to lingerTime and closes
// nc. Closing a socket with unread input makes the kernel send a reset,
// which can destroy replies the client has not read yet, such as the error
// explaining why it is closed.
func LingerClose(nc net.Conn) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		nc.SetReadDeadline(time.Now().Add(lingerTime))
		io.Copy(io.Discard, io.LimitReader(nc, lingerBytes))
	}
	nc.Close()
}
