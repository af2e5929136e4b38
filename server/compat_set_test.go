package server

// Differential tests of the set commands: the same commands to a real
// redis-server and to our server, reply for reply, in RESP2 and RESP3
// (compat_test.go). Members of a hash table come in an order of Redis's
// own, so those replies are compared sorted (csSorted); an intset's come
// in ascending order on both servers and are compared exactly.

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"
)

// csMembers is cmd key followed by members, one argument each.
func csMembers(cmd, key string, members ...string) compatStep {
	return ca(append([]string{cmd, key}, members...)...)
}

// rangeMembers are prefix+i for i in [from, from+n).
func rangeMembers(prefix string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(from+i)
	}
	return out
}

func compatSetScripts() []compatScript {
	return []compatScript{
		{name: "sadd-srem-scard-smembers", steps: []compatStep{
			cs("SADD s a b c a"), cs("SADD s a"), cs("SCARD s"), csSorted("SMEMBERS s"),
			cs("SISMEMBER s a"), cs("SISMEMBER s z"), cs("SISMEMBER nokey a"),
			cs("SMISMEMBER s a z c"), cs("SMISMEMBER nokey a b"),
			cs("SREM s a z a"), cs("SREM s z"), cs("SREM nokey a"), cs("SCARD s"), cs("SCARD nokey"),
			cs("SMEMBERS nokey"), cs("TYPE s"), cs("OBJECT ENCODING s"),
			cs("SREM s b c"), cs("EXISTS s"), cs("TYPE s"),
			ca("SADD", "e", ""), ca("SISMEMBER", "e", ""), cs("SMEMBERS e"),
		}},
		{name: "intsets-and-their-order", steps: []compatStep{
			cs("SADD i 5 -3 10 0 -9223372036854775808 9223372036854775807 70000 -70000"),
			cs("SMEMBERS i"), cs("OBJECT ENCODING i"), cs("SISMEMBER i 05"), cs("SISMEMBER i 10"),
			cs("SMISMEMBER i 0 -0 +5 5"), cs("SREM i -0 +5 5"), cs("SMEMBERS i"),
			cs("SADD j 1 01"), cs("OBJECT ENCODING j"), cs("SADD k -0"), cs("OBJECT ENCODING k"),
			cs("SADD l 9223372036854775808"), cs("OBJECT ENCODING l"), cs("SADD m 1.0"), cs("OBJECT ENCODING m"),
			ca("SADD", "n", " 1"), cs("OBJECT ENCODING n"),
			cs("SINTER i i"), cs("SUNION i nokey"), cs("SDIFF i j"),
		}},
		{name: "encodings-across-thresholds", steps: []compatStep{
			csMembers("SADD", "i", rangeMembers("", 0, 512)...), cs("OBJECT ENCODING i"), cs("SCARD i"),
			cs("SADD i 512"), cs("OBJECT ENCODING i"), cs("SREM i 512"), cs("OBJECT ENCODING i"),
			// Leaving the intset for a string is for good.
			cs("SADD t 1 2 3"), cs("SADD t x"), cs("OBJECT ENCODING t"), cs("SREM t x"), cs("OBJECT ENCODING t"),
			csSorted("SMEMBERS t"), cs("SADD t 4"), cs("OBJECT ENCODING t"),
			// Small and large sets of strings are hash tables in Redis 7.0.
			csMembers("SADD", "h", rangeMembers("m", 0, 128)...), cs("OBJECT ENCODING h"),
			cs("SADD h m128"), cs("OBJECT ENCODING h"), cs("SCARD h"),
			ca("SADD", "long", strings.Repeat("x", 65)), cs("OBJECT ENCODING long"),
			// Stored results take the form their contents call for.
			cs("SINTERSTORE d t t"), cs("OBJECT ENCODING d"), csSorted("SMEMBERS d"),
			cs("SUNIONSTORE d2 h i"), cs("OBJECT ENCODING d2"), cs("SCARD d2"),
			cs("SDIFFSTORE d3 i t"), cs("OBJECT ENCODING d3"), cs("SCARD d3"),
			// COPY keeps the encoding.
			cs("COPY t tc"), cs("OBJECT ENCODING tc"), cs("COPY i ic"), cs("OBJECT ENCODING ic"),
			cs("COPY h hc"), cs("OBJECT ENCODING hc"), cs("SCARD hc"),
		}},
		// set-max-intset-entries as Redis's own set tests set it; the
		// default is set back at the end.
		{name: "intset-config", steps: []compatStep{
			cs("CONFIG GET set-max-intset-entries"), cs("CONFIG GET set-max-*"), cs("CONFIG SET set-max-intset-entries 3"),
			cs("SADD i 3 1 2"), cs("OBJECT ENCODING i"), cs("SADD i 4"), cs("OBJECT ENCODING i"), csSorted("SMEMBERS i"),
			cs("SADD j 1 2 3 4"), cs("OBJECT ENCODING j"), cs("SUNIONSTORE u i"), cs("OBJECT ENCODING u"),
			cs("SADD two 9 8"), cs("SINTERSTORE v two two"), cs("OBJECT ENCODING v"), cs("SUNION two nokey"),
			cs("CONFIG SET set-max-intset-entries 0"), cs("SADD z 1"), cs("OBJECT ENCODING z"),
			cs("CONFIG SET set-max-intset-entries 1000"), csMembers("SADD", "k", rangeMembers("", 0, 700)...),
			cs("OBJECT ENCODING k"), cs("SUNION k nokey"),
			cs("CONFIG SET set-max-intset-entries -1"), cs("CONFIG SET set-max-intset-entries x"),
			cs("CONFIG SET set-max-listpack-entries 1"), cs("CONFIG SET set-max-intset-entries 512"),
			cs("CONFIG GET set-max-intset-entries"),
		}},
		{name: "wrongtype-both-ways", steps: []compatStep{
			cs("SET str v"), cs("SADD set a"),
			cs("SADD str a"), cs("SREM str a"), cs("SMEMBERS str"), cs("SISMEMBER str a"), cs("SMISMEMBER str a"),
			cs("SCARD str"), cs("SPOP str"), cs("SPOP str 2"), cs("SPOP str 0"), cs("SRANDMEMBER str"),
			cs("SRANDMEMBER str 2"), cs("SRANDMEMBER str 0"), cs("SMOVE str set a"), cs("SMOVE set str a"),
			cs("SMOVE nokey str a"), cs("SINTER set str"), cs("SINTER nokey str"), cs("SINTERCARD 2 nokey str"),
			cs("SUNION set str"), cs("SDIFF set str"), cs("SDIFF nokey str"), cs("SINTERSTORE d set str"),
			cs("SUNIONSTORE d str"), cs("SDIFFSTORE d set str"), cs("SSCAN str 0"), cs("SSCAN str 0 BADOPT"),
			cs("EXISTS d"),
			cs("GET set"), cs("STRLEN set"), cs("APPEND set x"), cs("INCR set"), cs("GETRANGE set 0 1"),
			cs("SETRANGE set 0 x"), cs("GETDEL set"), cs("GETEX set"), cs("MGET set str"), cs("SETBIT set 0 1"),
			cs("BITCOUNT set"), cs("LCS set str"), cs("GETSET set x"), cs("SET set x GET"),
			csSorted("SMEMBERS set"), cs("SET set x"), cs("TYPE set"), cs("GET set"),
		}},
		{name: "smove", steps: []compatStep{
			cs("SADD a 1 2 x"), cs("SMOVE a b 1"), cs("OBJECT ENCODING b"), cs("SMOVE a b 1"), cs("SMOVE a b z"),
			cs("SMOVE nokey b 1"), cs("SMOVE a a 2"), cs("SMOVE a a z"), cs("SMOVE a b x"), cs("OBJECT ENCODING b"),
			csSorted("SMEMBERS b"), cs("SMOVE a b 2"), cs("EXISTS a"), cs("SCARD b"),
			cs("SADD c 2"), cs("SMOVE b c 2"), cs("SCARD c"), cs("SISMEMBER b 2"),
		}},
		{name: "sinter-sunion-sdiff", steps: []compatStep{
			cs("SADD a 1 2 3 x y"), cs("SADD b 2 3 4 y"), cs("SADD c 3 y z"), cs("SADD i 1 2 3"), cs("SADD j 2 3 4"),
			csSorted("SINTER a b c"), csSorted("SINTER a b"), cs("SINTER a nokey"), cs("SINTER nokey a"),
			cs("SINTER i j"), cs("SINTER i a"), csSorted("SINTER a"),
			csSorted("SUNION a b c"), csSorted("SUNION a nokey"), cs("SUNION nokey"), cs("SUNION i j"),
			csSorted("SDIFF a b c"), csSorted("SDIFF a nokey"), cs("SDIFF nokey a"), cs("SDIFF a a"), cs("SDIFF a b a"),
			cs("SDIFF i j"), cs("SDIFF j i a"),
			cs("SINTERCARD 3 a b c"), cs("SINTERCARD 2 a b"), cs("SINTERCARD 2 a b LIMIT 1"), cs("SINTERCARD 2 a b LIMIT 0"),
			cs("SINTERCARD 2 a b limit 100"), cs("SINTERCARD 1 nokey"), cs("SINTERCARD 2 a nokey"),
			cs("SINTERCARD 0 a"), cs("SINTERCARD -1 a"), cs("SINTERCARD x a"), cs("SINTERCARD 3 a b"),
			cs("SINTERCARD 1 a LIMIT"), cs("SINTERCARD 1 a LIMIT -1"), cs("SINTERCARD 1 a LIMIT x"),
			cs("SINTERCARD 1 a BAD 1"), cs("SINTERCARD 1 a LIMIT 1 LIMIT 2"),
		}},
		{name: "store-commands", steps: []compatStep{
			cs("SADD a 1 2 3 x"), cs("SADD b 2 3 y"),
			cs("SINTERSTORE d a b"), csSorted("SMEMBERS d"), cs("OBJECT ENCODING d"),
			cs("SUNIONSTORE d a b"), csSorted("SMEMBERS d"), cs("SDIFFSTORE d a b"), csSorted("SMEMBERS d"),
			// The destination is replaced whatever it held, and loses its TTL.
			cs("SET str v EX 100"), cs("SUNIONSTORE str a"), cs("TYPE str"), cs("TTL str"),
			cs("SADD ttl q"), cs("EXPIRE ttl 100"), cs("SINTERSTORE ttl a b"), cs("TTL ttl"),
			// An empty result deletes the destination.
			cs("SINTERSTORE d a nokey"), cs("EXISTS d"), cs("SDIFFSTORE str a a"), cs("EXISTS str"),
			cs("SUNIONSTORE d nokey"), cs("EXISTS d"),
			// The destination may be a source.
			cs("SUNIONSTORE a a b"), csSorted("SMEMBERS a"), cs("SDIFFSTORE a a b"), csSorted("SMEMBERS a"),
			cs("SINTERSTORE a a b"), cs("EXISTS a"),
		}},
		{name: "spop-srandmember", steps: []compatStep{
			cs("SADD one x"), cs("SRANDMEMBER one"), cs("SRANDMEMBER one 1"), cs("SRANDMEMBER one 5"),
			cs("SRANDMEMBER one -3"), cs("SRANDMEMBER one 0"), cs("SRANDMEMBER nokey"), cs("SRANDMEMBER nokey 3"),
			cs("SRANDMEMBER nokey -3"), cs("SRANDMEMBER one x"), cs("SRANDMEMBER one 1 2"),
			cs("SRANDMEMBER one 9223372036854775807"),
			cs("SADD s 1 2 3"), cs("SRANDMEMBER s 3"), cs("SRANDMEMBER s 10"), csSorted("SPOP s 10"), cs("EXISTS s"),
			cs("SADD h a b c"), csSorted("SRANDMEMBER h 3"), csSorted("SPOP h 3"), cs("EXISTS h"),
			cs("SPOP one 0"), cs("SPOP one -1"), cs("SPOP one x"), cs("SPOP nokey 0"), cs("SPOP nokey -1"),
			cs("SPOP nokey"), cs("SPOP nokey 2"), cs("SPOP one 1 2"), cs("SPOP one"), cs("EXISTS one"),
			cs("SADD one y"), cs("SPOP one 1"), cs("EXISTS one"),
			// Popping most of a hash table of integers makes an intset again.
			csMembers("SADD", "big", append(rangeMembers("", 0, 20), "x")...), cs("SREM big x"),
			cs("OBJECT ENCODING big"), cs("SPOP big 0"), cs("OBJECT ENCODING big"),
			cs("SCARD big"), ca("EVAL", "return #redis.call('SPOP', KEYS[1], 18)", "1", "big"), cs("SCARD big"),
			cs("OBJECT ENCODING big"),
		}},
		{name: "sscan", steps: []compatStep{
			csMembers("SADD", "h", rangeMembers("m", 0, 300)...), csMembers("SADD", "i", rangeMembers("", 0, 50)...),
			cs("SADD small a b c"),
			csScan("SSCAN h 0"), csScan("SSCAN h 0 COUNT 7"), csScan("SSCAN h 0 MATCH m1?"),
			csScan("SSCAN h 0 MATCH *1* COUNT 3"), cs("SSCAN i 0"), cs("SSCAN i 0 MATCH 1*"), cs("SSCAN i 0 COUNT 1"),
			csScan("SSCAN small 0"), cs("SSCAN nokey 0"), cs("SSCAN nokey 0 BADOPT"), cs("SSCAN nokey x"),
			cs("SSCAN i x"), cs("SSCAN i 0 COUNT 0"), cs("SSCAN i 0 COUNT x"), cs("SSCAN i 0 MATCH"),
			cs("SSCAN i 0 TYPE set"), cs("SSCAN i 0 BADOPT 1"), cs("SSCAN i -0"), cs("SSCAN i 0 match * count 100"),
		}},
		{name: "keyspace-commands-on-sets", steps: []compatStep{
			cs("SADD s a b"), cs("SADD i 1 2"), cs("SET str v"),
			csScan("SCAN 0 TYPE set"), csScan("SCAN 0 TYPE SET"), csScan("SCAN 0 TYPE string"),
			cs("RENAME s s2"), csSorted("SMEMBERS s2"), cs("EXISTS s"), cs("RENAMENX s2 i"),
			cs("COPY s2 s3"), cs("SREM s3 a"), csSorted("SMEMBERS s2"), csSorted("SMEMBERS s3"),
			cs("COPY i str"), cs("COPY i str REPLACE"), cs("TYPE str"), cs("SMEMBERS str"),
			cs("EXPIRE s2 100"), cs("TTL s2"), cs("SADD s2 c"), cs("TTL s2"), cs("SREM s2 c"), cs("TTL s2"),
			cs("PERSIST s2"), cs("TTL s2"), cs("PEXPIRE s2 1"), csSleep(20 * time.Millisecond), cs("EXISTS s2"), cs("SCARD s2"),
			cs("DEL s3 i"), cs("EXISTS s3 i"), cs("TYPE nokey"),
		}},
		{name: "sets-in-transactions-and-scripts", steps: []compatStep{
			cs("MULTI"), cs("SADD s 1 2 3"), cs("SCARD s"), cs("SMEMBERS s"), cs("SET str v"), cs("SADD str x"),
			cs("SISMEMBER s 2"), cs("EXEC"),
			cs("WATCH s"), cs("SADD s 4"), cs("MULTI"), cs("SCARD s"), cs("EXEC"),
			cs("WATCH s"), cs("SADD s 4"), cs("MULTI"), cs("SCARD s"), cs("EXEC"),
			cs("WATCH s"), cs("SREM s 9"), cs("MULTI"), cs("SCARD s"), cs("EXEC"),
			ca("EVAL", "return redis.call('SMEMBERS', KEYS[1])", "1", "s"),
			ca("EVAL", "redis.call('SADD', KEYS[1], 'x'); local m = redis.call('SMEMBERS', KEYS[1]); table.sort(m); return m", "1", "s"),
			ca("EVAL", "return redis.call('SISMEMBER', KEYS[1], ARGV[1])", "1", "s", "x"),
			ca("EVAL", "return redis.pcall('SADD', KEYS[1], 'x')", "1", "str"),
			ca("EVAL", "redis.setresp(3); return redis.call('SINTER', KEYS[1], KEYS[1])", "1", "i"),
			cs("SADD i 1 2"),
			ca("EVAL", "redis.setresp(3); return redis.call('SINTER', KEYS[1], KEYS[1])", "1", "i"),
			ca("EVAL", "redis.setresp(3); local r = redis.call('SMEMBERS', KEYS[1]); return type(r.set)", "1", "i"),
			ca("EVAL_RO", "return redis.call('SADD', KEYS[1], 'y')", "1", "s"),
			ca("EVAL", "return redis.call('SPOP', KEYS[1], 0)", "1", "s"),
		}},
	}
}

