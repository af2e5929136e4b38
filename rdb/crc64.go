package rdb

import "hash/crc64"

// Redis's CRC64 is the Jones polynomial, reflected, with a zero initial
// value and no final xor (src/crc64.c). hash/crc64 implements the reflected
// algorithm with an initial value and final xor of all ones, so the
// complements on the way in and out cancel them.
var jonesTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// crcUpdate is Redis's crc64(crc, p).
func crcUpdate(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jonesTable, p)
}
