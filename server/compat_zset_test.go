package server

// Differential tests of the sorted-set commands: the same commands to a
// real redis-server and to our server, reply for reply, in RESP2 and RESP3
// (compat_test.go). Sorted sets have one order, so replies are compared
// exactly, but for random draws and the walks of big sets.

import (
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scoredMembers are "score member" pairs i, prefix+i for i in [from, from+n).
func scoredMembers(prefix string, from, n int) []string {
	out := make([]string, 0, 2*n)
	for i := from; i < from+n; i++ {
		out = append(out, strconv.Itoa(i), prefix+strconv.Itoa(i))
	}
	return out
}

func compatZSetScripts() []compatScript {
	return []compatScript{
		{name: "zadd-options", steps: []compatStep{
			cs("ZADD z 1 a 2 b 3 c"), cs("ZADD z 1 a"), cs("ZADD z CH 5 a 2 b 9 d"), cs("ZRANGE z 0 -1 WITHSCORES"),
			cs("ZADD z NX 100 a 4 e"), cs("ZADD z XX 100 a 4 f"), cs("ZADD z XX CH 100 a 4 f"), cs("ZSCORE z a"),
			cs("ZADD z GT 50 a"), cs("ZADD z GT CH 150 a"), cs("ZADD z LT CH 150 a 1 b"), cs("ZADD z LT 0 new"),
			cs("ZADD z GT XX CH 1000 a 1 zz"), cs("ZRANGE z 0 -1 WITHSCORES"),
			cs("ZADD z INCR 5 a"), cs("ZADD z INCR NX 5 a"), cs("ZADD z INCR XX 5 nobody"), cs("ZADD z INCR GT -1 a"),
			cs("ZADD z INCR LT -1 a"), cs("ZADD z INCR 3 fresh"), cs("ZINCRBY z 2.5 fresh"), cs("ZINCRBY z -inf fresh"),
			cs("ZINCRBY z +inf fresh"), cs("ZSCORE z fresh"), cs("ZADD z INCR inf a"), cs("ZADD z INCR -inf a"),
			cs("ZADD nokey XX 1 a"), cs("EXISTS nokey"), cs("ZADD nokey XX INCR 1 a"), cs("ZADD z ch nx xx 1 a"),
			cs("ZADD z NX XX 1 a"), cs("ZADD z GT LT 1 a"), cs("ZADD z NX GT 1 a"), cs("ZADD z NX LT 1 a"),
			cs("ZADD z INCR 1 a 2 b"), cs("ZADD z 1"), cs("ZADD z 1 a 2"), cs("ZADD z NX"), cs("ZADD z x a"),
			cs("ZADD z 1 a x b"), cs("ZADD z nan a"), cs("ZADD z 1 a nan b"), cs("ZINCRBY z x a"), cs("ZINCRBY z nan a"),
			cs("ZCARD z"), cs("ZCARD nokey"), cs("ZADD z GT GT 7 g"),
		}},
		{name: "score-parsing-and-formatting", steps: []compatStep{
			cs("ZADD s 1.5 a 0.1 b -0 c 1e20 d 1e-300 e 0x10 f -inf g +inf h 1E3 i .5 j 5. k 3.0000000000000001 l"),
			cs("ZRANGE s 0 -1 WITHSCORES"), cs("ZSCORE s c"), cs("ZSCORE s e"), cs("ZMSCORE s a b nobody c"),
			cs("ZADD s infinity m -Infinity n 1e400 o"), cs("ZADD s 1e-400 o"), ca("ZADD", "s", " 1", "o"), ca("ZADD", "s", "1 ", "o"),
			ca("ZADD", "s", "", "o"), cs("ZADD s 0x1p-3 p 0X1.8P1 q 123456789012345678901234567890 r"),
			cs("ZADD s 4611686018427387904 t 9007199254740993 u -1.7976931348623157e308 v 5e-324 w"),
			cs("ZRANGE s 0 -1 WITHSCORES"), cs("ZSCAN s 0"), cs("ZRANGEBYSCORE s (0 (1"),
			cs("ZADD s +1 x -1 y"), cs("ZADD s 1e 1"), cs("ZADD s 1e+ 1"), cs("ZADD s - 1"), cs("ZADD s 0x 1"),
			cs("ZADD s 1..2 1"), cs("ZADD s inf1 1"), cs("ZADD s nan(123) 1"), cs("ZSCORE s nobody"),
			cs("ZSCORE nokey a"), cs("ZMSCORE nokey a b"),
		}},
		{name: "ranges-by-rank", steps: []compatStep{
			cs("ZADD z 1 a 2 b 3 c 4 d 5 e"), cs("ZRANGE z 0 -1"), cs("ZRANGE z 1 3 WITHSCORES"), cs("ZRANGE z -2 -1"),
			cs("ZRANGE z -100 100"), cs("ZRANGE z 3 1"), cs("ZRANGE z 5 10"), cs("ZRANGE z 0 0 REV"),
			cs("ZRANGE z 0 -1 REV WITHSCORES"), cs("ZREVRANGE z 0 1"), cs("ZREVRANGE z 1 -1 WITHSCORES"),
			cs("ZREVRANGE z 0 -1 REV"), cs("ZRANGE z 0 1 LIMIT 0 1"), cs("ZRANGE z x 1"), cs("ZRANGE z 0 1.5"),
			cs("ZRANGE z 0 1 BADOPT"), cs("ZRANGE z 0 1 LIMIT 1"), cs("ZRANGE nokey 0 -1"), cs("ZRANGE z 0 -1 withscores withscores"),
			cs("ZRANK z a"), cs("ZRANK z e"), cs("ZREVRANK z a"), cs("ZRANK z nobody"), cs("ZRANK nokey a"),
			cs("ZRANGE z 0 -1 REV REV"), cs("ZRANGE z 0 -1 BYSCORE BYLEX"),
		}},
		{name: "ranges-by-score", steps: []compatStep{
			cs("ZADD z -inf ninf 1 a 2 b 2 bb 3 c 4 d 5 e +inf pinf"),
			cs("ZRANGEBYSCORE z -inf +inf"), cs("ZRANGEBYSCORE z -inf +inf WITHSCORES"), cs("ZRANGEBYSCORE z (1 3"),
			cs("ZRANGEBYSCORE z (1 (3"), cs("ZRANGEBYSCORE z 2 2"), cs("ZRANGEBYSCORE z (2 2"), cs("ZRANGEBYSCORE z 3 1"),
			cs("ZRANGEBYSCORE z -inf +inf LIMIT 2 3"), cs("ZRANGEBYSCORE z -inf +inf LIMIT 2 -1"), cs("ZRANGEBYSCORE z -inf +inf LIMIT -1 2"),
			cs("ZRANGEBYSCORE z -inf +inf LIMIT 0 0"), cs("ZRANGEBYSCORE z -inf +inf LIMIT 100 1"), cs("ZRANGEBYSCORE z 1 5 LIMIT 1 2 WITHSCORES"),
			cs("ZREVRANGEBYSCORE z +inf -inf"), cs("ZREVRANGEBYSCORE z 3 (1 WITHSCORES"), cs("ZREVRANGEBYSCORE z 1 3"),
			cs("ZREVRANGEBYSCORE z +inf -inf LIMIT 1 3"), cs("ZRANGE z 1 4 BYSCORE"), cs("ZRANGE z 4 1 BYSCORE REV WITHSCORES"),
			cs("ZRANGE z (1 +inf BYSCORE LIMIT 1 2"), cs("ZRANGE z +inf (1 BYSCORE REV LIMIT 1 2"),
			cs("ZRANGEBYSCORE z x 1"), cs("ZRANGEBYSCORE z 1 nan"), cs("ZRANGEBYSCORE z ( 5"), cs("ZRANGEBYSCORE z ((1 5"),
			ca("ZRANGEBYSCORE", "z", " 1", "5"), cs("ZRANGEBYSCORE z 1e999 inf"), cs("ZRANGEBYSCORE z 1 5 REV"),
			cs("ZRANGEBYSCORE z 1 5 LIMIT x 1"), cs("ZRANGEBYSCORE z 1 5 BYSCORE"), cs("ZRANGEBYSCORE nokey 1 5"),
			cs("ZCOUNT z -inf +inf"), cs("ZCOUNT z (1 3"), cs("ZCOUNT z 3 1"), cs("ZCOUNT z x 1"), cs("ZCOUNT nokey 1 2"),
		}},
		{name: "ranges-by-lex", steps: []compatStep{
			cs("ZADD l 0 a 0 b 0 c 0 d 0 e 0 f 0 g"), ca("ZADD", "l", "0", ""),
			cs("ZRANGEBYLEX l - +"), cs("ZRANGEBYLEX l [b (e"), cs("ZRANGEBYLEX l (b [e"), cs("ZRANGEBYLEX l [aa [c"),
			cs("ZRANGEBYLEX l + -"), cs("ZRANGEBYLEX l - [c LIMIT 1 2"), cs("ZRANGEBYLEX l - + LIMIT -1 2"),
			cs("ZREVRANGEBYLEX l + -"), cs("ZREVRANGEBYLEX l [e (b"), cs("ZREVRANGEBYLEX l + - LIMIT 2 2"),
			cs("ZRANGE l [b [d BYLEX"), cs("ZRANGE l [d [b BYLEX REV"), cs("ZRANGE l - + BYLEX LIMIT 1 1"),
			cs("ZRANGE l - + BYLEX WITHSCORES"), cs("ZRANGEBYLEX l a c"), cs("ZRANGEBYLEX l [a c"), cs("ZRANGEBYLEX l ++ -"),
			ca("ZRANGEBYLEX", "l", "(", "+"), ca("ZRANGEBYLEX", "l", "[", "[b"), cs("ZRANGEBYLEX l [c [c"), cs("ZRANGEBYLEX l (c [c"),
			cs("ZLEXCOUNT l - +"), cs("ZLEXCOUNT l [b (e"), cs("ZLEXCOUNT l x y"), cs("ZLEXCOUNT nokey - +"),
			cs("ZRANGEBYLEX l - + WITHSCORES"), cs("ZRANGEBYLEX nokey - +"),
		}},
		{name: "removals", steps: []compatStep{
			cs("ZADD z 1 a 2 b 3 c 4 d 5 e 6 f"), cs("ZREM z a nobody a"), cs("ZREM z nobody"), cs("ZREM nokey a"),
			cs("ZREMRANGEBYRANK z 0 0"), cs("ZRANGE z 0 -1"), cs("ZREMRANGEBYRANK z -1 -1"), cs("ZREMRANGEBYRANK z 5 10"),
			cs("ZREMRANGEBYRANK z x 1"), cs("ZREMRANGEBYSCORE z (3 4"), cs("ZREMRANGEBYSCORE z x 1"), cs("ZRANGE z 0 -1 WITHSCORES"),
			cs("ZADD l 0 a 0 b 0 c 0 d"), cs("ZREMRANGEBYLEX l [b (d"), cs("ZREMRANGEBYLEX l x y"), cs("ZRANGE l 0 -1"),
			cs("ZREMRANGEBYLEX l - +"), cs("EXISTS l"), cs("ZREMRANGEBYSCORE z -inf +inf"), cs("EXISTS z"),
			cs("ZREMRANGEBYRANK nokey 0 -1"), cs("ZREMRANGEBYSCORE nokey 0 1"), cs("ZREMRANGEBYLEX nokey - +"),
			cs("ZADD one 1 a"), cs("ZREM one a"), cs("EXISTS one"), cs("ZADD r 1 a 2 b"), cs("ZREMRANGEBYRANK r 0 -1"), cs("EXISTS r"),
		}},
		{name: "pops", steps: []compatStep{
			cs("ZADD z 1 a 2 b 3 c 4 d 5 e"), cs("ZPOPMIN z"), cs("ZPOPMAX z"), cs("ZPOPMIN z 2"), cs("ZPOPMAX z 0"),
			cs("ZPOPMIN z -1"), cs("ZPOPMIN z x"), cs("ZPOPMIN z 1 2"), cs("ZPOPMAX z 10"), cs("EXISTS z"), cs("ZPOPMIN z"),
			cs("ZPOPMIN nokey 3"), cs("ZPOPMAX nokey"),
			cs("ZADD a 1 x 2 y 3 z"), cs("ZADD b 10 p 20 q"),
			cs("ZMPOP 1 a MIN"), cs("ZMPOP 2 nokey b MAX COUNT 5"), cs("ZMPOP 2 nokey b MAX"), cs("ZMPOP 1 nokey MIN"),
			cs("ZMPOP 2 a a MIN COUNT 1"), cs("ZMPOP 0 a MIN"), cs("ZMPOP -1 a MIN"), cs("ZMPOP x a MIN"), cs("ZMPOP 2 a MIN"),
			cs("ZMPOP 1 a LEFT"), cs("ZMPOP 1 a MIN COUNT 0"), cs("ZMPOP 1 a MIN COUNT x"), cs("ZMPOP 1 a MIN COUNT"),
			cs("ZMPOP 1 a MIN COUNT 1 COUNT 1"), cs("ZMPOP 1 a min count 10"), cs("ZMPOP 9223372036854775807 a MIN"),
		}},
		{name: "encodings-across-thresholds", steps: []compatStep{
			csMembers("ZADD", "z", scoredMembers("m", 0, 128)...), cs("OBJECT ENCODING z"), cs("ZADD z 1000 m1000"),
			cs("OBJECT ENCODING z"), cs("ZREM z m1000 m0 m1"), cs("OBJECT ENCODING z"), cs("ZRANGE z 0 4 WITHSCORES"),
			cs("ZRANGE z -3 -1"), cs("ZRANGEBYSCORE z (10 20 LIMIT 2 3"), cs("ZRANK z m50"), cs("ZREVRANK z m50"),
			ca("ZADD", "long", "1", strings.Repeat("x", 65)), cs("OBJECT ENCODING long"),
			ca("ZADD", "short", "1", strings.Repeat("x", 64)), cs("OBJECT ENCODING short"),
			cs("ZUNIONSTORE u 1 z"), cs("OBJECT ENCODING u"), cs("ZRANGESTORE r z 0 9"), cs("OBJECT ENCODING r"),
			cs("ZRANGESTORE r2 z 0 200"), cs("OBJECT ENCODING r2"), cs("COPY z zc"), cs("OBJECT ENCODING zc"),
			cs("CONFIG SET zset-max-listpack-entries 2"), csPairs("CONFIG GET zset-max-*"), cs("ZADD small 1 a 2 b"),
			cs("OBJECT ENCODING small"), cs("ZADD small 3 c"), cs("OBJECT ENCODING small"),
			cs("CONFIG SET zset-max-ziplist-entries 0"), cs("ZADD zero 1 a"), cs("OBJECT ENCODING zero"),
			cs("CONFIG SET zset-max-listpack-value 1"), cs("CONFIG SET zset-max-listpack-entries 128"), cs("ZADD v 1 a"),
			cs("OBJECT ENCODING v"), cs("ZADD v 1 bb"), cs("OBJECT ENCODING v"), cs("CONFIG SET zset-max-ziplist-value 64"),
			cs("CONFIG GET zset-max-ziplist-value"), cs("CONFIG SET zset-max-listpack-entries -1"),
			cs("CONFIG SET zset-max-listpack-entries x"), cs("CONFIG SET zset-max-listpack-value x"),
			cs("CONFIG SET zset-max-listpack-value -1"), cs("CONFIG SET zset-max-listpack-value 1kb"),
			cs("CONFIG GET zset-max-listpack-value"), cs("CONFIG SET zset-max-listpack-value 64"),
		}},
		{name: "zunion-zinter-zdiff", steps: []compatStep{
			cs("ZADD a 1 x 2 y 3 z"), cs("ZADD b 10 y 20 z 30 w"), cs("SADD s y w q"), cs("SET str v"),
			cs("ZUNION 2 a b"), cs("ZUNION 2 a b WITHSCORES"), cs("ZUNION 2 a b WEIGHTS 2 0.5 WITHSCORES"),
			cs("ZUNION 2 a b AGGREGATE MIN WITHSCORES"), cs("ZUNION 2 a b AGGREGATE max WITHSCORES"),
			cs("ZUNION 3 a b s WITHSCORES"), cs("ZINTER 2 a b WITHSCORES"), cs("ZINTER 3 a b s WITHSCORES"),
			cs("ZINTER 2 a nokey"), cs("ZDIFF 2 a b WITHSCORES"), cs("ZDIFF 2 b s WITHSCORES"), cs("ZDIFF 1 a"),
			cs("ZDIFF 2 a a"), cs("ZUNION 1 nokey"), cs("ZINTER 2 a a WITHSCORES"), cs("ZINTER 2 a a WEIGHTS 1 -1 WITHSCORES"),
			cs("ZUNION 2 a b WEIGHTS 1 x"), cs("ZUNION 2 a b WEIGHTS 1"), cs("ZUNION 2 a b AGGREGATE avg"),
			cs("ZUNION 2 a b AGGREGATE"), cs("ZDIFF 2 a b WEIGHTS 1 2"), cs("ZDIFF 2 a b AGGREGATE SUM"),
			cs("ZUNION 0 a"), cs("ZUNION -1 a"), cs("ZUNION x a"), cs("ZUNION 3 a b"), cs("ZUNION 2 a str"),
			cs("ZUNION 2 a str BADOPT"), cs("ZINTER 2 str nokey"), cs("ZUNION 1 a BADOPT"),
			cs("ZADD i 1 p"), cs("ZADD j inf p"), cs("ZADD k -inf p"), cs("ZUNION 3 i j k WITHSCORES"),
			cs("ZINTER 2 j k WITHSCORES"), cs("ZUNION 2 j k WEIGHTS 0 1 WITHSCORES"), cs("ZINTER 2 j k AGGREGATE MIN WITHSCORES"),
			cs("ZINTERCARD 2 a b"), cs("ZINTERCARD 2 a b LIMIT 1"), cs("ZINTERCARD 2 a b LIMIT 0"), cs("ZINTERCARD 2 a s"),
			cs("ZINTERCARD 1 nokey"), cs("ZINTERCARD 0 a"), cs("ZINTERCARD 2 a b LIMIT -1"), cs("ZINTERCARD 2 a b LIMIT x"),
			cs("ZINTERCARD 2 a b WITHSCORES"), cs("ZINTERCARD 2 a str"), cs("ZINTERCARD 3 a b"),
		}},
		{name: "store-commands", steps: []compatStep{
			cs("ZADD a 1 x 2 y 3 z"), cs("ZADD b 10 y 20 z 30 w"), cs("SADD s y"),
			cs("ZUNIONSTORE d 2 a b"), cs("ZRANGE d 0 -1 WITHSCORES"), cs("ZINTERSTORE d 2 a b WEIGHTS 1 2 AGGREGATE MAX"),
			cs("ZRANGE d 0 -1 WITHSCORES"), cs("ZDIFFSTORE d 2 a b"), cs("ZRANGE d 0 -1 WITHSCORES"),
			cs("ZINTERSTORE d 2 a s"), cs("ZRANGE d 0 -1 WITHSCORES"), cs("ZUNIONSTORE d 2 a b WITHSCORES"),
			cs("SET str v EX 100"), cs("ZUNIONSTORE str 1 a"), cs("TYPE str"), cs("TTL str"),
			cs("ZINTERSTORE d 2 a nokey"), cs("EXISTS d"), cs("ZUNIONSTORE a 2 a b"), cs("ZRANGE a 0 -1 WITHSCORES"),
			cs("ZDIFFSTORE e 2 b b"), cs("EXISTS e"), cs("ZUNIONSTORE d 0 a"), cs("ZDIFFSTORE d 0 a"), cs("ZUNIONSTORE d 3 a"),
			cs("SET st v"), cs("ZUNIONSTORE d 2 a st"), cs("ZRANGESTORE d b 0 1"), cs("ZRANGE d 0 -1 WITHSCORES"),
			cs("ZRANGESTORE d b (10 +inf BYSCORE LIMIT 0 1"), cs("ZRANGE d 0 -1 WITHSCORES"), cs("ZRANGESTORE d b [a [z BYLEX"),
			cs("ZRANGESTORE d b 0 -1 REV"), cs("ZRANGE d 0 -1"), cs("ZRANGESTORE d b 5 10"), cs("EXISTS d"),
			cs("ZRANGESTORE d nokey 0 -1"), cs("ZRANGESTORE d st 0 -1"), cs("ZRANGESTORE d b 0 -1 WITHSCORES"),
			cs("ZRANGESTORE st b 0 0"), cs("TYPE st"),
		}},
		{name: "wrongtype-both-ways", steps: []compatStep{
			cs("SET str v"), cs("ZADD z 1 a"), cs("SADD set a"),
			cs("ZADD str 1 a"), cs("ZINCRBY str 1 a"), cs("ZSCORE str a"), cs("ZMSCORE str a"), cs("ZCARD str"),
			cs("ZCOUNT str 0 1"), cs("ZLEXCOUNT str - +"), cs("ZRANGE str 0 -1"), cs("ZRANGEBYSCORE str 0 1"),
			cs("ZRANGEBYLEX str - +"), cs("ZREVRANGE str 0 1"), cs("ZRANK str a"), cs("ZREVRANK str a"), cs("ZREM str a"),
			cs("ZREMRANGEBYRANK str 0 1"), cs("ZREMRANGEBYSCORE str 0 1"), cs("ZREMRANGEBYLEX str - +"),
			cs("ZPOPMIN str"), cs("ZPOPMIN str 0"), cs("ZPOPMAX str 2"), cs("ZMPOP 2 nokey str MIN"), cs("ZMPOP 2 z str MIN"),
			cs("ZRANDMEMBER str"), cs("ZRANDMEMBER str 2"), cs("ZSCAN str 0"), cs("ZRANGESTORE d str 0 1"),
			cs("ZADD set 1 a"), cs("ZRANGE set 0 -1"), cs("SADD z b"), cs("SMEMBERS z"), cs("GET z"), cs("HGET z a"),
			cs("ZADD str x a"), cs("ZRANGE str x 1"), cs("ZRANGEBYSCORE str x 1"), cs("ZRANDMEMBER str x"),
			cs("TYPE z"), cs("OBJECT ENCODING z"),
		}},
		{name: "zrandmember", steps: []compatStep{
			cs("ZADD one 1 a"), cs("ZRANDMEMBER one"), cs("ZRANDMEMBER one 1"), cs("ZRANDMEMBER one 5 WITHSCORES"),
			cs("ZRANDMEMBER one -3"), cs("ZRANDMEMBER one -2 WITHSCORES"), cs("ZRANDMEMBER one 0"), cs("ZRANDMEMBER nokey"),
			cs("ZRANDMEMBER nokey 3"), cs("ZRANDMEMBER one x"), cs("ZRANDMEMBER one 1 BAD"), cs("ZRANDMEMBER one 1 WITHSCORES x"),
			cs("ZRANDMEMBER one -9223372036854775808"), cs("ZRANDMEMBER one 9223372036854775807 WITHSCORES"),
			cs("ZADD z 1 a 2 b 3 c"), cs("ZRANDMEMBER z 3 WITHSCORES"), cs("ZRANDMEMBER z 10"),
		}},
		{name: "zscan", steps: []compatStep{
			csMembers("ZADD", "big", scoredMembers("m", 0, 300)...), cs("ZADD small 1 a 2.5 b -0 c inf d"),
			csScan("ZSCAN big 0"), csScan("ZSCAN big 0 COUNT 7"), csScan("ZSCAN big 0 MATCH m1?"),
			cs("ZSCAN small 0"), cs("ZSCAN small 0 MATCH a*"), cs("ZSCAN nokey 0"), cs("ZSCAN nokey x"),
			cs("ZSCAN small x"), cs("ZSCAN small 0 COUNT 0"), cs("ZSCAN small 0 BADOPT 1"), cs("ZSCAN small 0 TYPE zset"),
		}},
		{name: "keyspace-commands-on-zsets", steps: []compatStep{
			cs("ZADD z 1 a 2 b"), cs("SET str v"),
			csScan("SCAN 0 TYPE zset"), csScan("SCAN 0 TYPE ZSET"), cs("TYPE z"), cs("EXISTS z"),
			cs("RENAME z z2"), cs("ZRANGE z2 0 -1 WITHSCORES"), cs("EXISTS z"), cs("COPY z2 z3"), cs("ZREM z3 a"),
			cs("ZRANGE z2 0 -1"), cs("ZRANGE z3 0 -1"), cs("COPY z2 str REPLACE"), cs("TYPE str"),
			cs("EXPIRE z2 100"), cs("TTL z2"), cs("ZADD z2 3 c"), cs("TTL z2"), cs("ZREM z2 c"), cs("TTL z2"),
			cs("PEXPIRE z2 1"), csSleep(20 * time.Millisecond), cs("EXISTS z2"), cs("ZCARD z2"), cs("DEL z3 str"), cs("EXISTS z3"),
		}},
		{name: "zsets-in-transactions-and-scripts", steps: []compatStep{
			cs("MULTI"), cs("ZADD z 1 a 2 b"), cs("ZINCRBY z 0.5 a"), cs("ZRANGE z 0 -1 WITHSCORES"), cs("ZSCORE z a"),
			cs("SET str v"), cs("ZADD str 1 a"), cs("ZCARD z"), cs("EXEC"),
			cs("WATCH z"), cs("ZADD z 5 c"), cs("MULTI"), cs("ZCARD z"), cs("EXEC"),
			cs("WATCH z"), cs("ZADD z 5 c"), cs("MULTI"), cs("ZCARD z"), cs("EXEC"),
			cs("WATCH z"), cs("ZREM z nobody"), cs("MULTI"), cs("ZCARD z"), cs("EXEC"),
			ca("EVAL", "return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')", "1", "z"),
			ca("EVAL", "return redis.call('ZSCORE', KEYS[1], 'a')", "1", "z"),
			ca("EVAL", "return redis.call('ZINCRBY', KEYS[1], 1, 'a')", "1", "z"),
			ca("EVAL", "redis.setresp(3); return redis.call('ZSCORE', KEYS[1], 'a')", "1", "z"),
			ca("EVAL", "redis.setresp(3); return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')", "1", "z"),
			ca("EVAL", "redis.setresp(3); local r = redis.call('ZSCORE', KEYS[1], 'a'); return tostring(r.double)", "1", "z"),
			ca("EVAL", "return redis.call('ZPOPMIN', KEYS[1])", "1", "z"),
			ca("EVAL", "return redis.pcall('ZADD', KEYS[1], 1, 'x')", "1", "str"),
			ca("EVAL", "return redis.pcall('ZADD', KEYS[1], 'x', 'x')", "1", "z"),
			ca("EVAL_RO", "return redis.call('ZADD', KEYS[1], 1, 'y')", "1", "z"),
			ca("EVAL", "return redis.call('ZMPOP', 1, KEYS[1], 'MAX')", "1", "z"),
		}},
	}
}

func TestCompatZSets(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{LogLevel: new(slog.LevelVar)})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatZSetScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// TestCompatZSetsRandom runs thousands of random sorted-set commands on a
// few keys, small and past the listpack limit, with scores full of ties,
// infinities, -0 and extremes, against both servers, reply for reply. Lex
// ranges go to a key whose scores are all equal, as Redis requires.
func TestCompatZSetsRandom(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		p.flush(t)
		rng := rand.New(rand.NewPCG(7, uint64(proto)))
		pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
		scores := []string{"0", "-0", "1", "2", "3", "-1", "-2.5", "0.5", "inf", "-inf", "+inf", "1e300", "-1e300", "1.5e-7", "7", "42"}
		score := func() string { return pick(scores...) }
		member := func() string { return "m" + strconv.Itoa(rng.IntN(220)) }
		key := func() string { return pick("z0", "z1", "z2", "z3", "nokey") }
		bound := func() string {
			s := score()
			if rng.IntN(3) == 0 {
				s = "(" + s
			}
			return s
		}
		lexBound := func() string {
			switch rng.IntN(6) {
			case 0:
				return "-"
			case 1:
				return "+"
			}
			return pick("[", "(") + member()
		}
		rank := func() string { return strconv.Itoa(rng.IntN(260) - 130) }
		limit := func() []string {
			if rng.IntN(2) == 0 {
				return nil
			}
			return []string{"LIMIT", strconv.Itoa(rng.IntN(12) - 1), strconv.Itoa(rng.IntN(12) - 2)}
		}
		opt := func(o string) []string {
			if rng.IntN(3) == 0 {
				return []string{o}
			}
			return nil
		}
		p.redis.run(compatExact, []string{"SADD", "s", "m1", "m2", "m3", "m200"})
		p.ours.run(compatExact, []string{"SADD", "s", "m1", "m2", "m3", "m200"})
		for i := range 3000 {
			k := key()
			var args []string
			switch rng.IntN(20) {
			case 0, 1, 2, 3:
				args = []string{"ZADD", k}
				args = append(args, opt(pick("NX", "XX"))...)
				args = append(args, opt(pick("GT", "LT"))...)
				args = append(args, opt("CH")...)
				for range 1 + rng.IntN(25) {
					args = append(args, score(), member())
				}
			case 4:
				args = []string{"ZADD", k, "INCR", score(), member()}
				args = append(args, opt(pick("NX", "XX", "GT", "LT"))...)
			case 5:
				args = []string{"ZINCRBY", k, score(), member()}
			case 6:
				args = []string{"ZREM", k, member(), member(), member()}
			case 7:
				args = []string{pick("ZSCORE", "ZRANK", "ZREVRANK"), k, member()}
				if rng.IntN(3) == 0 {
					args = []string{"ZMSCORE", k, member(), member()}
				}
			case 8:
				args = []string{pick("ZCARD", "ZCARD"), k}
				if rng.IntN(2) == 0 {
					args = []string{"ZCOUNT", k, bound(), bound()}
				}
			case 9:
				args = append([]string{"ZRANGE", k, rank(), rank()}, opt("REV")...)
				args = append(args, opt("WITHSCORES")...)
			case 10:
				args = append([]string{pick("ZRANGEBYSCORE", "ZREVRANGEBYSCORE"), k, bound(), bound()}, opt("WITHSCORES")...)
				args = append(args, limit()...)
			case 11:
				args = append([]string{"ZRANGE", k, bound(), bound(), "BYSCORE"}, opt("REV")...)
				args = append(args, limit()...)
			case 12:
				args = []string{pick("ZREMRANGEBYRANK"), k, rank(), rank()}
				if rng.IntN(2) == 0 {
					args = []string{"ZREMRANGEBYSCORE", k, bound(), bound()}
				}
			case 13:
				args = append([]string{pick("ZPOPMIN", "ZPOPMAX"), k}, opt(strconv.Itoa(rng.IntN(6)))...)
			case 14:
				args = []string{"ZMPOP", "2", k, key(), pick("MIN", "MAX"), "COUNT", strconv.Itoa(1 + rng.IntN(4))}
			case 15:
				args = []string{pick("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"), pick("z0", "z1", "d"), "2", key(), pick("z1", "s")}
				if args[0] != "ZDIFFSTORE" && rng.IntN(2) == 0 {
					args = append(args, "WEIGHTS", pick("1", "2", "0", "-1", "inf"), pick("1", "0.5"), "AGGREGATE", pick("SUM", "MIN", "MAX"))
				}
			case 16:
				args = []string{pick("ZUNION", "ZINTER", "ZDIFF"), "3", key(), key(), pick("s", "z2")}
				if args[0] != "ZDIFF" && rng.IntN(2) == 0 {
					args = append(args, "WEIGHTS", pick("1", "3", "-inf"), "1", pick("2", "0"), "AGGREGATE", pick("SUM", "MIN", "MAX"))
				}
				args = append(args, opt("WITHSCORES")...)
			case 17:
				args = []string{"ZINTERCARD", "2", key(), pick("z1", "s"), "LIMIT", strconv.Itoa(rng.IntN(4))}
				if rng.IntN(2) == 0 {
					args = append([]string{"ZRANGESTORE", pick("d", "z3"), k, rank(), rank()}, opt("REV")...)
				}
			case 18:
				args = []string{"ZADD", "l"}
				for range 1 + rng.IntN(10) {
					args = append(args, "0", member())
				}
				if rng.IntN(2) == 0 {
					args = []string{pick("ZREMRANGEBYLEX", "ZLEXCOUNT"), "l", lexBound(), lexBound()}
				}
			case 19:
				args = append([]string{pick("ZRANGEBYLEX", "ZREVRANGEBYLEX"), "l", lexBound(), lexBound()}, limit()...)
				if rng.IntN(3) == 0 {
					args = []string{"ZRANGE", "l", lexBound(), lexBound(), "BYLEX", "REV"}
				}
			}
			want, got := p.redis.run(compatExact, args), p.ours.run(compatExact, args)
			if want != got {
				t.Fatalf("step %d: %s\n\tredis: %s\n\tours:  %s", i, showArgs(args), want, got)
			}
		}
		for _, k := range []string{"z0", "z1", "z2", "z3", "d", "l"} {
			t.Logf("%s: %s members, %s", k, p.ours.run(compatExact, []string{"ZCARD", k}), p.ours.run(compatExact, []string{"OBJECT", "ENCODING", k}))
			args := []string{"ZRANGE", k, "0", "-1", "WITHSCORES"}
			if want, got := p.redis.run(compatExact, args), p.ours.run(compatExact, args); want != got {
				t.Fatalf("%s at the end:\n\tredis: %s\n\tours:  %s", k, want, got)
			}
		}
	})
}

