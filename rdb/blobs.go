package rdb

import (
	"encoding/binary"
	"math"
)

// The encodings older files hold, which Redis 7.0 still loads: ziplists
// (src/ziplist.c), zipmaps (src/zipmap.c) and intsets (src/intset.c).
// Each is checked whole before fn sees any member; a string member aliases
// the blob.

const zlHeaderSize = 10

// eachZiplist calls fn with every entry of the ziplist b.
func eachZiplist(b []byte, fn func([]byte)) (int, error) {
	if len(b) < zlHeaderSize+1 {
		return 0, corrupt(0, "ziplist of %d bytes", len(b))
	}
	if total := binary.LittleEndian.Uint32(b); uint64(total) != uint64(len(b)) {
		return 0, corrupt(0, "ziplist says %d bytes, has %d", total, len(b))
	}
	if b[len(b)-1] != 0xff {
		return 0, corrupt(0, "ziplist without its terminator")
	}
	tail := int(binary.LittleEndian.Uint32(b[4:]))
	want := int(binary.LittleEndian.Uint16(b[8:]))
	n, prev, last := 0, 0, zlHeaderSize
	for p := zlHeaderSize; p < len(b)-1; n++ {
		start := p
		e := b[p : len(b)-1]
		var prevlen int
		if e[0] < 254 {
			prevlen, p = int(e[0]), p+1
		} else if e[0] == 254 && len(e) >= 5 {
			prevlen, p = int(binary.LittleEndian.Uint32(e[1:])), p+5
		} else {
			return 0, corrupt(0, "ziplist entry %d has a bad previous length", n)
		}
		if prevlen != prev {
			return 0, corrupt(0, "ziplist entry %d says the previous is %d bytes, not %d", n, prevlen, prev)
		}
		size, s, num, isNum, ok := zlEntry(b[p : len(b)-1])
		if !ok {
			return 0, corrupt(0, "ziplist entry %d malformed", n)
		}
		if fn != nil {
			if isNum {
				fn(appendInt(num))
			} else {
				fn(s)
			}
		}
		p += size
		prev, last = p-start, start
	}
	if last != tail && n > 0 || n == 0 && tail != zlHeaderSize {
		return 0, corrupt(0, "ziplist's tail offset %d is not its last entry's", tail)
	}
	if want != math.MaxUint16 && want != n {
		return 0, corrupt(0, "ziplist says %d entries, has %d", want, n)
	}
	return n, nil
}

// zlEntry decodes the encoding and content at the start of b.
func zlEntry(b []byte) (size int, s []byte, num int64, isNum, ok bool) {
	if len(b) == 0 {
		return
	}
	str := func(hdr int, n uint64) (int, []byte, int64, bool, bool) {
		if uint64(len(b)) < uint64(hdr) || n > uint64(len(b)-hdr) {
			return 0, nil, 0, false, false
		}
		return hdr + int(n), b[hdr : hdr+int(n)], 0, false, true
	}
	c := b[0]
	switch {
	case c>>6 == 0:
		return str(1, uint64(c&0x3f))
	case c>>6 == 1:
		if len(b) < 2 {
			return
		}
		return str(2, uint64(c&0x3f)<<8|uint64(b[1]))
	case c == 0x80:
		if len(b) < 5 {
			return
		}
		return str(5, uint64(binary.BigEndian.Uint32(b[1:])))
	case c == 0xc0 && len(b) >= 3:
		return 3, nil, int64(int16(binary.LittleEndian.Uint16(b[1:]))), true, true
	case c == 0xd0 && len(b) >= 5:
		return 5, nil, int64(int32(binary.LittleEndian.Uint32(b[1:]))), true, true
	case c == 0xe0 && len(b) >= 9:
		return 9, nil, int64(binary.LittleEndian.Uint64(b[1:])), true, true
	case c == 0xf0 && len(b) >= 4:
		u := int32(uint32(b[1]) | uint32(b[2])<<8 | uint32(b[3])<<16)
		return 4, nil, int64(u<<8) >> 8, true, true
	case c == 0xfe && len(b) >= 2:
		return 2, nil, int64(int8(b[1])), true, true
	case c >= 0xf1 && c <= 0xfd:
		return 1, nil, int64(c&0x0f) - 1, true, true
	}
	return
}

// eachZipmap calls fn with every key and value of the zipmap b, in turn.
func eachZipmap(b []byte, fn func([]byte)) (int, error) {
	if len(b) < 2 || b[len(b)-1] != 0xff {
		return 0, corrupt(0, "zipmap without its terminator")
	}
	n := 0
	p := 1
	field := func(withFree bool) ([]byte, bool) {
		if p >= len(b)-1 {
			return nil, false
		}
		l := uint64(b[p])
		switch {
		case l < 254:
			p++
		case l == 254 && p+5 <= len(b)-1:
			l = uint64(binary.LittleEndian.Uint32(b[p+1:]))
			p += 5
		default:
			return nil, false
		}
		free := uint64(0)
		if withFree {
			if p >= len(b)-1 {
				return nil, false
			}
			free = uint64(b[p])
			p++
		}
		if l+free > uint64(len(b)-1-p) {
			return nil, false
		}
		s := b[p : p+int(l)]
		p += int(l + free)
		return s, true
	}
	for p < len(b)-1 {
		k, ok := field(false)
		if !ok {
			return 0, corrupt(0, "zipmap key %d malformed", n)
		}
		v, ok := field(true)
		if !ok {
			return 0, corrupt(0, "zipmap value %d malformed", n)
		}
		if fn != nil {
			fn(k)
			fn(v)
		}
		n += 2
	}
	return n, nil
}

// eachIntset calls fn with every member of the intset b, which must be
// ascending without duplicates.
func eachIntset(b []byte, fn func([]byte)) (int, error) {
	if len(b) < 8 {
		return 0, corrupt(0, "intset of %d bytes", len(b))
	}
	width := binary.LittleEndian.Uint32(b)
	n := binary.LittleEndian.Uint32(b[4:])
	if width != 2 && width != 4 && width != 8 {
		return 0, corrupt(0, "intset of %d-byte integers", width)
	}
	if uint64(len(b)-8) != uint64(width)*uint64(n) {
		return 0, corrupt(0, "intset says %d integers of %d bytes, has %d bytes", n, width, len(b)-8)
	}
	var prev int64
	for i := 0; i < int(n); i++ {
		d := b[8+i*int(width):]
		var v int64
		switch width {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(d)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(d)))
		default:
			v = int64(binary.LittleEndian.Uint64(d))
		}
		if i > 0 && v <= prev {
			return 0, corrupt(0, "intset not ascending at %d", i)
		}
		prev = v
		if fn != nil {
			fn(appendInt(v))
		}
	}
	return int(n), nil
}
