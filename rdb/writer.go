package rdb

import (
	"bufio"
	"encoding/binary"
	"io"
	"strconv"
	"time"
)

// RedisVersion is the redis-ver AUX field the Writer writes: the Redis
// whose format this is, so that tools reading the field take the file for
// what it is.
const RedisVersion = "7.0.15"

// Writer encodes an RDB file: Header, then for each database SelectDB and
// its entries, then Close. The first error is kept and returned by every
// later call. It is not safe for concurrent use.
type Writer struct {
	w   *bufio.Writer
	crc uint64
	buf []byte // one key's encoding, reused
	err error
}

// NewWriter writes to w, buffered; Close flushes it but does not close w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 1<<16)}
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

func (w *Writer) write(b []byte) error {
	if w.err != nil {
		return w.err
	}
	w.crc = crcUpdate(w.crc, b)
	_, w.err = w.w.Write(b)
	return w.err
}

// Header writes the signature and version, then aux.
func (w *Writer) Header(aux []AuxField) error {
	b := append(w.buf[:0], "REDIS0010"...)
	for _, a := range aux {
		b = appendAux(b, a)
	}
	w.buf = b
	return w.write(b)
}

// Aux writes one more AUX field; Redis reads them anywhere in the file.
func (w *Writer) Aux(a AuxField) error {
	w.buf = appendAux(w.buf[:0], a)
	return w.write(w.buf)
}

func appendAux(b []byte, a AuxField) []byte {
	b = append(b, opAux)
	b = appendString(b, []byte(a.Key))
	return appendString(b, []byte(a.Value))
}

// SelectDB starts database db, of keys keys of which expires have a
// deadline (RESIZEDB's hint to the loader).
func (w *Writer) SelectDB(db, keys, expires int) error {
	b := appendLen(append(w.buf[:0], opSelectDB), uint64(db))
	b = append(b, opResizeDB)
	b = appendLen(b, uint64(keys))
	b = appendLen(b, uint64(expires))
	w.buf = b
	return w.write(b)
}

// Write writes e, with its deadline and its LRU or LFU hint, in the
// database selected last (e.DB is not consulted).
func (w *Writer) Write(e *Entry) error {
	w.buf = appendEntry(w.buf[:0], e)
	return w.write(w.buf)
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
	if err := w.write([]byte{opEOF}); err != nil {
		return err
	}
	var sum [8]byte
	binary.LittleEndian.PutUint64(sum[:], w.crc)
	if _, w.err = w.w.Write(sum[:]); w.err != nil {
		return w.err
	}
	w.err = w.w.Flush()
	return w.err
}
