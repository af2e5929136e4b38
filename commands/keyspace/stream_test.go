package keyspace

import (
	"reflect"
	"testing"
	"time"
)

// TestStreams: entries, trimming, reads and consumer groups, with explicit IDs.
func TestStreams(t *testing.T) {
	h := newFamily(t)
	h.Run([]Case{
		{"SET str v", "OK"},
		{"XADD s 1-1 a 1", "1-1"},
		{"XADD s 1-2 b 2", "1-2"},
		{"XADD s 2-0 c 3 d 4", "2-0"},
		{"XADD s 1-0 x 1", Err("ERR The ID specified in XADD is equal or smaller than the target stream top item")},
		{"XADD s 2-0 x 1", Err("ERR The ID specified in XADD is equal or smaller than the target stream top item")},
		{"XADD s 0-0 x 1", Err("ERR The ID specified in XADD must be greater than 0-0")},
		{"XADD s 3-* e 5", "3-0"},
		{"XADD s bad x 1", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XADD s 5-1 x", Err("ERR wrong number of arguments for 'xadd' command")},
		{"XADD str 1-1 a 1", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"XADD nosuch NOMKSTREAM 1-1 a 1", nil},
		{"EXISTS nosuch", 0},
		{"XADD s MAXLEN 10 4-0 f 6", "4-0"},
		{"XADD s MAXLEN ~ 10 LIMIT 5 4-1 f 6", "4-1"},
		{"XADD s MAXLEN 10 LIMIT 5 4-2 f 6", Err("ERR syntax error, LIMIT cannot be used without the special ~ option")},
		{"XADD s MAXLEN -1 4-2 f 6", Err("ERR The MAXLEN argument must be >= 0.")},
		{"XADD s MINID 0 4-3 f 6", "4-3"},
		{"XADD s MAXLEN 1 MINID 0 4-3 f 6", Err("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")},
		{"XADD s MAXLEN x 4-3 f 6", Err("ERR value is not an integer or out of range")},
		{"XLEN s", 7},
		{"XLEN nosuch", 0},
		{"XLEN str", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"XRANGE s - +", []any{[]any{"1-1", []any{"a", "1"}}, []any{"1-2", []any{"b", "2"}}, []any{"2-0", []any{"c", "3", "d", "4"}}, []any{"3-0", []any{"e", "5"}}, []any{"4-0", []any{"f", "6"}}, []any{"4-1", []any{"f", "6"}}, []any{"4-3", []any{"f", "6"}}}},
		{"XRANGE s 1-2 2", []any{[]any{"1-2", []any{"b", "2"}}, []any{"2-0", []any{"c", "3", "d", "4"}}}},
		{"XRANGE s (1-1 + COUNT 2", []any{[]any{"1-2", []any{"b", "2"}}, []any{"2-0", []any{"c", "3", "d", "4"}}}},
		{"XRANGE s - + COUNT 0", nil},
		{"XRANGE s - + COUNT x", Err("ERR value is not an integer or out of range")},
		{"XRANGE s x +", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XRANGE s + -", []any{}},
		{"XRANGE s (- +", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XRANGE nosuch - +", []any{}},
		{"XRANGE str - +", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"XREVRANGE s + - COUNT 2", []any{[]any{"4-3", []any{"f", "6"}}, []any{"4-1", []any{"f", "6"}}}},
		{"XREVRANGE s 2 1", []any{[]any{"2-0", []any{"c", "3", "d", "4"}}, []any{"1-2", []any{"b", "2"}}, []any{"1-1", []any{"a", "1"}}}},
		{"XDEL s 4-1 4-2 99-0", 1},
		{"XDEL s x", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XDEL nosuch 1-1", 0},
		{"XDEL str 1-1", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"XTRIM s MAXLEN 5", 1},
		{"XLEN s", 5},
		{"XTRIM s MINID 2-0", 1},
		{"XRANGE s - +", []any{[]any{"2-0", []any{"c", "3", "d", "4"}}, []any{"3-0", []any{"e", "5"}}, []any{"4-0", []any{"f", "6"}}, []any{"4-3", []any{"f", "6"}}}},
		{"XTRIM s MAXLEN ~ 0", 4},
		{"XTRIM s BOGUS 1", Err("ERR syntax error")},
		{"XTRIM s MAXLEN", Err("ERR wrong number of arguments for 'xtrim' command")},
		{"XTRIM nosuch MAXLEN 1", 0},
		{"XTRIM str MAXLEN 1", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"XTRIM s MAXLEN 1 LIMIT 10", Err("ERR syntax error, LIMIT cannot be used without the special ~ option")},
		{"XSETID s 10-0", "OK"},
		{"XADD s 9-0 a 1", Err("ERR The ID specified in XADD is equal or smaller than the target stream top item")},
		{"XSETID s 1-0", "OK"},
		{"XSETID s 20-0 ENTRIESADDED 100 MAXDELETEDID 15-0", "OK"},
		{"XSETID s 20-0 ENTRIESADDED 1", "OK"},
		{"XSETID s 30-0 ENTRIESADDED 100 MAXDELETEDID 40-0", Err("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")},
		{"XSETID nosuch 1-0", Err("ERR no such key")},
		{"XSETID s x", Err("ERR Invalid stream ID specified as stream command argument")},
		{"DEL s", 1},
		{"XADD s 1-1 a 1", "1-1"},
		{"XADD s 1-2 b 2", "1-2"},
		{"XADD s 1-3 c 3", "1-3"},
		{"XREAD STREAMS s 0", []any{[]any{"s", []any{[]any{"1-1", []any{"a", "1"}}, []any{"1-2", []any{"b", "2"}}, []any{"1-3", []any{"c", "3"}}}}}},
		{"XREAD COUNT 1 STREAMS s 1-1", []any{[]any{"s", []any{[]any{"1-2", []any{"b", "2"}}}}}},
		{"XREAD STREAMS s nosuch 0 0", []any{[]any{"s", []any{[]any{"1-1", []any{"a", "1"}}, []any{"1-2", []any{"b", "2"}}, []any{"1-3", []any{"c", "3"}}}}}},
		{"XREAD STREAMS s +", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XREAD STREAMS s $", nil},
		{"XREAD STREAMS s", Err("ERR wrong number of arguments for 'xread' command")},
		{"XREAD COUNT x STREAMS s 0", Err("ERR value is not an integer or out of range")},
		{"XREAD BOGUS STREAMS s 0", Err("ERR syntax error")},
		{"XREAD STREAMS str 0", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"XREAD STREAMS s x", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XGROUP CREATE s g 0", "OK"},
		{"XGROUP CREATE s g 0", Err("BUSYGROUP Consumer Group name already exists")},
		{"XGROUP CREATE nosuch g 0", Err("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")},
		{"XGROUP CREATE nosuch g2 $ MKSTREAM", "OK"},
		{"XGROUP CREATE s g3 $ ENTRIESREAD 1", "OK"},
		{"XGROUP CREATE s g4 x", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XGROUP CREATE str g 0", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"XGROUP CREATECONSUMER s g c1", 1},
		{"XGROUP CREATECONSUMER s g c1", 0},
		{"XGROUP CREATECONSUMER s nog c1", Err("NOGROUP No such consumer group 'nog' for key name 's'")},
		{"XGROUP CREATECONSUMER nosuch g c1", Err("NOGROUP No such consumer group 'g' for key name 'nosuch'")},
		{"XREADGROUP GROUP g c1 COUNT 2 STREAMS s >", []any{[]any{"s", []any{[]any{"1-1", []any{"a", "1"}}, []any{"1-2", []any{"b", "2"}}}}}},
		{"XREADGROUP GROUP g c2 STREAMS s >", []any{[]any{"s", []any{[]any{"1-3", []any{"c", "3"}}}}}},
		{"XREADGROUP GROUP g c2 STREAMS s >", nil},
		{"XREADGROUP GROUP g c1 STREAMS s 0", []any{[]any{"s", []any{[]any{"1-1", []any{"a", "1"}}, []any{"1-2", []any{"b", "2"}}}}}},
		{"XREADGROUP GROUP nog c1 STREAMS s >", Err("NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP option")},
		{"XREADGROUP GROUP g c1 STREAMS nosuch >", Err("NOGROUP No such key 'nosuch' or consumer group 'g' in XREADGROUP with GROUP option")},
		{"XREADGROUP GROUP g c1 NOACK STREAMS s 0", []any{[]any{"s", []any{[]any{"1-1", []any{"a", "1"}}, []any{"1-2", []any{"b", "2"}}}}}},
		{"XREADGROUP GROUP g STREAMS s >", Err("ERR wrong number of arguments for 'xreadgroup' command")},
		{"XREADGROUP GROUP g c1 STREAMS s +", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XPENDING s g", []any{3, "1-1", "1-3", []any{[]any{"c1", "2"}, []any{"c2", "1"}}}},
		{"XPENDING s g - + 10 c1", []any{[]any{"1-1", "c1", 0, 3}, []any{"1-2", "c1", 0, 3}}},
		{"XPENDING s nog", Err("NOGROUP No such key 's' or consumer group 'nog'")},
		{"XPENDING nosuch g", Err("NOGROUP No such key 'nosuch' or consumer group 'g'")},
		{"XPENDING s g x + 10", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XPENDING s g - + x", Err("ERR value is not an integer or out of range")},
		{"XPENDING s g IDLE x - + 10", Err("ERR value is not an integer or out of range")},
		{"XPENDING str g", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"XACK s g 1-1 99-0", 1},
		{"XACK s g 1-1", 0},
		{"XACK s nog 1-1", 0},
		{"XACK s g x", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XACK nosuch g 1-1", 0},
		{"XCLAIM s g c3 0 1-2 JUSTID", []any{"1-2"}},
		{"XCLAIM s g c3 0 1-3 FORCE RETRYCOUNT 5 IDLE 0", []any{[]any{"1-3", []any{"c", "3"}}}},
		{"XCLAIM s g c3 0 99-0", []any{}},
		{"XCLAIM s g c3 0 99-0 FORCE", []any{}},
		{"XCLAIM s nog c3 0 1-2", Err("NOGROUP No such key 's' or consumer group 'nog'")},
		{"XCLAIM s g c3 x 1-2", Err("ERR Invalid min-idle-time argument for XCLAIM")},
		{"XCLAIM s g c3 0 x", Err("ERR Unrecognized XCLAIM option 'x'")},
		{"XCLAIM s g c3 0 1-2 RETRYCOUNT x", Err("ERR Invalid RETRYCOUNT option argument for XCLAIM")},
		{"XCLAIM s g c3 0 1-2 BOGUS", Err("ERR Unrecognized XCLAIM option 'BOGUS'")},
		{"XCLAIM s g c3 0 1-2 LASTID 5-0", []any{[]any{"1-2", []any{"b", "2"}}}},
		{"XAUTOCLAIM s g c4 0 0", []any{"0-0", []any{[]any{"1-2", []any{"b", "2"}}, []any{"1-3", []any{"c", "3"}}}, []any{}}},
		{"XAUTOCLAIM s g c4 0 0 COUNT 1 JUSTID", []any{"1-3", []any{"1-2"}, []any{}}},
		{"XAUTOCLAIM s g c4 0 0 COUNT 0", Err("ERR COUNT must be > 0")},
		{"XAUTOCLAIM s g c4 x 0", Err("ERR Invalid min-idle-time argument for XAUTOCLAIM")},
		{"XAUTOCLAIM s g c4 0 x", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XAUTOCLAIM s nog c4 0 0", Err("NOGROUP No such key 's' or consumer group 'nog'")},
		{"XAUTOCLAIM s g c4 0 0 BOGUS", Err("ERR syntax error")},
		{"XPENDING s g - + 10", []any{[]any{"1-2", "c4", 0, 5}, []any{"1-3", "c4", 0, 6}}},
		{"XINFO GROUPS s", []any{[]any{"name", "g", "consumers", 4, "pending", 2, "last-delivered-id", "5-0", "entries-read", 3, "lag", 0}, []any{"name", "g3", "consumers", 0, "pending", 0, "last-delivered-id", "1-3", "entries-read", 1, "lag", 2}}},
		{"XINFO GROUPS nosuch", []any{[]any{"name", "g2", "consumers", 0, "pending", 0, "last-delivered-id", "0-0", "entries-read", nil, "lag", 0}}},
		{"XINFO GROUPS str", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"XINFO CONSUMERS s nog", Err("NOGROUP No such consumer group 'nog' for key name 's'")},
		{"XINFO STREAM nosuch", []any{"length", 0, "radix-tree-keys", 0, "radix-tree-nodes", 1, "last-generated-id", "0-0", "max-deleted-entry-id", "0-0", "entries-added", 0, "recorded-first-entry-id", "0-0", "groups", 1, "first-entry", nil, "last-entry", nil}},
		{"XGROUP SETID s g 0", "OK"},
		{"XGROUP SETID s g 0 ENTRIESREAD 2", "OK"},
		{"XGROUP SETID s nog 0", Err("NOGROUP No such consumer group 'nog' for key name 's'")},
		{"XGROUP SETID s g x", Err("ERR Invalid stream ID specified as stream command argument")},
		{"XGROUP DELCONSUMER s g c4", 2},
		{"XGROUP DELCONSUMER s g nosuchc", 0},
		{"XGROUP DELCONSUMER s nog c1", Err("NOGROUP No such consumer group 'nog' for key name 's'")},
		{"XGROUP DESTROY s g", 1},
		{"XGROUP DESTROY s g", 0},
		{"XGROUP DESTROY nosuch g", 0},
		{"DEL s", 1},
		{"XADD s 1-1 a 1", "1-1"},
		{"XADD s 1-2 b 2", "1-2"},
		{"XINFO STREAM s", []any{"length", 2, "radix-tree-keys", 1, "radix-tree-nodes", 2, "last-generated-id", "1-2", "max-deleted-entry-id", "0-0", "entries-added", 2, "recorded-first-entry-id", "1-1", "groups", 0, "first-entry", []any{"1-1", []any{"a", "1"}}, "last-entry", []any{"1-2", []any{"b", "2"}}}},
		{"XGROUP CREATE s g 0", "OK"},
		{"XREADGROUP GROUP g c STREAMS s >", []any{[]any{"s", []any{[]any{"1-1", []any{"a", "1"}}, []any{"1-2", []any{"b", "2"}}}}}},
		{"XDEL s 1-2", 1},
		{"XREADGROUP GROUP g c STREAMS s 0", []any{[]any{"s", []any{[]any{"1-1", []any{"a", "1"}}, []any{"1-2", nil}}}}},
		{"XPENDING s g - + 10 c", []any{[]any{"1-1", "c", 0, 2}, []any{"1-2", "c", 0, 1}}},
	})
	h.Proto(3)
	h.Run([]Case{
		{"XRANGE s - +", []any{[]any{"1-1", []any{"a", "1"}}}},
		{"XREAD STREAMS s 0", Map{"s", []any{[]any{"1-1", []any{"a", "1"}}}}},
		{"XREAD STREAMS nosuch 0", nil},
		{"XINFO STREAM s", Map{"length", 1, "radix-tree-keys", 1, "radix-tree-nodes", 2, "last-generated-id", "1-2", "max-deleted-entry-id", "1-2", "entries-added", 2, "recorded-first-entry-id", "1-1", "groups", 1, "first-entry", []any{"1-1", []any{"a", "1"}}, "last-entry", []any{"1-1", []any{"a", "1"}}}},
	})
	h.Proto(2)
}

// TestStreamsBlockUntilServed: XREAD and XREADGROUP with BLOCK wait for an
// entry past the one they read from; they read, taking nothing.
func TestStreamsBlockUntilServed(t *testing.T) {
	h := newFamily(t)
	h.Do("XADD", "s", "1-1", "f", "v")
	h.do("XREAD", "BLOCK", "100", "STREAMS", "s", "$")
	if b := h.cl.Blocked; b == nil || !b.Read || b.Timeout != 100*time.Millisecond {
		t.Fatalf("XREAD BLOCK 100 ... $ blocked %+v, want a read for 100ms", b)
	}
	h.Do("XADD", "s", "2-1", "g", "w")
	if ok, got := h.Wake("s"); !ok || !reflect.DeepEqual(got, []any{[]any{"s", []any{[]any{"2-1", []any{"g", "w"}}}}}) {
		t.Errorf("XREAD served: %v %#v", ok, got)
	}
	h.do("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	if got := h.TimeOut(); got != nil {
		t.Errorf("XREAD timed out: %#v", got)
	}
	h.Do("XGROUP", "CREATE", "s", "g", "$")
	h.do("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
	h.Do("XADD", "s", "3-1", "h", "x")
	if ok, got := h.Wake("s"); !ok || !reflect.DeepEqual(got, []any{[]any{"s", []any{[]any{"3-1", []any{"h", "x"}}}}}) {
		t.Errorf("XREADGROUP served: %v %#v", ok, got)
	}
	h.cl.Atomic = true
	if got := h.Do("XREAD", "BLOCK", "0", "STREAMS", "s", "$"); got != nil || h.cl.Blocked != nil {
		t.Errorf("XREAD BLOCK inside the section = %#v, blocked %+v; want nil at once", got, h.cl.Blocked)
	}
}
