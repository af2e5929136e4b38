package server

// Differential tests of the stream commands against a real redis-server,
// reply for reply, in RESP2 and RESP3 (compat_test.go). IDs are given
// where a reply shows them; where the server generates them (XADD *) only
// what does not depend on the clock is compared. Idle times and delivery
// times are compared within compatTolerance.

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func compatStreamScripts() []compatScript {
	return []compatScript{
		{name: "xadd-ids", steps: []compatStep{
			cs("XADD s 1-1 a 1"), cs("XADD s 1-1 a 1"), cs("XADD s 1-0 a 1"), cs("XADD s 1-* b 2"), cs("XADD s 1 c 3"),
			cs("XADD s 2-* d 4"), cs("XADD s 0-0 a 1"), cs("XADD n 0-0 a 1"), cs("EXISTS n"), cs("XADD n 0-* a 1"),
			cs("XADD s 3-5 a"), cs("XADD s 3-5 a 1 b"), cs("XADD s"), cs("XADD s 3-x a 1"), cs("XADD s - a 1"), cs("XADD s + a 1"),
			cs("XADD s 18446744073709551615-18446744073709551614 a 1"), cs("XADD s 18446744073709551615-* a 1"),
			cs("XADD s 18446744073709551615-* a 1"), cs("XADD s * a 1"), cs("XLEN s"),
			cs("XADD s2 NOMKSTREAM 1-1 a 1"), cs("EXISTS s2"), cs("XADD s2 nomkstream * a 1"), ca("XADD", "s3", "1-1", "", ""),
			cs("XRANGE s3 - +"), cs("XADD s4 -1 a 1"), cs("XADD s4 18446744073709551616 a 1"), ca("XADD", "s4", " 5", "a", "1"),
			cs("XADD s4 +5-1 a 1"), cs("XRANGE s4 - +"), cs("SET str x"), cs("XADD str 1-1 a 1"), cs("XLEN str"), cs("XLEN nokey"),
			cs("TYPE s"), cs("OBJECT ENCODING s"),
		}},
		{name: "xadd-trim", steps: []compatStep{
			cs("XADD t MAXLEN 2 1-1 a 1"), cs("XADD t MAXLEN 2 2-1 a 1"), cs("XADD t MAXLEN = 2 3-1 a 1"), cs("XRANGE t - +"),
			cs("XADD t MINID 3 4-1 a 1"), cs("XRANGE t - +"), cs("XADD t MINID = 4-1 5-1 a 1"), cs("XLEN t"),
			cs("XADD t MAXLEN -1 6-1 a 1"), cs("XADD t MAXLEN x 6-1 a 1"), cs("XADD t MAXLEN 1 MINID 1 6-1 a 1"),
			cs("XADD t MINID 1 MAXLEN 1 6-1 a 1"), cs("XADD t LIMIT 10 6-1 a 1"), cs("XADD t MAXLEN 1 LIMIT 10 6-1 a 1"),
			cs("XADD t MAXLEN ~ 1 LIMIT -1 6-1 a 1"), cs("XADD t MAXLEN ~ 1 LIMIT x 6-1 a 1"), cs("XADD t MINID x 6-1 a 1"),
			cs("XADD t MINID - 6-1 a 1"), cs("XADD t MAXLEN ~ 1 LIMIT 10 6-1 a 1"), cs("XLEN t"),
			cs("XTRIM t"), cs("XTRIM t MAXLEN"), cs("XTRIM t FOO 1"), cs("XTRIM t MAXLEN 0 LIMIT 1"), cs("XTRIM t LIMIT 1"),
			cs("XTRIM nokey MAXLEN 0"), cs("XTRIM str MAXLEN 0"), cs("XTRIM t MAXLEN 0"), cs("XLEN t"), cs("EXISTS t"),
			cs("XTRIM t MINID 10"),
		}},
		{name: "xadd-approx-trim", steps: []compatStep{
			cs("CONFIG SET stream-node-max-entries 10"),
			cs("XADD a 1-1 f v"), cs("XADD a 1-2 f v"), cs("XADD a 1-3 f v"), cs("XADD a 1-4 f v"), cs("XADD a 1-5 f v"),
			cs("XADD a 1-6 f v"), cs("XADD a 1-7 f v"), cs("XADD a 1-8 f v"), cs("XADD a 1-9 f v"), cs("XADD a 1-10 f v"),
			cs("XADD a 1-11 f v"), cs("XADD a 1-12 f v"), cs("XADD a 1-13 g w"), cs("XADD a 1-14 f v g w"), cs("XADD a 1-15 f v"),
			cs("XADD a 1-16 f v"), cs("XADD a 1-17 f v"), cs("XADD a 1-18 f v"), cs("XADD a 1-19 f v"), cs("XADD a 1-20 f v"),
			cs("XADD a 1-21 f v"), cs("XADD a 1-22 f v"), cs("XADD a 1-23 f v"), cs("XADD a 1-24 f v"), cs("XADD a 1-25 f v"),
			cs("XTRIM a MAXLEN ~ 20"), cs("XLEN a"), cs("XTRIM a MAXLEN ~ 5 LIMIT 5"), cs("XTRIM a MAXLEN ~ 5 LIMIT 10"), cs("XLEN a"),
			cs("XTRIM a MINID ~ 1-23"), cs("XLEN a"), cs("XTRIM a MINID 1-23"), cs("XRANGE a - +"),
			cs("XINFO STREAM a"), cs("XADD a MAXLEN ~ 0 1-26 f v"), cs("XLEN a"),
			cs("CONFIG SET stream-node-max-entries 100"),
		}},
		{name: "xrange", steps: []compatStep{
			cs("XADD r 1-1 a 1"), cs("XADD r 1-2 b 2"), cs("XADD r 2-0 c 3 d 4"), cs("XADD r 3-7 e 5"),
			cs("XRANGE r - +"), cs("XRANGE r 1 1"), cs("XRANGE r (1-1 +"), cs("XRANGE r - (3-7"), cs("XRANGE r (1-1 (2-0"),
			cs("XRANGE r - + COUNT 2"), cs("XRANGE r - + COUNT 0"), cs("XRANGE r - + COUNT -1"), cs("XRANGE r - + COUNT x"),
			cs("XRANGE r - + LIMIT 1"), cs("XRANGE r - + COUNT"), cs("XRANGE r 3 1"), cs("XRANGE r x +"), cs("XRANGE r - x"),
			cs("XRANGE r (- +"), cs("XRANGE r - (+"), cs("XRANGE r (18446744073709551615-18446744073709551615 +"),
			cs("XRANGE r - (0-0"), cs("XRANGE r 2 2"), cs("XRANGE nokey - +"), cs("XRANGE nokey - + COUNT 0"), cs("XRANGE str - +"),
			cs("XREVRANGE r + -"), cs("XREVRANGE r + - COUNT 1"), cs("XREVRANGE r (3-7 (1-1"), cs("XREVRANGE r 2 2"),
			cs("XREVRANGE r - +"), cs("XREVRANGE r 1-2 1-2"), cs("XREVRANGE r + - COUNT 0"), cs("XREVRANGE r + 99"),
		}},
		{name: "xdel", steps: []compatStep{
			cs("XADD d 1-1 a 1"), cs("XADD d 1-2 a 2"), cs("XADD d 1-3 a 3"), cs("XDEL d 1-2 1-2 9-9"), cs("XRANGE d - +"),
			cs("XDEL d 1-1 x"), cs("XLEN d"), cs("XDEL d -"), cs("XDEL nokey x"), cs("XDEL nokey 1-1"), cs("XDEL str 1-1"),
			cs("XDEL d 1-1 1-3"), cs("XLEN d"), cs("EXISTS d"), cs("XINFO STREAM d"), cs("XADD d 1-3 a 1"), cs("XADD d 1-* a 1"),
		}},
		{name: "xread", steps: []compatStep{
			cs("XADD x1 1-1 a 1"), cs("XADD x1 1-2 b 2"), cs("XADD x2 5-0 c 3"),
			cs("XREAD STREAMS x1 0"), cs("XREAD COUNT 1 STREAMS x1 x2 0 0"), cs("XREAD STREAMS x1 x2 1-1 5-0"),
			cs("XREAD STREAMS x1 x2 $ $"), cs("XREAD STREAMS nokey 0"), cs("XREAD STREAMS x1"), cs("XREAD STREAMS x1 x2 0"),
			cs("XREAD COUNT x STREAMS x1 0"), cs("XREAD COUNT -5 STREAMS x1 0"), cs("XREAD BLOCK x STREAMS x1 0"),
			cs("XREAD BLOCK -1 STREAMS x1 0"), cs("XREAD FOO STREAMS x1 0"), cs("XREAD x1 0"), cs("XREAD STREAMS x1 >"),
			cs("XREAD GROUP g c STREAMS x1 0"), cs("XREAD NOACK STREAMS x1 0"), cs("XREAD STREAMS x1 -"), cs("XREAD STREAMS str 0"),
			cs("XREAD BLOCK 10 STREAMS x1 $"), cs("XREAD BLOCK 10 STREAMS nokey 0"), cs("XREAD COUNT 0 STREAMS x1 0"),
			cs("MULTI"), cs("XREAD BLOCK 0 STREAMS x1 $"), cs("XADD x1 1-3 c 3"), cs("EXEC"),
			cs("EVAL \"return redis.call('XREAD','BLOCK','0','STREAMS','x1','$')\" 0"),
			cs("EVAL \"return redis.call('XADD','x1','2-1','l','1')\" 0"), cs("EVAL \"return redis.call('XRANGE','x1','-','+')\" 0"),
		}},
		{name: "groups", steps: []compatStep{
			cs("XGROUP CREATE g g1 $"), cs("XGROUP CREATE g g1 $ MKSTREAM"), cs("XGROUP CREATE g g1 $ MKSTREAM"), cs("XLEN g"),
			cs("XGROUP CREATE g g2 0 ENTRIESREAD 5"), cs("XGROUP CREATE g g3 0 ENTRIESREAD -2"), cs("XGROUP CREATE g g3 0 ENTRIESREAD x"),
			cs("XGROUP CREATE g g3 x"), cs("XGROUP CREATE g g3 0 FOO"), cs("XGROUP CREATE g g3 0 MKSTREAM MKSTREAM MKSTREAM MKSTREAM"),
			cs("XGROUP CREATE str g 0"), cs("XGROUP CREATE"), cs("XGROUP"), cs("XGROUP FOO"), cs("XGROUP FOO a b"),
			cs("XGROUP HELP"), cs("XGROUP HELP x"), cs("XGROUP DESTROY g nogroup"), cs("XGROUP DESTROY nokey g1"),
			cs("XGROUP SETID g nogroup 0"), cs("XGROUP SETID g g1 0 ENTRIESREAD 3"), cs("XGROUP SETID g g1 -"), cs("XGROUP SETID g g1 x"),
			cs("XGROUP SETID g g1 $ MKSTREAM"), cs("XGROUP CREATECONSUMER g g1 c1"), cs("XGROUP CREATECONSUMER g g1 c1"),
			cs("XGROUP CREATECONSUMER g nogroup c1"), cs("XGROUP DELCONSUMER g g1 c1"), cs("XGROUP DELCONSUMER g g1 c1"),
			cs("XGROUP DELCONSUMER nokey g1 c1"), cs("XINFO GROUPS g"), cs("XGROUP DESTROY g g2"), cs("XINFO GROUPS g"),
			cs("XINFO GROUPS nokey"), cs("XINFO GROUPS str"), cs("XINFO HELP"), cs("XINFO HELP x"), cs("XINFO FOO g"), cs("XINFO"),
			cs("XINFO CONSUMERS g nogroup"), cs("XINFO STREAM g FOO"), cs("XINFO STREAM g FULL COUNT x"), cs("XINFO STREAM g FULL FOO 1"),
		}},
		{name: "readgroup-ack-pending", steps: []compatStep{
			cs("XADD q 1-1 a 1"), cs("XADD q 1-2 b 2"), cs("XADD q 1-3 c 3"), cs("XADD q 1-4 d 4"), cs("XGROUP CREATE q g 0"),
			cs("XREADGROUP GROUP g c1 COUNT 2 STREAMS q >"), cs("XREADGROUP GROUP g c2 STREAMS q >"), cs("XREADGROUP GROUP g c2 STREAMS q >"),
			cs("XREADGROUP GROUP g c1 STREAMS q 0"), cs("XREADGROUP GROUP g c1 COUNT 1 STREAMS q 1-1"), cs("XREADGROUP GROUP g c3 STREAMS q 0"),
			csApprox("XPENDING q g"), csApprox("XPENDING q g - + 10"), csApprox("XPENDING q g - + 10 c2"), csApprox("XPENDING q g - + 10 nobody"),
			csApprox("XPENDING q g (1-1 (1-4 10"), csApprox("XPENDING q g IDLE 0 - + 1"), cs("XPENDING q g IDLE 100000 - + 10"),
			cs("XPENDING q g - + 0"), cs("XPENDING q g - + x"), cs("XPENDING q g x + 1"), cs("XPENDING q g IDLE x - + 1"),
			cs("XPENDING q g IDLE 1 - +"), cs("XPENDING q g - +"), cs("XPENDING q nogroup"), cs("XPENDING nokey g"), cs("XPENDING str g"),
			cs("XDEL q 1-2"), cs("XREADGROUP GROUP g c1 STREAMS q 0"), cs("XACK q g 1-1 1-2 9-9"), cs("XACK q g 1-1"), cs("XACK q g x"),
			cs("XACK q nogroup 1-3"), cs("XACK nokey g 1-3"), cs("XACK str g 1-3"), csApprox("XPENDING q g"),
			cs("XREADGROUP GROUP g c1 STREAMS q $"), cs("XREADGROUP GROUP nogroup c1 STREAMS q >"), cs("XREADGROUP GROUP g c1 STREAMS nokey >"),
			cs("XREADGROUP STREAMS q >"), cs("XREADGROUP GROUP g c1 NOACK STREAMS q"), cs("XREADGROUP GROUP g STREAMS q >"),
			cs("XADD q 1-5 e 5"), cs("XREADGROUP GROUP g c4 NOACK STREAMS q >"), csApprox("XPENDING q g"),
			csApprox("XINFO CONSUMERS q g"), cs("XINFO GROUPS q"), cs("XGROUP SETID q g 0"), cs("XINFO GROUPS q"),
			cs("XREADGROUP GROUP g c1 COUNT 1 STREAMS q >"), csApprox("XPENDING q g - + 10"), cs("XINFO GROUPS q"),
			cs("XREADGROUP GROUP g c1 BLOCK 10 STREAMS q 0"), cs("XREADGROUP GROUP g c1 BLOCK 10 STREAMS q >"),
			cs("XGROUP DELCONSUMER q g c1"), csApprox("XPENDING q g"), cs("XINFO GROUPS q"),
		}},
		{name: "claim", steps: []compatStep{
			cs("XADD c 1-1 a 1"), cs("XADD c 1-2 b 2"), cs("XADD c 1-3 c 3"), cs("XGROUP CREATE c g 0"),
			cs("XREADGROUP GROUP g alice STREAMS c >"), cs("XCLAIM c g bob 100000 1-1"), cs("XCLAIM c g bob 0 1-1"),
			csApprox("XPENDING c g - + 10"), cs("XCLAIM c g bob 0 1-2 JUSTID"), csApprox("XPENDING c g - + 10"),
			cs("XCLAIM c g carol 0 1-3 RETRYCOUNT 7 IDLE 5000"), csApprox("XPENDING c g - + 10"),
			cs("XCLAIM c g carol 0 1-1 TIME 1000"), csApprox("XPENDING c g - + 10"), cs("XCLAIM c g carol 0 9-9 FORCE"),
			cs("XADD c 2-1 d 4"), cs("XCLAIM c g dave 0 2-1 FORCE"), csApprox("XPENDING c g - + 10"), cs("XCLAIM c g dave 0 2-1 LASTID 3-0"),
			cs("XINFO GROUPS c"), cs("XCLAIM c g dave x 1-1"), cs("XCLAIM c g dave 0 1-1 IDLE x"), cs("XCLAIM c g dave 0 1-1 TIME x"),
			cs("XCLAIM c g dave 0 1-1 RETRYCOUNT x"), cs("XCLAIM c g dave 0 1-1 LASTID x"), cs("XCLAIM c g dave 0 1-1 FOO"),
			cs("XCLAIM c g dave 0 x"), cs("XCLAIM c nogroup dave 0 1-1"), cs("XCLAIM nokey g dave 0 1-1"), cs("XCLAIM str g dave 0 1-1"),
			cs("XDEL c 1-2"), cs("XCLAIM c g erin 0 1-2 1-3"), csApprox("XPENDING c g"),
			cs("XAUTOCLAIM c g frank 0 0 COUNT 1"), cs("XAUTOCLAIM c g frank 0 0 JUSTID"), cs("XAUTOCLAIM c g frank 100000 0"),
			cs("XAUTOCLAIM c g frank 0 (1-1 COUNT 10"), cs("XAUTOCLAIM c g frank 0 0 COUNT 0"), cs("XAUTOCLAIM c g frank 0 0 COUNT x"),
			cs("XAUTOCLAIM c g frank 0 0 FOO"), cs("XAUTOCLAIM c g frank x 0"), cs("XAUTOCLAIM c g frank 0 x"),
			cs("XAUTOCLAIM c nogroup frank 0 0"), cs("XAUTOCLAIM nokey g frank 0 0"), cs("XAUTOCLAIM str g frank 0 0"),
			cs("XADD c 3-1 e 5"), cs("XREADGROUP GROUP g gina STREAMS c >"), cs("XDEL c 3-1"), cs("XAUTOCLAIM c g henry 0 0"),
			csApprox("XINFO CONSUMERS c g"), csApprox("XPENDING c g"),
		}},
		{name: "xsetid-xinfo", steps: []compatStep{
			cs("XADD i 1-1 a 1"), cs("XADD i 2-1 b 2"), cs("XSETID i 1-1"), cs("XSETID i 5-0"), cs("XINFO STREAM i"),
			cs("XSETID i 5-0 ENTRIESADDED 1"), cs("XSETID i 5-0 ENTRIESADDED -1"), cs("XSETID i 5-0 ENTRIESADDED 10 MAXDELETEDID 6-0"),
			cs("XSETID i 5-0 ENTRIESADDED 10 MAXDELETEDID 3-0"), cs("XINFO STREAM i"), cs("XSETID i 5-0 FOO"), cs("XSETID i x"),
			cs("XSETID nokey 1-1"), cs("XSETID str 1-1"), cs("XSETID i -"), cs("XADD i 4-0 x 1"), cs("XADD i 9-* x 1"),
			cs("XGROUP CREATE i g 0"), cs("XREADGROUP GROUP g c STREAMS i >"), csApprox("XINFO STREAM i FULL"), csApprox("XINFO STREAM i FULL COUNT 1"),
			cs("XINFO STREAM nokey"), cs("XINFO STREAM str"), cs("XINFO GROUPS i"), cs("XDEL i 1-1"), cs("XINFO GROUPS i"),
			cs("XGROUP CREATE e e 0 MKSTREAM"), cs("XINFO STREAM e"), csApprox("XINFO STREAM e FULL"), cs("XINFO GROUPS e"),
		}},
	}
}

