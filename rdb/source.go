package rdb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
)

// DefaultMaxValue bounds one string or one collection's decoded bytes when
// Options.MaxValue is zero: Redis's proto-max-bulk-len.
const DefaultMaxValue = 512 << 20

// source is the input: every byte consumed is counted and goes into the
// checksum, and every length is checked against what remains (if the
// size is known) and against max before anything is allocated for it.
type source struct {
	r    *bufio.Reader
	left int64 // bytes not yet consumed; -1 if the size is unknown
	off  int64
	crc  uint64 // of the bytes consumed before pend
	pend []byte // small reads not yet in crc: one update per few KB is far cheaper than one per byte
	max  int64
	tmp  [8]byte
}

// sum is the CRC64 of everything consumed.
func (s *source) sum() uint64 {
	if len(s.pend) > 0 {
		s.crc = crcUpdate(s.crc, s.pend)
		s.pend = s.pend[:0]
	}
	return s.crc
}

func (s *source) fail(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return corrupt(s.off, "the input ends early (truncated)")
	}
	return err
}

func (s *source) consumed(p []byte) {
	if len(p) < 64 {
		if s.pend = append(s.pend, p...); len(s.pend) >= 4096 {
			s.sum()
		}
	} else {
		s.crc = crcUpdate(s.sum(), p)
	}
	s.off += int64(len(p))
	if s.left >= 0 {
		s.left -= int64(len(p))
	}
}

func (s *source) byte() (byte, error) {
	c, err := s.r.ReadByte()
	if err != nil {
		return 0, s.fail(err)
	}
	s.tmp[0] = c
	s.consumed(s.tmp[:1])
	return c, nil
}

// fixed reads n ≤ 8 bytes into s.tmp.
func (s *source) fixed(n int) ([]byte, error) {
	p := s.tmp[:n]
	if _, err := io.ReadFull(s.r, p); err != nil {
		return nil, s.fail(err)
	}
	s.consumed(p)
	return p, nil
}

func (s *source) u64le() (uint64, error) {
	p, err := s.fixed(8)
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
	p := make([]byte, n)
	if _, err := io.ReadFull(s.r, p); err != nil {
		return nil, s.fail(err)
	}
	s.consumed(p)
	return p, nil
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
// LZF-compressed.
func (s *source) str() ([]byte, error) {
	n, enc, err := s.length()
	if err != nil {
		return nil, err
	}
	if !enc {
		return s.take(n, "string")
	}
	switch n {
	case encInt8:
		p, err := s.fixed(1)
		if err != nil {
			return nil, err
		}
		return appendInt(int64(int8(p[0]))), nil
	case encInt16:
		p, err := s.fixed(2)
		if err != nil {
			return nil, err
		}
		return appendInt(int64(int16(binary.LittleEndian.Uint16(p)))), nil
	case encInt32:
		p, err := s.fixed(4)
		if err != nil {
			return nil, err
		}
		return appendInt(int64(int32(binary.LittleEndian.Uint32(p)))), nil
	case encLZF:
		return s.lzf()
	}
	return nil, corrupt(s.off-1, "unknown string encoding %d", n)
}

func (s *source) lzf() ([]byte, error) {
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
	if clen == 0 || ulen > clen*lzfMaxRatio || ulen > uint64(s.max) {
		return nil, corrupt(s.off, "LZF string of %d bytes claims %d", clen, ulen)
	}
	in, err := s.take(clen, "compressed string")
	if err != nil {
		return nil, err
	}
	out, ok := lzfDecompress(in, int(ulen))
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
