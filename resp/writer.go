package resp

import (
	"net"
	"strconv"
	"time"

	"github.com/tidwall/redcon"
)

// maxRetainedReply is the largest reply buffer kept between batches, so one
// large GET does not stay pinned to an idle connection.
const maxRetainedReply = 256 << 10

// Writer buffers RESP2 replies for one connection; Flush sends them in one
// write. Encoding is redcon's allocation-free Append functions. A write error
// is sticky: later replies are dropped and Flush reports it, so handlers
// never deal with the network.
type Writer struct {
	conn     net.Conn
	timeout  time.Duration
	deadline time.Time // the write deadline last set on conn
	b        []byte
	err      error
}

func newWriter(conn net.Conn, timeout time.Duration) *Writer {
	return &Writer{conn: conn, timeout: timeout}
}

// Len is the number of bytes waiting to be flushed.
func (w *Writer) Len() int { return len(w.b) }

// Flush writes the buffered replies. A client that does not read them
// within the write timeout is disconnected.
func (w *Writer) Flush() error { return w.flushAt(time.Now()) }

// flushAt is Flush for a caller that has read the clock. Setting a deadline
// costs a timer update, so it is renewed only when less than a second of
// slack is left rather than on every write.
func (w *Writer) flushAt(now time.Time) error {
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
	if cap(w.b) > maxRetainedReply {
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

// Null writes a nil bulk string.
func (w *Writer) Null() { w.b = redcon.AppendNull(w.b) }

// NullArray writes a nil array (*-1).
func (w *Writer) NullArray() { w.b = append(w.b, "*-1\r\n"...) }

// Array writes an array header; the n elements that follow are part of
// this reply.
func (w *Writer) Array(n int) {
	w.b = redcon.AppendArray(w.b, n)
}
