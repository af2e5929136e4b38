package rdb

import "strconv"

// The RDB version and opcodes of Redis 7.0 (src/rdb.h).
const (
	Version = 10

	typeString          = 0
	typeList            = 1
	typeSet             = 2
	typeZSet            = 3
	typeHash            = 4
	typeZSet2           = 5
	typeModule          = 6
	typeModule2         = 7
	typeHashZipmap      = 9
	typeListZiplist     = 10
	typeSetIntset       = 11
	typeZSetZiplist     = 12
	typeHashZiplist     = 13
	typeListQuicklist   = 14
	typeStreamListpacks = 15
	typeHashListpack    = 16
	typeZSetListpack    = 17
	typeListQuicklist2  = 18
	typeStream2         = 19

	opFunction2    = 245
	opFunction     = 246
	opModuleAux    = 247
	opIdle         = 248
	opFreq         = 249
	opAux          = 250
	opResizeDB     = 251
	opExpireTimeMS = 252
	opExpireTime   = 253
	opSelectDB     = 254
	opEOF          = 255

	// A length's top two bits (src/rdb.h RDB_6BITLEN...).
	len6     = 0
	len14    = 1
	len32    = 0x80
	len64    = 0x81
	lenEnc   = 3
	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3

	// quicklist 2 node containers (src/quicklist.h).
	containerPlain  = 1
	containerPacked = 2
)

// Redis 7.0's defaults for when a collection leaves its compact encoding.
const (
	hashMaxListpackEntries = 512
	hashMaxListpackValue   = 64
	setMaxIntsetEntries    = 512
	zsetMaxListpackEntries = 128
	zsetMaxListpackValue   = 64
	// listMaxListpackSize is list-max-listpack-size -2: a quicklist node
	// holds at most 8 KB of listpack.
	listMaxListpackSize = 8192
)

// appendInt is v's decimal string, in a new slice.
func appendInt(v int64) []byte { return appendIntTo(nil, v) }

// appendIntTo appends v in decimal to dst.
func appendIntTo(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }
