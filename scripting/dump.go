package scripting

import (
	"encoding/binary"
)

// FUNCTION DUMP's payload is Redis 7.0's: for each library the RDB
// opcode FUNCTION2 (245) and its code as an RDB string, then the RDB
// version (10, two bytes little-endian) and the CRC64 (Jones, as Redis's
// crc64) of everything before it, eight bytes little-endian. Strings are
// written uncompressed, which Redis reads; Redis compresses the ones over
// 20 bytes with LZF, which this reads, so payloads go both ways but
// are not byte for byte Redis's.
const (
	rdbOpcodeFunction2 = 245
	rdbVersion         = 10
	errBadPayload      = Error("ERR DUMP payload version or checksum are wrong")
)

func encodeDump(codes []string) []byte {
	var b []byte
	for _, code := range codes {
		b = appendRDBString(append(b, rdbOpcodeFunction2), code)
	}
	b = binary.LittleEndian.AppendUint16(b, rdbVersion)
	return binary.LittleEndian.AppendUint64(b, crc64Jones(0, b))
}

// appendRDBString is rdbSaveRawString for a string that is not an
// integer: LZF-compressed if over 20 bytes and it shrinks by more than 4.
func appendRDBString(b []byte, s string) []byte {
	if len(s) > 20 {
		if comp := lzfCompress([]byte(s), len(s)-4); comp != nil {
			b = append(b, 0xc0|3) // RDB_ENCVAL, RDB_ENC_LZF
			b = appendRDBLen(b, uint64(len(comp)))
			b = appendRDBLen(b, uint64(len(s)))
			return append(b, comp...)
		}
	}
	b = appendRDBLen(b, uint64(len(s)))
	return append(b, s...)
}

// appendRDBLen is rdbSaveLen.
func appendRDBLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= 1<<32-1:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

// decodeDump checks a payload's footer as Redis's verifyDumpPayload does
// and returns the libraries' code.
func decodeDump(p []byte) ([]string, error) {
	if len(p) < 10 {
		return nil, errBadPayload
	}
	body, footer := p[:len(p)-10], p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > rdbVersion ||
		binary.LittleEndian.Uint64(footer[2:]) != crc64Jones(0, p[:len(p)-8]) {
		return nil, errBadPayload
	}
	var codes []string
	for len(body) > 0 {
		if body[0] != rdbOpcodeFunction2 {
			return nil, Error("ERR given type is not a function")
		}
		s, rest, ok := readRDBString(body[1:])
		if !ok {
			return nil, Error("ERR failed loading the given functions payload")
		}
		codes, body = append(codes, s), rest
	}
	return codes, nil
}

// readRDBLen is rdbLoadLenByRef; special is set for the encoded forms
// (integers, LZF), n then naming which.
func readRDBLen(b []byte) (n uint64, special bool, rest []byte, ok bool) {
	if len(b) == 0 {
		return 0, false, nil, false
	}
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0] & 0x3f), false, b[1:], true
	case 1:
		if len(b) < 2 {
			return 0, false, nil, false
		}
		return uint64(b[0]&0x3f)<<8 | uint64(b[1]), false, b[2:], true
	case 3:
		return uint64(b[0] & 0x3f), true, b[1:], true
	}
	switch {
	case b[0] == 0x80 && len(b) >= 5:
		return uint64(binary.BigEndian.Uint32(b[1:])), false, b[5:], true
	case b[0] == 0x81 && len(b) >= 9:
		return binary.BigEndian.Uint64(b[1:]), false, b[9:], true
	}
	return 0, false, nil, false
}

// readRDBString is rdbGenericLoadStringObject for the forms a library's
// code can take: raw, or LZF-compressed (integers never start "#!").
func readRDBString(b []byte) (string, []byte, bool) {
	n, special, b, ok := readRDBLen(b)
	if !ok {
		return "", nil, false
	}
	if !special {
		if uint64(len(b)) < n {
			return "", nil, false
		}
		return string(b[:n]), b[n:], true
	}
	if n != 3 { // RDB_ENC_LZF
		return "", nil, false
	}
	clen, sp1, b, ok1 := readRDBLen(b)
	ulen, sp2, b, ok2 := readRDBLen(b)
	if !ok1 || !ok2 || sp1 || sp2 || uint64(len(b)) < clen || ulen > 512<<20 {
		return "", nil, false
	}
	out, ok := lzfDecompress(b[:clen], int(ulen))
	if !ok {
		return "", nil, false
	}
	return string(out), b[clen:], true
}

