package keyspace

import "testing"

// TestFamilySort covers what the comparison with redis-server cannot
// assert: weights strtod reads exactly as a subnormal (Redis can fail
// them on an ERANGE left in errno by an earlier call), the client's facts
// SORT asks for: a user who may not read every key, a script's call.
func TestFamilySort(t *testing.T) {
	f := newFamily(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"RPUSH", "sub", "0x1p-1070", "1"}, ":2\r\n"},
		{[]string{"SORT", "sub"}, "*2\r\n$9\r\n0x1p-1070\r\n$1\r\n1\r\n"},
		{[]string{"RPUSH", "inexact", "4.9e-324"}, ":1\r\n"},
		{[]string{"SORT", "inexact"}, "-ERR One or more scores can't be converted into double\r\n"},
		{[]string{"RPUSH", "l", "b", "a"}, ":2\r\n"},
		{[]string{"SET", "w_a", "2"}, "+OK\r\n"},
		{[]string{"SET", "w_b", "1"}, "+OK\r\n"},
		{[]string{"SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*"}, "*4\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n2\r\n"},
		{[]string{"SADD", "s", "b", "c", "a"}, ":3\r\n"},
		{[]string{"SORT", "s", "BY", "nosort"}, "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n"},
	} {
		if got := f.do(tc.args...); got != tc.want {
			t.Errorf("%q = %q, want %q", tc.args, got, tc.want)
		}
	}
	f.cl.Scripted = true
	if got := f.do("SORT", "s", "BY", "nosort", "DESC"); got != "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n" {
		t.Errorf("SORT s BY nosort DESC in a script = %q, want the set sorted", got)
	}
	f.cl.Scripted, f.cl.Restricted = false, true
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"SORT", "l", "BY", "w_*"}, "-ERR BY option of SORT denied due to insufficient ACL permissions.\r\n"},
		{[]string{"SORT_RO", "l", "GET", "#"}, "-ERR GET option of SORT denied due to insufficient ACL permissions.\r\n"},
		{[]string{"SORT", "l", "BY", "nosort", "ALPHA"}, "*2\r\n$1\r\nb\r\n$1\r\na\r\n"},
		{[]string{"SORT", "l", "ALPHA"}, "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
	} {
		if got := f.do(tc.args...); got != tc.want {
			t.Errorf("%q for a user who may not read every key = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestSortReplies: SORT's options, BY and GET patterns (keys and hash fields),
// STORE and SORT_RO, as redis-server 7.0 answers them.
func TestSortReplies(t *testing.T) {
	h := newFamily(t)
	h.Run([]Case{
		{"SET str v", "OK"},
		{"RPUSH l 3 1 2", 3},
		{"SORT l", []any{"1", "2", "3"}},
		{"SORT l DESC", []any{"3", "2", "1"}},
		{"SORT l LIMIT 1 1", []any{"2"}},
		{"SORT l LIMIT 0 -1", []any{"1", "2", "3"}},
		{"SORT l LIMIT x 1", Err("ERR value is not an integer or out of range")},
		{"SORT l ALPHA", []any{"1", "2", "3"}},
		{"RPUSH la b a c", 3},
		{"SORT la", Err("ERR One or more scores can't be converted into double")},
		{"SORT la ALPHA DESC", []any{"c", "b", "a"}},
		{"SORT l STORE dst", 3},
		{"LRANGE dst 0 -1", []any{"1", "2", "3"}},
		{"SORT nosuch", []any{}},
		{"SORT nosuch STORE dst2", 0},
		{"EXISTS dst2", 0},
		{"SORT str", Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
		{"SORT l BOGUS", Err("ERR syntax error")},
		{"SORT l BY", Err("ERR syntax error")},
		{"MSET o_1 c o_2 b o_3 a", "OK"},
		{"SORT l BY o_* ALPHA", []any{"3", "2", "1"}},
		{"SORT l BY o_* ALPHA GET # GET o_*", []any{"3", "a", "2", "b", "1", "c"}},
		{"SORT l BY nosort GET nosuch_*", []any{nil, nil, nil}},
		{"HSET ho_1 f 30", 1},
		{"HSET ho_2 f 20", 1},
		{"HSET ho_3 f 10", 1},
		{"SORT l BY ho_*->f", []any{"3", "2", "1"}},
		{"SORT l BY ho_*->f GET ho_*->f", []any{"10", "20", "30"}},
		{"SORT_RO l DESC", []any{"3", "2", "1"}},
		{"SORT_RO l STORE x", Err("ERR syntax error")},
		{"SADD st 3 1 2", 3},
		{"SORT st", []any{"1", "2", "3"}},
		{"ZADD zs 3 a 1 b 2 c", 3},
		{"SORT zs ALPHA", []any{"a", "b", "c"}},
		{"SORT zs BY nosort", []any{"b", "c", "a"}},
		{"SORT zs BY nosort DESC LIMIT 0 2", []any{"a", "c"}},
		{"SORT zs BY nosort LIMIT 1 1", []any{"c"}},
	})
}
