package resp

import (
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/internal/redisnum"
	"github.com/tidwall/redcon"
)

// MaxRetainedReply is the largest reply buffer kept between batches, so one
// large GET does not stay pinned to an idle connection.
const MaxRetainedReply = 256 << 10

// Writer buffers replies for one connection; Flush sends them in one
// write. It speaks RESP2 until SetProtocol(3) (HELLO 3); the methods for the
// types RESP3 adds (Map, Set, Push, Double, Bool, Verbatim) write their RESP2
// equivalents, as Redis does, so a handler writes one reply for both.
// Encoding is redcon's allocation-free Append functions. A write error is
// sticky: later replies are dropped and Flush reports it, so handlers never
// deal with the network. A Writer is owned by its connection's goroutine;
// only Protocol may be called from others (CLIENT LIST).
type Writer struct {
	conn     net.Conn
	timeout  time.Duration
	deadline time.Time // the write deadline last set on conn
	b        []byte
	err      error
	// resp3: the connection speaks RESP3 (HELLO 3). Atomic because CLIENT
	// LIST on another connection reads it; on the reply path it is a plain
	// load.
	resp3 atomic.Bool
}

// Buffer returns a Writer with no connection, whose replies are appended
// to b in protocol proto (2 or 3) for whoever sends them later: a
// script's reply, FUNCTION LIST's. Buffered returns them.
func Buffer(b []byte, proto int) *Writer {
	w := &Writer{b: b}
	w.SetProtocol(proto)
	return w
}

// SetProtocol selects RESP2 (2) or RESP3 (3) for the replies that follow.
func (w *Writer) SetProtocol(proto int) { w.resp3.Store(proto == 3) }

// Protocol is the protocol the replies are written in: 2 or 3.
func (w *Writer) Protocol() int {
	if w.resp3.Load() {
		return 3
	}
	return 2
}

// NewWriter returns a Writer that flushes to conn, each write bounded by
// timeout (none if 0).
func NewWriter(conn net.Conn, timeout time.Duration) *Writer {
	return &Writer{conn: conn, timeout: timeout}
}

// SetConn makes the writer flush to conn from now on (a connection that
// changes hands between its socket and a queue of its own).
func (w *Writer) SetConn(conn net.Conn) { w.conn, w.deadline = conn, time.Time{} }

// Err is the write error that stopped the writer, if any.
func (w *Writer) Err() error { return w.err }

// Fail stops the writer with err, unless an error stopped it already:
// later replies are dropped and Flush reports it.
func (w *Writer) Fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// Buffered is the encoded replies waiting to be flushed. It aliases the
// writer's buffer: valid until the next write.
func (w *Writer) Buffered() []byte { return w.b }

// Cap is the capacity of the writer's buffer, which CLIENT LIST shows.
func (w *Writer) Cap() int { return cap(w.b) }

// Truncate drops what was written after the first n bytes (a reply
// CLIENT REPLY OFF must not send).
func (w *Writer) Truncate(n int) { w.b = w.b[:min(n, len(w.b))] }

// Swap takes the writer's buffered replies, leaving it to write into
// next[:0]: whoever sends the taken bytes owns them.
func (w *Writer) Swap(next []byte) []byte {
	b := w.b
	w.b = next[:0]
	return b
}

// Sent drops the first n buffered bytes, which the caller has written to
// the connection itself; once all are sent, a buffer larger than
// MaxRetainedReply is released.
func (w *Writer) Sent(n int) {
	switch {
	case n < len(w.b):
		w.b = w.b[:copy(w.b, w.b[n:])]
	case cap(w.b) > MaxRetainedReply:
		w.b = nil
	default:
		w.b = w.b[:0]
	}
}

// Len is the number of bytes waiting to be flushed.
func (w *Writer) Len() int { return len(w.b) }

// IsErrorAt reports whether the reply written at offset at, a Len before it
// was written, is an error.
func (w *Writer) IsErrorAt(at int) bool { return len(w.b) > at && w.b[at] == '-' }

// Flush writes the buffered replies. A client that does not read them
// within the write timeout is disconnected.
func (w *Writer) Flush() error { return w.FlushAt(time.Now()) }

// FlushAt is Flush for a caller that has read the clock. Setting a deadline
// costs a timer update, so it is renewed only when less than a second of
// slack is left rather than on every write.
func (w *Writer) FlushAt(now time.Time) error {
	if w.err != nil {
		return w.err
	}
	if len(w.b) == 0 {
		return nil
	}
	if w.timeout > 0 && now.Add(w.timeout-time.Second).After(w.deadline) {
		w.deadline = now.Add(w.timeout)
		w.conn.SetWriteDeadline(w.deadline)
	}
	_, w.err = w.conn.Write(w.b)
	if cap(w.b) > MaxRetainedReply {
		w.b = nil
	} else {
		w.b = w.b[:0]
	}
	return w.err
}

// OK writes +OK.
func (w *Writer) OK() { w.b = redcon.AppendOK(w.b) }

// Status writes a simple string such as +PONG.
func (w *Writer) Status(s string) { w.b = redcon.AppendString(w.b, s) }