// lzfDecompress is liblzf's lzf_decompress: literal runs (ctrl < 32)
// and back references (length in the top 3 bits, 7 meaning one more
// byte), into exactly n bytes.
func lzfDecompress(in []byte, n int) ([]byte, bool) {
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 {
			ctrl++
			if i+ctrl > len(in) || len(out)+ctrl > n {
				return nil, false
			}
			out = append(out, in[i:i+ctrl]...)
			i += ctrl
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if i >= len(in) {
				return nil, false
			}
			length += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, false
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[i]) - 1
		i++
		length += 2
		if ref < 0 || len(out)+length > n {
			return nil, false
		}
		for j := 0; j < length; j++ { // may overlap: byte by byte
			out = append(out, out[ref+j])
		}
	}
	return out, len(out) == n
}

// liblzf's bounds: the longest literal run, the farthest back reference,
// the longest reference.
const (
	lzfMaxLit = 1 << 5
	lzfMaxOff = 1 << 13
	lzfMaxRef = 1<<8 + 1<<3
	lzfHLog   = 16
)

func lzfIndex(h uint32) uint32 { return (h>>(24-lzfHLog) - h*5) & (1<<lzfHLog - 1) }

// lzfCompress is liblzf's lzf_compress as Redis builds it (VERY_FAST):
// nil when the result would not fit in outLen bytes. Positions stand for
// liblzf's pointers; 0 is its NULL, never a usable reference.
func lzfCompress(in []byte, outLen int) []byte {
	if len(in) < 3 || outLen == 0 {
		return nil
	}
	htab := make([]int32, 1<<lzfHLog)
	out := make([]byte, outLen)
	end := len(in)
	ip, op, lit := 0, 1, 0 // op 0 is the first run's length
	noLit := func() int {
		if lit == 0 {
			return 1
		}
		return 0
	}
	// literal copies one byte into the run, ending it at lzfMaxLit.
	literal := func() {
		out[op] = in[ip]
		lit, op, ip = lit+1, op+1, ip+1
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	hval := uint32(in[0])<<8 | uint32(in[1])
	for ip < end-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := lzfIndex(hval)
		ref := int(htab[slot])
		htab[slot] = int32(ip)
		off := ip - ref - 1
		if ref > 0 && off < lzfMaxOff && in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			n := 2
			maxlen := min(end-ip-n, lzfMaxRef)
			if op+3+1 >= outLen && op-noLit()+3+1 >= outLen {
				return nil
			}
			out[op-lit-1] = byte(lit - 1) // end the run
			op -= noLit()
			// liblzf compares 16 bytes unchecked once maxlen > 16, then
			// byte by byte up to maxlen.
			matched := true
			if maxlen > 16 {
				for range 16 {
					n++
					if in[ref+n] != in[ip+n] {
						matched = false
						break
					}
				}
			}
			if matched {
				for {
					n++
					if n >= maxlen || in[ref+n] != in[ip+n] {
						break
					}
				}
			}
			n -= 2 // bytes matched, less one
			ip++
			if n < 7 {
				out[op] = byte(off>>8 + n<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				out[op+1] = byte(n - 7)
				op += 2
			}
			out[op] = byte(off)
			op += 2 // and start a run
			lit = 0
			ip += n + 1
			if ip >= end-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			for range 2 {
				hval = hval<<8 | uint32(in[ip+2])
				htab[lzfIndex(hval)] = int32(ip)
				ip++
			}
			continue
		}
		if op >= outLen {
			return nil
		}
		literal()
	}
	if op+3 > outLen {
		return nil
	}
	for ip < end {
		literal()
	}
	out[op-lit-1] = byte(lit - 1)
	op -= noLit()
	return out[:op]
}

// crc64Table is Redis's crc64: the Jones polynomial, reflected, with no
// initial or final inversion (which hash/crc64 always applies).
var crc64Table = func() (t [256]uint64) {
	const poly = 0x95ac9329ac4bc9b5
	for i := range t {
		c := uint64(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ poly
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

func crc64Jones(crc uint64, p []byte) uint64 {
	for _, b := range p {
		crc = crc64Table[byte(crc)^b] ^ crc>>8
	}
	return crc
}
