package engine

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// portableStreams are streams of every shape the portable form must
// carry, each built by the operations the commands use.
func portableStreams(t *testing.T) []struct {
	name    string
	st      *Stream
	shrunk  bool // entries were deleted or trimmed: their bytes are not carried
	nodeMin int  // the least number of nodes it must have, to show the layout is kept
} {
	t.Helper()
	f := func(kv ...string) [][]byte {
		out := make([][]byte, len(kv))
		for i, s := range kv {
			out[i] = []byte(s)
		}
		return out
	}
	add := func(st *Stream, fields [][]byte, ms uint64) StreamID {
		t.Helper()
		id, err := st.Add(fields, nil, false, ms)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	group := func(st *Stream, name string, id StreamID, read int64) *StreamGroup {
		t.Helper()
		if !st.CreateGroup([]byte(name), id, read) {
			t.Fatalf("group %s exists", name)
		}
		return st.Group([]byte(name))
	}

	// XGROUP CREATE ... MKSTREAM: no entries, groups, a consumer.
	empty := NewStream()
	g := group(empty, "workers", StreamID{}, 0)
	group(empty, "audit", StreamID{5, 5}, -1)
	empty.CreateConsumer(g, []byte("idle"), 1234)

	// Entries of the same fields and of others, over several nodes.
	mixed := NewStream()
	for i := range 250 {
		if i%7 == 0 {
			add(mixed, f("other", strconv.Itoa(i), "third", ""), uint64(1000+i))
		} else {
			add(mixed, f("temp", strconv.Itoa(i), "unit", "C"), uint64(1000+i/3))
		}
	}

	// XDEL of the first entry, of a whole node's and of scattered ones,
	// and a partial exact trim: the nodes keep their deleted entries'
	// count, and max deleted ID is set.
	deleted := NewStream()
	var ids []StreamID
	for i := range 400 {
		ids = append(ids, add(deleted, f("n", strconv.Itoa(i)), uint64(1+i)))
	}
	deleted.Delete(ids[:1])
	deleted.Delete(ids[100:200])
	deleted.Delete([]StreamID{ids[250], ids[333], ids[399]})
	deleted.Trim(Trim{MaxLen: 280})
	g = group(deleted, "g", StreamID{}, 0)
	deleted.ReadGroup(g, []byte("alice"), 10, false, 500, func(StreamID, [][]byte) {})
	deleted.ReadGroup(g, []byte("bob"), 5, false, 600, func(StreamID, [][]byte) {})
	deleted.Ack(g, []StreamID{ids[205]})

	// Entries of a few to a hundred kilobytes, each past a node's bytes.
	big := NewStream()
	for i, n := range []int{3000, 10_000, 100_000, 1, 70_000} {
		add(big, [][]byte{[]byte("blob"), bytes.Repeat([]byte{byte('a' + i)}, n), []byte("i"), []byte(strconv.Itoa(i))}, uint64(7+i))
	}

	// Groups with PELs shared by their consumers: reads, acks, claims,
	// a consumer with nothing pending, read counters known and not.
	groups := NewStream()
	for i := range 150 {
		add(groups, f("job", strconv.Itoa(i)), uint64(10_000+i))
	}
	g1 := group(groups, "g1", StreamID{}, 0)
	groups.ReadGroup(g1, []byte("a"), 60, false, 20_000, func(StreamID, [][]byte) {})
	groups.ReadGroup(g1, []byte("b"), 70, false, 20_100, func(StreamID, [][]byte) {})
	groups.ReadGroup(g1, []byte("c"), 0, true, 20_200, func(StreamID, [][]byte) {})
	groups.Claim(g1, Claim{Consumer: []byte("c"), IDs: []StreamID{{10_001, 0}, {10_100, 0}}, Delivered: -1, RetryCount: -1}, 30_000, func(StreamID, [][]byte) {})
	groups.Ack(g1, []StreamID{{10_002, 0}, {10_003, 0}})
	g2 := group(groups, "g0", StreamID{10_050, 0}, -1)
	groups.ReadGroup(g2, []byte("z"), 3, false, 40_000, func(StreamID, [][]byte) {})
	groups.CreateConsumer(g2, []byte("nobody"), 41_000)

	// Every entry deleted: no node left, the counters kept.
	drained := NewStream()
	for i := range 30 {
		add(drained, f("x", "y"), uint64(50+i))
	}
	drained.Trim(Trim{MaxLen: 0})

	// Nodes cut at 5 entries, then at 100: the layout is what the
	// writes made, not what the limits give now.
	limits := NewStream()
	limits.nodeEntries = 5
	for i := range 23 {
		add(limits, f("a", strconv.Itoa(i)), 9)
	}
	limits.nodeEntries = 100
	for i := range 30 {
		add(limits, f("a", strconv.Itoa(i)), 9)
	}

	// IDs at the ends of their range, and binary fields.
	edges := NewStream()
	for _, id := range []StreamID{{0, 1}, {0, math.MaxUint64}, {1, 0}, {math.MaxUint64, math.MaxUint64 - 1}} {
		if _, err := edges.Add([][]byte{{0, 1, 2}, {}, []byte("\r\n"), []byte("-12345678901234567890")}, &id, true, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := edges.SetID(MaxStreamID, math.MaxInt64, StreamID{math.MaxUint64, 3}); err != nil {
		t.Fatal(err)
	}

	return []struct {
		name    string
		st      *Stream
		shrunk  bool
		nodeMin int
	}{
		{"empty with groups", empty, false, 0},
		{"mixed fields", mixed, false, 3},
		{"deleted and trimmed", deleted, true, 3},
		{"big entries", big, false, 4},
		{"groups", groups, false, 2},
		{"drained", drained, true, 0},
		{"node limits changed", limits, false, 5},
		{"edge IDs", edges, false, 1},
	}
}

// streamLayout describes st's nodes: what decides where its next node
// starts and what its approximate trims remove.
func streamLayout(st *Stream) string {
	var b strings.Builder
	for _, n := range st.nodes {
		fmt.Fprintf(&b, "[total %d lp %d fields %q live %d]", n.total, n.lp, n.fields, n.len())
	}
	return b.String()
}

// TestStreamPortableRoundTrip: a stream's portable form gives back an
// equal stream (entries, IDs and counters, groups with their PELs and
// consumers, the node layout), which exports to the same bytes and is
// charged as the appends that made it; in a store, Set with TypeStream
// holds it and charges the key as the original's.
func TestStreamPortableRoundTrip(t *testing.T) {
	s, _ := newClockStore(t)
	// Another store's limits must not lay the imported stream out again.
	s.SetStreamNodeLimits(2, 64)
	for _, tc := range portableStreams(t) {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.st.nodes) < tc.nodeMin {
				t.Fatalf("the stream has %d nodes, want at least %d", len(tc.st.nodes), tc.nodeMin)
			}
			form := exportCollection(TypeStream, collection{obj: tc.st, charge: tc.st.charge()})
			c, ok := importCollection(TypeStream, form)
			if !ok {
				t.Fatal("its own portable form was refused")
			}
			back := c.obj.(*Stream)
			if got, want := fmt.Sprint(back.export()), fmt.Sprint(tc.st.export()); got != want {
				t.Fatalf("imported stream differs:\n got %s\nwant %s", got, want)
			}
			if got, want := streamLayout(back), streamLayout(tc.st); got != want {
				t.Fatalf("imported layout differs:\n got %s\nwant %s", got, want)
			}
			if again := exportStream(c); !bytes.Equal(again, form) {
				t.Fatal("the imported stream exports to other bytes")
			}
			if c.charge != back.charge() {
				t.Fatalf("charged %d, its stream says %d", c.charge, back.charge())
			}
			switch {
			case !tc.shrunk && c.charge != tc.st.charge():
				t.Fatalf("charged %d, the stream written %d", c.charge, tc.st.charge())
			case tc.shrunk && c.charge > tc.st.charge():
				t.Fatalf("charged %d, more than the stream written (%d)", c.charge, tc.st.charge())
			}
			// Each consumer's PEL is its share of the group's.
			for _, g := range back.groups {
				n := 0
				for _, sc := range g.consumers {
					sc.pel.each(StreamID{}, func(p *pending) bool {
						if g.pel.find(p.id) != p || p.consumer != sc {
							t.Fatalf("group %s: %v in %s's PEL is not the group's", g.name, p.id, sc.name)
						}
						n++
						return true
					})
				}
				if n != g.pel.n {
					t.Fatalf("group %s: %d pending, its consumers own %d", g.name, g.pel.n, n)
				}
			}

			key := []byte("copy:" + tc.name)
			if _, err := s.Set(key, form, SetOptions{Type: TypeStream}); err != nil {
				t.Fatal(err)
			}
			env, found := s.Export(key)
			if !found || env.Type != TypeStream || !bytes.Equal(env.Value, form) {
				t.Fatalf("Export after Set: %v %v, same form %v", found, env.Type, bytes.Equal(env.Value, form))
			}
			if enc, _ := s.Encoding(key); enc != "stream" {
				t.Fatalf("OBJECT ENCODING %q", enc)
			}
			cost, _ := s.Cost(key)
			if want := entryCost(len(key), int(c.charge)); cost != want {
				t.Fatalf("the key costs %d, want %d", cost, want)
			}
		})
	}
}

