package tracking

import (
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// conn is a connection as a test gives it to the table: what is pushed
// on it is encoded in its protocol, as the server's outbox would hold it.
type conn struct {
	id         int64
	proto      int
	subscribed bool
	gone       bool
	track      Tracker
	out        []string
}

func (c *conn) ID() int64                          { return c.id }
func (c *conn) Tracker() *Tracker                  { return &c.track }
func (c *conn) Gone() bool                         { return c.gone }
func (c *conn) Protocol() int                      { return c.proto }
func (c *conn) Subscribed() bool                   { return c.subscribed }
func (c *conn) PushOut(fn func(*resp.Writer)) bool { return c.Push(fn) }
func (c *conn) Push(fn func(*resp.Writer)) bool {
	w := resp.Buffer(nil, c.proto)
	fn(w)
	c.out = append(c.out, strings.ReplaceAll(string(w.Buffered()), "\r\n", " "))
	return true
}

func (c *conn) take() []string {
	out := c.out
	c.out = nil
	return out
}

func newTable(t *testing.T) (*Table, *[Reasons]int) {
	t.Helper()
	var tr Table
	var sent [Reasons]int
	tr.Init(func(int) {}, func(r int) { sent[r]++ })
	return &tr, &sent
}

// TestListen: the store's changes matter while one client tracks; one
// that turns tracking off leaves its keys, and the last one empties the
// table.
func TestListen(t *testing.T) {
	var tr Table
	listening := 0
	tr.Init(func(d int) { listening += d }, func(int) {})
	a, b := &conn{id: 1, proto: 3}, &conn{id: 2, proto: 3}
	tr.Enable(a, Options{})
	tr.Enable(a, Options{})
	tr.Enable(b, Options{})
	tr.Before(a, [][]byte{[]byte("k")}, nil, true, false, false)()
	if listening != 1 || !a.track.Tracked() {
		t.Fatalf("listening %d, tracked %v; want 1, true", listening, a.track.Tracked())
	}
	tr.Disable(a)
	if clients, keys, _, _ := tr.Stats(); listening != 1 || clients != 1 || keys != 1 || a.track.Tracked() {
		t.Fatalf("after one off: listening %d, clients %d, keys %d", listening, clients, keys)
	}
	tr.Disable(b)
	tr.Disable(b)
	if _, keys, _, _ := tr.Stats(); listening != 0 || keys != 0 {
		t.Fatalf("after the last off: listening %d, keys %d; want 0 0", listening, keys)
	}
}

func change(kind engine.ChangeKind, key string) engine.Change {
	return engine.Change{Kind: kind, Key: []byte(key)}
}

// TestInvalidations: what a reader is told of a change, by mode and
// protocol, as Redis 7.0's tracking tells it.
func TestInvalidations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		proto int
		opts  Options
		read  []string // keys the reader reads, remembered
		ch    engine.Change
		want  []string
	}{
		{"resp3 read then written", 3, Options{}, []string{"k"}, change(engine.Written, "k"),
			[]string{">2 $10 invalidate *1 $1 k "}},
		{"not read", 3, Options{}, []string{"k"}, change(engine.Written, "other"), nil},
		{"flush", 3, Options{}, nil, change(engine.Flushed, ""), []string{">2 $10 invalidate _ "}},
		{"resp2 without redirect", 2, Options{}, []string{"k"}, change(engine.Written, "k"), nil},
		{"bcast prefix", 3, Options{BCAST: true, Prefixes: [][]byte{[]byte("a:")}}, nil, change(engine.Expired, "a:1"),
			[]string{">2 $10 invalidate *1 $3 a:1 "}},
		{"bcast other prefix", 3, Options{BCAST: true, Prefixes: [][]byte{[]byte("a:")}}, nil, change(engine.Written, "b:1"), nil},
		{"swapdb", 3, Options{}, []string{"k"}, change(engine.Swapped, "k"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := newTable(t)
			c := &conn{id: 1, proto: tc.proto}
			tr.Enable(c, tc.opts)
			if len(tc.read) > 0 {
				var keys [][]byte
				for _, k := range tc.read {
					keys = append(keys, []byte(k))
				}
				tr.Before(c, keys, nil, true, false, false)()
				tr.Release(c)
			}
			tr.Changed(tc.ch)
			if got := c.take(); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("pushed %q, want %q", got, tc.want)
			}
		})
	}
}

// TestInFlightWaits: an invalidation of a key whose command's reply is not
// yet queued waits for Release.
func TestInFlightWaits(t *testing.T) {
	tr, sent := newTable(t)
	c := &conn{id: 1, proto: 3}
	tr.Enable(c, Options{})
	after := tr.Before(c, [][]byte{[]byte("k")}, nil, true, false, false)
	tr.Changed(change(engine.Written, "k"))
	after()
	if got := c.take(); len(got) != 0 {
		t.Fatalf("pushed before the reply: %q", got)
	}
	tr.Release(c)
	if got := c.take(); len(got) != 1 {
		t.Fatalf("after Release: %q, want one invalidation", got)
	}
	if sent[invWrite] != 1 {
		t.Errorf("write invalidations counted %d, want 1", sent[invWrite])
	}
}

