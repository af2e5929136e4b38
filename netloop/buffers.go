package netloop

import (
	"sync/atomic"
)

// bufferPeakSeconds is how long rbp remembers a reply buffer's peak, as
// Redis resets its buf_peak every few seconds.
const bufferPeakSeconds = 5

// bufferStats are a connection's Buffers: its event loop copies them at
// each send, once per batch, for other connections' CLIENT LIST to read;
// its own CLIENT LIST and CLIENT INFO read them live.
type bufferStats struct {
	qbuf, qbufFree, rbs, rbp, obl atomic.Int64
	peakAt                        atomic.Int64 // unix second rbp was last reset
}

// Buffers are a connection's buffers as CLIENT LIST shows them: the
// query buffer's length and free space (qbuf, qbuf-free), the reply
// buffer's size and recent peak (rbs, rbp), and its length (obl).
type Buffers struct{ QBuf, QBufFree, RBS, RBP, OBL int64 }

// Buffers are c's buffers: live, as they are now, which only c's loop, or
// the goroutine of its continuation, may ask; otherwise as its last send
// left them.
func (c *Conn) Buffers(live bool) Buffers {
	if live {
		return c.bufs.live(c)
	}
	return c.bufs.snapshot()
}

// observe copies c's buffers before a flush, at unix second now: the
// reply buffer holds the batch's replies, whose length is the peak's
// candidate.
func (s *bufferStats) observe(c *Conn, now int64) {
	s.qbuf.Store(int64(c.rd.Buffered()))
	s.qbufFree.Store(int64(c.rd.Free()))
	s.rbs.Store(int64(c.w.Cap()))
	n := int64(c.w.Len())
	if now-s.peakAt.Load() >= bufferPeakSeconds {
		s.peakAt.Store(now)
		s.rbp.Store(n)
	} else if n > s.rbp.Load() {
		s.rbp.Store(n)
	}
	s.obl.Store(0) // flushed next
}

func (s *bufferStats) snapshot() Buffers {
	return Buffers{s.qbuf.Load(), s.qbufFree.Load(), s.rbs.Load(), s.rbp.Load(), s.obl.Load()}
}

// live is c's buffers now, for c's own loop or continuation.
func (s *bufferStats) live(c *Conn) Buffers {
	n := int64(c.w.Len())
	return Buffers{int64(c.rd.Held()), int64(c.rd.Free()), int64(c.w.Cap()), max(s.rbp.Load(), n), n}
}
