// Package lzf is LZF as Redis 7.0 writes and reads it: the compression of
// long strings in RDB files and DUMP payloads (liblzf 3.6 as Redis builds
// it: a 16-bit hash table, VERY_FAST). Compress writes the bytes Redis's
// lzf_compress writes for the same input, and refuses where it refuses, so
// that a payload or a file is Redis's byte for byte; Decompress checks
// every reference, since its input may come from anyone.
//
// The format: a control byte below 32 is a run of that many plus one
// literal bytes; above, its top three bits are a back reference's length
// less two (7: a byte more of length follows) and its low five bits, with
// the next byte, the distance back less one.
package lzf

import (
	"slices"
	"sync"
)

// MaxExpansion bounds how much LZF expands: a back reference of three
// input bytes copies at most 264. A larger claim is a corrupt input.
const MaxExpansion = 88

// liblzf's bounds: the longest literal run, the farthest back reference,
// the longest reference (less two, as encoded, plus two).
const (
	maxLit  = 1 << 5
	maxOff  = 1 << 13
	maxRef  = 1<<8 + 1<<3
	hashLog = 16
)

// table is Compress's hash table: for each hash of three bytes, the last
// position that had it. liblzf leaves its table uninitialized, so a
// slot not yet written by this input points nowhere useful; here the
// same is had without clearing 256 KB per string (most of a save's time
// for small strings): positions are stored offset by base, which each use
// moves past the last, so that one use's entries are empty for the next.
type table struct {
	pos  [1 << hashLog]uint32 // base+position; at or below base: none
	base uint32
}

var tables = sync.Pool{New: func() any { return new(table) }}

// slot is liblzf's IDX under VERY_FAST: h holds the last bytes read, the
// newest lowest, and bits from older bytes take part as they do in C's
// unsigned arithmetic.
func slot(h uint32) uint32 { return (h>>(24-hashLog) - h*5) & (1<<hashLog - 1) }

// Compress appends in, compressed, to dst if that takes at most limit
// bytes, as lzf_compress(in, len(in), out, limit) does, with its
// conservative checks: ok is false (and dst returned as it was) wherever
// lzf_compress returns 0, even where the result would have fit. Redis
// compresses a string of more than 20 bytes with limit len-4.
func Compress(dst, in []byte, limit int) (out []byte, ok bool) {
	if len(in) == 0 || limit <= 0 {
		return dst, false
	}
	t := tables.Get().(*table)
	defer tables.Put(t)
	if uint64(t.base)+uint64(len(in))+1 >= 1<<32 {
		*t = table{}
	}
	base := t.base
	t.base += uint32(len(in)) + 1
	htab := &t.pos

	start := len(dst)
	buf := slices.Grow(dst, limit)
	o := buf[start : start+limit]
	end := len(in)
	ip, op, lit := 0, 1, 0 // o[0] is the first run's length
	// tail: the last two bytes are reached, past where a match may start;
	// liblzf checks once that their run fits (its bound: 3 bytes).
	tail := false
	var hval uint32
	if end >= 2 {
		hval = uint32(in[0])<<8 | uint32(in[1])
	}
	for ip < end {
		if ip >= end-2 {
			if !tail {
				if op+3 > limit {
					return dst[:start], false
				}
				tail = true
			}
		} else {
			hval = hval<<8 | uint32(in[ip+2])
			h := &htab[slot(hval)]
			ref := 0 // none: position 0 is liblzf's NULL too, never a reference
			if *h > base {
				ref = int(*h - base)
			}
			*h = base + uint32(ip)
			if off := ip - ref - 1; ref > 0 && off < maxOff && in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
				noLit := 0 // the run just started holds nothing: undo it
				if lit == 0 {
					noLit = 1
				}
				if op+3+1 >= limit && op-noLit+3+1 >= limit {
					return dst[:start], false
				}
				o[op-lit-1] = byte(lit - 1) // end the run
				op -= noLit
				n := matchLen(in, ref, ip, min(end-ip-2, maxRef))
				n -= 2 // the reference's length, less two
				if n < 7 {
					o[op] = byte(off>>8 + n<<5)
					op++
				} else {
					o[op] = byte(off>>8 + 7<<5)
					o[op+1] = byte(n - 7)
					op += 2
				}
				o[op] = byte(off)
				op += 2 // and start a run
				lit = 0
				ip += n + 2
				if ip >= end-2 {
					continue
				}
				// VERY_FAST: the last two positions of the match are hashed.
				ip -= 2
				hval = uint32(in[ip])<<8 | uint32(in[ip+1])
				for range 2 {
					hval = hval<<8 | uint32(in[ip+2])
					htab[slot(hval)] = base + uint32(ip)
					ip++
				}
				continue
			}
			if op >= limit {
				return dst[:start], false
			}
		}
		o[op] = in[ip]
		lit, op, ip = lit+1, op+1, ip+1
		if lit == maxLit {
			o[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if !tail && op+3 > limit {
		return dst[:start], false
	}
	o[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	return buf[:start+op], true
}

// matchLen is how many bytes from ip match those from ref, the first
// three known to, as liblzf counts them: 16 compared unchecked once
// maxlen > 16, then byte by byte up to maxlen (which the count may pass
// by two after the 16).
func matchLen(in []byte, ref, ip, maxlen int) int {
	n := 2
	if maxlen > 16 {
		for range 16 {
			n++
			if in[ref+n] != in[ip+n] {
				return n
			}
		}
	}
	for {
		n++
		if n >= maxlen || in[ref+n] != in[ip+n] {
			return n
		}
	}
}

// Decompress appends what in decompresses to, which must be exactly n
// bytes, to dst (lzf_decompress with every reference checked): ok is false
// for a reference before the start of the output or past n bytes, a run
// cut short, or fewer than n bytes.
func Decompress(dst, in []byte, n int) (out []byte, ok bool) {
	base := len(dst)
	out = slices.Grow(dst, n)
	limit := base + n
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < maxLit {
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