func TestCompatStreams(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{LogLevel: new(slog.LevelVar)})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatStreamScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// TestCompatStreamGroupsKeepWatches: a WATCH of a stream is broken by what
// changes its entries (XADD, XDEL, XTRIM, XGROUP CREATE ... MKSTREAM) and
// not by what changes its consumer groups or its last ID alone (XSETID,
// XREADGROUP, XACK, XCLAIM, XAUTOCLAIM, XGROUP CREATE, SETID,
// CREATECONSUMER, DELCONSUMER, DESTROY), as redis-server decides; each
// write runs on another connection between the WATCH and the EXEC.
func TestCompatStreamGroupsKeepWatches(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{EventLoops: 4})
	setup := [][]string{
		{"DEL", "s", "fresh"}, {"XADD", "s", "1-1", "f", "v"}, {"XADD", "s", "2-1", "f", "v"},
		{"XGROUP", "CREATE", "s", "g", "0"}, {"XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"},
	}
	writes := [][]string{
		{"XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "STREAMS", "s", "0"},
		{"XACK", "s", "g", "1-1"},
		{"XCLAIM", "s", "g", "c2", "0", "2-1"},
		{"XAUTOCLAIM", "s", "g", "c3", "0", "0"},
		{"XGROUP", "CREATE", "s", "g2", "$"},
		{"XGROUP", "SETID", "s", "g", "0"},
		{"XGROUP", "CREATECONSUMER", "s", "g", "c9"},
		{"XGROUP", "DELCONSUMER", "s", "g", "c9"},
		{"XGROUP", "DESTROY", "s", "g"},
		{"XADD", "s", "*", "f", "v"},
		{"XDEL", "s", "1-1"},
		{"XTRIM", "s", "MAXLEN", "0"},
		{"XSETID", "s", "99-0"},
		{"XGROUP", "CREATE", "fresh", "g", "$", "MKSTREAM"},
	}
	run := func(addr string) []string {
		watcher, other := dialCompat(t, addr), dialCompat(t, addr)
		var out []string
		for _, w := range writes {
			for _, args := range setup {
				if _, err := other.do(args...); err != nil {
					t.Fatal(err)
				}
			}
			key := w[1]
			if w[0] == "XGROUP" {
				key = w[2]
			}
			watcher.do("WATCH", key)
			r, err := other.do(w...)
			if err != nil {
				t.Fatal(err)
			}
			watcher.do("MULTI")
			watcher.do("PING")
			exec, err := watcher.do("EXEC")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s -> error %v; EXEC %s", strings.Join(w, " "), r.kind == '-', exec))
		}
		return out
	}
	want, got := run(redisAddr), run(ts.addr)
	for i := range want {
		if want[i] != got[i] {
			t.Errorf("redis-server: %s\nstampedeless: %s", want[i], got[i])
		}
	}
	if !strings.Contains(want[0], "PONG") || strings.Contains(want[9], "PONG") {
		t.Errorf("redis-server did not decide as this test assumes: %s; %s", want[0], want[9])
	}
}
