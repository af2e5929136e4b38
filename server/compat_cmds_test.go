package server

// Differential tests of the keyspace, bitmap and introspection commands
// (RENAME, COPY, the bit commands, LCS, OBJECT, MEMORY, RESET, CLIENT KILL,
// WAIT, INFO's sections), with compat_test.go's helpers. The reference
// Redis runs as our server presents itself: one database, so COPY ... DB 1
// fails on both, and allkeys-lfu under a maxmemory, so OBJECT REFCOUNT and
// IDLETIME answer alike. Redis 7.0 and 7.2 agree on every reply compared
// here (their bitops.c, lcsCommand, renameGenericCommand and copyCommand
// are the same); CLIENT NO-TOUCH, new in 7.2, is checked on our server
// alone.
//
// Run: go test -count=1 -run 'CompatCmds' ./resp/

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/metrics"
)

// startReferenceRedis starts a redis-server configured as our server
// presents itself.
func startReferenceRedis(t *testing.T) string {
	t.Helper()
	return redistest.Start(t, "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lfu").Addr()
}

func TestCompatCmdsScripts(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range cmdsCompatScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

func cmdsCompatScripts() []compatScript {
	long := strings.Repeat("x", 45)
	return []compatScript{
		// ---- RENAME, RENAMENX, COPY ----
		{name: "rename", steps: []compatStep{
			cs("RENAME nokey x"), cs("RENAMENX nokey x"), cs("SET a 1"), cs("RENAME a a"), cs("RENAMENX a a"),
			cs("RENAME a b"), cs("GET a"), cs("GET b"), cs("EXISTS a"), cs("SET c 3"), cs("RENAME b c"), cs("GET c"),
			cs("SET d 4"), cs("RENAMENX c d"), cs("GET c"), cs("GET d"), cs("RENAMENX c e"), cs("GET e"), cs("DBSIZE"),
			ca("SET", "", "empty"), ca("RENAME", "", "f"), cs("GET f"), ca("RENAME", "f", ""), ca("GET", ""),
			cs("RENAME x"), cs("RENAME x y z"), cs("RENAMENX x"),
		}},
		{name: "rename-keeps-ttl", steps: []compatStep{
			cs("SET a v EX 100"), cs("RENAME a b"), csApprox("PTTL b"), cs("TTL a"),
			cs("SET c v"), cs("SET d v PX 50000"), cs("RENAME c d"), cs("TTL d"),
			cs("SET e v EXAT " + y2100), cs("RENAMENX e f"), cs("EXPIRETIME f"),
			cs("SET g v PX 30"), csSleep(60 * time.Millisecond), cs("RENAME g h"), cs("EXISTS h"),
			cs("SET i v"), cs("SET j v PX 30"), csSleep(60 * time.Millisecond), cs("RENAMENX i j"), cs("GET j"),
		}},
		{name: "copy", steps: []compatStep{
			cs("COPY nokey x"), cs("SET a hello EX 100"), cs("COPY a b"), cs("GET b"), csApprox("PTTL b"),
			cs("APPEND b !"), cs("GET a"), cs("GET b"), cs("COPY a b"), cs("GET b"), cs("COPY a b REPLACE"), cs("GET b"),
			cs("COPY a a"), cs("COPY a a REPLACE"), cs("COPY nokey nokey"),
			cs("COPY a c DB 0"), cs("GET c"), cs("COPY a d DB 1"), cs("COPY a d DB -1"), cs("COPY a d DB x"),
			cs("COPY a d DB 99999999999"), cs("COPY a d DB"), cs("COPY a d FOO"), cs("COPY a d replace REPLACE db 0"),
			cs("COPY a d DB 1 BAR"), cs("COPY a d BAR DB 1"), cs("COPY a a DB 1"), cs("COPY a a DB 0"), cs("COPY"), cs("COPY a"),
			cs("SET p v"), cs("COPY p q"), cs("TTL q"), cs("DBSIZE"),
		}},

		// ---- SETBIT, GETBIT ----
		{name: "setbit-getbit", steps: []compatStep{
			cs("GETBIT k 0"), cs("SETBIT k 1 1"), cs("GET k"), cs("SETBIT k 1 1"), cs("SETBIT k 1 0"), cs("GET k"),
			cs("SETBIT k 7 1"), cs("SETBIT k 15 1"), cs("SETBIT k 100 1"), cs("STRLEN k"), cs("GETBIT k 100"), cs("GETBIT k 99"),
			cs("GETBIT k 1000"), cs("GETBIT k 10000000"), cs("SETBIT k 0 2"), cs("SETBIT k 0 -1"), cs("SETBIT k 0 x"), cs("SETBIT k 0 01"),
			cs("SETBIT k -1 1"), cs("SETBIT k x 1"), cs("SETBIT k 4294967296 1"),
			cs("GETBIT k -1"), cs("GETBIT k 4294967296"), cs("GETBIT k 1.5"), cs("SETBIT k 1.5 1"), cs("SETBIT nokey 0 0"),
			cs("GET nokey"), cs("EXISTS nokey"), cs("SET n 255"), cs("GETBIT n 2"), cs("GETBIT n 3"), cs("SETBIT n 2 0"), cs("GET n"),
			cs("SET e v EX 100"), cs("SETBIT e 0 1"), cs("TTL e"), cs("SETBIT"), cs("SETBIT k 1"), cs("GETBIT k"),
		}},

		// ---- BITCOUNT ----
		{name: "bitcount", steps: []compatStep{
			cs("BITCOUNT nokey"), cs("BITCOUNT nokey 0 1"), cs("BITCOUNT nokey 0"), cs("BITCOUNT nokey a b"),
			cs("SET s foobar"), cs("BITCOUNT s"), cs("BITCOUNT s 0 0"), cs("BITCOUNT s 1 1"), cs("BITCOUNT s 1 -1"),
			cs("BITCOUNT s -2 -1"), cs("BITCOUNT s -1 -2"), cs("BITCOUNT s 5 1"), cs("BITCOUNT s 0 100"), cs("BITCOUNT s -100 -1"),
			cs("BITCOUNT s 0 -100"), cs("BITCOUNT s 0"), cs("BITCOUNT s 0 1 2"), cs("BITCOUNT s a 1"), cs("BITCOUNT s 0 b"),
			cs("BITCOUNT s 5 30 BIT"), cs("BITCOUNT s 5 30 bit"), cs("BITCOUNT s 0 1 BYTE"), cs("BITCOUNT s 0 1 FOO"),
			cs("BITCOUNT s -1 -2 FOO"), cs("BITCOUNT s 0 47 BIT"), cs("BITCOUNT s -3 -1 BIT"), cs("BITCOUNT s 7 7 BIT"),
			cs("BITCOUNT s 3 4 BIT"), cs("BITCOUNT s 46 100 BIT"), cs("BITCOUNT s -100 -40 BIT"),
			cs("BITCOUNT s 9223372036854775807 9223372036854775807"), cs("BITCOUNT s -9223372036854775808 9223372036854775807 BIT"),
			ca("SET", "empty", ""), cs("BITCOUNT empty"), cs("BITCOUNT empty 0 -1"), cs("BITCOUNT empty 0 -1 BIT"),
			cs("SET n 12345"), cs("BITCOUNT n"), cs("BITCOUNT"),
		}},

		// ---- BITPOS ----
		{name: "bitpos", steps: []compatStep{
			cs("BITPOS nokey 0"), cs("BITPOS nokey 1"), cs("BITPOS nokey 1 0 10"), cs("BITPOS nokey 2"), cs("BITPOS nokey x"),
			cs("BITPOS nokey 0 a b c d"),
			ca("SET", "a", "\xff\xf0\x00"), cs("BITPOS a 0"), cs("BITPOS a 1"), cs("BITPOS a 1 1"), cs("BITPOS a 1 2"),
			cs("BITPOS a 0 0 0"), cs("BITPOS a 0 0 1"), cs("BITPOS a 0 0 -1"), cs("BITPOS a 1 2 -1"), cs("BITPOS a 1 -1 -3"),
			ca("SET", "f", "\xff\xff\xff"), cs("BITPOS f 0"), cs("BITPOS f 0 1"), cs("BITPOS f 0 1 -1"), cs("BITPOS f 0 0 -1 BIT"),
			cs("BITPOS f 0 0 BIT"), cs("BITPOS f 1 0 BIT"), cs("BITPOS f 1 23 23 BIT"), cs("BITPOS f 0 5"), cs("BITPOS f 1 5"),
			ca("SET", "z", "\x00\x00\x00"), cs("BITPOS z 1"), cs("BITPOS z 0"), cs("BITPOS z 1 0 -1 BIT"), cs("BITPOS z 0 7 15 BIT"),
			ca("SET", "m", "\x00\x01\x80\x00"), cs("BITPOS m 1 7 BIT"), cs("BITPOS m 1 15 15 BIT"), cs("BITPOS m 1 16 16 BIT"),
			cs("BITPOS m 1 17 BIT"), cs("BITPOS m 0 15 16 BIT"), cs("BITPOS m 1 3 14 BIT"), cs("BITPOS m 1 -10 -1 BIT"),
			cs("BITPOS m 0 1 2 BYTE"), cs("BITPOS m 1 1 2 FOO"), cs("BITPOS m 1 x"), cs("BITPOS m 1 0 x"), cs("BITPOS m 1 0 1 BIT x"),
			ca("SET", "empty", ""), cs("BITPOS empty 0"), cs("BITPOS empty 1"), cs("BITPOS empty 0 0"), cs("BITPOS empty 0 0 -1 BIT"),
			cs("BITPOS m 3"), cs("BITPOS m -1"), cs("BITPOS"), cs("BITPOS m"),
		}},

		// ---- BITOP ----
		{name: "bitop", steps: []compatStep{
			ca("SET", "a", "\x0f\xf0\xaa"), ca("SET", "b", "\xff\x00"), cs("SET c abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"),
			cs("BITOP AND d a b"), cs("GET d"), cs("BITOP OR d a b"), cs("GET d"), cs("BITOP XOR d a b"), cs("GET d"),
			cs("BITOP NOT d a"), cs("GET d"), cs("BITOP and d a b c"), cs("GET d"), cs("BITOP Or d a c b"), cs("GET d"),
			cs("BITOP XOR d c c"), cs("GET d"), cs("BITOP AND d a nokey"), cs("GET d"), cs("BITOP OR d nokey a"), cs("GET d"),
			cs("BITOP NOT d nokey"), cs("EXISTS d"), cs("SET d v EX 100"), cs("BITOP OR d a"), cs("TTL d"),
			cs("SET e v"), cs("BITOP AND e nokey1 nokey2"), cs("EXISTS e"), ca("SET", "empty", ""), cs("BITOP OR e empty"), cs("EXISTS e"),
			cs("BITOP NOT d a b"), cs("BITOP NOT d"), cs("BITOP FOO d a"), cs("BITOP NAND d a b"), cs("BITOP AND d"),
			cs("BITOP AND a a b"), cs("GET a"), cs("BITOP"),
		}},

		// ---- BITFIELD, BITFIELD_RO ----
		{name: "bitfield", steps: []compatStep{
			cs("BITFIELD k"), cs("EXISTS k"), cs("BITFIELD k GET u8 0"), cs("EXISTS k"), cs("BITFIELD k OVERFLOW SAT"), cs("EXISTS k"),
			cs("BITFIELD k SET i8 0 -100"), cs("GET k"), cs("BITFIELD k GET i8 0 GET u8 0 GET i4 0 GET u4 4 GET u1 0"),
			cs("BITFIELD k SET u8 #1 255 GET u8 8 GET u16 0 GET i16 0"), cs("STRLEN k"),
			cs("BITFIELD k INCRBY u2 100 1 OVERFLOW SAT INCRBY u2 102 1"), cs("BITFIELD k INCRBY u2 100 1 OVERFLOW SAT INCRBY u2 102 1"),
			cs("BITFIELD k INCRBY u2 100 1 OVERFLOW SAT INCRBY u2 102 1"), cs("BITFIELD k INCRBY u2 100 1 OVERFLOW SAT INCRBY u2 102 1"),
			cs("BITFIELD k OVERFLOW FAIL INCRBY u2 100 10 GET u2 100"), cs("BITFIELD k OVERFLOW fail incrby i8 200 200"),
			cs("BITFIELD k OVERFLOW wrap INCRBY i8 200 200 OVERFLOW SAT INCRBY i8 200 200 INCRBY i8 200 -1000"),
			cs("BITFIELD k SET u8 300 256 SET u8 300 -1 OVERFLOW SAT SET u8 300 256 SET u8 300 -1 OVERFLOW FAIL SET u8 300 256 GET u8 300"),
			cs("BITFIELD k SET i8 400 128 SET i8 400 -129 OVERFLOW SAT SET i8 400 128 SET i8 400 -129 GET i8 400"),
			cs("BITFIELD k SET i64 0 -1 GET i64 0 GET u63 0 GET u63 1 INCRBY i64 0 1"),
			cs("BITFIELD k SET i64 0 9223372036854775807 INCRBY i64 0 1 OVERFLOW SAT INCRBY i64 0 1 INCRBY i64 0 -9223372036854775808"),
			cs("BITFIELD k OVERFLOW SAT INCRBY i64 0 -9223372036854775808 INCRBY i64 0 -1 OVERFLOW FAIL INCRBY i64 0 -1"),
			cs("BITFIELD k SET u63 0 9223372036854775807 INCRBY u63 0 1 OVERFLOW SAT INCRBY u63 0 5 INCRBY u63 0 -9223372036854775808"),
			cs("BITFIELD k SET u63 0 0 OVERFLOW SAT INCRBY u63 0 -1 OVERFLOW WRAP INCRBY u63 0 -1"),
			cs("BITFIELD k SET i5 3 100 GET i5 3 GET u3 5 SET u1 #7 1 GET u8 0"), cs("GET k"),
			cs("BITFIELD f OVERFLOW FAIL SET u2 1000 9"), cs("STRLEN f"),
			cs("BITFIELD k GET u64 0"), cs("BITFIELD k GET i65 0"), cs("BITFIELD k GET i0 0"), cs("BITFIELD k GET I8 0"),
			cs("BITFIELD k GET x8 0"), cs("BITFIELD k GET u 0"), cs("BITFIELD k GET u-1 0"), cs("BITFIELD k GET u8 -1"),
			cs("BITFIELD k GET u8 x"), cs("BITFIELD k GET u8 #-1"), cs("BITFIELD k GET u8 #x"), cs("BITFIELD k GET u8 4294967296"),
			cs("BITFIELD k GET u8 #536870912"), cs("BITFIELD k GET u8 #536870911"), cs("BITFIELD k SET u8 0 x"), cs("BITFIELD k SET u8 0"),
			cs("BITFIELD k GET u8"), cs("BITFIELD k OVERFLOW"), cs("BITFIELD k OVERFLOW FOO GET u8 0"), cs("BITFIELD k FOO"),
			cs("BITFIELD k GET u8 0 FOO"), cs("BITFIELD k INCRBY u8 0 1.5"), cs("BITFIELD k GET u8 #0 GET i64 #1"),
			cs("BITFIELD k GET i8 #2305843009213693953"), cs("BITFIELD k GET i64 #144115188075855873"),
			cs("BITFIELD_RO k GET u8 0 GET i8 8"), cs("BITFIELD_RO k"), cs("BITFIELD_RO nokey GET u8 0"),
			cs("BITFIELD_RO k SET u8 0 1"), cs("BITFIELD_RO k INCRBY u8 0 1"), cs("BITFIELD_RO k GET u64 0"), cs("BITFIELD_RO k FOO"),
			cs("BITFIELD_RO k OVERFLOW SAT GET u8 0"), cs("BITFIELD"), cs("BITFIELD_RO"),
			cs("SET e v EX 100"), cs("BITFIELD e SET u8 0 65"), cs("GET e"), cs("TTL e"),
		}},

		// ---- LCS ----
		{name: "lcs", steps: []compatStep{
			cs("MSET a ohmytext b mynewtext"), cs("LCS a b"), cs("LCS a b LEN"), cs("LCS a b IDX"), cs("LCS a b IDX WITHMATCHLEN"),
			cs("LCS a b IDX MINMATCHLEN 4"), cs("LCS a b IDX MINMATCHLEN 4 WITHMATCHLEN"), cs("LCS a b idx minmatchlen -5"),
			cs("LCS a b LEN IDX"), cs("LCS a b IDX LEN"), cs("LCS a b MINMATCHLEN x"), cs("LCS a b MINMATCHLEN"), cs("LCS a b FOO"),
			cs("LCS a b WITHMATCHLEN"), cs("LCS a b MINMATCHLEN 3 LEN"), cs("LCS a nokey"), cs("LCS nokey1 nokey2 IDX"), cs("LCS a a"),
			cs("LCS a a IDX WITHMATCHLEN"), cs("LCS nokey a LEN"),
			cs("MSET x rep:aaaabbbbcccc y cccc-bbbb-aaaa"), cs("LCS x y"), cs("LCS x y IDX WITHMATCHLEN"), cs("LCS y x IDX WITHMATCHLEN"),
			cs("MSET p abcabcabc q cbacbacba"), cs("LCS p q"), cs("LCS p q IDX"), cs("LCS q p IDX WITHMATCHLEN MINMATCHLEN 2"),
			ca("MSET", "bin1", "\x00\xff\x01\x80", "bin2", "\xff\x00\x80\x01"), cs("LCS bin1 bin2"), cs("LCS bin1 bin2 IDX"),
			cs("LCS a"), cs("LCS"),
		}},

		// A string the in-place commands changed is "raw" however short,
		// until a write replaces it (the Tcl suite's "SETRANGE against
		// integer-encoded key").
		{name: "object-encoding-in-place", steps: []compatStep{
			cs("SET k 1234"), cs("OBJECT ENCODING k"), cs("SETRANGE k 0 2"), cs("OBJECT ENCODING k"), cs("GET k"),
			cs("SET k 1234"), ca("SETRANGE", "k", "0", ""), cs("OBJECT ENCODING k"), cs("GET k"),
			cs("SET k 1234"), cs("SETRANGE k 5 2"), cs("OBJECT ENCODING k"), cs("GET k"),
			cs("SETRANGE k 0 9"), cs("OBJECT ENCODING k"), cs("SET k 1234"), cs("OBJECT ENCODING k"),
			cs("SET s hello"), cs("APPEND s x"), cs("OBJECT ENCODING s"), cs("APPEND s y"), cs("OBJECT ENCODING s"),
			cs("SET s hello"), cs("SETBIT s 0 1"), cs("OBJECT ENCODING s"), cs("SETBIT s 0 1"), cs("OBJECT ENCODING s"),
			cs("SET b 7"), cs("BITFIELD b SET u8 0 50"), cs("OBJECT ENCODING b"), cs("GET b"),
			cs("SETRANGE new 2 ab"), cs("OBJECT ENCODING new"), cs("SETBIT bits 9 1"), cs("OBJECT ENCODING bits"),
			cs("BITFIELD bf SET u8 0 255"), cs("OBJECT ENCODING bf"),
			cs("SET n 10"), cs("APPEND n 5"), cs("OBJECT ENCODING n"), cs("INCR n"), cs("OBJECT ENCODING n"),
			cs("APPEND a1 12"), cs("OBJECT ENCODING a1"), cs("APPEND a2 x"), cs("OBJECT ENCODING a2"), cs("APPEND a2 y"),
			cs("OBJECT ENCODING a2"), cs("SET w 1"), cs("LPUSH l x"), cs("APPEND l x"), cs("GET a2"),
			cs("APPEND n x"), cs("SET n 10"), cs("SETRANGE n 0 2"), cs("INCRBYFLOAT n 1.5"), cs("OBJECT ENCODING n"),
			cs("SETRANGE n 0 2"), cs("GETSET n 12"), cs("OBJECT ENCODING n"),
		}},

		// ---- OBJECT, MEMORY USAGE errors ----
		{name: "object", steps: []compatStep{
			cs("SET i 12345"), cs("SET neg -9223372036854775808"), cs("SET big 9223372036854775808"), cs("SET lead 0123"),
			cs("SET zero 0"), cs("SET mz -0"), cs("SET s hello"), cs("SET l " + long), cs("SET l44 " + long[:44]),
			cs("SET plus +1"), cs("SET sp 1.5"), ca("SET", "e", ""), cs("SET n20 12345678901234567890"),
			cs("OBJECT ENCODING i"), cs("OBJECT ENCODING neg"), cs("OBJECT ENCODING big"), cs("OBJECT ENCODING lead"),
			cs("OBJECT ENCODING zero"), cs("OBJECT ENCODING mz"), cs("OBJECT ENCODING s"), cs("OBJECT ENCODING l"),
			cs("OBJECT ENCODING l44"), cs("OBJECT ENCODING plus"), cs("OBJECT ENCODING sp"), cs("OBJECT ENCODING e"),
			cs("OBJECT ENCODING n20"), cs("INCR i"), cs("OBJECT ENCODING i"), cs("OBJECT ENCODING nokey"),
			cs("OBJECT REFCOUNT i"), cs("OBJECT REFCOUNT s"), cs("OBJECT REFCOUNT nokey"), cs("OBJECT IDLETIME s"),
			cs("OBJECT IDLETIME nokey"), cs("OBJECT FREQ nokey"), cs("object encoding s"), cs("OBJECT encoding l"),
			cs("OBJECT"), cs("OBJECT ENCODING"), cs("OBJECT ENCODING s x"), cs("OBJECT FOO"), cs("OBJECT FOO s"), cs("OBJECT HELP x"),
			cs("MEMORY USAGE nokey"), cs("MEMORY USAGE nokey SAMPLES 5"), cs("MEMORY USAGE s SAMPLES"), cs("MEMORY USAGE s SAMPLES x"),
			cs("MEMORY USAGE s SAMPLES -1"), cs("MEMORY USAGE s FOO 1"), cs("MEMORY USAGE nokey SAMPLES -1"), cs("MEMORY USAGE"),
			cs("MEMORY FOO"), cs("MEMORY"), cs("MEMORY STATS x"), cs("MEMORY DOCTOR x"), cs("MEMORY PURGE x"), cs("MEMORY HELP x"),
		}},

		// OBJECT FREQ and IDLETIME answer by the policy, as Redis's: the
		// LFU counter starts at 5 and its first access makes it 6 (certain
		// at 5); IDLETIME's seconds are checked on a moved clock in
		// engine's TestIdleTime. The policy is set back at the end.
		{name: "object-freq-idletime", steps: []compatStep{
			cs("SET f x"), cs("OBJECT FREQ f"), cs("OBJECT FREQ f"), cs("GET f"), cs("OBJECT FREQ f"), cs("OBJECT IDLETIME f"),
			cs("OBJECT FREQ nokey"), cs("OBJECT IDLETIME nokey"), cs("HSET h a 1"), cs("OBJECT FREQ h"), cs("HGET h a"),
			cs("OBJECT FREQ h"), cs("CONFIG SET maxmemory-policy noeviction"), cs("OBJECT FREQ f"), cs("OBJECT FREQ nokey"),
			cs("OBJECT IDLETIME nokey"), cs("CONFIG SET maxmemory-policy allkeys-lfu"), cs("OBJECT FREQ f"),
		}},

		// ---- WAIT, RESET, CLIENT KILL and NO-EVICT errors ----
		{name: "wait", steps: []compatStep{
			cs("WAIT 0 0"), cs("WAIT 0 100"), cs("WAIT -1 0"), cs("WAIT x 0"), cs("WAIT 0 x"), cs("WAIT 0 -1"), cs("WAIT 1.5 0"),
			cs("WAIT 0"), cs("WAIT"),
		}},
		{name: "reset", steps: []compatStep{
			cs("CLIENT SETNAME before"), cs("CLIENT GETNAME"), cs("RESET"), cs("CLIENT GETNAME"), cs("reset"), cs("RESET x"),
			cs("CLIENT NO-EVICT on"), cs("RESET"), cs("PING"),
		}},
		{name: "client-kill-and-no-evict", steps: []compatStep{
			cs("CLIENT KILL 1.2.3.4:5"), cs("CLIENT KILL ID 999999"), cs("CLIENT KILL ID 0"), cs("CLIENT KILL ID -1"),
			cs("CLIENT KILL ID x"), cs("CLIENT KILL TYPE foo"), cs("CLIENT KILL TYPE master"), cs("CLIENT KILL TYPE replica"),
			cs("CLIENT KILL TYPE slave"), cs("CLIENT KILL TYPE pubsub"), cs("CLIENT KILL USER nobody"), cs("CLIENT KILL SKIPME maybe"),
			cs("CLIENT KILL ADDR 1.2.3.4:5"), cs("CLIENT KILL LADDR 1.2.3.4:5"), cs("CLIENT KILL ADDR 1.2.3.4:5 SKIPME"),
			cs("CLIENT KILL FOO bar"), cs("CLIENT KILL ADDR 1.2.3.4:5 ID 0"), cs("CLIENT KILL ID 999999 TYPE foo"),
			cs("CLIENT KILL"), cs("CLIENT KILL ID 999999 SKIPME no USER default TYPE normal"),
			cs("CLIENT NO-EVICT on"), cs("CLIENT NO-EVICT OFF"), cs("CLIENT NO-EVICT maybe"), cs("CLIENT NO-EVICT"),
			cs("CLIENT NO-EVICT on off"), cs("PING"),
		}},
	}
}

// TestCompatCmdsBitsFuzz compares the bitmap commands on random strings,
// ranges and fields, where an off-by-one in a mask or an overflow rule
// would show.
func TestCompatCmdsBitsFuzz(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	p.flush(t)
	rng := rand.New(rand.NewPCG(1, 2))
	randBytes := func() string {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			switch rng.IntN(3) {
			case 0:
				b[i] = 0
			case 1:
				b[i] = 0xff
			default:
				b[i] = byte(rng.UintN(256))
			}
		}
		return string(b)
	}
	idx := func() string { return strconv.Itoa(rng.IntN(120) - 60) }
	unit := func() []string {
		return [][]string{nil, {"BIT"}, {"BYTE"}}[rng.IntN(3)]
	}
	field := func() (string, string) {
		typ := []string{"i", "u"}[rng.IntN(2)] + strconv.Itoa(1+rng.IntN(64))
		off := strconv.Itoa(rng.IntN(100))
		if rng.IntN(4) == 0 {
			off = "#" + strconv.Itoa(rng.IntN(12))
		}
		return typ, off
	}
	// Values near a power of two, where a field's range ends.
	value := func() string {
		v := int64(1)<<rng.IntN(64) + int64(rng.IntN(3)-1)
		if rng.IntN(2) == 0 {
			v = -v
		}
		return strconv.FormatInt(v, 10)
	}
	compare := func(args ...string) bool {
		want, got := p.redis.run(compatExact, args), p.ours.run(compatExact, args)
		if want != got {
			t.Errorf("%s:\n\tredis: %s\n\tours:  %s", showArgs(args), want, got)
			return false
		}
		return true
	}
	for i := range 2000 {
		key := "k" + strconv.Itoa(i%5)
		var args []string
		switch rng.IntN(6) {
		case 0:
			args = []string{"SET", key, randBytes()}
		case 1:
			args = append([]string{"BITCOUNT", key, idx(), idx()}, unit()...)
		case 2:
			args = []string{"BITPOS", key, strconv.Itoa(rng.IntN(2))}
			switch rng.IntN(3) {
			case 1:
				args = append(args, idx())
			case 2:
				args = append(append(args, idx(), idx()), unit()...)
			}
		case 3:
			args = []string{"BITFIELD", key}
			for range 1 + rng.IntN(4) {
				typ, off := field()
				switch rng.IntN(5) {
				case 4:
					// A field set to the end of its range, then moved past it.
					width, _ := strconv.Atoi(typ[1:])
					edge := int64(1)<<(width-1) - 1
					if typ[0] == 'u' {
						edge = int64(uint64(1)<<width - 1)
					}
					if rng.IntN(2) == 0 {
						edge = -edge - 1
						if typ[0] == 'u' {
							edge = 0
						}
					}
					args = append(args, "SET", typ, off, strconv.FormatInt(edge, 10),
						"INCRBY", typ, off, strconv.Itoa(rng.IntN(5)-2))
				case 0:
					args = append(args, "GET", typ, off)
				case 1:
					args = append(args, "SET", typ, off, value())
				case 2:
					args = append(args, "INCRBY", typ, off, value())
				default:
					args = append(args, "OVERFLOW", []string{"WRAP", "SAT", "FAIL"}[rng.IntN(3)])
				}
			}
		case 4:
			args = []string{"BITOP", []string{"AND", "OR", "XOR", "NOT"}[rng.IntN(4)], "dest", key}
			if args[1] != "NOT" {
				args = append(args, "k"+strconv.Itoa(rng.IntN(5)))
			}
		case 5:
			args = []string{"SETBIT", key, strconv.Itoa(rng.IntN(100)), strconv.Itoa(rng.IntN(2))}
		}
		if !compare(args...) {
			return
		}
		if !compare("GET", key) || !compare("GET", "dest") {
			return
		}
	}
}

