package rdb

// lzfMaxRatio bounds LZF's expansion: a back reference of three input
// bytes copies at most 264.
const lzfMaxRatio = 88

// lzfDecompress is lzf_decompress (src/lzf_d.c) with every reference
// checked: ok is false unless in decompresses to exactly n bytes.
func lzfDecompress(in []byte, n int) (out []byte, ok bool) {
	out = make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 1<<5 {
			run := ctrl + 1
			if i+run > len(in) || len(out)+run > n {
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
		ref := len(out) - (ctrl&0x1f)<<8 - 1 - int(in[i])
		i++
		l += 2
		if ref < 0 || len(out)+l > n {
			return nil, false
		}
		// The reference may overlap what it writes: copy byte by byte.
		for k := 0; k < l; k++ {
			out = append(out, out[ref+k])
		}
	}
	return out, len(out) == n
}

// lzfCompress appends in compressed in LZF's format (src/lzf_c.c's, with
// a hash table of the last position of each 3-byte sequence) to out, and
// returns ok false if that would not be shorter than limit bytes.
func lzfCompress(out, in []byte, limit int) ([]byte, bool) {
	const hashBits = 13
	var table [1 << hashBits]int32 // last position+1 of each hash; 0 is none
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
			ref := int(table[h]) - 1
			table[h] = int32(i + 1)
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
