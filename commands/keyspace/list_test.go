package keyspace

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/commands/commandstest"
)

// TestLists: the list commands, and the blocking ones where an element is there.
func TestLists(t *testing.T) {
	h := newFamily(t)
	h.Run([]Case{
		{"SET str v", "OK"},
		{"LPUSH l c b a", 3},
		{"RPUSH l d e", 5},
		{"LPUSH str x", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"RPUSH str x", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"LPUSHX nosuch a", 0},
		{"RPUSHX nosuch a", 0},
		{"LPUSHX l z", 6},
		{"RPUSHX l y", 7},
		{"LPUSHX str a", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"LRANGE l 0 -1", []any{"z", "a", "b", "c", "d", "e", "y"}},
		{"LRANGE l 1 2", []any{"a", "b"}},
		{"LRANGE l -2 -1", []any{"e", "y"}},
		{"LRANGE l 5 1", []any{}},
		{"LRANGE l -100 100", []any{"z", "a", "b", "c", "d", "e", "y"}},
		{"LRANGE l 100 200", []any{}},
		{"LRANGE nosuch 0 -1", []any{}},
		{"LRANGE l a 1", Err("ERR value is not an integer or out of range")},
		{"LRANGE str 0 1", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"LLEN l", 7},
		{"LLEN nosuch", 0},
		{"LLEN str", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"LINDEX l 0", "z"},
		{"LINDEX l -1", "y"},
		{"LINDEX l 100", nil},
		{"LINDEX nosuch 0", nil},
		{"LINDEX l x", Err("ERR value is not an integer or out of range")},
		{"LINDEX str 0", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"LSET l 0 Z", "OK"},
		{"LSET l 100 x", Err("ERR index out of range")},
		{"LSET nosuch 0 x", Err("ERR no such key")},
		{"LSET l x y", Err("ERR value is not an integer or out of range")},
		{"LSET str 0 x", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"LINSERT l BEFORE a A", 8},
		{"LINSERT l AFTER a B", 9},
		{"LINSERT l BEFORE nosuchpivot x", -1},
		{"LINSERT nosuch BEFORE a x", 0},
		{"LINSERT l MIDDLE a x", Err("ERR syntax error")},
		{"LINSERT str BEFORE a x", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"LRANGE l 0 -1", []any{"Z", "A", "a", "B", "b", "c", "d", "e", "y"}},
		{"LPOP l", "Z"},
		{"RPOP l", "y"},
		{"LPOP l 2", []any{"A", "a"}},
		{"RPOP l 2", []any{"e", "d"}},
		{"LPOP l 0", []any{}},
		{"LPOP l -1", Err("ERR value is out of range, must be positive")},
		{"LPOP l x", Err("ERR value is out of range, must be positive")},
		{"LPOP nosuch", nil},
		{"LPOP nosuch 2", nil},
		{"RPOP str", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"LRANGE l 0 -1", []any{"B", "b", "c"}},
		{"RPUSH r a b a c a", 5},
		{"LREM r 2 a", 2},
		{"LRANGE r 0 -1", []any{"b", "c", "a"}},
		{"LREM r -1 a", 1},
		{"LREM r 0 nosuch", 0},
		{"LREM nosuch 0 a", 0},
		{"LREM r x a", Err("ERR value is not an integer or out of range")},
		{"LREM str 0 a", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"RPUSH t 1 2 3 4 5", 5},
		{"LTRIM t 1 -2", "OK"},
		{"LRANGE t 0 -1", []any{"2", "3", "4"}},
		{"LTRIM t 5 1", "OK"},
		{"EXISTS t", 0},
		{"LTRIM nosuch 0 1", "OK"},
		{"LTRIM str 0 1", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"LTRIM t x 1", Err("ERR value is not an integer or out of range")},
		{"RPUSH p a b c 1 2 3 c c", 8},
		{"LPOS p c", 2},
		{"LPOS p c RANK 2", 6},
		{"LPOS p c RANK -1", 7},
		{"LPOS p c COUNT 0", []any{2, 6, 7}},
		{"LPOS p c COUNT 2", []any{2, 6}},
		{"LPOS p c RANK -2 COUNT 10", []any{6, 2}},
		{"LPOS p c MAXLEN 1", nil},
		{"LPOS p c MAXLEN 1 COUNT 0", []any{}},
		{"LPOS p nosuch", nil},
		{"LPOS p nosuch COUNT 1", []any{}},
		{"LPOS p c RANK 0", Err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")},
		{"LPOS p c COUNT -1", Err("ERR COUNT can't be negative")},
		{"LPOS p c MAXLEN -1", Err("ERR MAXLEN can't be negative")},
		{"LPOS p c BOGUS 1", Err("ERR syntax error")},
		{"LPOS p c RANK", Err("ERR syntax error")},
		{"LPOS nosuch a", nil},
		{"LPOS str a", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"LPOS p c RANK -9223372036854775808", 7},
		{"RPUSH m a b c", 3},
		{"LMOVE m m2 LEFT RIGHT", "a"},
		{"LMOVE m m2 RIGHT LEFT", "c"},
		{"LRANGE m2 0 -1", []any{"c", "a"}},
		{"LMOVE m m LEFT LEFT", "b"},
		{"LMOVE nosuch m2 LEFT LEFT", nil},
		{"LMOVE m m2 UP LEFT", Err("ERR syntax error")},
		{"LMOVE m str LEFT LEFT", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"RPOPLPUSH m2 m", "a"},
		{"RPOPLPUSH nosuch m", nil},
		{"RPOPLPUSH str m", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"RPUSH mp1 a b c", 3},
		{"LMPOP 2 nosuch mp1 LEFT", []any{"mp1", []any{"a"}}},
		{"LMPOP 2 nosuch mp1 RIGHT COUNT 5", []any{"mp1", []any{"c", "b"}}},
		{"LMPOP 1 nosuch LEFT", nil},
		{"LMPOP 0 mp1 LEFT", Err("ERR numkeys should be greater than 0")},
		{"LMPOP 1 mp1 UP", Err("ERR syntax error")},
		{"LMPOP 1 mp1 LEFT COUNT 0", Err("ERR count should be greater than 0")},
		{"LMPOP 1 mp1 LEFT COUNT 1 COUNT 2", Err("ERR syntax error")},
		{"LMPOP 2 mp1 LEFT", Err("ERR syntax error")},
		{"LMPOP x mp1 LEFT", Err("ERR numkeys should be greater than 0")},
		{"LMPOP 1 str LEFT", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"RPUSH bl a b", 2},
		{"BLPOP nosuch bl 0", []any{"bl", "a"}},
		{"BRPOP bl 0", []any{"bl", "b"}},
		{"BLPOP bl -1", Err("ERR timeout is negative")},
		{"BLPOP bl abc", Err("ERR timeout is not a float or out of range")},
		{"BLPOP str 0", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"RPUSH bl x y", 2},
		{"BLMOVE bl bl2 LEFT RIGHT 0", "x"},
		{"BRPOPLPUSH bl bl2 0", "y"},
		{"LRANGE bl2 0 -1", []any{"y", "x"}},
		{"BLMOVE bl bl2 UP RIGHT 0", Err("ERR syntax error")},
		{"BLMPOP 0 2 nosuch bl2 LEFT", []any{"bl2", []any{"y"}}},
		{"BLMPOP 0 1 bl2 RIGHT COUNT 5", []any{"bl2", []any{"x"}}},
		{"BLMPOP -1 1 bl2 LEFT", Err("ERR timeout is negative")},
		{"BLMPOP 0 1 str LEFT", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
	})
	h.Proto(3)
	h.Run([]Case{
		{"LPOP nosuch", nil},
		{"LPOP nosuch 1", nil},
		{"LMPOP 1 nosuch LEFT", nil},
		{"LPOS p nosuch", nil},
		{"RPUSH r3 a", 1},
		{"LMPOP 1 r3 LEFT", []any{"r3", []any{"a"}}},
	})
	h.Proto(2)
}

// TestListsBlockUntilServed: a blocking pop that finds nothing blocks on
// its keys with its timeout; a push then serves it (the key of another
// type or an empty one does not), or its timeout answers a null array.
func TestListsBlockUntilServed(t *testing.T) {
	h := newFamily(t)
	if got := h.do("BLPOP", "q1", "q2", "1.5"); got != "" {
		t.Fatalf("BLPOP of empty lists answered %q at once", got)
	}
	if b := h.cl.Blocked; b == nil || !slices.Equal(b.Keys, []string{"q1", "q2"}) || b.Timeout != 1500*time.Millisecond || b.Read {
		t.Fatalf("BLPOP q1 q2 1.5 blocked %+v, want on q1 q2 for 1.5s", b)
	}
	h.Do("SET", "q1", "v")
	if ok, _ := h.Wake("q1"); ok {
		t.Error("a string served BLPOP")
	}
	h.Do("RPUSH", "q2", "a", "b")
	if ok, got := h.Wake("q2"); !ok || !reflect.DeepEqual(got, []any{"q2", "a"}) {
		t.Errorf("BLPOP served by RPUSH q2 a b: %v %#v", ok, got)
	}
	for _, tc := range []struct {
		cmd  string
		want any
	}{
		{"BRPOP nosuch 0", nil},
		{"BLMOVE nosuch dst LEFT RIGHT 0", nil},
		{"BRPOPLPUSH nosuch dst 0", nil},
		{"BLMPOP 0 1 nosuch LEFT COUNT 2", nil},
		{"BZPOPMIN nosuch 0", nil},
		{"BZMPOP 0 1 nosuch MAX", nil},
	} {
		h.Raw(commandstest.Split(tc.cmd)...)
		if h.cl.Blocked == nil {
			t.Errorf("%s did not block", tc.cmd)
			continue
		}
		if got := h.TimeOut(); got != tc.want {
			t.Errorf("%s timed out: %#v, want %#v", tc.cmd, got, tc.want)
		}
	}
	h.do("BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
	h.Do("RPUSH", "src", "x", "y")
	if ok, got := h.Wake("src"); !ok || got != "y" {
		t.Errorf("BLMOVE served: %v %#v, want y", ok, got)
	}
	h.do("BZPOPMAX", "z", "0")
	h.Do("ZADD", "z", "1", "a", "2", "b")
	if ok, got := h.Wake("z"); !ok || !reflect.DeepEqual(got, []any{"z", "b", "2"}) {
		t.Errorf("BZPOPMAX served: %v %#v", ok, got)
	}
	h.do("BLMPOP", "0", "2", "e1", "e2", "LEFT", "COUNT", "5")
	h.Do("RPUSH", "e2", "1", "2")
	if ok, got := h.Wake("e2"); !ok || !reflect.DeepEqual(got, []any{"e2", []any{"1", "2"}}) {
		t.Errorf("BLMPOP served: %v %#v", ok, got)
	}
	h.do("BZMPOP", "0", "1", "z2", "MIN", "COUNT", "2")
	h.Do("ZADD", "z2", "1", "a")
	if ok, got := h.Wake("z2"); !ok || !reflect.DeepEqual(got, []any{"z2", []any{[]any{"a", "1"}}}) {
		t.Errorf("BZMPOP served: %v %#v", ok, got)
	}
}
