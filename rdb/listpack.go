package rdb

import (
	"encoding/binary"
	"math"

	"github.com/stampedeless/stampedeless/internal/redisnum"
)

// listpack builds a listpack (src/listpack.c) entry by entry: a string
// that is a canonical integer is held as one, as lpAppend holds it.
type listpack struct {
	body []byte // the entries, without the header and terminator
	n    int
}

const lpHeaderSize = 6

func (lp *listpack) append(s []byte) {
	start := len(lp.body)
	if v, ok := redisnum.ParseInt(s); ok {
		lp.body = appendLpInt(lp.body, v)
	} else {
		lp.body = appendLpStringHeader(lp.body, len(s))
		lp.body = append(lp.body, s...)
	}
	lp.body = appendBacklen(lp.body, uint64(len(lp.body)-start))
	lp.n++
}

// sizeWith is how big the listpack would be with s appended (at most a
// few bytes over, for the integer case).
func (lp *listpack) sizeWith(s []byte) int {
	return lpHeaderSize + len(lp.body) + len(s) + 11 + 1
}

func (lp *listpack) bytes() []byte {
	b := make([]byte, lpHeaderSize, lpHeaderSize+len(lp.body)+1)
	binary.LittleEndian.PutUint32(b, uint32(lpHeaderSize+len(lp.body)+1))
	n := lp.n
	if n > math.MaxUint16 {
		n = math.MaxUint16 // "unknown": a reader counts
	}
	binary.LittleEndian.PutUint16(b[4:], uint16(n))
	b = append(b, lp.body...)
	return append(b, 0xff)
}

func appendLpInt(b []byte, v int64) []byte {
	switch {
	case v >= 0 && v <= 127:
		return append(b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		return append(b, 0xc0|byte(u>>8), byte(u))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return binary.LittleEndian.AppendUint16(append(b, 0xf1), uint16(v))
	case v >= -1<<23 && v < 1<<23:
		u := uint32(v)
		return append(b, 0xf2, byte(u), byte(u>>8), byte(u>>16))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return binary.LittleEndian.AppendUint32(append(b, 0xf3), uint32(v))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xf4), uint64(v))
}

func appendLpStringHeader(b []byte, n int) []byte {
	switch {
	case n < 64:
		return append(b, 0x80|byte(n))
	case n < 4096:
		return append(b, 0xe0|byte(n>>8), byte(n))
	}
	return binary.LittleEndian.AppendUint32(append(b, 0xf0), uint32(n))
}

// appendBacklen is lpEncodeBacklen: the entry's length in 7-bit groups,
// most significant first, every byte after the first with its top bit set.
func appendBacklen(b []byte, l uint64) []byte {
	n := backlenSize(l)
	for i := n - 1; i >= 0; i-- {
		c := byte(l>>(7*uint(i))) & 127
		if i < n-1 {
			c |= 128
		}
		b = append(b, c)
	}
	return b
}

func backlenSize(l uint64) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// eachListpack calls fn with every entry of the listpack b, after checking
// all of b (header, every entry and its backlen, the count, the
// terminator). An integer entry comes as its decimal string. A string
// entry aliases b.
func eachListpack(b []byte, fn func([]byte)) (int, error) {
	if len(b) < lpHeaderSize+1 {
		return 0, corrupt(0, "listpack of %d bytes", len(b))
	}
	if total := binary.LittleEndian.Uint32(b); uint64(total) != uint64(len(b)) {
		return 0, corrupt(0, "listpack says %d bytes, has %d", total, len(b))
	}
	if b[len(b)-1] != 0xff {
		return 0, corrupt(0, "listpack without its terminator")
	}
	want := int(binary.LittleEndian.Uint16(b[4:]))
	n := 0
	for p := lpHeaderSize; ; n++ {
		if p >= len(b) {
			return 0, corrupt(0, "listpack entry past its end")
		}
		if b[p] == 0xff {
			if p != len(b)-1 {
				return 0, corrupt(0, "listpack terminator before its end")
			}
			break
		}
		size, s, num, isNum, ok := lpEntry(b[p : len(b)-1])
		if !ok {
			return 0, corrupt(0, "listpack entry %d malformed", n)
		}
		bl := backlenSize(uint64(size))
		if p+size+bl > len(b)-1 || !backlenIs(b[p+size:p+size+bl], uint64(size)) {
			return 0, corrupt(0, "listpack entry %d has a bad back length", n)
		}
		if fn != nil {
			if isNum {
				fn(appendInt(num))
			} else {
				fn(s)
			}
		}
		p += size + bl
	}
	if want != math.MaxUint16 && want != n {
		return 0, corrupt(0, "listpack says %d entries, has %d", want, n)
	}
	return n, nil
}

// lpEntry decodes the entry at the start of b: its size without the
// backlen, and its string or its integer.
func lpEntry(b []byte) (size int, s []byte, num int64, isNum, ok bool) {
	c := b[0]
	str := func(hdr, n int) (int, []byte, int64, bool, bool) {
		if n < 0 || hdr+n > len(b) {
			return 0, nil, 0, false, false
		}
		return hdr + n, b[hdr : hdr+n], 0, false, true
	}
	fixed := func(n int) bool { return len(b) >= 1+n }
	switch {
	case c&0x80 == 0:
		return 1, nil, int64(c), true, true
	case c&0xc0 == 0x80:
		return str(1, int(c&0x3f))
	case c&0xe0 == 0xc0:
		if !fixed(1) {
			return 0, nil, 0, false, false
		}
		u := int64(c&0x1f)<<8 | int64(b[1])
		if u >= 1<<12 {
			u -= 1 << 13
		}
		return 2, nil, u, true, true
	case c&0xf0 == 0xe0:
		if !fixed(1) {
			return 0, nil, 0, false, false
		}
		return str(2, int(c&0x0f)<<8|int(b[1]))
	case c == 0xf0:
		if !fixed(4) {
			return 0, nil, 0, false, false
		}
		n := binary.LittleEndian.Uint32(b[1:])
		if uint64(n) > uint64(len(b)) {
			return 0, nil, 0, false, false
		}
		return str(5, int(n))
	case c == 0xf1 && fixed(2):
		return 3, nil, int64(int16(binary.LittleEndian.Uint16(b[1:]))), true, true
	case c == 0xf2 && fixed(3):
		u := int32(uint32(b[1]) | uint32(b[2])<<8 | uint32(b[3])<<16)
		return 4, nil, int64(u<<8) >> 8, true, true
	case c == 0xf3 && fixed(4):
		return 5, nil, int64(int32(binary.LittleEndian.Uint32(b[1:]))), true, true
	case c == 0xf4 && fixed(8):
		return 9, nil, int64(binary.LittleEndian.Uint64(b[1:])), true, true
	}
	return 0, nil, 0, false, false
}

func backlenIs(b []byte, l uint64) bool {
	var enc [5]byte
	want := appendBacklen(enc[:0], l)
	return string(want) == string(b)
}