// TestStreamPortableImportWrites: a stream taken from its portable form
// is written as one the store made: XADD starts nodes where the writer's
// would, trims remove what the writer's would, XREADGROUP and XACK keep
// the PELs, and the store's accounting follows.
func TestStreamPortableImportWrites(t *testing.T) {
	s, _ := newClockStore(t)
	s.SetStreamNodeLimits(10, 0)
	orig := []byte("orig")
	err := s.StreamOp([][]byte{orig}, true, func(tx *StreamTx) error {
		st := tx.Create(orig)
		for i := range 35 {
			if _, err := st.Add([][]byte{[]byte("f"), []byte(strconv.Itoa(i))}, nil, false, uint64(100+i)); err != nil {
				return err
			}
		}
		st.Delete([]StreamID{{103, 0}, {104, 0}, {133, 0}})
		st.CreateGroup([]byte("g"), StreamID{}, 0)
		st.ReadGroup(st.Group([]byte("g")), []byte("c"), 5, false, tx.NowMs(), func(StreamID, [][]byte) {})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	env, _ := s.Export(orig)
	cp := []byte("copy")
	if _, err := s.Set(cp, env.Value, SetOptions{Type: TypeStream}); err != nil {
		t.Fatal(err)
	}
	// The same commands on both: the results must be the same.
	results := map[string]string{}
	for _, key := range [][]byte{orig, cp} {
		var out []string
		err := s.StreamOp([][]byte{key}, true, func(tx *StreamTx) error {
			st, err := tx.Stream(key, false)
			if err != nil || st == nil {
				return fmt.Errorf("stream %s: %v", key, err)
			}
			for i := range 8 {
				id, err := st.Add([][]byte{[]byte("f"), []byte("more")}, nil, false, uint64(200+i))
				if err != nil {
					return err
				}
				out = append(out, id.String())
			}
			out = append(out, fmt.Sprint("nodes ", st.Nodes()))
			out = append(out, fmt.Sprint("approx trim ", st.Trim(Trim{MaxLen: 20, Approx: true})))
			g := st.Group([]byte("g"))
			st.ReadGroup(g, []byte("d"), 3, false, tx.NowMs(), func(id StreamID, _ [][]byte) { out = append(out, "read "+id.String()) })
			out = append(out, fmt.Sprint("acked ", st.Ack(g, []StreamID{{100, 0}, {101, 0}, {105, 0}})))
			g.EachPending(0, func(p PendingEntry) { out = append(out, fmt.Sprint("pending ", p.ID, " ", p.Consumer)) })
			out = append(out, fmt.Sprint(st.export(), streamLayout(st)))
			tx.Changed(key)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		results[string(key)] = strings.Join(out, "\n")
	}
	if results["orig"] != results["copy"] {
		t.Fatalf("the same writes differ:\norig:\n%s\ncopy:\n%s", results["orig"], results["copy"])
	}
	a, _ := s.Export(orig)
	b, _ := s.Export(cp)
	if !bytes.Equal(a.Value, b.Value) {
		t.Fatal("after the same writes the two export differently")
	}
}

// TestStreamPortableRefused: a form cut short, grown, of another format
// or describing no stream the store can hold is refused, and no change of
// a byte makes the import panic or accept what it cannot export back.
func TestStreamPortableRefused(t *testing.T) {
	var groups *Stream
	for _, tc := range portableStreams(t) {
		if tc.name == "groups" {
			groups = tc.st
		}
	}
	form := exportStream(collection{obj: groups})
	for n := range len(form) {
		if _, ok := importStream(form[:n]); ok {
			t.Fatalf("a form cut to %d of %d bytes was imported", n, len(form))
		}
	}
	if _, ok := importStream(append(bytes.Clone(form), 0)); ok {
		t.Fatal("a form with a byte more was imported")
	}
	other := bytes.Clone(form)
	other[0] = streamFormatV1 + 1
	if _, ok := importStream(other); ok {
		t.Fatal("a form of another format was imported")
	}

	bad := map[string]func(*Stream){
		"entries out of order":           func(st *Stream) { st.nodes[0], st.nodes[1] = st.nodes[1], st.nodes[0] },
		"last ID below the last entry":   func(st *Stream) { st.lastID = StreamID{1, 0} },
		"more live entries than added":   func(st *Stream) { st.nodes[0].total = 1 },
		"two groups of one name":         func(st *Stream) { st.groups = append(st.groups, st.groups[0]) },
		"two consumers of one name":      func(st *Stream) { g := st.groups[1]; g.consumers = append(g.consumers, g.consumers[0]) },
		"a pending entry of no consumer": func(st *Stream) { st.groups[1].pel.first().consumer = nil },
		"pending entries out of order":   func(st *Stream) { c := st.groups[1].pel.chunks; c[0], c[1] = c[1], c[0] },
		"an entry at the ID of the first": func(st *Stream) {
			n := st.nodes[0]
			first := n.id(0)
			again := &streamNode{total: n.total, lp: n.lp, fields: n.fields}
			for i := range n.len() {
				id := n.id(i)
				if i == 1 {
					id = first
				}
				again.add(id, n.entry(nil, i))
			}
			st.nodes[0] = again
		},
	}
	// A node cannot hold an odd count of fields, nor lack the master
	// entry's: those forms are made by hand, from a node whose master
	// field is "master" and whose second entry's fields are not the
	// master's.
	handMade := func() []byte {
		st := NewStream()
		st.Add([][]byte{[]byte("master"), []byte("1")}, nil, false, 1)
		st.Add([][]byte{[]byte("odd-field-x"), []byte("v1"), []byte("odd-field-y"), []byte("v2")}, nil, false, 2)
		return exportStream(collection{obj: st})
	}
	spoilForm := map[string]func(b []byte) []byte{
		"an odd count of fields": func(b []byte) []byte {
			at, last := bytes.Index(b, []byte("\x04\x0bodd-field-x")), bytes.Index(b, []byte("\x02v2"))
			b[at] = 3
			return append(b[:last], b[last+3:]...)
		},
		"a node without fields": func(b []byte) []byte {
			at := bytes.Index(b, []byte("\x01\x06master"))
			return append(append(b[:at:at], 0), b[at+8:]...)
		},
	}
	for name, spoil := range spoilForm {
		if _, ok := importStream(handMade()); !ok {
			t.Fatal("the hand-made form is refused unspoiled")
		}
		if _, ok := importStream(spoil(handMade())); ok {
			t.Errorf("a form with %s was imported", name)
		}
	}
	for name, spoil := range bad {
		st := groups.clone().(*Stream)
		spoil(st)
		if _, ok := importStream(exportStream(collection{obj: st})); ok {
			t.Errorf("a form with %s was imported", name)
		}
	}

	for i := range form {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			b := bytes.Clone(form)
			b[i] ^= x
			c, ok := importStream(b)
			if !ok {
				continue
			}
			again := exportStream(c)
			if c2, ok := importStream(again); !ok || !bytes.Equal(exportStream(c2), again) {
				t.Fatalf("byte %d ^ %#x: imported, but its export does not import back the same", i, x)
			}
		}
	}
}
