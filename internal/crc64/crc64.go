// Package crc64 is Redis's CRC-64, the checksum of RDB files and of DUMP
// payloads: the Jones polynomial, reflected, with a zero initial value and
// no final xor (Redis's src/crc64.c). Go's hash/crc64 cannot stand in:
// it inverts before and after.
package crc64

import "encoding/binary"

// tables[0] is the bytewise table of the reflected polynomial; tables[k]
// advances a byte by k more, so that eight bytes are folded in at once
// (slicing-by-8, as Redis's crcspeed does). hash/crc64 slices only its own
// two polynomials, and rebuilds the tables for any other on every update
// of 2 KB or more.
var tables = func() *[8][256]uint64 {
	const poly = 0x95ac9329ac4bc9b5 // the Jones polynomial, bits reversed
	var t [8][256]uint64
	for i := range 256 {
		c := uint64(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ poly
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][byte(c)] ^ c>>8
			t[k][i] = c
		}
	}
	return &t
}()

// Update is Redis's crc64(crc, p): the checksum of what crc summed
// followed by p. The checksum of nothing is 0.
func Update(crc uint64, p []byte) uint64 {
	t := tables
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][byte(crc)] ^ t[6][byte(crc>>8)] ^ t[5][byte(crc>>16)] ^ t[4][byte(crc>>24)] ^
			t[3][byte(crc>>32)] ^ t[2][byte(crc>>40)] ^ t[1][byte(crc>>48)] ^ t[0][byte(crc>>56)]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}