// TestCompatCmdsLCSFuzz compares LCS IDX on random strings of a small
// alphabet, where many longest subsequences tie and only Redis's table
// walk picks the same one.
func TestCompatCmdsLCSFuzz(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	p.flush(t)
	rng := rand.New(rand.NewPCG(3, 4))
	word := func() string {
		b := make([]byte, rng.IntN(30))
		for i := range b {
			b[i] = "abc"[rng.IntN(3)]
		}
		return string(b)
	}
	for range 100 {
		steps := [][]string{
			{"MSET", "a", word(), "b", word()},
			{"LCS", "a", "b"},
			{"LCS", "a", "b", "IDX", "WITHMATCHLEN", "MINMATCHLEN", strconv.Itoa(rng.IntN(4))},
		}
		for _, args := range steps {
			if want, got := p.redis.run(compatExact, args), p.ours.run(compatExact, args); want != got {
				t.Fatalf("%s:\n\tredis: %s\n\tours:  %s", showArgs(args), want, got)
			}
		}
	}
}

// TestCompatCmdsShape checks the replies whose values differ between the
// servers by nature for their shape: MEMORY USAGE and STATS, OBJECT and
// MEMORY HELP, and INFO's choice of sections.
func TestCompatCmdsShape(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	p.flush(t)
	p.both(t, "SET", "k", strings.Repeat("v", 100))

	t.Run("MEMORY USAGE", func(t *testing.T) {
		rr, or := p.both(t, "MEMORY", "USAGE", "k")
		want := fmt.Sprintf(":%d", 1+100+engine.EntryOverhead)
		if rr.kind != ':' || or.String() != want {
			t.Errorf("MEMORY USAGE k: redis %s, ours %s (want key, value and the entry overhead)", rr, or)
		}
		if _, or := p.both(t, "MEMORY", "USAGE", "k", "SAMPLES", "0"); or.String() != want {
			t.Errorf("MEMORY USAGE k SAMPLES 0: ours %s", or)
		}
	})

	t.Run("MEMORY STATS and DOCTOR", func(t *testing.T) {
		rr, or := p.both(t, "MEMORY", "STATS")
		redisFields := make(map[string]bool)
		for i := 0; i < len(rr.elems); i += 2 {
			redisFields[rr.elems[i].str] = true
		}
		if or.kind != '*' || len(or.elems)%2 != 0 || len(or.elems) == 0 {
			t.Fatalf("MEMORY STATS: ours %s", or)
		}
		for i := 0; i < len(or.elems); i += 2 {
			if name := or.elems[i].str; !redisFields[name] || or.elems[i+1].kind != ':' {
				t.Errorf("MEMORY STATS: ours has %s=%s, not a field of Redis's or not an integer", name, or.elems[i+1])
			}
		}
		rr, or = p.both(t, "MEMORY", "DOCTOR")
		if rr.kind != '$' || or.kind != '$' || !strings.HasPrefix(rr.str, "Hi Sam, ") || !strings.HasPrefix(or.str, "Hi Sam, ") {
			t.Errorf("MEMORY DOCTOR: redis %s, ours %s", rr, or)
		}
		if _, or := p.both(t, "MEMORY", "PURGE"); or.String() != "+OK" {
			t.Errorf("MEMORY PURGE: ours %s", or)
		}
	})

	t.Run("HELP", func(t *testing.T) {
		for _, c := range []string{"OBJECT", "MEMORY"} {
			rr, or := p.both(t, c, "HELP")
			if len(rr.elems) != len(or.elems) || len(or.elems) < 3 {
				t.Fatalf("%s HELP: redis %s\nours %s", c, rr, or)
			}
			// All but the last line, where 7.0 says "Prints" and 7.2 "Print".
			for i := range len(rr.elems) - 1 {
				if rr.elems[i].String() != or.elems[i].String() {
					t.Errorf("%s HELP line %d: redis %s, ours %s", c, i, rr.elems[i], or.elems[i])
				}
			}
		}
	})

	t.Run("INFO sections", func(t *testing.T) {
		headers := func(r compatReply) []string {
			var out []string
			for _, line := range strings.Split(r.str, "\r\n") {
				if strings.HasPrefix(line, "# ") {
					out = append(out, strings.ToLower(line[2:]))
				}
			}
			return out
		}
		ours := map[string]bool{"stampede": true}
		// Redis's sections we do not have; ours that Redis lacks are
		// dropped before comparing.
		missing := map[string]bool{"modules": true, "latencystats": true}
		for _, args := range [][]string{
			{"INFO"}, {"INFO", "default"}, {"INFO", "all"}, {"INFO", "everything"}, {"INFO", "server", "clients"},
			{"INFO", "CLIENTS", "server"}, {"INFO", "server", "server"}, {"INFO", "nosuch"}, {"INFO", "nosuch", "cpu"},
			{"INFO", "default", "commandstats"}, {"INFO", "commandstats"}, {"INFO", "keyspace"}, {"INFO", "replication", "persistence"},
			{"INFO", "cluster"}, {"INFO", "all", "nosuch"},
		} {
			rr, or := p.both(t, args...)
			var want, got []string
			for _, h := range headers(rr) {
				if !missing[h] {
					want = append(want, h)
				}
			}
			for _, h := range headers(or) {
				if !ours[h] {
					got = append(got, h)
				}
			}
			if strings.Join(want, ",") != strings.Join(got, ",") || rr.kind != or.kind {
				t.Errorf("%s: sections: redis %v, ours %v", showArgs(args), want, got)
			}
			if (rr.str == "") != (or.str == "") {
				t.Errorf("%s: redis %q, ours %q", showArgs(args), rr.str, or.str)
			}
		}
		for _, field := range []string{"role:master", "connected_slaves:0", "loading:0", "cluster_enabled:0", "used_cpu_sys:", "cmdstat_set:calls=",
			// Redis's test suite waits on these (wait_lazyfree_done).
			"mem_not_counted_for_evict:", "lazyfree_pending_objects:0", "lazyfreed_objects:0"} {
			rr, or := p.both(t, "INFO", "all")
			for _, x := range []compatReply{rr, or} {
				if !strings.Contains(x.str, "\r\n"+field) {
					t.Errorf("INFO all has no %s field: %.300q", field, x.str)
				}
			}
		}
	})
}

