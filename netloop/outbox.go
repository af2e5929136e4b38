package netloop

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/internal/memsize"
	"github.com/stampedeless/stampedeless/resp"
)

// OutputLimit bounds the output a connection in push mode (a subscriber)
// has queued and not yet sent, as the pubsub class of Redis's
// client-output-buffer-limit does: at Hard bytes, or at Soft bytes for
// longer than SoftTime (counted in whole seconds, as Redis does), the
// connection is closed (Host.OutputLimit). A zero Hard or Soft is no
// such bound.
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

// outbox is a connection's queued output: what its event loop has still
// to send besides the replies in its writer. In push mode (while it is
// subscribed, tracks keys or monitors) every reply goes through it: the
// connection's writer flushes into it (outboxConn), and the messages other
// goroutines push (Conn.Push) are queued here whole, so a push never lands
// inside a reply and both keep the order they were queued in. Outside push
// mode it holds only what a flush queued while the connection waited
// (eventLoop.park) and what its socket did not take of that.
//
// In push mode the queue is bounded by the server's OutputLimit: past it
// the connection is closed and the queue dropped, so a subscriber that
// does not read cannot grow the server's memory. Nothing here does I/O
// under mu: the loop takes the queue under it and sends it after.
type outbox struct {
	mu sync.Mutex
	// w holds the queue; pushes are encoded in its protocol, which
	// follows the connection's replies (a HELLO changes it from the point
	// in the stream where its reply is queued).
	w resp.Writer
	// sending is how many bytes the loop has taken and not yet sent;
	// they count toward the limit.
	sending int
	// on: the connection is in push mode. dead, if not empty, is why the
	// connection is being closed (a close reason); nothing is queued or
	// sent any more.
	on        bool
	dead      string
	softSince int64
	peak      peakWindow

	// batch is what the loop took from w and is sending; its loop's
	// alone, as is the socket.
	batch []byte
	sent  int

	// queued and pushMode mirror, for a look without the lock, how many
	// bytes w and batch hold and on; settled under mu by every change.
	queued   atomic.Int64
	pushMode atomic.Bool
}

// settle updates the mirrors of the queue's length and push mode; o.mu is
// held.
func (o *outbox) settle() {
	o.queued.Store(int64(o.w.Len() + len(o.batch) - o.sent))
	o.pushMode.Store(o.on)
}

// errOutboxClosed is a reply flush's error once the outbox is dead.
var errOutboxClosed = errors.New("netloop: connection closed for its output buffer or a write error")

// outboxConn is the connection a Writer of a connection flushes to: a
// Flush queues the replies in the outbox, which the loop sends. The
// connection's loop, or the goroutine of its continuation, alone uses it.
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
	if o.on {
		o.checkLimit(c)
	}
	o.settle()
	o.mu.Unlock()
	// Pushes held back until these replies were queued.
	c.client.Queued()
	return len(b), nil
}

func (outboxConn) SetWriteDeadline(time.Time) error { return nil }

// StartPushing puts c in push mode; it is a no-op in push mode already.
// Replies c has written and not yet sent are queued first, before
// anything pushed from now on.
func (c *Conn) StartPushing() {
	o := &c.out
	o.mu.Lock()
	if o.on {
		o.mu.Unlock()
		return
	}
	o.on, o.dead, o.softSince = true, "", 0
	o.w.SetProtocol(c.w.Protocol())
	o.settle()
	o.mu.Unlock()
	c.w.Flush()
}

// Pushing reports whether c is in push mode.
func (c *Conn) Pushing() bool { return c.out.pushMode.Load() }

// StopPushing ends push mode: nothing more is pushed to c. What is queued
// is still sent, before c's later replies.
func (c *Conn) StopPushing() {
	c.w.Flush()
	o := &c.out
	o.mu.Lock()
	o.on = false
	o.settle()
	o.mu.Unlock()
}

// writeFailure is the close reason of a connection whose reply could not
// be flushed.
func (c *Conn) writeFailure() string {
	if dead := c.closedFor(); dead != "" {
		return dead
	}
	return ClosedWriteError
}

// closedFor is the close reason of a connection whose outbox died, or "".
func (c *Conn) closedFor() string {
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	return c.out.dead
}

// Push queues an out-of-band message for c, written by fn in c's protocol
// (fn must write one whole reply, such as a Writer.Push and its elements),
// and reports whether it was queued: it is not if c is not in push mode or
// is being closed. Any goroutine may call it; fn runs under c's outbox lock
// and must not block. A message pushed by one goroutine reaches c after
// those it pushed before, and a reply c has queued before the push comes
// before it. c's loop is woken to send it.
func (c *Conn) Push(fn func(w *resp.Writer)) bool { return c.pushIn(fn, false) }

