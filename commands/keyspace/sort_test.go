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
	f.cl.inScript = true
	if got := f.do("SORT", "s", "BY", "nosort", "DESC"); got != "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n" {
		t.Errorf("SORT s BY nosort DESC in a script = %q, want the set sorted", got)
	}
	f.cl.inScript, f.cl.restricted = false, true
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
