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
