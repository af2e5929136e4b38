package server

// Differential tests of SORT and SORT_RO: the same commands to a real
// redis-server and to our server, reply for reply, in RESP2 and RESP3
// (compat_test.go), on lists, sets and sorted sets held in the record and
// on the heap.

import (
	"log/slog"
	"strconv"
	"testing"
)

// sortNumbers are n distinct integers in a scrambled order, as strings.
func sortNumbers(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa((i*7919)%(n*3) - n)
	}
	return out
}

func compatSortScripts() []compatScript {
	return []compatScript{
		{name: "numeric-and-alpha", steps: []compatStep{
			cs("RPUSH nums 3 1 2 10 -5 1.5 1e2 0x10"), cs("SORT nums"), cs("SORT nums DESC"), cs("SORT nums ASC"),
			cs("SORT nums ALPHA"), cs("SORT nums alpha desc"), cs("SORT nums DESC ASC"), cs("SORT nums ASC DESC ALPHA"),
			cs("RPUSH words b a c B aa ab"), ca("RPUSH", "words", ""), cs("SORT words ALPHA"), cs("SORT words ALPHA DESC"),
			cs("SORT words"), cs("SORT words DESC LIMIT 0 1"), cs("RPUSH dup 2 1 2 1 1.0 01"), cs("SORT dup"),
			cs("SORT dup DESC"), cs("SORT dup ALPHA"),
			ca("RPUSH", "f1", " 5", "0x10", "", "2", "+3", "-inf", "inf", "\t7", "1e2", "-0", "0"), cs("SORT f1"), cs("SORT f1 DESC"),
			ca("RPUSH", "f4", "5 "), cs("SORT f4"), cs("RPUSH f5 nan"), cs("SORT f5"), cs("RPUSH f8 0x"), cs("SORT f8"),
			cs("RPUSH f9 infinity -Infinity 2.2250738585072014e-308"), cs("SORT f9"),
			ca("RPUSH", "f10", "1\x00abc", "0"), cs("SORT f10"),
			ca("RPUSH", "nul", "a\x00b", "a\x00a", "a", "b\x00"), cs("SORT nul ALPHA"), cs("SORT nul ALPHA DESC"),
			cs("SORT nul ALPHA STORE nuls"), cs("LRANGE nuls 0 -1"),
			// Redis leaves strtod's ERANGE in errno, and a later weight that
			// sets none (an exact subnormal) can find it there and fail:
			// what sets ERANGE comes last, and no valid weight after it.
			cs("RPUSH f2 1e-310"), cs("SORT f2"), cs("SORT f2 ALPHA"), cs("RPUSH f6 1e400"), cs("SORT f6"),
			cs("RPUSH f7 -1e400"), cs("SORT f7"), cs("RPUSH f11 2.2250738585072011e-308"), cs("SORT f11"),
		}},
		{name: "limit", steps: []compatStep{
			cs("RPUSH nums 3 1 2 10 -5 7"), cs("SORT nums LIMIT 1 3"), cs("SORT nums LIMIT 0 0"), cs("SORT nums LIMIT -5 2"),
			cs("SORT nums LIMIT 5 100"), cs("SORT nums LIMIT 6 1"), cs("SORT nums LIMIT 100 1"), cs("SORT nums LIMIT 2 -1"),
			cs("SORT nums LIMIT 0 -10"), cs("SORT nums LIMIT 9223372036854775807 9223372036854775807"),
			cs("SORT nums LIMIT -9223372036854775808 1"), cs("SORT nums LIMIT 1 9223372036854775807"),
			cs("SORT nums DESC LIMIT 1 2"), cs("SORT nums LIMIT 1 2 LIMIT 0 1"), cs("SORT nums LIMIT x 1"),
			cs("SORT nums LIMIT 1 y"), cs("SORT nums LIMIT 1"), cs("SORT nums LIMIT"), cs("SORT nums LIMIT 1.5 2"),
			cs("SORT nums LIMIT 99999999999999999999 1"), cs("SORT nokey LIMIT 0 1"), cs("SORT nokey LIMIT 1 -1"),
			cs("SORT_RO nums LIMIT 1 1"),
		}},
		{name: "by-and-get", steps: []compatStep{
			cs("RPUSH ids a b c d"), cs("MSET w_a 3 w_b 1 w_c 2"), cs("HSET h_a f 30"), cs("HSET h_b f 10"),
			cs("HSET h_c f 20 g x"), cs("HSET h_d g y"),
			cs("SORT ids BY w_*"), cs("SORT ids BY w_* DESC"), cs("SORT ids BY h_*->f"), cs("SORT ids BY h_*->f DESC"),
			cs("SORT ids BY h_*->nosuch"), cs("SORT ids BY w_* ALPHA"), cs("SORT ids BY w_* ALPHA DESC"),
			cs("SORT ids BY h_*->g ALPHA"), cs("SORT ids BY h_*->f LIMIT 1 2"), cs("SORT ids BY h_*"), cs("SORT ids BY *"),
			cs("SORT ids BY w_* GET # GET w_* GET h_*->f GET nosuch_*"), cs("SORT ids GET w_*"), cs("SORT ids GET h_*"),
			cs("SORT ids ALPHA GET h_*->g"), cs("SORT ids GET #"), cs("SORT ids GET foo"), cs("SORT ids GET #->f"),
			cs("SORT ids BY w_* GET #"), cs("SET w_d notanumber"), cs("SORT ids BY w_*"), cs("SORT ids BY w_* LIMIT 0 1"),
			cs("SORT ids BY w_* ALPHA"), cs("SORT ids BY w_* STORE out"), cs("EXISTS out"), cs("DEL w_d"),
			cs("SET x:a-> 100"), cs("SORT ids BY nosort GET x:*->"), cs("HSET hh f_a 5"), cs("SET hh->f_a 6"),
			cs("SORT ids BY nosort GET hh->f_*"), cs("SET w_a-x 9"), cs("SORT ids BY nosort GET w_*-x GET w_*"),
			cs("SET pre_a_post 1"), cs("SORT ids BY nosort GET pre_*_post"), cs("SORT ids BY nosort GET *"),
			cs("SORT ids BY w_* BY nosort"), cs("SORT ids BY nosort BY w_*"), cs("SORT ids BY w_* BY h_*->f"),
			cs("SADD s a b c d"), cs("SORT s BY w_*"), cs("SORT s BY h_*->f GET h_*->f"), cs("ZADD z 1 c 2 b 3 a 4 d"),
			cs("SORT z BY w_*"), cs("SORT z BY w_* GET # GET w_*"), cs("SORT_RO z BY w_* GET w_*"),
			cs("SET str v"), cs("SORT ids BY nosort GET str"), cs("SORT ids GET ids"),
			cs("RPUSH nums 1 2"), cs("SET wn_1 5"), cs("SET wn_2 x"), cs("SORT nums BY wn_*"), cs("SORT nums BY wn_* ALPHA"),
		}},
		{name: "by-nosort", steps: []compatStep{
			cs("LPUSH nl 2 1 4 3 5"), cs("SORT nl BY nosort"), cs("SORT nl BY nosort DESC"), cs("SORT nl BY nosort LIMIT 1 2"),
			cs("SORT nl BY nosort DESC LIMIT 1 2"), cs("SORT nl BY nosort LIMIT 3 10"), cs("SORT nl BY nosort LIMIT 10 1"),
			cs("SORT nl BY nosort LIMIT -1 2"), cs("SORT nl BY nosort LIMIT 0 0"), cs("SORT nl BY nosort ALPHA DESC"),
			cs("SORT nl BY nosort STORE nlo"), cs("LRANGE nlo 0 -1"), cs("SORT nl BY nosort DESC LIMIT 0 3 STORE nlo"),
			cs("LRANGE nlo 0 -1"),
			cs("ZADD z 1 a 5 b 2 c 10 d 3 e"), cs("SORT z BY nosort"), cs("SORT z BY nosort DESC"), cs("SORT z BY nosort LIMIT 0 1"),
			cs("SORT z BY nosort DESC LIMIT 0 1"), cs("SORT z BY nosort LIMIT 0 2"), cs("SORT z BY nosort DESC LIMIT 0 2"),
			cs("SORT z BY nosort LIMIT 5 10"), cs("SORT z BY nosort LIMIT -10 100"), cs("SORT z BY nosort DESC LIMIT 2 2"),
			cs("SORT z BY nosort GET #"), cs("SORT z"), cs("SORT z ALPHA"), cs("SORT z ALPHA DESC"), cs("SORT z BY nosort STORE zo"),
			cs("LRANGE zo 0 -1"), cs("TYPE zo"),
			cs("SADD si 5 3 10 1 -2"), cs("SORT si BY nosort"), cs("SORT si BY nosort DESC"), cs("SORT si BY nosort LIMIT 1 2"),
			cs("SORT si"), cs("SORT si DESC"), cs("SORT si BY nosort STORE sio"), cs("LRANGE sio 0 -1"),
			cs("SADD ss b a c aa"), csSorted("SORT ss BY nosort"), cs("SORT ss BY nosort STORE sso"), cs("LRANGE sso 0 -1"),
			cs("SORT ss BY nosort DESC STORE sso"), cs("LRANGE sso 0 -1"), csSorted("SORT ss BY nosort ALPHA"),
			ca("EVAL", "return redis.call('SORT', KEYS[1], 'BY', 'nosort')", "1", "ss"),
			ca("EVAL", "return redis.call('SORT', KEYS[1], 'BY', 'nosort', 'DESC', 'LIMIT', 1, 2)", "1", "ss"),
			ca("EVAL", "return redis.call('SORT', KEYS[1], 'BY', 'nosort', 'desc')", "1", "z"),
			ca("EVAL", "return redis.call('SORT', KEYS[1], 'BY', 'nosort')", "1", "si"),
			ca("EVAL", "return redis.call('SORT_RO', KEYS[1], 'BY', 'w_*', 'GET', 'nosuch')", "1", "nl"),
			ca("EVAL", "return redis.call('SORT', KEYS[1], 'STORE', KEYS[2])", "2", "nl", "ev"), cs("LRANGE ev 0 -1"),
			ca("EVAL_RO", "return redis.call('SORT', KEYS[1])", "1", "nl"),
			ca("EVAL_RO", "return redis.call('SORT_RO', KEYS[1])", "1", "nl"),
		}},
		{name: "store", steps: []compatStep{
			cs("RPUSH nums 3 1 2"), cs("SORT nums STORE out"), cs("TYPE out"), cs("LRANGE out 0 -1"), cs("OBJECT ENCODING out"),
			cs("SET out2 x EX 100"), cs("SORT nums DESC STORE out2"), cs("TTL out2"), cs("TYPE out2"), cs("LRANGE out2 0 -1"),
			cs("SORT nokey STORE out"), cs("EXISTS out"), cs("SORT nums LIMIT 10 10 STORE out2"), cs("EXISTS out2"),
			cs("SORT nums LIMIT 0 0 STORE out2"), cs("SORT nums GET nosuch_* STORE out"), cs("LRANGE out 0 -1"),
			cs("SET w_1 one"), cs("SORT nums GET # GET w_* STORE out"), cs("LRANGE out 0 -1"), cs("LLEN out"),
			cs("SORT nums STORE a1 STORE a2"), cs("EXISTS a1"), cs("LRANGE a2 0 -1"), cs("SORT nums STORE"),
			cs("SORT nums STORE a1 LIMIT"), cs("EXISTS a1"), cs("SORT nums store nums"), cs("LRANGE nums 0 -1"),
			cs("SADD s x y"), cs("SORT s ALPHA STORE s"), cs("TYPE s"), cs("LRANGE s 0 -1"),
			cs("HSET h f v"), cs("SORT nums STORE h"), cs("TYPE h"), cs("ZADD z 2 b 1 a"), cs("SORT z ALPHA STORE zz"),
			cs("LRANGE zz 0 -1"), cs("SET str v"), cs("SORT str STORE out"), cs("LRANGE out 0 -1"),
			cs("RPUSH words b a"), cs("SORT words STORE out"), cs("LRANGE out 0 -1"),
		}},
		{name: "errors", steps: []compatStep{
			cs("SORT"), cs("SORT_RO"), cs("RPUSH l 1 2"), cs("SORT l FOO"), cs("SORT l BY"), cs("SORT l GET"),
			cs("SORT l ASC FOO"), cs("SORT_RO l STORE x"), cs("SORT_RO l STORE"), cs("SORT_RO nokey STORE x"), cs("EXISTS x"),
			cs("SET str v"), cs("SORT str"), cs("SORT str BY nosort"), cs("SORT_RO str"), cs("HSET hash f v"), cs("SORT hash"),
			cs("SORT str FOO"), cs("SORT str LIMIT x 1"), cs("SORT str STORE l"), cs("LRANGE l 0 -1"), cs("SORT nokey"),
			cs("SORT nokey BY w_* GET #"), cs("SORT nokey ALPHA DESC LIMIT 0 10"), cs("PFADD hll a"), cs("SORT hll"),
			cs("SORT l LIMIT 0 1 FOO"), cs("SORT l FOO LIMIT x 1"), cs("SORT l LIMIT x 1 FOO"),
		}},
		{name: "in-multi", steps: []compatStep{
			cs("ZADD z 1 a 5 b 2 c"), cs("RPUSH nums 3 1 2"), cs("SADD si 3 1 2"), cs("MULTI"), cs("SORT z BY nosort"),
			cs("SORT z BY nosort DESC"), cs("SORT nums STORE mout"), cs("LRANGE mout 0 -1"), cs("SORT_RO nums STORE x"),
			cs("SORT si BY nosort"), cs("SORT z"), cs("SORT"), cs("EXEC"),
			cs("WATCH mout"), cs("SORT nums DESC STORE mout"), cs("MULTI"), cs("LLEN mout"), cs("EXEC"),
			cs("WATCH mout"), cs("SORT_RO mout"), cs("MULTI"), cs("LLEN mout"), cs("EXEC"),
		}},
		{name: "big", steps: []compatStep{
			csMembers("RPUSH", "bl", sortNumbers(700)...), cs("SORT bl LIMIT 0 5"), cs("SORT bl DESC LIMIT 10 5"),
			cs("SORT bl LIMIT 695 10"), cs("SORT bl BY nosort LIMIT 300 4"), cs("SORT bl BY nosort DESC LIMIT 300 4"),
			cs("SORT bl ALPHA LIMIT 0 5"), cs("SORT bl STORE blo"), cs("LLEN blo"), cs("LINDEX blo 350"), cs("OBJECT ENCODING blo"),
			csMembers("SADD", "bs", sortNumbers(600)...), cs("SORT bs LIMIT 0 5"), cs("SORT bs DESC LIMIT 100 3"),
			cs("SORT bs ALPHA DESC LIMIT 0 3"), cs("SORT bs BY nosort STORE bso"), cs("LRANGE bso 0 4"),
			csMembers("SADD", "bt", rangeMembers("m", 0, 300)...), cs("SORT bt ALPHA LIMIT 0 5"), cs("SORT bt ALPHA DESC LIMIT 0 5"),
			cs("SORT bt BY nosort STORE bto"), cs("LRANGE bto 0 4"), cs("LLEN bto"),
			csMembers("ZADD", "bz", scoredMembers("m", 0, 300)...), cs("OBJECT ENCODING bz"), cs("SORT bz BY nosort LIMIT 0 5"),
			cs("SORT bz BY nosort DESC LIMIT 10 5"), cs("SORT bz BY nosort LIMIT 298 5"), cs("SORT bz ALPHA LIMIT 0 5"),
			cs("SORT bz ALPHA DESC LIMIT 0 5"),
		}},
		{name: "acl", steps: []compatStep{
			cs("RPUSH l b a c"), cs("MSET w_a 2 w_b 1 w_c 3"),
			cs("ACL SETUSER sortsome on nopass +@all ~l ~w_* ~dst"), cs("ACL SETUSER sortread on nopass +@all %R~* ~dst"),
			cs("ACL SETUSER sortwrite on nopass +@all %W~*"),
			cs("AUTH sortsome x"), cs("SORT l BY w_*"), cs("SORT l GET w_*"), cs("SORT l GET #"), cs("SORT l BY nosort"),
			cs("SORT l ALPHA"), cs("SORT l LIMIT 0 1 BY w_* GET #"), cs("SORT l BY nosort BY w_*"), cs("SORT l FOO BY w_*"),
			cs("SORT l BY w_* FOO"), cs("SORT l ALPHA STORE dst"), cs("LRANGE dst 0 -1"), cs("SORT l ALPHA STORE other"),
			cs("SORT_RO l GET #"),
			cs("AUTH sortread x"), cs("SORT l BY w_*"), cs("SORT l BY w_* GET w_*"), cs("SORT_RO l BY w_*"),
			cs("SORT l BY w_* STORE dst"), cs("SORT l BY w_* STORE other"),
			cs("AUTH sortwrite x"), cs("SORT l"), cs("SORT_RO l"), cs("SORT l BY w_* STORE dst"),
			cs("AUTH default x"), cs("ACL DELUSER sortsome sortread sortwrite"),
		}},
		{name: "getkeys", steps: []compatStep{
			cs("COMMAND GETKEYS sort abc"), cs("COMMAND GETKEYS sort abc store def"),
			cs("COMMAND GETKEYS sort abc store invalid store stillbad store def"), cs("COMMAND GETKEYS sort_ro abc"),
			cs("COMMAND GETKEYS sort abc limit 0 1 store d"), cs("COMMAND GETKEYS sort abc get store x"),
			cs("COMMAND GETKEYS sort abc by store"), cs("COMMAND GETKEYS sort abc store"),
			cs("COMMAND GETKEYS sort abc limit store x y store d"), cs("COMMAND GETKEYS sort_ro abc store d"),
		}},
	}
}

func TestCompatSort(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{LogLevel: new(slog.LevelVar)})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatSortScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// TestCompatSortTracking compares the invalidations client-side caching
// sends around SORT: SORT_RO, a read, tracks its key (and not the keys its
// patterns read); SORT, a write to Redis, tracks nothing; STORE
// invalidates its destination.
func TestCompatSortTracking(t *testing.T) {
	sc := psScript{name: "sort", conns: 2, resp3: true, steps: []psStep{
		ps(0, "CLIENT TRACKING ON"), ps(1, "RPUSH l 2 1"), ps(1, "SET w_1 5"), ps(0, "SORT_RO l BY w_*"),
		ps(1, "SET w_1 6"), ps(0, "PING"), ps(1, "RPUSH l 3"), psRead(0, 1),
		ps(0, "SORT l"), ps(1, "RPUSH l 4"), ps(0, "PING"),
		ps(0, "LRANGE d 0 -1"), ps(1, "SORT l STORE d"), psRead(0, 1),
		ps(0, "LRANGE d 0 -1"), ps(1, "SORT nokey STORE d"), psRead(0, 1), ps(0, "PING"),
	}}
	runPubSubScript(t, startRedis(t), startServer(t, Options{}).addr, sc)
}