// both sends a command to each server and returns Redis's reply and ours;
// a connection failure ends the test.
func (p compatPair) both(t testing.TB, args ...string) (compatReply, compatReply) {
	t.Helper()
	rr, err1 := p.redis.do(args...)
	or, err2 := p.ours.do(args...)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: %v %v", showArgs(args), err1, err2)
	}
	return rr, or
}

// TestCompatCmdsClientKill kills connections on both servers in each of
// TestCompatClientInfoQbuf: a client's own CLIENT INFO and CLIENT LIST
// line count the command being run in qbuf, as Redis's query buffer holds
// it while it runs.
func TestCompatClientInfoQbuf(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		qbuf := func(c *compatConn, args ...string) string {
			r, err := c.do(args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(r.str, "\n") {
				if !strings.Contains(line, "cmd=client|") {
					continue
				}
				for _, f := range strings.Fields(line) {
					if strings.HasPrefix(f, "qbuf=") {
						return f
					}
				}
			}
			t.Fatalf("%s: no qbuf of its own: %s", showArgs(args), r)
			return ""
		}
		for _, args := range [][]string{{"CLIENT", "INFO"}, {"CLIENT", "LIST"}, {"client", "list", "type", "normal"}} {
			if w, g := qbuf(p.redis, args...), qbuf(p.ours, args...); w != g {
				t.Errorf("%s: redis %s, ours %s", showArgs(args), w, g)
			}
		}
	})
}

