package rdb

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"

	"github.com/stampedeless/stampedeless/internal/crc64"

	"github.com/stampedeless/stampedeless/internal/lzf"
)

// DefaultMaxValue bounds one string or one collection's decoded bytes when
// Options.MaxValue is zero: Redis's proto-max-bulk-len.
const DefaultMaxValue = 512 << 20

// sourceBuffer is how much of a file a source reads at a time. Small reads
// are served from it, and the checksum is updated once per refill rather
// than once per read: per-byte updates were 15% of a load's profile.
const sourceBuffer = 256 << 10

// source is the input: every byte consumed is counted and goes into the
// checksum, and every length is checked against what remains (if the
// size is known) and against max before anything is allocated for it.
type source struct {
	r      io.Reader // nil once nothing more is to be read
	rerr   error     // what r returned last, once it returned an error
	buf    []byte    // buf[pos:end] is read and not consumed
	pos    int
	end    int
	summed int   // buf[summed:pos] is consumed and not yet in crc
	left   int64 // bytes not yet consumed; -1 if the size is unknown
	off    int64
	crc    uint64
	max    int64
}

// newSource reads r, of size bytes (-1 if unknown).
func newSource(r io.Reader, size, max int64) source {
	return source{r: r, buf: make([]byte, sourceBuffer), left: size, max: max}
}

// bytesSource reads p, in place.
func bytesSource(p []byte, max int64) source {
	return source{buf: p, end: len(p), left: int64(len(p)), max: max}
}

// sum is the CRC64 of everything consumed.
func (s *source) sum() uint64 {
	if s.pos > s.summed {
		s.crc = crc64.Update(s.crc, s.buf[s.summed:s.pos])
		s.summed = s.pos
	}
	return s.crc
}

func (s *source) truncated() error { return corrupt(s.off, "the input ends early (truncated)") }

// ensure makes at least n ≤ len(s.buf) bytes readable at s.pos.
func (s *source) ensure(n int) error {
	if s.end-s.pos >= n {
		return nil
	}
	if s.r == nil {
		if s.rerr != nil && !errors.Is(s.rerr, io.EOF) {
			return s.rerr
		}
		return s.truncated()
	}
	s.sum()
	s.end = copy(s.buf, s.buf[s.pos:s.end])
	s.pos, s.summed = 0, 0
	for s.end < n {
		k, err := s.r.Read(s.buf[s.end:])
		s.end += k
		if err != nil {
			s.r, s.rerr = nil, err
			if s.end >= n {
				return nil
			}
			if !errors.Is(err, io.EOF) {
				return err
			}
			return s.truncated()
		}
	}
	return nil
}

func (s *source) consume(n int) {
	s.pos += n
	s.off += int64(n)
	if s.left >= 0 {
		s.left -= int64(n)
	}
}

func (s *source) byte() (byte, error) {
	if s.pos == s.end {
		if err := s.ensure(1); err != nil {
			return 0, err
		}
	}
	c := s.buf[s.pos]
	s.consume(1)
	return c, nil
}

// view returns the next n ≤ len(s.buf) bytes in place: they are valid
// until the next read.
func (s *source) view(n int) ([]byte, error) {
	if err := s.ensure(n); err != nil {
		return nil, err
	}
	p := s.buf[s.pos : s.pos+n : s.pos+n]
	s.consume(n)
	return p, nil
}

// fixed reads n ≤ 8 bytes, valid until the next read.
func (s *source) fixed(n int) ([]byte, error) { return s.view(n) }

func (s *source) u64le() (uint64, error) {
	p, err := s.view(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p), nil
}

// fits checks that n more bytes of input may exist and be allocated.
func (s *source) fits(n uint64, what string) error {
	if s.left >= 0 && n > uint64(s.left) {
		return corrupt(s.off, "%s of %d bytes with %d left (truncated)", what, n, s.left)
	}
	if n > uint64(s.max) {
		return corrupt(s.off, "%s of %d bytes, past the bound of %d", what, n, s.max)
	}
	return nil
}

// take reads the next n bytes into a new slice.
func (s *source) take(n uint64, what string) ([]byte, error) {
	if err := s.fits(n, what); err != nil {
		return nil, err
	}
	return s.appendN(make([]byte, 0, n), int(n))
}

