// Package netloop is the server's connection layer: event loops that wait
// on epoll for sockets with input, read them (through io_uring where the
// kernel allows, several sockets in one system call), hand each whole
// command read to the connection's Client, and write its replies, and
// the messages other goroutines push to it, without waiting. TLS runs on
// the loops too (crypto/tls over a socket that never blocks).
//
// The server is on the other side of two interfaces this package owns:
// Client, one connection's commands, and Host, what the loops ask of the
// server as a whole. Nothing here knows a command; nothing in the server
// touches a socket.
package netloop

import (
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/internal/clock"
	"github.com/stampedeless/stampedeless/resp"
)

// Client is the server's side of one connection. Its loop calls it, on
// the loop's goroutine, but for Continue, which runs on a goroutine of its
// own while the connection is parked.
type Client interface {
	// ReadLimits are the bounds the next command is read with, and
	// whether the client may send any command (resp.Reader.ReadCommand).
	ReadLimits() (limits resp.Limits, authenticated bool)
	// Command runs a command the client sent, writing its reply to the
	// connection's Writer; what it returns is what the loop does next.
	Command(args [][]byte) Next
	// Continue runs the rest of a command that waits (Command returned
	// Wait), off the loop; Conn.Context ends if the client leaves
	// meanwhile.
	Continue() Next
	// Panicked is told that Command or Continue panicked with p; the
	// connection is answered -ERR internal error and closed.
	Panicked(p any)
	// Ended reports whether the server wants the connection closed (it
	// was killed, its user deleted); asked when the connection is woken
	// (Conn.Wake).
	Ended() bool
	// Listening reports whether the client waits for pushes (a
	// subscriber, a monitor): however long it sends nothing, it is not
	// idle.
	Listening() bool
	// Queued is told that the connection's replies were queued behind
	// what was pushed to it (in push mode, or parked): what the server
	// held back until then may be pushed now.
	Queued()
	// Leave is told that the connection closes: nothing may be pushed
	// to it from now on. Its last replies are sent after.
	Leave()
	// Closed is told that the connection is closed, and why (a close
	// reason); it is the last call.
	Closed(reason string)
}

// Next is what a loop does after a Client's command.
type Next uint8

const (
	// Serve: read and run the connection's next command.
	Serve Next = iota
	// Wait: the command must wait; the loop parks the connection and
	// runs Client.Continue on a goroutine of its own.
	Wait
	// Quit: send the replies and close the connection.
	Quit
)

// Host is the server's side of the loops as a whole.
type Host interface {
	// Closing reports whether the server is shutting down: the loops
	// drain their connections, and end once Clients is 0.
	Closing() bool
	// Clients is how many connections the server has open, handshaking
	// ones included.
	Clients() int
	// IdleTimeout is the seconds after which a client that sends nothing
	// is closed (CONFIG SET timeout); 0: never.
	IdleTimeout() int64
	// OutputLimit bounds a connection's queued output in push mode.
	OutputLimit() OutputLimit
	// OutputLimitBroken is told that a connection broke OutputLimit; it
	// is closed.
	OutputLimitBroken()
}

// Close reasons, which Client.Closed is told.
const (
	ClosedByClient   = "client"
	ClosedQuit       = "quit"
	ClosedProtocol   = "protocol_error"
	ClosedWriteError = "write_error"
	ClosedPanic      = "panic"
	// A connection whose queued output broke its Host's OutputLimit
	// (outbox.go).
	ClosedOutputLimit = "output_buffer_limit"
	ClosedIdle        = "idle" // idle past the Host's IdleTimeout
)

// Counter is a metric the loops count events on.
type Counter interface{ Inc() }

// Config is what New makes the loops with.
type Config struct {
	// Loops is how many loops serve, at least one; each new connection
	// goes to the next in turn and stays there.
	Loops int
	// NoURing: each socket read and write is a system call of its own,
	// even where io_uring is available.
	NoURing bool
	// WriteTimeout closes a connection whose socket takes no output for
	// that long.
	WriteTimeout time.Duration
	Log          *slog.Logger
	// Clock is read again after each read from a socket: the commands
	// read run at that time.
	Clock *clock.Clock
	// OutputBlocked counts connections that wait for their socket to
	// take output; Parks, connections parked on a command that waits.
	OutputBlocked, Parks Counter
}

// Loops are a server's event loops.
type Loops struct {
	host   Host
	cfg    Config
	log    *slog.Logger
	clock  *clock.Clock
	loops  []*eventLoop
	next   atomic.Uint64
	uring  atomic.Int32 // loops with an io_uring (eventLoop.ring)
	peakMu sync.Mutex   // protects peak
	// peak is the largest output buffer of connections that closed in
	// the last seconds.
	peak peakWindow
}

// New makes cfg.Loops loops for host; Start runs them. Where there is no
// epoll it fails.
func New(cfg Config, host Host) (*Loops, error) {
	if cfg.Loops < 1 {
		return nil, fmt.Errorf("netloop: %d loops: at least one serves", cfg.Loops)
	}
	g := &Loops{host: host, cfg: cfg, log: cfg.Log, clock: cfg.Clock}
	for range cfg.Loops {
		l, err := newEventLoop(g)
		if err != nil {
			for _, l := range g.loops {
				l.close()
			}
			return nil, err
		}
		g.loops = append(g.loops, l)
	}
	return g, nil
}

// Start runs each loop on a goroutine of its own, which calls done when
// it ends: once the Host is closing and has no connection left.
func (g *Loops) Start(done func()) {
	for _, l := range g.loops {
		go func() {
			defer done()
			l.run()
		}()
	}
}

// Adopt gives c, accepted on nc (and past its TLS handshake, if any), to
// the next loop, which serves it until it closes. On an error nc is left
// open and c unserved.
func (g *Loops) Adopt(c *Conn, nc net.Conn) error {
	l := g.loops[(g.next.Add(1)-1)%uint64(len(g.loops))]
	return l.adopt(c, nc)
}

// Len is how many loops there are.
func (g *Loops) Len() int { return len(g.loops) }

// URing reports whether a loop makes its reads and writes through
// io_uring.
func (g *Loops) URing() bool { return g.uring.Load() > 0 }

// Waiting is how many connections are parked on a command that waits.
func (g *Loops) Waiting() int64 {
	var n int64
	for _, l := range g.loops {
		n += l.waiting.Load()
	}
	return n
}

// Notify wakes every loop, to look at the Host's state (closing, a new
// idle timeout).
func (g *Loops) Notify() {
	for _, l := range g.loops {
		l.notify()
	}
}

// Force has every loop close its connections now: Shutdown's deadline
// passed.
func (g *Loops) Force() {
	for _, l := range g.loops {
		l.force()
	}
}

// keepPeak keeps a closing connection's recent largest output buffer for
// RecentMaxOutput.
func (g *Loops) keepPeak(c *Conn) {
	now := time.Now().Unix()
	_, peak := c.OutputBuffer(now)
	g.peakMu.Lock()
	g.peak.observe(now, peak)
	g.peakMu.Unlock()
}

// ClosedMaxOutput is the largest output buffer of the connections that
// closed in the last peakSeconds, at unix second now.
func (g *Loops) ClosedMaxOutput(now int64) int64 {
	g.peakMu.Lock()
	defer g.peakMu.Unlock()
	return g.peak.max(now)
}