// CLIENT KILL's ways and compares the replies and which connections each
// server closed.
func TestCompatCmdsClientKill(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	// conns opens n connections to each server for the test, named c0,
	// c1, ...
	conns := func(t *testing.T, n int) []compatPair {
		out := make([]compatPair, n)
		for i := range out {
			out[i] = dialCompatPair(t, redisAddr, ts.addr, 2)
			for _, c := range []*compatConn{out[i].redis, out[i].ours} {
				if r, err := c.do("CLIENT", "SETNAME", "c"+strconv.Itoa(i)); err != nil || r.String() != "+OK" {
					t.Fatalf("CLIENT SETNAME: %s %v", r, err)
				}
			}
		}
		return out
	}
	// field reads a field of a connection's CLIENT INFO.
	field := func(c *compatConn, name string) string {
		r, err := c.do("CLIENT", "INFO")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.Fields(r.str) {
			if k, v, _ := strings.Cut(f, "="); k == name {
				return v
			}
		}
		t.Fatalf("CLIENT INFO has no %s: %s", name, r)
		return ""
	}
	// kill sends CLIENT KILL from killer with each server's own value of
	// target's field (id, addr or laddr) where "{}" stands, and compares
	// the replies and which of the connections are then closed.
	kill := func(t *testing.T, killer compatPair, target compatPair, name string, all []compatPair, args ...string) {
		t.Helper()
		var replies [2]string
		for i, side := range []func(compatPair) *compatConn{
			func(p compatPair) *compatConn { return p.redis },
			func(p compatPair) *compatConn { return p.ours },
		} {
			sent := slices.Clone(args)
			for j, a := range sent {
				if a == "{}" {
					sent[j] = field(side(target), name)
				}
			}
			replies[i] = side(killer).run(compatExact, sent)
		}
		if replies[0] != replies[1] {
			t.Errorf("CLIENT KILL %s: redis %s, ours %s", showArgs(args), replies[0], replies[1])
		}
		for i, p := range all {
			// Redis has closed them before it replies; ours closes the
			// others just after.
			rc := p.redis.closed(100 * time.Millisecond)
			wait := 100 * time.Millisecond
			if rc {
				wait = 5 * time.Second
			}
			oc := p.ours.closed(wait)
			if rc != oc {
				t.Errorf("CLIENT KILL %s: c%d closed: redis %v, ours %v", showArgs(args), i, rc, oc)
			}
		}
	}

	t.Run("by id", func(t *testing.T) {
		c := conns(t, 3)
		kill(t, c[0], c[1], "id", c, "CLIENT", "KILL", "ID", "{}")
		kill(t, c[0], c[0], "id", []compatPair{c[0], c[2]}, "CLIENT", "KILL", "ID", "{}")
		kill(t, c[0], c[0], "id", []compatPair{c[0], c[2]}, "CLIENT", "KILL", "ID", "{}", "SKIPME", "no")
	})
	t.Run("old form by address", func(t *testing.T) {
		c := conns(t, 2)
		kill(t, c[0], c[1], "addr", c, "CLIENT", "KILL", "{}")
		kill(t, c[0], c[0], "addr", c[:1], "CLIENT", "KILL", "{}")
	})
	t.Run("by address with filters", func(t *testing.T) {
		c := conns(t, 3)
		kill(t, c[0], c[1], "addr", c, "CLIENT", "KILL", "ADDR", "{}", "TYPE", "master")
		kill(t, c[0], c[1], "addr", c, "CLIENT", "KILL", "ADDR", "{}", "TYPE", "normal", "USER", "default")
		kill(t, c[0], c[0], "addr", []compatPair{c[0], c[2]}, "CLIENT", "KILL", "ADDR", "{}")
		kill(t, c[2], c[0], "addr", []compatPair{c[0], c[2]}, "CLIENT", "KILL", "ADDR", "{}", "SKIPME", "yes")
	})
	t.Run("every other connection", func(t *testing.T) {
		// Only these connections are open on either server now: the
		// subtests above closed theirs, and each server counts them alike.
		c := conns(t, 3)
		waitClients := func() {
			for range 100 {
				if ts.connectedClients() == len(c) {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Fatalf("%d connections open on our server, want %d", ts.connectedClients(), len(c))
		}
		waitClients()
		kill(t, c[0], c[0], "laddr", c, "CLIENT", "KILL", "LADDR", "{}", "TYPE", "normal")
	})
	if n := metrics.Value(ts.metrics.ConnectionsClosed.WithLabelValues(closedKilled)); n < 6 {
		t.Errorf("stampedeless_connections_closed_total{reason=killed} = %v, want at least 6", n)
	}
}

// TestCompatCmdsResetAuth compares RESET with a password set: it logs the
// connection out, and its name is gone once it logs in again.
func TestCompatCmdsResetAuth(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	admin := dialCompatPair(t, redisAddr, ts.addr, 2)
	runCompatSteps(t, admin, compatScript{name: "set-password", steps: []compatStep{
		cs("SET k v"), cs("CONFIG SET requirepass secret"),
	}})
	runCompatSteps(t, dialCompatPair(t, redisAddr, ts.addr, 2), compatScript{name: "reset-logs-out", steps: []compatStep{
		cs("RESET"), cs("GET k"), cs("AUTH secret"), cs("CLIENT SETNAME n"), cs("GET k"), cs("RESET"), cs("GET k"),
		cs("CLIENT GETNAME"), cs("AUTH secret"), cs("CLIENT GETNAME"), cs("GET k"),
	}})
	runCompatSteps(t, admin, compatScript{name: "unset-password", steps: []compatStep{
		cs("AUTH secret"), cs("CONFIG SET requirepass \"\""), cs("CONFIG SET requirepass x"),
	}})
}

// TestCmdsNoTouch checks CLIENT NO-TOUCH, which Redis 7.2 added, on our
// server alone: the flag shows in CLIENT INFO beside NO-EVICT's, reads
// still count as hits, and RESET turns both off.
func TestCmdsNoTouch(t *testing.T) {
	ts := startServer(t, Options{})
	c := dialCompat(t, ts.addr)
	flags := func() string {
		r, err := c.do("CLIENT", "INFO")
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(r.str, " flags=")
		f, _, _ := strings.Cut(rest, " ")
		return f
	}
	hits := func() int64 { return ts.store.Stats().Hits }
	for _, tc := range []struct {
		args  []string
		reply string
		flags string
	}{
		{[]string{"SET", "k", "v"}, "+OK", "N"},
		{[]string{"CLIENT", "NO-TOUCH", "on"}, "+OK", "T"},
		{[]string{"CLIENT", "NO-EVICT", "ON"}, "+OK", "eT"},
		{[]string{"CLIENT", "NO-TOUCH", "maybe"}, "-ERR syntax error", "eT"},
		{[]string{"CLIENT", "NO-TOUCH"}, "-ERR wrong number of arguments for 'client|no-touch' command", "eT"},
		{[]string{"CLIENT", "NO-TOUCH", "Off"}, "+OK", "e"},
		{[]string{"CLIENT", "NO-TOUCH", "on"}, "+OK", "eT"},
		{[]string{"RESET"}, "+RESET", "N"},
	} {
		if got := c.run(compatExact, tc.args); got != tc.reply {
			t.Errorf("%s: got %s, want %s", showArgs(tc.args), got, tc.reply)
		}
		if got := flags(); got != tc.flags {
			t.Errorf("after %s: flags=%s, want %s", showArgs(tc.args), got, tc.flags)
		}
	}
	c.run(compatExact, []string{"CLIENT", "NO-TOUCH", "on"})
	before := hits()
	for _, args := range [][]string{{"GET", "k"}, {"GETBIT", "k", "0"}, {"BITCOUNT", "k"}, {"LCS", "k", "k"}} {
		c.run(compatExact, args)
	}
	if got := hits() - before; got != 5 {
		t.Errorf("reads under NO-TOUCH counted %d hits, want 5", got)
	}
}

// TestCompatCmdsRestoreAccess: RESTORE's FREQ and IDLETIME set what OBJECT
// FREQ and IDLETIME then read, whichever of them the policy keeps, as
// Redis's objectSetLRUOrLFU; the other is accepted and ignored.
func TestCompatCmdsRestoreAccess(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		p.flush(t)
		var steps [][]string
		step := func(args ...string) { steps = append(steps, args) }
		for _, c := range []*compatConn{p.redis, p.ours} {
			if r, err := c.do("SET", "src", "v"); err != nil || r.String() != "+OK" {
				t.Fatalf("SET: %v %v", r, err)
			}
		}
		payload, err := p.ours.do("DUMP", "src")
		if err != nil || payload.kind != '$' {
			t.Fatalf("DUMP: %v %v", payload, err)
		}
		pl := payload.str
		step("RESTORE", "f", "0", pl, "FREQ", "100")
		step("OBJECT", "FREQ", "f")
		step("RESTORE", "f0", "0", pl, "FREQ", "0")
		step("OBJECT", "FREQ", "f0")
		step("RESTORE", "f255", "0", pl, "FREQ", "255")
		step("OBJECT", "FREQ", "f255")
		step("RESTORE", "f", "0", pl, "REPLACE", "FREQ", "3")
		step("OBJECT", "FREQ", "f")
		step("RESTORE", "i", "0", pl, "IDLETIME", "1000")
		step("OBJECT", "FREQ", "i")
		step("CONFIG", "SET", "maxmemory-policy", "noeviction")
		step("RESTORE", "i2", "0", pl, "IDLETIME", "1000")
		step("OBJECT", "IDLETIME", "i2")
		step("RESTORE", "i3", "0", pl, "IDLETIME", "0")
		step("OBJECT", "IDLETIME", "i3")
		step("RESTORE", "i4", "0", pl, "FREQ", "50")
		step("OBJECT", "IDLETIME", "i4")
		step("OBJECT", "FREQ", "i4")
		step("RESTORE", "i2", "0", pl, "REPLACE", "IDLETIME", "86400")
		step("OBJECT", "IDLETIME", "i2")
		step("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
		for _, args := range steps {
			want, got := p.redis.run(compatExact, args), p.ours.run(compatExact, args)
			if want != got {
				t.Errorf("%.40q: redis %s, ours %s", args, want, got)
			}
		}
	})
}

// TestCompatObjectRefCount: OBJECT REFCOUNT of an integer from 0 to 9999
// is Redis's shared count while no memory bound with an LRU or LFU policy
// keeps integers apart (the Tcl suite's "INCR uses shared objects in the
// 0-9999 range"), 1 otherwise. Each server gets its own memory bound
// (redis-server's default is none, ours 1gb), so the policy decides.
func TestCompatObjectRefCount(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		p.flush(t)
		if r, err := p.redis.do("CONFIG", "SET", "maxmemory", "1gb"); err != nil || r.kind != '+' {
			t.Fatalf("CONFIG SET maxmemory: %s %v", r, err)
		}
		runCompatSteps(t, p, compatScript{name: "refcount", steps: []compatStep{
			cs("CONFIG SET maxmemory-policy noeviction"),
			cs("SET foo -1"), cs("INCR foo"), cs("OBJECT REFCOUNT foo"), cs("SET foo 9998"), cs("INCR foo"),
			cs("OBJECT REFCOUNT foo"), cs("INCR foo"), cs("OBJECT REFCOUNT foo"), cs("SET foo 12"), cs("OBJECT REFCOUNT foo"),
			cs("SET s abc"), cs("OBJECT REFCOUNT s"), cs("SET e 012"), cs("OBJECT REFCOUNT e"),
			cs("SET r 12"), cs("SETRANGE r 0 3"), cs("OBJECT REFCOUNT r"), cs("RPUSH l 1"), cs("OBJECT REFCOUNT l"),
			cs("CONFIG SET maxmemory-policy allkeys-random"), cs("SET g 7"), cs("OBJECT REFCOUNT g"),
			cs("CONFIG SET maxmemory-policy allkeys-lru"), cs("SET h 7"), cs("OBJECT REFCOUNT h"),
			cs("CONFIG SET maxmemory-policy volatile-lfu"), cs("SET h 8"), cs("OBJECT REFCOUNT h"),
			cs("OBJECT REFCOUNT nokey"),
		}})
		for _, c := range []*compatConn{p.redis, p.ours} {
			c.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
		}
	})
}