// appendN appends the next n bytes, whose length fits checked, to dst.
func (s *source) appendN(dst []byte, n int) ([]byte, error) {
	if n <= len(s.buf) {
		p, err := s.view(n)
		return append(dst, p...), err
	}
	// Past the buffer: what it holds, then the rest read in place.
	at := len(dst)
	dst = append(slices.Grow(dst, n), s.buf[s.pos:s.end]...)
	s.consume(s.end - s.pos)
	s.sum()
	rest := dst[len(dst) : at+n]
	if s.r == nil {
		return nil, s.truncated()
	}
	k, err := io.ReadFull(s.r, rest)
	s.off += int64(k)
	if s.left >= 0 {
		s.left -= int64(k)
	}
	if err != nil {
		s.r, s.rerr = nil, err
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, s.truncated()
		}
		return nil, err
	}
	s.crc = crc64.Update(s.crc, rest)
	return dst[:at+n], nil
}

// length is rdbLoadLenByRef: enc is true for a string's special encoding,
// whose kind is then n.
func (s *source) length() (n uint64, enc bool, err error) {
	c, err := s.byte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case len6:
		return uint64(c & 0x3f), false, nil
	case len14:
		d, err := s.byte()
		return uint64(c&0x3f)<<8 | uint64(d), false, err
	case lenEnc:
		return uint64(c & 0x3f), true, nil
	}
	switch c {
	case len32:
		p, err := s.fixed(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p)), false, nil
	case len64:
		p, err := s.fixed(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p), false, nil
	}
	return 0, false, corrupt(s.off-1, "unknown length encoding %#x", c)
}

// plainLen is a length that may not be a string encoding.
func (s *source) plainLen(what string) (uint64, error) {
	n, enc, err := s.length()
	if err == nil && enc {
		err = corrupt(s.off-1, "%s with a string's encoding", what)
	}
	return n, err
}

// count is a collection's element count: each element takes at least a
// byte of input, so a count past the input is refused at once.
func (s *source) count(what string) (int, error) {
	n, err := s.plainLen(what)
	if err != nil {
		return 0, err
	}
	if err := s.fits(n, what); err != nil {
		return 0, err
	}
	return int(n), nil
}

// str is rdbGenericLoadStringObject: a string, plain, integer-encoded or
// LZF-compressed, in a slice of its own.
func (s *source) str() ([]byte, error) {
	p, err := s.appendStr(nil)
	if p == nil && err == nil {
		p = []byte{}
	}
	return p, err
}

// appendStr is str appending the string to dst, for a caller that keeps
// many strings in one buffer.
func (s *source) appendStr(dst []byte) ([]byte, error) {
	n, enc, err := s.length()
	if err != nil {
		return nil, err
	}
	if !enc {
		if err := s.fits(n, "string"); err != nil {
			return nil, err
		}
		return s.appendN(dst, int(n))
	}
	switch n {
	case encInt8:
		p, err := s.fixed(1)
		if err != nil {
			return nil, err
		}
		return appendIntTo(dst, int64(int8(p[0]))), nil
	case encInt16:
		p, err := s.fixed(2)
		if err != nil {
			return nil, err
		}
		return appendIntTo(dst, int64(int16(binary.LittleEndian.Uint16(p)))), nil
	case encInt32:
		p, err := s.fixed(4)
		if err != nil {
			return nil, err
		}
		return appendIntTo(dst, int64(int32(binary.LittleEndian.Uint32(p)))), nil
	case encLZF:
		return s.lzf(dst)
	}
	return nil, corrupt(s.off-1, "unknown string encoding %d", n)
}

func (s *source) lzf(dst []byte) ([]byte, error) {
	clen, err := s.plainLen("compressed length")
	if err != nil {
		return nil, err
	}
	ulen, err := s.plainLen("uncompressed length")
	if err != nil {
		return nil, err
	}
	// A three-byte back reference yields at most 264 bytes, so nothing
	// expands more than 88 times: a larger claim is a lie, refused before
	// its buffer is allocated.
	if clen == 0 || ulen > clen*lzf.MaxExpansion || ulen > uint64(s.max) {
		return nil, corrupt(s.off, "LZF string of %d bytes claims %d", clen, ulen)
	}
	if err := s.fits(clen, "compressed string"); err != nil {
		return nil, err
	}
	var in []byte
	if clen <= uint64(len(s.buf)) {
		in, err = s.view(int(clen))
	} else {
		in, err = s.appendN(nil, int(clen))
	}
	if err != nil {
		return nil, err
	}
	out, ok := lzf.Decompress(dst, in, int(ulen))
	if !ok {
		return nil, corrupt(s.off, "LZF string does not decompress to its %d bytes", ulen)
	}
	return out, nil
}

// binaryDouble is an 8-byte little-endian IEEE double (RDB_TYPE_ZSET_2).
func (s *source) binaryDouble() (float64, error) {
	u, err := s.u64le()
	return math.Float64frombits(u), err
}
