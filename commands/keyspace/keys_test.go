package keyspace

import (
	"strconv"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/fakeclock"
)

// TestKeys: types, expiry, RENAME, COPY, MOVE, DUMP and RESTORE, OBJECT, the scans and the databases.
func TestKeys(t *testing.T) {
	h := newFamily(t)
	h.Run([]Case{
		{"SET k v", "OK"},
		{"HSET h f v", 1},
		{"RPUSH l a", 1},
		{"SADD s a", 1},
		{"ZADD z 1 a", 1},
		{"XADD x 1-1 f v", "1-1"},
		{"PFADD hll a", 1},
		{"TYPE k", "string"},
		{"TYPE h", "hash"},
		{"TYPE l", "list"},
		{"TYPE s", "set"},
		{"TYPE z", "zset"},
		{"TYPE x", "stream"},
		{"TYPE hll", "string"},
		{"TYPE nosuch", "none"},
		{"EXISTS k h nosuch k", 3},
		{"TOUCH k h nosuch", 2},
		{"DEL nosuch", 0},
		{"DEL k h", 2},
		{"UNLINK l nosuch", 1},
		{"EXISTS k h l", 0},
		{"SET k v", "OK"},
		{"EXPIRE k 100", 1},
		{"TTL k", 100},
		{"PTTL k", 100000},
		{"EXPIRE k 100 NX", 0},
		{"EXPIRE k 200 XX", 1},
		{"EXPIRE k 50 GT", 0},
		{"EXPIRE k 300 GT", 1},
		{"EXPIRE k 500 LT", 0},
		{"EXPIRE k 50 LT", 1},
		{"TTL k", 50},
		{"EXPIRE k 100 NX XX", Err("ERR NX and XX, GT or LT options at the same time are not compatible")},
		{"EXPIRE k 100 GT LT", Err("ERR GT and LT options at the same time are not compatible")},
		{"EXPIRE k 100 BOGUS", Err("ERR Unsupported option BOGUS")},
		{"EXPIRE k x", Err("ERR value is not an integer or out of range")},
		{"EXPIRE k 9223372036854775807", Err("ERR invalid expire time in 'expire' command")},
		{"PEXPIRE k 9223372036854775807", Err("ERR invalid expire time in 'pexpire' command")},
		{"EXPIRE nosuch 10", 0},
		{"PEXPIRE k 100000", 1},
		{"PTTL k", 100000},
		{"PERSIST k", 1},
		{"PERSIST k", 0},
		{"PERSIST nosuch", 0},
		{"TTL k", -1},
		{"PTTL k", -1},
		{"TTL nosuch", -2},
		{"PTTL nosuch", -2},
		{"EXPIRE k 100 XX", 0},
		{"EXPIRE k 100 GT", 0},
		{"EXPIRE k 100 LT", 1},
		{"PERSIST k", 1},
		{"EXPIRE k 100 LT", 1},
		{"EXPIREAT k 4000000000", 1},
		{"EXPIRETIME k", 4000000000},
		{"PEXPIRETIME k", 4000000000000},
		{"PEXPIREAT k 4000000000000", 1},
		{"PEXPIRETIME k", 4000000000000},
		{"EXPIRETIME nosuch", -2},
		{"EXPIRETIME s", -1},
		{"EXPIREAT k x", Err("ERR value is not an integer or out of range")},
		{"EXPIREAT k 1", 1},
		{"EXISTS k", 0},
		{"SET k v", "OK"},
		{"EXPIRE k -1", 1},
		{"EXISTS k", 0},
		{"SET k v", "OK"},
		{"PEXPIRE k 0", 1},
		{"EXISTS k", 0},
		{"SET a 1", "OK"},
		{"RENAME a b", "OK"},
		{"GET b", "1"},
		{"RENAME nosuch b", Err("ERR no such key")},
		{"RENAME b b", "OK"},
		{"SET c 3", "OK"},
		{"RENAMENX b c", 0},
		{"RENAMENX b d", 1},
		{"RENAMENX nosuch d", Err("ERR no such key")},
		{"RENAMENX d d", 0},
		{"SET e 1 EX 100", "OK"},
		{"RENAME e f", "OK"},
		{"TTL f", 100},
		{"COPY f g", 1},
		{"GET g", "1"},
		{"TTL g", 100},
		{"COPY f g", 0},
		{"COPY f g REPLACE", 1},
		{"COPY nosuch g", 0},
		{"COPY f f", Err("ERR source and destination objects are the same")},
		{"COPY f g DB 1", 1},
		{"COPY f g DB 99", Err("ERR DB index is out of range")},
		{"COPY f g DB x", Err("ERR value is not an integer or out of range")},
		{"COPY f g BOGUS", Err("ERR syntax error")},
		{"COPY s s2", 1},
		{"SMEMBERS s2", []any{"a"}},
		{"COPY z z2", 1},
		{"ZRANGE z2 0 -1 WITHSCORES", []any{"a", "1"}},
		{"COPY x x2", 1},
		{"XLEN x2", 1},
		{"COPY hll hll2", 1},
		{"PFCOUNT hll2", 1},
		{"MOVE f 1", 1},
		{"MOVE f 1", 0},
		{"MOVE g 0", Err("ERR source and destination objects are the same")},
		{"MOVE g 99", Err("ERR DB index is out of range")},
		{"MOVE g x", Err("ERR value is not an integer or out of range")},
	})
	h.Ctx.Store = h.Store.DB(1) // SELECT 1
	h.Run([]Case{
		{"GET f", "1"},
		{"GET g", "1"},
	})
	h.Ctx.Store = h.Store
	h.Run([]Case{
		{"SET dk hello", "OK"},
		{"DUMP dk", "\x00\x05hello\n\x00cr\xdfve4 \n"},
		{"DUMP nosuch", nil},
		{"RPUSH dl a b", 2},
		{"DUMP dl", "\x12\x01\x02\r\r\x00\x00\x00\x02\x00\x81a\x02\x81b\x02\xff\n\x00h\xeb\n\x89\x13A\xbb\xb1"},
		{"DUMP s", "\x02\x01\x01a\n\x00b\x96\xe9~D\xd2\x1am"},
		{"DUMP z", "\x11\f\f\x00\x00\x00\x02\x00\x81a\x02\x01\x01\xff\n\x00\xa8\x05θש3\x02"},
		{`RESTORE rk 0 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e"`, Err("ERR DUMP payload version or checksum are wrong")},
		{"GET rk", nil},
		{`RESTORE rk 0 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e"`, Err("ERR DUMP payload version or checksum are wrong")},
		{`RESTORE rk 0 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" REPLACE`, Err("ERR DUMP payload version or checksum are wrong")},
		{`RESTORE rk 1000 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" REPLACE`, Err("ERR DUMP payload version or checksum are wrong")},
		{"PTTL rk", -2},
		{`RESTORE rk 4000000000000 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" REPLACE ABSTTL`, Err("ERR DUMP payload version or checksum are wrong")},
		{"PEXPIRETIME rk", -2},
		{`RESTORE rk 0 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" REPLACE IDLETIME 10`, Err("ERR DUMP payload version or checksum are wrong")},
		{`RESTORE rk 0 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" REPLACE FREQ 10`, Err("ERR DUMP payload version or checksum are wrong")},
		{`RESTORE rk 0 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" REPLACE IDLETIME 10 FREQ 10`, Err("ERR syntax error")},
		{`RESTORE rk 0 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" REPLACE IDLETIME -1`, Err("ERR Invalid IDLETIME value, must be >= 0")},
		{`RESTORE rk 0 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" REPLACE FREQ 256`, Err("ERR Invalid FREQ value, must be >= 0 and <= 255")},
		{`RESTORE rk -1 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" REPLACE`, Err("ERR Invalid TTL value, must be >= 0")},
		{`RESTORE rk x "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" REPLACE`, Err("ERR value is not an integer or out of range")},
		{`RESTORE rk 0 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" BOGUS`, Err("ERR syntax error")},
		{"RESTORE rk 0 garbage REPLACE", Err("ERR DUMP payload version or checksum are wrong")},
		{`RESTORE rk 0 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0f" REPLACE`, Err("ERR DUMP payload version or checksum are wrong")},
		{`RESTORE rk 1 "\x00\x05hello\n\x00\xf8\xf3\x99\x1e\x14\xf0\x1d\x0e" REPLACE ABSTTL`, Err("ERR DUMP payload version or checksum are wrong")},
		{"EXISTS rk", 0},
		{"OBJECT ENCODING dk", "embstr"},
		{"SET num 123", "OK"},
		{"OBJECT ENCODING num", "int"},
		{"SET longstr aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "OK"},
		{"OBJECT ENCODING longstr", "raw"},
		{"OBJECT ENCODING h", nil},
		{"OBJECT ENCODING s", "hashtable"},
		{"SADD ss a b", 2},
		{"OBJECT ENCODING ss", "hashtable"},
		{"OBJECT ENCODING z", "listpack"},
		{"OBJECT ENCODING x", "stream"},
		{"OBJECT ENCODING nosuch", nil},
		{"OBJECT REFCOUNT dk", 1},
		{"OBJECT REFCOUNT nosuch", nil},
		// The store's policy is allkeys-lfu, where Redis tracks no idle time.
		{"OBJECT IDLETIME dk", Err("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")},
		{"OBJECT IDLETIME nosuch", nil},
		{"OBJECT FREQ nosuch", nil},
		{"FLUSHALL", "OK"},
		{"SET k1 v", "OK"},
		{"KEYS k*", []any{"k1"}},
		{"KEYS nomatch*", []any{}},
		{"SCAN 0", []any{"0", []any{"k1"}}},
		{"SCAN 0 MATCH k* COUNT 10", []any{"0", []any{"k1"}}},
		{"SCAN 0 TYPE string", []any{"0", []any{"k1"}}},
		{"SCAN 0 TYPE hash", []any{"0", []any{}}},
		{"SCAN 0 TYPE bogus", []any{"0", []any{}}},
		{"SCAN x", Err("ERR invalid cursor")},
		{"SCAN 0 COUNT 0", Err("ERR syntax error")},
		{"SCAN 0 BOGUS x", Err("ERR syntax error")},
		{"RANDOMKEY", "k1"},
		{"DBSIZE", 1},
		{"FLUSHDB", "OK"},
		{"DBSIZE", 0},
		{"RANDOMKEY", nil},
		{"SET k1 v", "OK"},
		{"FLUSHDB ASYNC", "OK"},
		{"FLUSHDB SYNC", "OK"},
		{"FLUSHDB BOGUS", Err("ERR syntax error")},
		{"FLUSHALL BOGUS", Err("ERR syntax error")},
		{"FLUSHALL SYNC", "OK"},
		{"SET sw v", "OK"},
		{"SWAPDB 0 1", "OK"},
		{"GET sw", nil},
		{"SWAPDB 0 1", "OK"},
		{"GET sw", "v"},
		{"SWAPDB 0 99", Err("ERR DB index is out of range")},
		{"SWAPDB x 1", Err("ERR invalid first DB index")},
		{"SWAPDB 0 0", "OK"},
	})
}

// TestKeysExpireOnTheClock: deadlines are read from the store's clock: a
// key lives until its deadline passes on it, and TTL counts down with it.
func TestKeysExpireOnTheClock(t *testing.T) {
	h := newFamily(t)
	at := strconv.FormatInt(fakeclock.Start.Add(time.Hour).Unix(), 10)
	h.Run([]Case{
		{"SET k v EX 10", "OK"},
		{"SET at v EXAT " + at, "OK"},
		{"EXPIRETIME at", fakeclock.Start.Add(time.Hour).Unix()},
		{"RPUSH l a", 1},
		{"PEXPIRE l 1500", 1},
	})
	h.Clock.Advance(time.Second)
	h.Run([]Case{
		{"TTL k", 9},
		{"PTTL l", 500},
		{"TTL at", 3599},
	})
	h.Clock.Advance(9 * time.Second)
	h.Run([]Case{
		{"GET k", nil},
		{"TTL k", -2},
		{"EXISTS l", 0},
		{"GETEX at PX 100", "v"},
	})
	h.Clock.Advance(100 * time.Millisecond)
	h.Run([]Case{{"GET at", nil}})
}

// TestKeysClientFacts: what a command asks of its client: CLIENT
// NO-TOUCH reads the same values, proto-max-bulk-len bounds the strings
// a write makes.
func TestKeysClientFacts(t *testing.T) {
	h := newFamily(t)
	h.cl.MaxBulkLen = 8
	h.Run([]Case{
		{"SET k 12345678", "OK"},
		{"APPEND k 9", Err("ERR string exceeds maximum allowed size (proto-max-bulk-len)")},
		{"SETRANGE k 8 x", Err("ERR string exceeds maximum allowed size (proto-max-bulk-len)")},
		{"SETBIT k 64 1", Err("ERR bit offset is not an integer or out of range")},
		{"SETBIT k 63 1", 0},
	})
	h.cl.Untouching = true
	freq := h.Do("OBJECT", "FREQ", "k")
	// A touch at this count raises it with odds of 1 in 11: a hundred
	// would, but for once in 10,000 runs.
	for range 100 {
		h.Check("GET k", "12345679")
	}
	h.Check("OBJECT FREQ k", freq)
}
