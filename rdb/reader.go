package rdb

import (
	"errors"
	"io"
	"strconv"
)

// Options says how a Reader treats what this server cannot hold.
type Options struct {
	// SkipUnsupported reads past module values of the annotated
	// kind, module AUX data and function libraries, counting them in
	// Reader.Skipped, instead of refusing the file with an
	// *UnsupportedError.
	SkipUnsupported bool
	// MaxValue bounds one string, and the bytes of one collection; zero is
	// DefaultMaxValue.
	MaxValue int64
	// Aux, if not nil, is given each AUX field as it is read (before the
	// entries that follow it are returned), and Reader.Aux keeps none of
	// them; an error from it ends the read.
	Aux func(AuxField) error
}

// Reader decodes an RDB file entry by entry, checking its CRC64 footer
// once the whole file is read. It is not safe for concurrent use.
type Reader struct {
	src     source
	opts    Options
	started bool
	err     error // sticky: the first error, or io.EOF after the footer
	version int
	db      int
	aux     []AuxField
	// sizeHint is the last RESIZEDB's count of keys.
	sizeHint uint64
	// Skipped counts what was not returned, by what it was: "empty" for a
	// collection without members (Redis skips those too), and with
	// SkipUnsupported "module value", "module aux" and
	// "function".
	Skipped map[string]int
}

// NewReader reads the file r of size bytes (-1 if unknown: lengths are
// then checked against Options.MaxValue only).
func NewReader(r io.Reader, size int64, opts Options) *Reader {
	if opts.MaxValue <= 0 {
		opts.MaxValue = DefaultMaxValue
	}
	return &Reader{
		src:     newSource(r, size, opts.MaxValue),
		opts:    opts,
		Skipped: map[string]int{},
	}
}

// Version is the file's RDB version, once Next has been called.
func (r *Reader) Version() int { return r.version }

// Aux is the AUX fields read so far, in the file's order.
func (r *Reader) Aux() []AuxField { return r.aux }

// SizeHint is how many keys the database being read holds, as its
// RESIZEDB says (0 if the file has none): a hint to size a table by, not
// a promise.
func (r *Reader) SizeHint() uint64 { return r.sizeHint }

// Offset is how many bytes have been read, for progress reports.
func (r *Reader) Offset() int64 { return r.src.off }

// Next returns the next key, or io.EOF once the file has ended and its
// checksum matched. An error about the file wraps ErrCorrupt or is an
// *UnsupportedError; after any error Next returns it again.
func (r *Reader) Next() (*Entry, error) {
	if r.err != nil {
		return nil, r.err
	}
	e := &Entry{}
	if _, err := r.next(e, nil, false); err != nil {
		r.err = err
		return nil, err
	}
	return e, nil
}

// NextAppend is Next decoding into e, all of whose fields it sets, with
// the key and a string's value appended to buf instead of slices of their
// own: e.Key and e.Value are slices of the buffer it returns. A caller
// that keeps the bytes of many keys (to write them in batches) thus makes
// no allocation per key. Appending does not move bytes that earlier
// entries' slices hold, so those stay valid. A collection's members are
// allocated as Next's are.
func (r *Reader) NextAppend(e *Entry, buf []byte) ([]byte, error) {
	if r.err != nil {
		return buf, r.err
	}
	buf, err := r.next(e, buf, true)
	if err != nil {
		r.err = err
	}
	return buf, err
}