// Error writes an error reply. msg must start with its code, as in
// "ERR syntax error"; newlines are replaced so the text cannot forge a reply.
func (w *Writer) Error(msg string) { w.b = redcon.AppendError(w.b, msg) }

// Int writes an integer reply.
func (w *Writer) Int(n int64) { w.b = redcon.AppendInt(w.b, n) }

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) { w.b = redcon.AppendBulk(w.b, b) }

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) { w.b = redcon.AppendBulkString(w.b, s) }

// BulkInt writes an integer as a bulk string.
func (w *Writer) BulkInt(n int64) {
	var digits [20]byte
	w.b = redcon.AppendBulk(w.b, strconv.AppendInt(digits[:0], n, 10))
}

// Null writes a nil bulk string ($-1), RESP3's null (_) in RESP3.
func (w *Writer) Null() {
	if w.resp3.Load() {
		w.b = append(w.b, "_\r\n"...)
		return
	}
	w.b = redcon.AppendNull(w.b)
}

// NullArray writes a nil array (*-1), RESP3's null (_) in RESP3.
func (w *Writer) NullArray() {
	if w.resp3.Load() {
		w.b = append(w.b, "_\r\n"...)
		return
	}
	w.b = append(w.b, "*-1\r\n"...)
}

// Map writes the header of a map of n key-value pairs; the 2n elements that
// follow are part of this reply. RESP2 gets a flat array of 2n elements.
func (w *Writer) Map(n int) {
	if w.resp3.Load() {
		w.b = appendHeader(w.b, '%', n)
		return
	}
	w.b = redcon.AppendArray(w.b, 2*n)
}

// Set writes the header of a set of n elements; RESP2 gets an array.
func (w *Writer) Set(n int) {
	if w.resp3.Load() {
		w.b = appendHeader(w.b, '~', n)
		return
	}
	w.b = redcon.AppendArray(w.b, n)
}

// Push writes the header of an out-of-band push message of n elements
// (pub/sub messages, invalidations); RESP2 gets an array.
func (w *Writer) Push(n int) {
	if w.resp3.Load() {
		w.b = appendHeader(w.b, '>', n)
		return
	}
	w.b = redcon.AppendArray(w.b, n)
}

// Bool writes a boolean; RESP2 gets the integer 1 or 0.
func (w *Writer) Bool(v bool) {
	resp3 := w.resp3.Load()
	switch {
	case resp3 && v:
		w.b = append(w.b, "#t\r\n"...)
	case resp3:
		w.b = append(w.b, "#f\r\n"...)
	case v:
		w.b = redcon.AppendInt(w.b, 1)
	default:
		w.b = redcon.AppendInt(w.b, 0)
	}
}

// Double writes a floating-point number as Redis 7.0's addReplyDouble
// formats it: printf's %.17g (inf, -inf and nan spelled so). Redis 7.2
// prints the shortest round-trip form instead (1.1, not
// 1.1000000000000001); the compatibility tests compare with 7.0, so 7.0's
// form is the one written. RESP2 gets it as a bulk string.
func (w *Writer) Double(f float64) {
	var digits [32]byte
	w.DoubleText(redisnum.AppendG(digits[:0], f, 17))
}

// DoubleText writes a double whose text the caller formatted (a script's
// double, which Redis 7.2 prints shortest); RESP2 gets the text as a bulk
// string.
func (w *Writer) DoubleText(text []byte) {
	if w.resp3.Load() {
		w.b = append(append(append(w.b, ','), text...), '\r', '\n')
		return
	}
	w.b = redcon.AppendBulk(w.b, text)
}

// Verbatim writes a verbatim string with a three-letter format such as
// "txt" (cut or padded with spaces to three bytes, as Redis's
// addReplyVerbatim does); RESP2 gets the text as a bulk string.
func (w *Writer) Verbatim(format, text string) {
	if !w.resp3.Load() {
		w.b = redcon.AppendBulkString(w.b, text)
		return
	}
	w.b = appendHeader(w.b, '=', 3+1+len(text))
	for i := range 3 {
		c := byte(' ')
		if i < len(format) {
			c = format[i]
		}
		w.b = append(w.b, c)
	}
	w.b = append(append(append(w.b, ':'), text...), '\r', '\n')
}

// BigNumber writes a big number's decimal digits; RESP2 gets them as a
// bulk string.
func (w *Writer) BigNumber(digits string) {
	if !w.resp3.Load() {
		w.b = redcon.AppendBulkString(w.b, digits)
		return
	}
	w.b = append(append(append(w.b, '('), digits...), '\r', '\n')
}

// appendHeader appends a RESP type byte and a length line.
func appendHeader(b []byte, kind byte, n int) []byte {
	b = append(b, kind)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// Raw writes a whole reply encoded already (a script's), in the
// connection's protocol.
func (w *Writer) Raw(reply []byte) { w.b = append(w.b, reply...) }

// Array writes an array header; the n elements that follow are part of
// this reply.
func (w *Writer) Array(n int) {
	w.b = redcon.AppendArray(w.b, n)
}