// TestCompatCommandStats: INFO commandstats counts each command and
// subcommand (cmdstat_container|subcommand) as Redis's does, from CONFIG
// RESETSTAT on: calls that ran, calls refused before they ran
// (rejected_calls: arity, MULTI's queue, permissions, a full store, a
// script's checks) and calls that ran and replied an error (failed_calls),
// with errorstats counting each error once, also when a script's command
// replied it first (Redis's info.tcl and scripting.tcl, "Consistent eval
// error reporting"). Every scenario starts from RESETSTAT; its replies and
// then its counts are compared with redis-server's (Redis also times
// calls, which are left out).
func TestCompatCommandStats(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	p.both(t, "CONFIG", "SET", "maxmemory-policy", "noeviction")
	stats := func(c *compatConn) string {
		var lines []string
		for _, section := range []string{"commandstats", "errorstats", "stats"} {
			r, err := c.do("INFO", section)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(r.str, "\r\n") {
				name, v, _ := strings.Cut(line, ":")
				switch {
				case name == "cmdstat_info":
				case strings.HasPrefix(name, "cmdstat_"):
					var kept []string
					for _, f := range strings.Split(v, ",") {
						if !strings.HasPrefix(f, "usec") {
							kept = append(kept, f)
						}
					}
					lines = append(lines, name+":"+strings.Join(kept, ","))
				case strings.HasPrefix(name, "errorstat_"), name == "total_error_replies":
					lines = append(lines, line)
				}
			}
		}
		slices.Sort(lines)
		return strings.Join(lines, "\n\t\t")
	}
	scenarios := []struct {
		name  string
		steps [][]string
	}{
		{"reset", [][]string{
			{"SET", "foo", "1"}, {"GEOADD", "foo", "0", "0", "bar"}, {"CONFIG", "RESETSTAT"},
			{"SET", "foo", "1"}, {"GEOADD", "foo", "0", "0", "bar"}, {"EXPIRE", "foo", "100"},
		}},
		{"arity", [][]string{{"SET", "k"}, {"SET", "k1", "v1"}, {"SET", "k2", "v2"}, {"CONFIG"}, {"GET"}}},
		{"unknown", [][]string{{"NOSUCH", "x"}, {"CONFIG", "NOSUCH"}, {"CLIENT", "GETNAME"}, {"CLIENT", "NOSUCH"}, {"OBJECT", "ENCODING", "nokey"},
			{"CONFIG", "GET", "maxmemory-policy"}}},
		{"multi", [][]string{{"MULTI"}, {"SET"}, {"EXEC"}, {"MULTI"}, {"SET", "s", "x"}, {"INCR", "s"}, {"EXEC"}}},
		{"failed", [][]string{{"SET", "s", "x"}, {"INCR", "s"}, {"LPUSH", "s", "a"}, {"EVALSHA", "NotValidShaSUM", "0"},
			{"XGROUP", "CREATECONSUMER", "nostream", "g", "c"}}},
		{"oom", [][]string{
			{"CONFIG", "SET", "maxmemory", "1"}, {"SET", "a", "b"}, {"GET", "a"}, {"DEL", "a"}, {"INCR", "n"},
			{"EVAL", "return redis.call('set','x','y')", "1", "x"},
			{"EVAL", "local t = redis.pcall('set','x','y'); return t['err']", "1", "x"},
			{"EVAL", "return redis.pcall('set','x','y')", "1", "x"},
			{"EVAL", "#!lua\nreturn redis.call('set','x','y')", "1", "x"},
			{"EVAL", "#!lua flags=no-writes\nreturn redis.call('get','x')", "1", "x"},
			{"CONFIG", "SET", "maxmemory", "0"},
		}},
		{"scripts", [][]string{
			{"EVAL", "return redis.call('select',99)", "0"},
			{"EVAL", "local t = redis.pcall('select',99); return t['err']", "0"},
			{"EVAL_RO", "return redis.call('set','x','y')", "1", "x"},
			{"EVAL_RO", "local t = redis.pcall('set','x','y'); return t['err']", "1", "x"},
			{"SET", "Sicily", "1"},
			{"EVAL", "return redis.call('GEOADD','Sicily','13.361389','38.115556','Palermo')", "1", "Sicily"},
			{"EVAL", "return redis.call('nosuch')", "0"},
			{"EVAL", "return redis.call('get')", "0"},
			{"EVAL", "return redis.pcall('client','id')", "0"},
			{"EVAL", "redis.pcall('XGROUP', 'CREATECONSUMER', 's1', 'mygroup', 'consumer') return", "0"},
			{"EVAL", "return redis.error_reply('MY_ERR_CODE custom msg')", "0"},
			{"EVAL", "return redis.call('incr', KEYS[1])", "1", "Sicily"},
			{"EVAL", "return redis.pcall('incr', KEYS[1])", "1", "Sicily"},
			{"EVAL", "error('boom')", "0"},
			{"EVAL", "a"},
		}},
		{"acl", [][]string{
			{"ACL", "SETUSER", "alice", "on", ">p1pp0", "~cached:*", "+get", "+info", "+config", "+eval"},
			{"AUTH", "alice", "p1pp0"}, {"SET", "a", "b"}, {"GET", "cached:1"}, {"GET", "other"},
			{"EVAL", "redis.pcall('get','other'); return 1", "0"},
			{"AUTH", "default", "x"},
		}},
	}
	for _, sc := range scenarios {
		p.both(t, "CONFIG", "RESETSTAT")
		for _, step := range sc.steps {
			want, got := p.both(t, step...)
			if want.String() != got.String() {
				t.Errorf("%s: %s:\n\tredis: %s\n\tours:  %s", sc.name, showArgs(step), want, got)
			}
		}
		if want, got := stats(p.redis), stats(p.ours); want != got {
			t.Errorf("%s: INFO commandstats and errorstats:\n\tredis:\t%s\n\tours:\t%s", sc.name, want, got)
		}
	}
}