// next reads the next key into e; with appending, its key and a string's
// value are appended to buf.
func (r *Reader) next(e *Entry, buf []byte, appending bool) ([]byte, error) {
	s := &r.src
	if !r.started {
		r.started = true
		if err := r.header(); err != nil {
			return buf, err
		}
	}
	*e = Entry{}
	for {
		op, err := s.byte()
		if err != nil {
			return buf, err
		}
		switch op {
		case opExpireTime:
			p, err := s.fixed(4)
			if err != nil {
				return buf, err
			}
			e.ExpireAt = int64(int32(uint32(p[0])|uint32(p[1])<<8|uint32(p[2])<<16|uint32(p[3])<<24)) * 1000
		case opExpireTimeMS:
			u, err := s.u64le()
			if err != nil {
				return buf, err
			}
			e.ExpireAt = int64(u)
		case opFreq:
			c, err := s.byte()
			if err != nil {
				return buf, err
			}
			e.Freq, e.HasFreq = c, true
		case opIdle:
			n, err := s.plainLen("idle time")
			if err != nil {
				return buf, err
			}
			e.Idle, e.HasIdle = int64(n), true
		case opEOF:
			return buf, r.footer()
		case opSelectDB:
			n, err := s.plainLen("database number")
			if err != nil {
				return buf, err
			}
			if n > 1<<20 {
				return buf, corrupt(s.off, "database number %d", n)
			}
			r.db = int(n)
		case opResizeDB:
			keys, err := s.plainLen("database size")
			if err != nil {
				return buf, err
			}
			if _, err := s.plainLen("expires size"); err != nil {
				return buf, err
			}
			r.sizeHint = keys
		case opAux:
			k, err := s.str()
			if err != nil {
				return buf, err
			}
			v, err := s.str()
			if err != nil {
				return buf, err
			}
			a := AuxField{Key: string(k), Value: string(v)}
			if r.opts.Aux == nil {
				r.aux = append(r.aux, a)
			} else if err := r.opts.Aux(a); err != nil {
				return buf, err
			}
		case opModuleAux:
			if err := r.skip("module aux", "module AUX data", r.moduleAux); err != nil {
				return buf, err
			}
		case opFunction2:
			if err := r.skip("function", "function library", func() error { _, err := s.str(); return err }); err != nil {
				return buf, err
			}
		case opFunction:
			// 7.0's release candidates wrote a function with more fields;
			// nothing reads past it.
			return buf, &UnsupportedError{Type: "function library"}
		default:
			e.DB = r.db
			if !appending {
				e.Key, err = s.str()
			} else {
				at := len(buf)
				if buf, err = s.appendStr(buf); err == nil {
					e.Key = buf[at:len(buf):len(buf)]
				}
			}
			if err != nil {
				return buf, err
			}
			if op == typeString && appending {
				e.Kind = KindString
				at := len(buf)
				if buf, err = s.appendStr(buf); err != nil {
					return buf, err
				}
				e.Value = buf[at:len(buf):len(buf)]
				return buf, nil
			}
			switch err := s.value(op, e, r.opts.SkipUnsupported); {
			case err == nil:
				return buf, nil
			case errors.Is(err, errEmpty):
				r.Skipped["empty"]++
			case errors.Is(err, errSkip):
				r.Skipped[skippedName(op)]++
			default:
				return buf, err
			}
			*e = Entry{}
		}
	}
}

func skippedName(byte) string { return "module value" }

// skip reads past what read reads, counted as name, if the options say
// so; else it refuses the file.
func (r *Reader) skip(name, what string, read func() error) error {
	if !r.opts.SkipUnsupported {
		return &UnsupportedError{Type: what}
	}
	if err := read(); err != nil {
		return err
	}
	r.Skipped[name]++
	return nil
}

func (r *Reader) moduleAux() error {
	s := &r.src
	if _, err := s.plainLen("module id"); err != nil {
		return err
	}
	when, err := s.plainLen("module aux opcode")
	if err != nil {
		return err
	}
	if when != moduleUInt {
		return corrupt(s.off, "module AUX data without its 'when'")
	}
	if _, err := s.plainLen("module aux when"); err != nil {
		return err
	}
	return s.skipModuleValue()
}

func (r *Reader) header() error {
	s := &r.src
	p, err := s.take(9, "header")
	if err != nil {
		return err
	}
	if string(p[:5]) != "REDIS" {
		return corrupt(0, "not an RDB file (no REDIS signature)")
	}
	v, err := strconv.Atoi(string(p[5:]))
	if err != nil || v < 1 || v > Version {
		return corrupt(5, "can't handle RDB format version %q", p[5:])
	}
	r.version = v
	return nil
}

// footer checks the CRC64 that follows EOF (from version 5; a zero
// checksum means the writer did not compute one, as Redis allows).
func (r *Reader) footer() error {
	s := &r.src
	if r.version < 5 {
		return io.EOF
	}
	want := s.sum()
	got, err := s.u64le()
	if err != nil {
		return err
	}
	if got != 0 && got != want {
		return errors.Join(ErrChecksum, corrupt(s.off-8, "checksum %#016x, the file's content has %#016x", got, want))
	}
	return io.EOF
}
