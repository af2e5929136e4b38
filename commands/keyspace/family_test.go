package keyspace

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// The family's handlers run here against a real store, with no server,
// no TCP and no redis-server: what the server adds (the section, MULTI,
// ACL, tracking) is the server's to test; what a command answers is the
// family's. Replies are compared as the RESP bytes the writer holds.

// client is the family's view of a client in these tests: one that asks
// for nothing the server alone can give.
type client struct {
	noTouch   bool
	inSection bool
	inScript  bool
	// restricted: the user may not read every key (SORT's BY and GET).
	restricted bool
	blocked    [][]byte // the keys Block was last asked to wait on
}

func (cl *client) NoTouch() bool                   { return cl.noTouch }
func (cl *client) MaxBulk() int64                  { return resp.DefaultMaxBulk }
func (cl *client) InSection() bool                 { return cl.inSection }
func (cl *client) Local() bool                     { return true }
func (cl *client) Who() (string, string)           { return "default", "test" }
func (cl *client) WritableKeys() func(string) bool { return nil }
func (cl *client) ReadableKeys() func(string) bool { return nil }
func (cl *client) ReadsAllKeys([][]byte) bool      { return !cl.restricted }
func (cl *client) InScript() bool                  { return cl.inScript }
func (cl *client) Block(keys [][]byte, _ time.Duration, _ func([]byte) bool, _, _ func()) {
	cl.blocked = keys
}
func (cl *client) BlockRead(keys [][]byte, _ time.Duration, _ func([]byte) bool, _, _ func()) {
	cl.blocked = keys
}
func (cl *client) Await(func(context.Context) func()) { panic("the keyspace family never awaits") }
func (cl *client) Defer(fn func())                    { fn() }
func (cl *client) AfterSection(fn func())             { fn() }

// family runs the keyspace family's commands on one store.
type family struct {
	t      *testing.T
	x      commands.Ctx
	cl     *client
	byName map[string]*commands.Spec
}

func newFamily(t *testing.T) *family {
	store, err := engine.New(engine.Options{MaxMemory: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	f := &family{t: t, cl: &client{}, byName: map[string]*commands.Spec{}}
	f.x = commands.Ctx{W: resp.NewWriter(nil, 0), Store: store, Client: f.cl}
	for _, spec := range Commands() {
		f.byName[spec.Name] = spec
		for _, sub := range spec.Subcommands {
			f.byName[sub.Name] = sub
		}
	}
	return f
}

// do runs one command and returns its reply's RESP2 bytes.
func (f *family) do(args ...string) string {
	f.t.Helper()
	name := strings.ToLower(args[0])
	if spec := f.byName[name]; spec != nil && len(spec.Subcommands) > 0 && len(args) > 1 {
		name += "|" + strings.ToLower(args[1])
	}
	spec := f.byName[name]
	if spec == nil {
		f.t.Fatalf("%s is not a command of the family", name)
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	f.x.W.Swap(nil)
	spec.Handler(&f.x, argv)
	return string(f.x.W.Buffered())
}

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
	if got := f.do("BLPOP", "q1", "q2", "0"); got != "" || len(f.cl.blocked) != 2 || string(f.cl.blocked[1]) != "q2" {
		t.Errorf("BLPOP of empty lists: reply %q, blocked on %q; want no reply yet, blocked on q1 q2", got, f.cl.blocked)
	}
	f.cl.blocked, f.cl.inSection = nil, true
	if got := f.do("BLPOP", "q1", "0"); got != "*-1\r\n" || f.cl.blocked != nil {
		t.Errorf("BLPOP inside the section: reply %q, blocked on %q; want a null array at once", got, f.cl.blocked)
	}
	f.cl.inSection = false
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
	f.cl.noTouch = true
	if got := f.do("GET", "k"); got != "$1\r\nv\r\n" {
		t.Errorf("GET under NO-TOUCH = %q", got)
	}
	if got := f.do("MGET", "k", "nosuch"); got != "*2\r\n$1\r\nv\r\n$-1\r\n" {
		t.Errorf("MGET under NO-TOUCH = %q", got)
	}
}
