package server

import (
	"sync/atomic"
)

// bufferPeakSeconds is how long rbp remembers a reply buffer's peak, as
// Redis resets its buf_peak every few seconds.
const bufferPeakSeconds = 5

// bufferStats are a connection's buffers for CLIENT LIST's qbuf,
// qbuf-free, rbs, rbp and obl: the connection's event loop copies them at
// each flush, once per batch, for other connections to read; its own
// CLIENT LIST and CLIENT INFO read them live.
type bufferStats struct {
	qbuf, qbufFree, rbs, rbp, obl atomic.Int64
	peakAt                        atomic.Int64 // unix second rbp was last reset
}

// bufferValues are the values of a bufferStats.
type bufferValues struct{ qbuf, qbufFree, rbs, rbp, obl int64 }

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

func (s *bufferStats) snapshot() bufferValues {
	return bufferValues{s.qbuf.Load(), s.qbufFree.Load(), s.rbs.Load(), s.rbp.Load(), s.obl.Load()}
}

// live is c's buffers now, for c's own loop or continuation.
func (s *bufferStats) live(c *Conn) bufferValues {
	n := int64(c.w.Len())
	return bufferValues{int64(c.rd.Held()), int64(c.rd.Free()), int64(c.w.Cap()), max(s.rbp.Load(), n), n}
}