// PushOut is Push to a connection that need not be in push mode: a RESP3
// client that another's tracking redirects to gets its invalidations
// without subscribing, as in Redis. Outside push mode the message goes
// before the replies c has not flushed yet.
func (c *Conn) PushOut(fn func(w *resp.Writer)) bool { return c.pushIn(fn, true) }

func (c *Conn) pushIn(fn func(w *resp.Writer), anyMode bool) bool {
	o := &c.out
	o.mu.Lock()
	if !o.on && !anyMode || o.dead != "" {
		o.mu.Unlock()
		return false
	}
	if !o.on {
		o.w.SetProtocol(c.w.Protocol())
	}
	fn(&o.w)
	o.checkLimit(c)
	o.settle()
	o.mu.Unlock()
	c.Wake()
	return true
}

// checkLimit closes c if its queue broke the limit, as Redis closes a
// client past its output buffer limit: the queue is dropped, and c's loop
// closes the socket. Called with o.mu held.
func (o *outbox) checkLimit(c *Conn) {
	host := c.loops.host
	now := time.Now().Unix()
	n := int64(o.w.Len() + o.sending)
	o.peak.observe(now, n)
	if !host.OutputLimit().reached(n, now, &o.softSince) {
		return
	}
	o.dead = ClosedOutputLimit
	o.w.Swap(nil)
	o.settle()
	host.OutputLimitBroken()
	c.Wake()
}

// empty reports whether nothing is queued and c is not in push mode: c's
// writer may then send its replies itself (sendBatch). The loop alone
// takes from the queue, and only c's loop or continuation puts replies in
// it outside push mode, so the mirrors are exact for the loop.
func (o *outbox) empty() bool { return !o.pushMode.Load() && o.queued.Load() == 0 }

// takeAll takes everything queued, for a connection that closes.
func (o *outbox) takeAll() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := append(o.batch[o.sent:], o.w.Buffered()...)
	o.batch, o.sent, o.sending = nil, 0, 0
	o.w.Swap(nil)
	o.settle()
	return out
}

// sendBatch sends c's replies and queued output without waiting: once per
// loop turn for a connection served in it (sendDue). It returns
// errOutputBlocked when the socket took less than all of it; what it did
// not take is sent when the socket has room.
func (c *Conn) sendBatch() error {
	c.noteSend()
	if c.w.Len() == 0 {
		return c.sendQueued()
	}
	if !c.out.empty() {
		c.w.Flush() // after what is queued
		return c.sendQueued()
	}
	n, err := c.ev.sock.Write(c.w.Buffered())
	c.w.Sent(n)
	return c.sendFailed(err)
}

// noteSend stamps c active now and observes its output buffer, as each
// send does.
func (c *Conn) noteSend() {
	now := c.loops.clock.Nanos() / 1e9
	c.lastActive.Store(now)
	c.bufs.observe(c, now)
}

// sendQueued sends c's outbox, and what its socket holds back (TLS),
// without waiting and without touching c's writer, which the goroutine of
// a parked connection's continuation may be writing.
func (c *Conn) sendQueued() error {
	sock := c.ev.sock
	if sock.Pending() > 0 {
		if err := sock.FlushPending(); err != nil {
			return c.sendFailed(err)
		}
	}
	o := &c.out
	if o.queued.Load() == 0 {
		return nil
	}
	for {
		o.mu.Lock()
		if o.sent == len(o.batch) {
			if o.w.Len() == 0 || o.dead != "" {
				o.sending = 0
				o.settle()
				o.mu.Unlock()
				return nil
			}
			o.batch, o.sent = o.w.Swap(o.batch), 0
		}
		batch := o.batch[o.sent:]
		o.sending = len(batch)
		o.mu.Unlock()
		n, err := sock.Write(batch)
		o.mu.Lock()
		o.sent += n
		o.sending = len(o.batch) - o.sent + sock.Pending()
		if o.sent == len(o.batch) && cap(o.batch) > resp.MaxRetainedReply {
			o.batch, o.sent = nil, 0
		}
		o.settle()
		o.mu.Unlock()
		if err != nil {
			return c.sendFailed(err)
		}
	}
}

// sendFailed is a send's error: errOutputBlocked for a full socket, the
// socket's error (the writer fails with it) for a broken one.
func (c *Conn) sendFailed(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errWouldBlock):
		return errOutputBlocked
	default:
		c.w.Fail(err)
		return err
	}
}

// queuedOutput is how many bytes c has to send: its outbox's, its
// socket's, and its writer's when its loop has it (it is not parked).
func (c *Conn) queuedOutput() int {
	n := int(c.out.queued.Load())
	if c.ev.sock != nil {
		n += c.ev.sock.Pending()
	}
	if !c.ev.parked {
		n += c.w.Len()
	}
	return n
}

// OutputBuffer is c's queued output for CLIENT LIST's omem, and its
// largest in the last peakSeconds.
func (c *Conn) OutputBuffer(now int64) (queued, recentMax int64) {
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