func TestCompatSets(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{LogLevel: new(slog.LevelVar)})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatSetScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// TestCompatSetTracking compares the invalidations client-side caching
// sends for sets: a read of any set command tracks its keys, a change
// invalidates them, and a write that changes nothing sends nothing.
// Members are integers, so that replies come in the same order.
func TestCompatSetTracking(t *testing.T) {
	sc := psScript{name: "sets", conns: 2, resp3: true, steps: []psStep{
		ps(0, "CLIENT TRACKING ON"), ps(1, "SADD s 1 2"), ps(0, "SMEMBERS s"),
		ps(1, "SADD s 1"), ps(1, "SREM s 9"), ps(1, "SPOP s 0"), ps(1, "SMOVE s s 1"), ps(0, "PING"),
		ps(1, "SADD s 3"), psRead(0, 1),
		ps(0, "SISMEMBER s 1"), ps(1, "SREM s 1"), psRead(0, 1),
		ps(0, "SCARD s"), ps(1, "SMOVE s t 2"), psRead(0, 1),
		ps(0, "SINTERCARD 2 s t"), ps(1, "SMOVE nokey t 9"), ps(0, "PING"), ps(1, "SADD t 5"), psRead(0, 1),
		ps(1, "SADD s 7"), psRead(0, 1),
		ps(0, "SUNION s t"), ps(1, "SUNIONSTORE t s"), psRead(0, 1),
		ps(0, "SMEMBERS t"), ps(1, "SINTERSTORE t s nokey"), psRead(0, 1), ps(1, "SINTERSTORE t s nokey"), ps(0, "PING"),
		ps(0, "SCARD s"), ps(1, "SPOP s 5"), psRead(0, 1), ps(0, "PING"),
	}}
	runPubSubScript(t, startRedis(t), startServer(t, Options{}).addr, sc)
}
