package server

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stampedeless/stampedeless/internal/memsize"
	"github.com/stampedeless/stampedeless/resp"
)

// OutputLimit bounds the output a connection in push mode (a subscriber)
// has queued and not yet sent, as the pubsub class of Redis's
// client-output-buffer-limit does: at Hard bytes, or at Soft bytes for
// longer than SoftTime (counted in whole seconds, as Redis does), the
// connection is closed. A zero Hard or Soft is no such bound.
type OutputLimit struct {
	Hard, Soft int64
	SoftTime   time.Duration
}

// DefaultPubSubOutputLimit is Redis's default for pub/sub clients:
// 32mb hard, 8mb soft for 60 seconds.
var DefaultPubSubOutputLimit = OutputLimit{Hard: 32 << 20, Soft: 8 << 20, SoftTime: 60 * time.Second}

// ParseOutputLimit parses "hard soft seconds", the notation of one class of
// Redis's client-output-buffer-limit ("32mb 8mb 60").
func ParseOutputLimit(s string) (OutputLimit, error) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return OutputLimit{}, fmt.Errorf("want <hard> <soft> <soft seconds>, got %q", s)
	}
	hard, err1 := memsize.Parse(f[0])
	soft, err2 := memsize.Parse(f[1])
	secs, err3 := strconv.ParseInt(f[2], 10, 32)
	if err := errors.Join(err1, err2, err3); err != nil || secs < 0 {
		return OutputLimit{}, errBufferLimitValues
	}
	return OutputLimit{Hard: hard, Soft: soft, SoftTime: time.Duration(secs) * time.Second}, nil
}

var errBufferLimitValues = errors.New("Error in hard, soft or soft_seconds setting in buffer limit configuration.")

// String is the limit in ParseOutputLimit's notation, in bytes.
func (l OutputLimit) String() string {
	return fmt.Sprintf("%d %d %d", l.Hard, l.Soft, int64(l.SoftTime/time.Second))
}

// Human is the limit in ParseOutputLimit's notation with memory units,
// as a flag's default shows it.
func (l OutputLimit) Human() string {
	return fmt.Sprintf("%s %s %d", memsize.Format(l.Hard), memsize.Format(l.Soft), int64(l.SoftTime/time.Second))
}

// reached reports whether n queued bytes at unix second now break the
// limit. softSince is when the queue was last seen at or past Soft without
// a break in between (0: it was not); Redis's rule is that the soft limit
// is broken once it has held for more than SoftTime.
func (l OutputLimit) reached(n, now int64, softSince *int64) bool {
	if l.Hard > 0 && n >= l.Hard {
		return true
	}
	if l.Soft == 0 || n < l.Soft {
		*softSince = 0
		return false
	}
	if *softSince == 0 {
		*softSince = now
		return false
	}
	return now-*softSince > int64(l.SoftTime/time.Second)
}

// outbox is a connection's output while it is in push mode (while it is
// subscribed, or tracks keys: CLIENT TRACKING): the replies its own goroutine writes and the messages other
// goroutines push to it are queued here whole, and one writer goroutine
// sends the queue. A push therefore never lands inside a reply, and both
// keep the order they were queued in. The queue is bounded by the server's
// OutputLimit: past it the connection is closed and the queue dropped, so a
// subscriber that does not read cannot grow the server's memory.
//
// The connection's goroutine starts push mode (startPushing), owns the
// writer goroutine and waits for it (stopPushing) before the connection
// leaves push mode or closes. Nothing here does I/O under mu: the writer
// takes the queue under it and sends it after; setting a deadline is not
// I/O.
type outbox struct {
	mu sync.Mutex
	// w holds the queue; pushes are encoded in its protocol, which
	// follows the connection's replies (a HELLO changes it from the point
	// in the stream where its reply is queued).
	w resp.Writer
	// sending is how many bytes the writer has taken and not yet sent;
	// they count toward the limit.
	sending int
	// on: the connection is in push mode. closing: the writer sends what
	// is queued and exits. dead, if not empty, is why the connection is
	// being closed (a close reason); nothing is queued or sent any more.
	on, closing bool
	dead        string
	softSince   int64
	peak        peakWindow
	nc          net.Conn      // the socket the writer sends on
	wake        chan struct{} // one pending signal: the writer has something to do
}

// errOutboxClosed is a reply flush's error once the outbox is dead.
var errOutboxClosed = errors.New("server: connection closed for its output buffer or a write error")

// outboxConn stands in for the socket in the Writer of a connection in
// push mode: a Flush queues the replies in the outbox. The connection's
// goroutine alone uses it.
type outboxConn struct {
	net.Conn
	c *Conn
}

func (oc outboxConn) Write(b []byte) (int, error) {
	c := oc.c
	o := &c.out
	o.mu.Lock()
	if o.dead != "" {
		o.mu.Unlock()
		return 0, errOutboxClosed
	}
	o.w.Raw(b)
	o.w.SetProtocol(c.w.Protocol())
	o.checkLimit(c)
	o.mu.Unlock()
	o.signal()
	if c.tracked {
		// Invalidations held back until these replies were queued.
		c.releaseTracked()
	}
	return len(b), nil
}

func (outboxConn) SetWriteDeadline(time.Time) error { return nil }