// TestCompatErrorStats: INFO errorstats counts the error replies clients
// get by their code, and total_error_replies all of them, from CONFIG
// RESETSTAT on, as Redis's do.
func TestCompatErrorStats(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	for _, step := range [][]string{
		{"NOSUCH"}, {"CONFIG", "RESETSTAT"},
		{"EVAL", "return redis.error_reply('MY_ERR_CODE custom msg')", "0"},
		{"EVAL", "return redis.error_reply('')", "0"},
		{"EVAL", "return redis.pcall('incr', KEYS[1])", "1", "s"},
		{"NOSUCH", "x"}, {"GET"}, {"SET", "s", "text"}, {"LPUSH", "s", "x"}, {"INCR", "s"},
		{"MULTI"}, {"INCR", "s"}, {"GET", "s"}, {"EXEC"},
	} {
		p.both(t, step...)
	}
	stats := func(c *compatConn) string {
		var lines []string
		for _, section := range []string{"errorstats", "stats"} {
			r, err := c.do("INFO", section)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(r.str, "\r\n") {
				if strings.HasPrefix(line, "errorstat_") || strings.HasPrefix(line, "total_error_replies:") {
					lines = append(lines, line)
				}
			}
		}
		return strings.Join(lines, " ")
	}
	if want, got := stats(p.redis), stats(p.ours); want != got {
		t.Errorf("INFO errorstats:\n\tredis: %s\n\tours:  %s", want, got)
	}
}

