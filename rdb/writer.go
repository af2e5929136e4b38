package rdb

import (
	"encoding/binary"
	"io"
	"strconv"
	"time"

	"github.com/stampedeless/stampedeless/internal/crc64"
)

// RedisVersion is the redis-ver AUX field the Writer writes: the Redis
// whose format this is, so that tools reading the field take the file for
// what it is.
const RedisVersion = "7.0.15"

// Writer encodes an RDB file: Header, then for each database SelectDB and
// its entries, then Close. The first error is kept and returned by every
// later call. It is not safe for concurrent use.
type Writer struct {
	w   io.Writer
	crc uint64 // of what was written to w
	buf []byte // encoded and not yet written: keys are appended to it
	err error
}

// writerBuffer is how much a Writer encodes before it writes: the
// checksum is updated once per write, over the whole buffer.
const writerBuffer = 1 << 20

// NewWriter writes to w, buffered; Close flushes it but does not close w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, writerBuffer+writerBuffer/4)}
}

// DefaultAux is the AUX fields redis-server 7.0 writes at the head of a
// file it saves: its version, 64 bits, the time, the memory in use, and
// that this is no AOF preamble.
func DefaultAux(now time.Time, usedMem int64) []AuxField {
	return []AuxField{
		{"redis-ver", RedisVersion},
		{"redis-bits", "64"},
		{"ctime", strconv.FormatInt(now.Unix(), 10)},
		{"used-mem", strconv.FormatInt(usedMem, 10)},
		{"aof-base", "0"},
	}
}

// flush writes the buffer if it is full, or with all, whatever it holds.
func (w *Writer) flush(all bool) error {
	if w.err != nil || len(w.buf) < writerBuffer && !all {
		return w.err
	}
	w.crc = crc64.Update(w.crc, w.buf)
	_, w.err = w.w.Write(w.buf)
	if cap(w.buf) > 4*writerBuffer { // a big value passed through
		w.buf = make([]byte, 0, writerBuffer+writerBuffer/4)
	}
	w.buf = w.buf[:0]
	return w.err
}

// Header writes the signature and version, then aux.
func (w *Writer) Header(aux []AuxField) error {
	w.buf = append(w.buf, "REDIS0010"...)
	for _, a := range aux {
		w.buf = appendAux(w.buf, a)
	}
	return w.flush(false)
}

// Aux writes one more AUX field; Redis reads them anywhere in the file.
func (w *Writer) Aux(a AuxField) error {
	w.buf = appendAux(w.buf, a)
	return w.flush(false)
}

func appendAux(b []byte, a AuxField) []byte {
	b = append(b, opAux)
	b = appendString(b, []byte(a.Key))
	return appendString(b, []byte(a.Value))
}

// SelectDB starts database db, of keys keys of which expires have a
// deadline (RESIZEDB's hint to the loader).
func (w *Writer) SelectDB(db, keys, expires int) error {
	b := appendLen(append(w.buf, opSelectDB), uint64(db))
	b = append(b, opResizeDB)
	b = appendLen(b, uint64(keys))
	w.buf = appendLen(b, uint64(expires))
	return w.flush(false)
}

// Write writes e, with its deadline and its LRU or LFU hint, in the
// database selected last (e.DB is not consulted).
func (w *Writer) Write(e *Entry) error {
	w.buf = appendEntry(w.buf, e)
	return w.flush(false)
}

func appendEntry(b []byte, e *Entry) []byte {
	if e.ExpireAt != 0 {
		b = binary.LittleEndian.AppendUint64(append(b, opExpireTimeMS), uint64(e.ExpireAt))
	}
	if e.HasIdle {
		b = appendLen(append(b, opIdle), uint64(e.Idle))
	}
	if e.HasFreq {
		b = append(b, opFreq, e.Freq)
	}
	// The type comes before the key, and is known once the value is.
	at := len(b)
	b = appendString(append(b, 0), e.Key)
	typ, b := appendValue(b, e)
	b[at] = typ
	return b
}

// Close writes EOF and the checksum, and flushes.
func (w *Writer) Close() error {
	w.buf = append(w.buf, opEOF)
	if err := w.flush(true); err != nil {
		return err
	}
	var sum [8]byte
	binary.LittleEndian.PutUint64(sum[:], w.crc)
	_, w.err = w.w.Write(sum[:])
	return w.err
}