// startPushing puts c in push mode and starts its writer goroutine; it is
// a no-op in push mode already. Replies c has written and not yet flushed
// are queued at its next flush, before anything pushed after that.
// c must be on a goroutine of its own, not on the event loop.
func (c *Conn) startPushing() {
	if c.pushDone != nil {
		return
	}
	o := &c.out
	o.mu.Lock()
	o.on, o.closing, o.dead, o.softSince = true, false, "", 0
	o.nc = c.nc
	o.w.SetProtocol(c.w.Protocol())
	if o.wake == nil {
		o.wake = make(chan struct{}, 1)
	}
	o.mu.Unlock()
	c.w.SetConn(outboxConn{Conn: c.nc, c: c})
	c.pushDone = make(chan struct{})
	go o.send(c.pushDone, c.srv.opts.WriteTimeout)
}

// pushing reports whether c is in push mode; for c's goroutine.
func (c *Conn) pushing() bool { return c.pushDone != nil }

// stopPushing ends push mode: with drain, the writer first sends what is
// queued (the client's pending replies); without, the caller has closed
// the socket or the outbox is dead, and what is queued is dropped. It
// returns once the writer goroutine has exited.
func (c *Conn) stopPushing(drain bool) {
	if c.pushDone == nil {
		return
	}
	if drain {
		c.w.Flush()
	}
	o := &c.out
	o.mu.Lock()
	o.closing = true
	if !drain {
		o.w.Swap(nil)
	}
	o.mu.Unlock()
	o.signal()
	<-c.pushDone
	c.pushDone = nil
	o.mu.Lock()
	o.on = false
	dead := o.dead
	o.w.Swap(nil)
	o.sending = 0
	o.mu.Unlock()
	c.w.SetConn(c.nc)
	if dead != "" {
		c.w.Fail(errOutboxClosed)
	}
}

// closedFor is the close reason of a connection whose outbox died, or "".
func (c *Conn) closedFor() string {
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	return c.out.dead
}

// push queues an out-of-band message for c, written by fn in c's protocol
// (fn must write one whole reply, such as a Writer.Push and its elements),
// and reports whether it was queued: it is not if c is not in push mode,
// is leaving it, or is being closed. Any goroutine may call it; fn runs
// under c's outbox lock and must not block. A message pushed by one
// goroutine reaches c after those it pushed before, and a reply c has
// queued before the push comes before it.
func (c *Conn) push(fn func(w *resp.Writer)) bool {
	o := &c.out
	o.mu.Lock()
	if !o.on || o.closing || o.dead != "" {
		o.mu.Unlock()
		return false
	}
	fn(&o.w)
	o.checkLimit(c)
	o.mu.Unlock()
	o.signal()
	return true
}

// checkLimit closes c if its queue broke the limit, as Redis closes a
// client past its output buffer limit: the queue is dropped, and the
// writer is interrupted and closes the socket. Called with o.mu held.
func (o *outbox) checkLimit(c *Conn) {
	s := c.srv
	now := time.Now().Unix()
	n := int64(o.w.Len() + o.sending)
	o.peak.observe(now, n)
	if !s.pubsubLimit.Load().reached(n, now, &o.softSince) {
		return
	}
	o.dead = closedOutputLimit
	o.w.Swap(nil)
	o.nc.SetWriteDeadline(time.Now()) // wakes a writer blocked on a client that does not read
	s.outputLimitCloses.Add(1)
}

// signal wakes the writer; a signal already pending will do.
func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// send is the writer goroutine: it sends the queue until the connection
// leaves push mode or the outbox dies, and closes done when it exits. When
// the outbox dies it closes the socket, which ends the connection's
// reading too.
func (o *outbox) send(done chan struct{}, timeout time.Duration) {
	defer close(done)
	var batch []byte
	var deadline time.Time
	for {
		o.mu.Lock()
		for o.w.Len() == 0 && !o.closing && o.dead == "" {
			o.mu.Unlock()
			<-o.wake
			o.mu.Lock()
		}
		if o.dead != "" || o.w.Len() == 0 {
			dead, nc := o.dead != "", o.nc
			o.mu.Unlock()
			if dead {
				nc.Close()
			}
			return
		}
		batch = o.w.Swap(batch)
		o.sending = len(batch)
		// Under mu, so that a limit's interrupting deadline, set under mu
		// too, is never overwritten by this one.
		if now := time.Now(); timeout > 0 && now.Add(timeout-time.Second).After(deadline) {
			deadline = now.Add(timeout)
			o.nc.SetWriteDeadline(deadline)
		}
		nc := o.nc
		o.mu.Unlock()
		_, err := nc.Write(batch)
		o.mu.Lock()
		o.sending = 0
		if err != nil && o.dead == "" {
			o.dead = closedWriteError
			o.w.Swap(nil)
		}
		o.mu.Unlock()
		if cap(batch) > resp.MaxRetainedReply {
			batch = nil
		}
	}
}

// outputBuffer is c's queued output for CLIENT LIST's omem, and its
// largest in the last peakSeconds.
func (c *Conn) outputBuffer(now int64) (queued, recentMax int64) {
	o := &c.out
	o.mu.Lock()
	defer o.mu.Unlock()
	return int64(o.w.Len() + o.sending), o.peak.max(now)
}

// peakSeconds is the window of INFO's client_recent_max_output_buffer, as
// Redis's.
const peakSeconds = 8

// peakWindow is the largest value observed in each of the last
// peakSeconds seconds. Its zero value is empty; its user locks it.
type peakWindow struct {
	sec [peakSeconds]int64
	val [peakSeconds]int64
}

func (p *peakWindow) observe(now, v int64) {
	i := now % peakSeconds
	if p.sec[i] != now {
		p.sec[i], p.val[i] = now, 0
	}
	p.val[i] = max(p.val[i], v)
}

func (p *peakWindow) max(now int64) int64 {
	var m int64
	for i := range p.sec {
		if now-p.sec[i] < peakSeconds {
			m = max(m, p.val[i])
		}
	}
	return m
}
