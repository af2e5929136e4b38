package server

// Differential tests of the list commands: the same commands to a real
// redis-server and to our server, reply for reply, in RESP2 and RESP3
// (compat_test.go), on lists held in the record, on the heap, and on the
// heap in many small nodes (list-max-listpack-size 4).

import (
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listCompatSteps exercise every list command's replies and errors on
// the list at key l, grown past the record's bound by big.
func listCompatSteps() []compatStep {
	return []compatStep{
		cs("RPUSH l a b c"), cs("LPUSH l x y"), cs("LRANGE l 0 -1"), cs("LLEN l"), cs("LLEN nokey"),
		cs("LPUSHX nokey a"), cs("RPUSHX nokey a"), cs("EXISTS nokey"), cs("LPUSHX l p q"), cs("RPUSHX l r"),
		cs("LRANGE l 0 -1"), cs("LRANGE l 1 2"), cs("LRANGE l -3 -1"), cs("LRANGE l -100 100"), cs("LRANGE l 5 2"),
		cs("LRANGE l 100 200"), cs("LRANGE l -1 -2"), cs("LRANGE nokey 0 -1"), cs("LRANGE l x 1"), cs("LRANGE l 0 1.5"),
		cs("LRANGE nokey x 1"),
		cs("LINDEX l 0"), cs("LINDEX l -1"), cs("LINDEX l 3"), cs("LINDEX l 100"), cs("LINDEX l -100"),
		cs("LINDEX nokey 0"), cs("LINDEX nokey x"), cs("LINDEX l x"),
		cs("LSET l 0 first"), cs("LSET l -1 last"), cs("LSET l 100 z"), cs("LSET l x z"), cs("LSET nokey 0 z"),
		cs("LSET nokey x z"), cs("LRANGE l 0 -1"),
		cs("LINSERT l BEFORE a a0"), cs("LINSERT l after a a1"), cs("LINSERT l BEFORE nope z"), cs("LINSERT nokey BEFORE a z"),
		cs("LINSERT l MIDDLE a z"), cs("LINSERT nokey MIDDLE a z"), cs("LRANGE l 0 -1"),
		cs("RPUSH l a a b a"), cs("LREM l 2 a"), cs("LRANGE l 0 -1"), cs("LREM l -1 a"), cs("LRANGE l 0 -1"),
		cs("LREM l 0 a"), cs("LREM l 0 nope"), cs("LREM nokey 0 a"), cs("LREM l x a"), cs("LRANGE l 0 -1"),
		cs("RPUSH p a b c 1 2 3 c c"), cs("LPOS p c"), cs("LPOS p c RANK 2"), cs("LPOS p c RANK -1"), cs("LPOS p c RANK -2"),
		cs("LPOS p c COUNT 0"), cs("LPOS p c COUNT 2"), cs("LPOS p c RANK 2 COUNT 0"), cs("LPOS p c RANK -1 COUNT 2"),
		cs("LPOS p c MAXLEN 2"), cs("LPOS p c MAXLEN 3"), cs("LPOS p c COUNT 0 MAXLEN 4"), cs("LPOS p nope"),
		cs("LPOS p nope COUNT 0"), cs("LPOS nokey a"), cs("LPOS nokey a COUNT 1"), cs("LPOS p c RANK 0"),
		cs("LPOS p c RANK x"), cs("LPOS p c COUNT -1"), cs("LPOS p c COUNT x"), cs("LPOS p c MAXLEN -1"),
		cs("LPOS p c MAXLEN x"), cs("LPOS p c BAD 1"), cs("LPOS p c RANK"), cs("LPOS nokey a RANK 0"),
		cs("LPOS p c RANK 10"), cs("LPOS p 1 RANK -9223372036854775807"), cs("LPOS p c RANK -9223372036854775808"),
		cs("LPOS p c RANK -9223372036854775808 COUNT 1"), cs("LPOS p c RANK -9223372036854775808 COUNT 0"), cs("LPOS p 1 rank 1 count 1 maxlen 0"),
		cs("LPOP p"), cs("RPOP p"), cs("LPOP p 2"), cs("RPOP p 2"), cs("LPOP p 0"), cs("LPOP nokey"), cs("LPOP nokey 2"),
		cs("LPOP nokey 0"), cs("LPOP p -1"), cs("LPOP p x"), cs("LPOP p 1 2"), cs("RPOP p 100"), cs("EXISTS p"),
		cs("LTRIM l 1 -2"), cs("LRANGE l 0 -1"), cs("LTRIM l 0 100"), cs("LTRIM nokey 0 1"), cs("LTRIM l x 1"),
		cs("LTRIM l 5 1"), cs("EXISTS l"),
		cs("RPUSH s 1 2 3"), cs("LMOVE s d LEFT RIGHT"), cs("LMOVE s d right left"), cs("LMOVE s d UP LEFT"),
		cs("LMOVE s d LEFT DOWN"), cs("LMOVE nokey d LEFT LEFT"), cs("LRANGE d 0 -1"), cs("LMOVE s s LEFT RIGHT"),
		cs("RPOPLPUSH s d"), cs("EXISTS s"), cs("RPOPLPUSH s d"), cs("LRANGE d 0 -1"), cs("RPOPLPUSH d d"), cs("LRANGE d 0 -1"),
		cs("RPUSH m1 a b c"), cs("RPUSH m2 d"), cs("LMPOP 2 nokey m1 LEFT"), cs("LMPOP 2 nokey m1 RIGHT COUNT 5"),
		cs("LMPOP 2 nokey m2 LEFT COUNT 1"), cs("LMPOP 1 nokey LEFT"), cs("LMPOP 0 m1 LEFT"), cs("LMPOP -1 m1 LEFT"),
		cs("LMPOP x m1 LEFT"), cs("LMPOP 2 m1 LEFT"), cs("LMPOP 1 m1 UP"), cs("LMPOP 1 m1 LEFT COUNT 0"),
		cs("LMPOP 1 m1 LEFT COUNT x"), cs("LMPOP 1 m1 LEFT COUNT"), cs("LMPOP 1 m1 LEFT COUNT 1 COUNT 1"),
		cs("LMPOP 1 m1 LEFT BAD"), cs("LMPOP 5 m1 LEFT"), cs("EXISTS m1 m2"),
		ca("RPUSH", "e", ""), ca("LPOS", "e", ""), cs("LRANGE e 0 -1"), cs("TYPE e"), cs("OBJECT ENCODING e"),
	}
}

// listWrongTypeSteps run every list command against keys of other types,
// and the other types' commands against a list.
func listWrongTypeSteps() []compatStep {
	return []compatStep{
		cs("SET str v"), cs("RPUSH list a"), cs("SADD set a"),
		cs("LPUSH str a"), cs("RPUSH str a"), cs("LPUSHX str a"), cs("RPUSHX str a"), cs("LPOP str"), cs("RPOP str 2"),
		cs("LLEN str"), cs("LRANGE str 0 -1"), cs("LRANGE str x 1"), cs("LINDEX str 0"), cs("LINDEX str x"),
		cs("LSET str 0 a"), cs("LSET str x a"), cs("LINSERT str BEFORE a b"), cs("LINSERT str MIDDLE a b"),
		cs("LREM str 0 a"), cs("LTRIM str 0 1"), cs("LPOS str a"), cs("LPOS str a RANK 0"),
		cs("LMOVE str list LEFT LEFT"), cs("LMOVE list str LEFT LEFT"), cs("LMOVE nokey str LEFT LEFT"),
		cs("RPOPLPUSH list str"), cs("RPOPLPUSH str list"), cs("LMPOP 2 nokey str LEFT"), cs("LMPOP 2 list str LEFT"),
		cs("RPUSH list a"),
		cs("BLPOP str 1"), cs("BLPOP nokey str 1"), cs("BRPOP list str 1"), cs("BLMOVE str list LEFT LEFT 1"),
		cs("BLMOVE list str LEFT LEFT 1"), cs("BRPOPLPUSH str list 1"), cs("BLMPOP 1 2 nokey str LEFT"),
		cs("GET list"), cs("APPEND list x"), cs("INCR list"), cs("SADD list a"), cs("HSET list f v"),
		cs("SMEMBERS list"), cs("HGETALL list"), cs("STRLEN list"), cs("LCS list str"), cs("TYPE list"),
		cs("OBJECT ENCODING list"), cs("LRANGE list 0 -1"), cs("SET list x"), cs("TYPE list"),
	}
}

func compatListScripts() []compatScript {
	big := func(cmd, key string, from, n int) compatStep {
		return csMembers(cmd, key, rangeMembers("e", from, n)...)
	}
	return []compatScript{
		{name: "commands", steps: listCompatSteps()},
		{name: "commands-small-nodes", steps: append([]compatStep{cs("CONFIG SET list-max-listpack-size 4")},
			append(listCompatSteps(), cs("CONFIG SET list-max-listpack-size -2"))...)},
		{name: "wrongtype-both-ways", steps: listWrongTypeSteps()},
		{name: "heap-lists", steps: []compatStep{
			big("RPUSH", "h", 0, 300), big("LPUSH", "h", 300, 300), cs("LLEN h"), cs("LINDEX h 0"), cs("LINDEX h 299"),
			cs("LINDEX h 300"), cs("LINDEX h -1"), cs("LINDEX h -300"), cs("LRANGE h 295 305"), cs("LRANGE h -5 -1"),
			cs("LSET h 400 changed"), cs("LINDEX h 400"), cs("LINSERT h BEFORE e450 ins"), cs("LINDEX h 150"),
			cs("LRANGE h 148 152"), cs("LPOS h e10"), cs("LPOS h e10 RANK -1"), cs("LREM h 0 e5"), cs("LLEN h"),
			cs("LPOP h 10"), cs("RPOP h 10"), cs("LLEN h"), cs("LTRIM h 10 -10"), cs("LLEN h"), cs("LRANGE h 0 3"),
			cs("LRANGE h -3 -1"), cs("OBJECT ENCODING h"), cs("LMOVE h h RIGHT LEFT"), cs("LINDEX h 0"),
			cs("COPY h hc"), cs("LPOP hc 5"), cs("LLEN h"), cs("LLEN hc"), cs("LTRIM h 0 2"), cs("LRANGE h 0 -1"),
			cs("OBJECT ENCODING h"), cs("LPOP hc 1000"), cs("EXISTS hc"),
			ca("RPUSH", "long", "x", string(make([]byte, 10000)), "y"), cs("LLEN long"), cs("LINDEX long 2"),
			cs("LPOP long 2"), cs("LRANGE long 0 -1"),
		}},
		{name: "keyspace-commands-on-lists", steps: []compatStep{
			cs("RPUSH l a b"), cs("SET str v"),
			csScan("SCAN 0 TYPE list"), csScan("SCAN 0 TYPE LIST"), cs("TYPE l"),
			cs("RENAME l l2"), cs("LRANGE l2 0 -1"), cs("EXISTS l"), cs("RENAMENX l2 str"),
			cs("COPY l2 l3"), cs("LPOP l3"), cs("LRANGE l2 0 -1"), cs("LRANGE l3 0 -1"),
			cs("COPY l2 str"), cs("COPY l2 str REPLACE"), cs("TYPE str"),
			cs("EXPIRE l2 100"), cs("TTL l2"), cs("RPUSH l2 c"), cs("TTL l2"), cs("LPOP l2"), cs("TTL l2"),
			cs("PERSIST l2"), cs("TTL l2"), cs("PEXPIRE l2 1"), csSleep(20 * time.Millisecond), cs("EXISTS l2"), cs("LLEN l2"),
			cs("DEL l3 str"), cs("EXISTS l3 str"),
			csPairs("CONFIG GET list-max-*"), cs("CONFIG GET list-compress-depth"), cs("CONFIG SET list-max-ziplist-size 10"),
			cs("CONFIG GET list-max-listpack-size"), cs("CONFIG SET list-max-listpack-size x"),
			cs("CONFIG SET list-max-listpack-size -2"), cs("CONFIG SET list-compress-depth 1"),
			cs("CONFIG GET list-compress-depth"), cs("CONFIG SET list-compress-depth -1"),
			cs("CONFIG SET list-compress-depth 0"),
		}},
		{name: "lists-in-transactions-and-scripts", steps: []compatStep{
			cs("MULTI"), cs("RPUSH q 1 2 3"), cs("LRANGE q 0 -1"), cs("BLPOP q 0"), cs("BLPOP nokey 0"),
			cs("BRPOP nokey 0"), cs("BLMOVE nokey d LEFT LEFT 0"), cs("BRPOPLPUSH nokey d 0"), cs("BLMPOP 0 1 nokey LEFT"),
			cs("BLMOVE q d LEFT LEFT 0"), cs("EXEC"),
			cs("WATCH q"), cs("RPUSH q 4"), cs("MULTI"), cs("LLEN q"), cs("EXEC"),
			cs("WATCH q"), cs("LREM q 0 nope"), cs("MULTI"), cs("LLEN q"), cs("EXEC"),
			ca("EVAL", "return redis.call('LRANGE', KEYS[1], 0, -1)", "1", "q"),
			ca("EVAL", "redis.call('RPUSH', KEYS[1], 'x'); return redis.call('LPOP', KEYS[1], 2)", "1", "q"),
			ca("EVAL", "return redis.call('BLMPOP', 0, 1, KEYS[1], 'LEFT')", "1", "nokey"),
			ca("EVAL", "return redis.call('BLMPOP', 0, 1, KEYS[1], 'LEFT', 'COUNT', 2)", "1", "q"),
			ca("EVAL", "return redis.pcall('BLPOP', KEYS[1], 0)", "1", "q"),
			ca("EVAL", "return redis.call('LPOS', KEYS[1], 'x')", "1", "q"),
			ca("EVAL_RO", "return redis.call('RPUSH', KEYS[1], 'y')", "1", "q"),
			ca("EVAL", "redis.setresp(3); return redis.call('LPOP', KEYS[1], 5)", "1", "nokey"),
		}},
		{name: "blocking-argument-errors", steps: []compatStep{
			cs("BLPOP k x"), cs("BLPOP k -1"), cs("BLPOP k inf"), cs("BLPOP k -inf"),
			cs("BLPOP k nan"), cs("BLPOP k 1e30"), cs("BRPOP k 0x"), cs("BLMOVE a b UP LEFT x"),
			cs("BLMOVE a b LEFT UP x"), cs("BLMOVE a b LEFT LEFT x"), cs("BLMOVE a b LEFT LEFT -1"),
			cs("BRPOPLPUSH a b x"), cs("BRPOPLPUSH a b -1"), cs("BLMPOP x 1 k LEFT"), cs("BLMPOP -1 1 k LEFT"),
			cs("BLMPOP 0 0 k LEFT"), cs("BLMPOP x 0 k LEFT"), cs("BLMPOP x 1 k UP"), cs("BLMPOP 0 2 k LEFT"),
			cs("BLMPOP 0 1 k LEFT COUNT 0"), cs("BLMPOP 0 1 k LEFT COUNT 1 COUNT 2"),
			cs("CLIENT UNBLOCK x"), cs("CLIENT UNBLOCK 1 BAD"), cs("CLIENT UNBLOCK x BAD"), cs("CLIENT UNBLOCK 999999"),
			cs("CLIENT UNBLOCK 999999 ERROR"), cs("CLIENT UNBLOCK 1 2 3"),
			cs("RPUSH k v"), cs("BLPOP k 0.01"), cs("RPUSH k v"), cs("BLMPOP 0.5 1 k RIGHT COUNT 3"),
			cs("RPUSH k v w"), cs("BLMOVE k d RIGHT LEFT 0"), cs("BRPOPLPUSH k d 0"), cs("BRPOP k d 0"),
			cs("BLPOP nokey 0.01"), cs("BLMPOP 0.01 1 nokey LEFT"), cs("BLMOVE nokey d LEFT LEFT 0.01"),
		}},
	}
}

func TestCompatLists(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{LogLevel: new(slog.LevelVar)})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatListScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// TestCompatListsRandom sends the same random sequence of list commands
// to redis-server and to our server and compares every reply: pushes in
// runs that carry lists across the record's bound and back, pops from
// both ends, the commands that change a list's middle, and moves between
// three keys, in default and in 4-entry nodes, in both protocols.
func TestCompatListsRandom(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, nodeSize := range []string{"-2", "4"} {
			t.Run("nodes"+nodeSize, func(t *testing.T) { listsRandom(t, redisAddr, ts.addr, proto, nodeSize) })
		}
	})
}

