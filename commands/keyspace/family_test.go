package keyspace

import (
	"slices"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/commands/commandstest"
)

// The family's handlers run here against a real store, with no server,
// no TCP and no redis-server (commandstest): what the server adds (the
// section, MULTI, ACL, tracking) is the server's to test; what a command
// answers is the family's. The expected replies, Redis's error texts
// included, are redis-server 7.0's, but where the docs list a deliberate
// difference.

// Names of the decoded replies, for the tables.
type (
	Err       = commandstest.Err
	Map       = commandstest.Map
	Set       = commandstest.Set
	Unordered = commandstest.Unordered
)

// Case is one command line of a table (commandstest.Split) and its reply,
// decoded (an untyped integer stands for an int64).
type Case struct {
	Cmd  string
	Want any
}

// family runs the keyspace family's commands on one store.
type family struct {
	*commandstest.Harness
	cl *commandstest.Client
}

func newFamily(t *testing.T) *family {
	h := commandstest.New(t)
	h.Serve(Commands()...)
	return &family{Harness: h, cl: h.Client}
}

// Run checks the cases in order.
func (f *family) Run(cases []Case) {
	f.T().Helper()
	for _, c := range cases {
		f.Check(c.Cmd, c.Want)
	}
}

// do runs one command and returns its reply's RESP bytes.
func (f *family) do(args ...string) string { return f.Raw(args...) }

func TestFamilyReplies(t *testing.T) {
	f := newFamily(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"SET", "k", "v"}, "+OK\r\n"},
		{[]string{"GET", "k"}, "$1\r\nv\r\n"},
		{[]string{"SET", "k", "v", "NX", "XX"}, "-ERR syntax error\r\n"},
		{[]string{"INCR", "k"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"HSET", "h", "f", "1"}, ":1\r\n"},
		{[]string{"GET", "h"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{[]string{"HINCRBY", "h", "f", "9223372036854775807"}, "-ERR increment or decrement would overflow\r\n"},
		{[]string{"HRANDFIELD", "h", "-3"}, "*3\r\n$1\r\nf\r\n$1\r\nf\r\n$1\r\nf\r\n"},
		{[]string{"BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "4"}, "*1\r\n$-1\r\n"},
		{[]string{"RPUSH", "l", "a", "b", "c"}, ":3\r\n"},
		{[]string{"LRANGE", "l", "-2", "-1"}, "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"},
		{[]string{"ZADD", "z", "1.5", "m", "inf", "top"}, ":2\r\n"},
		{[]string{"ZRANGE", "z", "0", "-1", "WITHSCORES"}, "*4\r\n$1\r\nm\r\n$3\r\n1.5\r\n$3\r\ntop\r\n$3\r\ninf\r\n"},
		{[]string{"SCAN", "0", "TYPE", "zset"}, "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nz\r\n"},
		{[]string{"OBJECT", "ENCODING", "l"}, "$9\r\nquicklist\r\n"},
	} {
		if got := f.do(tc.args...); got != tc.want {
			t.Errorf("%s = %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// TestFamilyBlocksOutsideTheSectionOnly: a blocking pop that finds nothing
// asks its client to block on its keys, unless it runs inside EXEC or a
// script, where it answers a timeout at once, as Redis does.
func TestFamilyBlocksOutsideTheSectionOnly(t *testing.T) {
	f := newFamily(t)
	if got := f.do("BLPOP", "q1", "q2", "0"); got != "" || f.cl.Blocked == nil || !slices.Equal(f.cl.Blocked.Keys, []string{"q1", "q2"}) {
		t.Errorf("BLPOP of empty lists: reply %q, blocked %+v; want no reply yet, blocked on q1 q2", got, f.cl.Blocked)
	}
	f.cl.Blocked, f.cl.Atomic = nil, true
	if got := f.do("BLPOP", "q1", "0"); got != "*-1\r\n" || f.cl.Blocked != nil {
		t.Errorf("BLPOP inside the section: reply %q, blocked %+v; want a null array at once", got, f.cl.Blocked)
	}
	f.cl.Atomic = false
	f.do("RPUSH", "q1", "x")
	if got := f.do("BLPOP", "q1", "0"); got != "*2\r\n$2\r\nq1\r\n$1\r\nx\r\n" {
		t.Errorf("BLPOP of a list with an element: %q", got)
	}
}

// TestFamilyNoTouchReadsTheSameValue: under CLIENT NO-TOUCH reads take
// the store's path that leaves no trace (no hit, no touch); they read the
// same values.
func TestFamilyNoTouchReadsTheSameValue(t *testing.T) {
	f := newFamily(t)
	f.do("SET", "k", "v")
	f.cl.Untouching = true
	if got := f.do("GET", "k"); got != "$1\r\nv\r\n" {
		t.Errorf("GET under NO-TOUCH = %q", got)
	}
	if got := f.do("MGET", "k", "nosuch"); got != "*2\r\n$1\r\nv\r\n$-1\r\n" {
		t.Errorf("MGET under NO-TOUCH = %q", got)
	}
}