// TestCompatZSetTracking compares the invalidations client-side caching
// sends for sorted sets: reads track their keys, a change invalidates
// them, and a write that changes nothing sends nothing.
func TestCompatZSetTracking(t *testing.T) {
	sc := psScript{name: "zsets", conns: 2, resp3: true, steps: []psStep{
		ps(0, "CLIENT TRACKING ON"), ps(1, "ZADD z 1 a 2 b"), ps(0, "ZRANGE z 0 -1"),
		ps(1, "ZADD z 1 a"), ps(1, "ZADD z NX 5 a"), ps(1, "ZADD z GT 0 a"), ps(1, "ZREM z nobody"),
		ps(1, "ZPOPMIN z 0"), ps(1, "ZREMRANGEBYSCORE z 10 20"), ps(1, "ZINCRBY z 0 a"), ps(0, "PING"),
		ps(1, "ZADD z 3 c"), psRead(0, 1),
		ps(0, "ZSCORE z a"), ps(1, "ZINCRBY z 1 a"), psRead(0, 1),
		ps(0, "ZCARD z"), ps(1, "ZPOPMIN z"), psRead(0, 1),
		ps(0, "ZRANK z c"), ps(1, "ZREMRANGEBYRANK z 0 0"), psRead(0, 1),
		ps(0, "ZUNION 2 z y"), ps(1, "ZUNIONSTORE y 1 z"), psRead(0, 1),
		ps(0, "ZRANGE y 0 -1"), ps(1, "ZINTERSTORE y 2 z nokey"), psRead(0, 1), ps(1, "ZINTERSTORE y 2 z nokey"), ps(0, "PING"),
		ps(0, "ZCOUNT z -inf +inf"), ps(1, "ZMPOP 1 z MAX COUNT 5"), psRead(0, 1), ps(0, "PING"),
	}}
	runPubSubScript(t, startRedis(t), startServer(t, Options{}).addr, sc)
}