// TestCompatCommandStatsFields: a cmdstat line has Redis's fields in
// Redis's order (calls, usec, usec_per_call, rejected_calls,
// failed_calls), which tools parse by name and Redis's own tests by
// pattern.
func TestCompatCommandStatsFields(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	p := dialCompatPair(t, redisAddr, ts.addr, 2)
	fields := func(c *compatConn) string {
		c.do("CONFIG", "RESETSTAT")
		c.do("SET", "k", "v")
		c.do("SET", "k")
		r, err := c.do("INFO", "commandstats")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(r.str, "\r\n") {
			if v, ok := strings.CutPrefix(line, "cmdstat_set:"); ok {
				var names []string
				for _, f := range strings.Split(v, ",") {
					name, _, _ := strings.Cut(f, "=")
					names = append(names, name)
				}
				return strings.Join(names, ",")
			}
		}
		return "no cmdstat_set line"
	}
	if want, got := fields(p.redis), fields(p.ours); want != got {
		t.Errorf("cmdstat_set's fields: redis %s, ours %s", want, got)
	}
}

// TestCompatQueryBufferFollowsPeak: a connection's query buffer grown for a
// large command stays while the command's period lasts and then shrinks to
// what its commands since need, not to nothing, while the connection keeps
// sending small ones, on both servers (Redis's querybuf.tcl, "query buffer
// resized correctly when not idle").
func TestCompatQueryBufferFollowsPeak(t *testing.T) {
	redisAddr := startReferenceRedis(t)
	ts := startServer(t, Options{})
	for _, side := range []struct{ name, addr string }{{"redis", redisAddr}, {"ours", ts.addr}} {
		client, observer := dialCompat(t, side.addr), dialCompat(t, side.addr)
		client.do("CLIENT", "SETNAME", "big_writer")
		size := func() int {
			r, err := observer.do("CLIENT", "LIST")
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(r.str, "\n") {
				if !strings.Contains(line, " name=big_writer ") {
					continue
				}
				var qbuf, free int
				for _, f := range strings.Fields(line) {
					if v, ok := strings.CutPrefix(f, "qbuf="); ok {
						qbuf, _ = strconv.Atoi(v)
					} else if v, ok := strings.CutPrefix(f, "qbuf-free="); ok {
						free, _ = strconv.Atoi(v)
					}
				}
				return qbuf + free
			}
			t.Fatalf("%s: no big_writer in CLIENT LIST", side.name)
			return 0
		}
		client.do("SET", "x", strings.Repeat("A", 400000))
		grown := size()
		if grown <= 32<<10 {
			t.Fatalf("%s: query buffer of %d bytes after a 400 kB command", side.name, grown)
		}
		now := grown
		for deadline := time.Now().Add(10 * time.Second); now >= grown && time.Now().Before(deadline); {
			client.do("SET", "x", "small")
			time.Sleep(10 * time.Millisecond)
			now = size()
		}
		if now >= grown || now == 0 {
			t.Errorf("%s: query buffer of %d bytes after small commands, grown to %d for the large one", side.name, now, grown)
		}
	}
}
