package rdb

import (
	"math"
	"slices"
	"sync"
)

// lzfMaxRatio bounds LZF's expansion: a back reference of three input
// bytes copies at most 264.
const lzfMaxRatio = 88

// lzfDecompress is lzf_decompress (src/lzf_d.c) with every reference
// checked, appending to dst: ok is false unless in decompresses to exactly
// n bytes.
func lzfDecompress(dst, in []byte, n int) (out []byte, ok bool) {
	base := len(dst)
	out = slices.Grow(dst, n)
	limit := base + n
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 1<<5 {
			run := ctrl + 1
			if i+run > len(in) || len(out)+run > limit {
				return nil, false
			}
			out = append(out, in[i:i+run]...)
			i += run
			continue
		}
		l := ctrl >> 5
		if i >= len(in) {
			return nil, false
		}
		if l == 7 {
			l += int(in[i])
			i++
			if i >= len(in) {
				return nil, false
			}
		}
		at := len(out)
		ref := at - (ctrl&0x1f)<<8 - 1 - int(in[i])
		i++
		l += 2
		if ref < base || at+l > limit {
			return nil, false
		}
		// The reference may overlap what it writes: what it copies repeats
		// with the period at-ref, so each copy may take everything from
		// ref on that is written, doubling each time.
		out = out[:at+l]
		for k := 0; k < l; {
			k += copy(out[at+k:at+l], out[ref:at+k])
		}
	}
	return out, len(out) == limit
}

// lzfTable is lzfCompress's hash table of the last position of each 3-byte
// sequence. Positions are stored offset by base, which each use moves past
// the last, so that one use's entries are stale for the next without
// clearing the table: clearing it for each small string was most of a
// save's time.
type lzfTable struct {
	pos  [1 << lzfHashBits]int32 // base+position+1; not past base: none
	base int32
}

const lzfHashBits = 13

var lzfTables = sync.Pool{New: func() any { return new(lzfTable) }}

// lzfCompress appends in compressed in LZF's format (src/lzf_c.c's, with
// a hash table of the last position of each 3-byte sequence) to out, and
// returns ok false if that would not be shorter than limit bytes.
func lzfCompress(out, in []byte, limit int) ([]byte, bool) {
	t := lzfTables.Get().(*lzfTable)
	defer lzfTables.Put(t)
	if int64(t.base)+int64(len(in))+1 >= math.MaxInt32 {
		*t = lzfTable{}
	}
	base := t.base
	t.base += int32(len(in)) + 1
	table := &t.pos
	const hashBits = lzfHashBits
	start := len(out)
	lit := 0 // pending literal bytes, ending at i
	flush := func(i int) {
		if lit > 0 {
			out = append(out, byte(lit-1))
			out = append(out, in[i-lit:i]...)
			lit = 0
		}
	}
	for i := 0; i < len(in); {
		if i+2 < len(in) {
			h := (uint32(in[i])<<16 | uint32(in[i+1])<<8 | uint32(in[i+2])) * 2654435761 >> (32 - hashBits)
			ref := int(table[h]-base) - 1
			table[h] = base + int32(i+1)
			if off := i - ref - 1; ref >= 0 && off < 1<<13 && in[ref] == in[i] && in[ref+1] == in[i+1] && in[ref+2] == in[i+2] {
				n := 3
				for n < 264 && i+n < len(in) && in[ref+n] == in[i+n] {
					n++
				}
				flush(i)
				if l := n - 2; l < 7 {
					out = append(out, byte(l<<5|off>>8), byte(off))
				} else {
					out = append(out, byte(7<<5|off>>8), byte(l-7), byte(off))
				}
				i += n
				if len(out)-start >= limit {
					return out[:start], false
				}
				continue
			}
		}
		lit++
		i++
		if lit == 32 {
			flush(i)
		}
		if len(out)-start+lit >= limit {
			return out[:start], false
		}
	}
	flush(len(in))
	if len(out)-start >= limit {
		return out[:start], false
	}
	return out, true
}