// TestRedirect: a RESP2 subscriber target gets the message on
// __redis__:invalidate; a closed target breaks the redirect, which a RESP3
// client is told.
func TestRedirect(t *testing.T) {
	tr, _ := newTable(t)
	target := &conn{id: 2, proto: 2, subscribed: true}
	c := &conn{id: 1, proto: 3}
	tr.Enable(c, Options{RedirTo: target})
	tr.Before(c, [][]byte{[]byte("k")}, nil, true, false, false)()
	tr.Release(c)
	tr.Changed(change(engine.Written, "k"))
	if got := target.take(); len(got) != 1 || got[0] != "*3 $7 message $20 __redis__:invalidate *1 $1 k " {
		t.Fatalf("target got %q", got)
	}
	target.gone = true
	tr.Changed(change(engine.Flushed, ""))
	if got := c.take(); len(got) != 1 || got[0] != ">2 $21 tracking-redir-broken :2 " {
		t.Fatalf("client got %q", got)
	}
	if !c.track.Info().Broken {
		t.Error("redirect not marked broken")
	}
}

// TestBCASTBatch: the keys a command changes under a prefix are one
// message once it has run, sorted; a NOLOOP owner is not told of its own.
func TestBCASTBatch(t *testing.T) {
	for _, noloop := range []bool{false, true} {
		tr, _ := newTable(t)
		c := &conn{id: 1, proto: 3}
		tr.Enable(c, Options{BCAST: true, NoLoop: noloop})
		keys := [][]byte{[]byte("b"), []byte("a")}
		after := tr.Before(c, keys, nil, false, true, false)
		tr.Changed(change(engine.Written, "b"))
		tr.Changed(change(engine.Written, "a"))
		if got := c.take(); len(got) != 0 {
			t.Fatalf("noloop %v: pushed inside the command: %q", noloop, got)
		}
		after()
		tr.Release(c)
		want := []string{">2 $10 invalidate *2 $1 a $1 b "}
		if noloop {
			want = nil
		}
		if got := c.take(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("noloop %v: pushed %q, want %q", noloop, got, want)
		}
	}
}

// TestMaxKeys: a full table drops keys, invalidating them for their
// readers.
func TestMaxKeys(t *testing.T) {
	tr, sent := newTable(t)
	c := &conn{id: 1, proto: 3}
	tr.Enable(c, Options{})
	tr.Before(c, [][]byte{[]byte("a"), []byte("b"), []byte("c")}, nil, true, false, false)()
	tr.Release(c)
	if _, keys, items, _ := tr.Stats(); keys != 3 || items != 3 {
		t.Fatalf("keys %d items %d, want 3 3", keys, items)
	}
	tr.SetMaxKeys(1)
	if _, keys, _, _ := tr.Stats(); keys != 1 {
		t.Errorf("keys %d after max 1, want 1", keys)
	}
	if len(c.take()) != 2 || sent[invTableFull] != 2 {
		t.Errorf("table_full invalidations %d, want 2", sent[invTableFull])
	}
}

// TestCheckOn: CLIENT TRACKING ON's refusals, with Redis's texts.
func TestCheckOn(t *testing.T) {
	on := &conn{id: 1, proto: 3}
	var tr Table
	tr.Init(func(int) {}, func(int) {})
	tr.Enable(on, Options{BCAST: true, Prefixes: [][]byte{[]byte("ab")}})
	for _, tc := range []struct {
		c    *conn
		o    Options
		want string
	}{
		{&conn{}, Options{Prefixes: [][]byte{[]byte("a")}}, "ERR PREFIX option requires BCAST mode to be enabled"},
		{&conn{}, Options{BCAST: true, OptIn: true}, "ERR OPTIN and OPTOUT are not compatible with BCAST"},
		{&conn{}, Options{OptIn: true, OptOut: true}, "ERR You can't specify both OPTIN mode and OPTOUT mode"},
		{&conn{}, Options{BCAST: true, Prefixes: [][]byte{[]byte("a"), []byte("ab")}}, "ERR Prefix 'a' overlaps with another provided prefix 'ab'. Prefixes for a single client must not overlap."},
		{on, Options{BCAST: true, Prefixes: [][]byte{[]byte("abc")}}, "ERR Prefix 'abc' overlaps with an existing prefix 'ab'. Prefixes for a single client must not overlap."},
		{on, Options{}, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."},
		{on, Options{BCAST: true, Prefixes: [][]byte{[]byte("b")}}, ""},
	} {
		if got := tc.c.track.CheckOn(tc.o); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
	}
}