// listsRandom is one run of TestCompatListsRandom, in a protocol and a
// node size.
func listsRandom(t *testing.T, redisAddr, oursAddr string, proto int, nodeSize string) {
	p := dialCompatPair(t, redisAddr, oursAddr, proto)
	p.flush(t)
	p.both(t, "CONFIG", "SET", "list-max-listpack-size", nodeSize)
	defer p.both(t, "CONFIG", "SET", "list-max-listpack-size", "-2")
	rng := rand.New(rand.NewPCG(5, 6))
	keys := []string{"a", "b", "c"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	elem := func() string {
		if rng.IntN(20) == 0 {
			return strings.Repeat("long", 1+rng.IntN(100))
		}
		return "e" + strconv.Itoa(rng.IntN(8))
	}
	idx := func() string { return strconv.Itoa(rng.IntN(60) - 30) }
	end := func() string { return []string{"LEFT", "RIGHT"}[rng.IntN(2)] }
	var history []string
	for range 3000 {
		var args []string
		switch op := rng.IntN(16); op {
		case 0, 1, 2:
			args = []string{[]string{"LPUSH", "RPUSH", "LPUSHX", "RPUSHX"}[rng.IntN(4)], key()}
			for n := 1 + rng.IntN(1+rng.IntN(80)); n > 0; n-- {
				args = append(args, elem())
			}
		case 3:
			args = []string{[]string{"LPOP", "RPOP"}[rng.IntN(2)], key()}
			if rng.IntN(2) == 0 {
				args = append(args, strconv.Itoa(rng.IntN(40)))
			}
		case 4:
			args = []string{"LRANGE", key(), idx(), idx()}
		case 5:
			args = []string{"LINDEX", key(), idx()}
		case 6:
			args = []string{"LSET", key(), idx(), elem()}
		case 7:
			args = []string{"LINSERT", key(), []string{"BEFORE", "AFTER"}[rng.IntN(2)], elem(), elem()}
		case 8:
			args = []string{"LREM", key(), strconv.Itoa(rng.IntN(7) - 3), elem()}
		case 9:
			args = []string{"LTRIM", key(), idx(), idx()}
		case 10:
			args = []string{"LPOS", key(), elem(), "RANK", strconv.Itoa([]int{1, 2, -1, -3}[rng.IntN(4)]),
				"COUNT", strconv.Itoa(rng.IntN(4)), "MAXLEN", strconv.Itoa(rng.IntN(50))}
		case 11:
			args = []string{"LMOVE", key(), key(), end(), end()}
		case 12:
			args = []string{"RPOPLPUSH", key(), key()}
		case 13:
			args = []string{"LMPOP", "2", key(), key(), end(), "COUNT", strconv.Itoa(1 + rng.IntN(10))}
		case 14:
			args = []string{"LLEN", key()}
		default:
			args = []string{"LRANGE", key(), "0", "-1"}
		}
		history = append(history, showArgs(args))
		if want, got := p.redis.run(compatExact, args), p.ours.run(compatExact, args); want != got {
			t.Fatalf("after %d commands, ending\n\t%s\n%s:\n\tredis: %s\n\tours:  %s",
				len(history), strings.Join(history[max(0, len(history)-8):], "\n\t"), showArgs(args), want, got)
		}
	}
}

// TestCompatListTracking compares the invalidations client-side caching
// sends for lists: a read tracks its keys, a change invalidates them, and
// a write that changes nothing sends nothing.
func TestCompatListTracking(t *testing.T) {
	sc := psScript{name: "lists", conns: 2, resp3: true, steps: []psStep{
		ps(0, "CLIENT TRACKING ON"), ps(1, "RPUSH l 1 2 3"), ps(0, "LRANGE l 0 -1"),
		ps(1, "LREM l 0 9"), ps(1, "LPUSHX nokey 1"), ps(1, "LINSERT l BEFORE 9 x"), ps(1, "LPOP l 0"), ps(0, "PING"),
		ps(1, "RPUSH l 4"), psRead(0, 1),
		ps(0, "LINDEX l 0"), ps(1, "LSET l 0 x"), psRead(0, 1),
		ps(0, "LLEN l"), ps(1, "LMOVE l m LEFT RIGHT"), psRead(0, 1),
		ps(0, "LPOS m x"), ps(1, "RPOPLPUSH nokey m"), ps(0, "PING"), ps(1, "LTRIM m 0 -1"), ps(0, "PING"),
		ps(1, "LTRIM m 1 1"), psRead(0, 1),
		ps(0, "LLEN l"), ps(1, "LMPOP 2 nokey l LEFT COUNT 10"), psRead(0, 1), ps(0, "PING"),
	}}
	runPubSubScript(t, startRedis(t), startServer(t, Options{}).addr, sc)
}
