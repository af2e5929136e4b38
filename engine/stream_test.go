package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// streamModel is a stream as a sorted slice, what the node layout must
// always read as.
type streamModel struct{ ids []StreamID }

func (m *streamModel) rangeOf(start, end StreamID, count int, rev bool) []StreamID {
	var out []StreamID
	for _, id := range m.ids {
		if id.Cmp(start) >= 0 && id.Cmp(end) <= 0 {
			out = append(out, id)
		}
	}
	if rev {
		slices.Reverse(out)
	}
	if count > 0 && len(out) > count {
		out = out[:count]
	}
	return out
}

func streamIDs(st *Stream, start, end StreamID, count int, rev bool) []StreamID {
	var out []StreamID
	st.Range(start, end, count, rev, func(id StreamID, fields [][]byte) bool {
		if string(fields[1]) != id.String() {
			panic(fmt.Sprintf("entry %v holds %q", id, fields[1]))
		}
		out = append(out, id)
		return true
	})
	return out
}

// Random appends, deletions and trims of a stream read, forward and
// back, as a sorted slice of its IDs does, whatever its nodes.
func TestStreamMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, nodeEntries := range []int64{1, 3, 100} {
		st := NewStream()
		st.nodeEntries = nodeEntries
		var m streamModel
		ms := uint64(1)
		for step := range 5000 {
			switch r := rng.IntN(100); {
			case r < 60:
				ms += uint64(rng.IntN(3))
				id, err := st.Add([][]byte{[]byte("v"), nil}, nil, false, ms)
				if err != nil {
					t.Fatal(err)
				}
				// The value is the ID, checked on every read.
				st.Delete([]StreamID{id})
				st.maxDeleted = StreamID{}
				st.entriesAdded--
				st.lastID, _ = id.Prev()
				if st.length == 0 {
					st.firstID = StreamID{}
				}
				if _, err := st.Add([][]byte{[]byte("v"), []byte(id.String())}, &id, true, ms); err != nil {
					t.Fatal(err)
				}
				m.ids = append(m.ids, id)
			case r < 80 && len(m.ids) > 0:
				id := m.ids[rng.IntN(len(m.ids))]
				if st.Delete([]StreamID{id, {Ms: 1 << 40}}) != 1 {
					t.Fatalf("step %d: deleting %v", step, id)
				}
				m.ids = slices.DeleteFunc(m.ids, func(x StreamID) bool { return x == id })
			case r < 85:
				n := uint64(rng.IntN(len(m.ids) + 1))
				removed := st.Trim(Trim{MaxLen: n})
				want := max(len(m.ids)-int(n), 0)
				if removed != int64(want) {
					t.Fatalf("step %d: MAXLEN %d trimmed %d of %d", step, n, removed, len(m.ids))
				}
				m.ids = m.ids[want:]
			case r < 88 && len(m.ids) > 0:
				minID := m.ids[rng.IntN(len(m.ids))]
				st.Trim(Trim{ByID: true, MinID: minID})
				m.ids = slices.DeleteFunc(m.ids, func(x StreamID) bool { return x.Cmp(minID) < 0 })
			default:
				a := StreamID{Ms: uint64(rng.IntN(int(ms) + 2)), Seq: uint64(rng.IntN(3))}
				b := StreamID{Ms: uint64(rng.IntN(int(ms) + 2)), Seq: uint64(rng.IntN(3))}
				count := rng.IntN(5)
				for _, rev := range []bool{false, true} {
					if got, want := streamIDs(st, a, b, count, rev), m.rangeOf(a, b, count, rev); !slices.Equal(got, want) {
						t.Fatalf("step %d: range %v %v count %d rev %v: got %v want %v", step, a, b, count, rev, got, want)
					}
				}
			}
			if st.Len() != uint64(len(m.ids)) {
				t.Fatalf("step %d: length %d, want %d", step, st.Len(), len(m.ids))
			}
			if len(m.ids) > 0 && st.FirstEntryID() != m.ids[0] {
				t.Fatalf("step %d: first %v, want %v", step, st.FirstEntryID(), m.ids[0])
			}
		}
		if got := streamIDs(st, StreamID{}, MaxStreamID, 0, false); !slices.Equal(got, m.ids) {
			t.Fatalf("whole stream differs")
		}
	}
}

// An approximate trim removes whole nodes only, as Redis's does, and the
// nodes are Redis's: 100 entries each.
func TestStreamApproxTrimWholeNodes(t *testing.T) {
	st := NewStream()
	for i := range 250 {
		if _, err := st.Add([][]byte{[]byte("f"), []byte(strconv.Itoa(i))}, nil, false, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if st.Nodes() != 3 {
		t.Fatalf("%d nodes, want 3", st.Nodes())
	}
	if n := st.Trim(Trim{MaxLen: 120, Approx: true}); n != 100 || st.Len() != 150 {
		t.Fatalf("MAXLEN ~ 120 removed %d, left %d; want 100 and 150", n, st.Len())
	}
	if n := st.Trim(Trim{MaxLen: 0, Approx: true, Limit: 50}); n != 0 {
		t.Fatalf("a LIMIT below a node removed %d", n)
	}
}

// Consumer groups: delivery, acknowledgement, claims and the consumer's
// own history, with PELs kept consistent.
func TestStreamGroups(t *testing.T) {
	st := NewStream()
	for i := range 10 {
		st.Add([][]byte{[]byte("f"), []byte("v")}, &StreamID{Ms: 1, Seq: uint64(i + 1)}, true, 0)
	}
	st.CreateGroup([]byte("g"), StreamID{}, 0)
	g := st.Group([]byte("g"))
	var got []StreamID
	st.ReadGroup(g, []byte("a"), 4, false, 100, func(id StreamID, _ [][]byte) { got = append(got, id) })
	st.ReadGroup(g, []byte("b"), 0, false, 100, func(id StreamID, _ [][]byte) { got = append(got, id) })
	if len(got) != 10 || g.Pending() != 10 || g.LastID() != (StreamID{1, 10}) {
		t.Fatalf("read %v, pending %d, last %v", got, g.Pending(), g.LastID())
	}
	if n, _ := g.EntriesRead(); n != 10 {
		t.Fatalf("entries read %d", n)
	}
	if n := st.Ack(g, []StreamID{{1, 1}, {1, 1}, {9, 9}}); n != 1 {
		t.Fatalf("acked %d", n)
	}
	st.Delete([]StreamID{{1, 2}})
	var hist []StreamID
	var gone int
	st.ReadHistory(g, []byte("a"), StreamID{}, 0, 200, func(id StreamID, _ [][]byte, found bool) {
		hist = append(hist, id)
		if !found {
			gone++
		}
	})
	if len(hist) != 3 || gone != 1 {
		t.Fatalf("history %v, %d gone", hist, gone)
	}
	var claimed []StreamID
	st.Claim(g, Claim{Consumer: []byte("c"), MinIdle: 51, IDs: []StreamID{{1, 2}, {1, 3}, {1, 5}}, Delivered: -1, RetryCount: -1}, 250, func(id StreamID, _ [][]byte) {
		claimed = append(claimed, id)
	})
	// 1-2 is gone from the stream and leaves the PEL; 1-3 was delivered
	// again at 200 (history), too recently; 1-5 is b's since 100.
	if !slices.Equal(claimed, []StreamID{{1, 5}}) || g.Pending() != 8 {
		t.Fatalf("claimed %v, pending %d", claimed, g.Pending())
	}
	next, deleted, _ := st.AutoClaim(g, []byte("d"), 0, StreamID{}, 2, true, 300, func(StreamID, [][]byte) {})
	if next != (StreamID{1, 5}) || len(deleted) != 0 {
		t.Fatalf("autoclaim cursor %v, deleted %v", next, deleted)
	}
	if n, ok := st.DelConsumer(g, []byte("d")); !ok || n != 2 || g.Pending() != 6 {
		t.Fatalf("DELCONSUMER: %d %v, pending %d", n, ok, g.Pending())
	}
	d := st.export()
	back, err := newStore(t, Options{}).streamOf(d)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back.export()) != fmt.Sprint(d) {
		t.Fatalf("export and back differ")
	}
}

// A stream's charge follows what it holds and is given back as it
// shrinks.
func TestStreamCharge(t *testing.T) {
	st := NewStream()
	base := st.charge()
	for i := range 1000 {
		st.Add([][]byte{[]byte("field"), []byte(strconv.Itoa(i))}, nil, false, uint64(i+1))
	}
	full := st.charge()
	// An entry holds its offset (4 bytes) and its bytes: its ID's delta
	// (2 to 3), a header byte and its value alone (the field is the
	// master's), 2 to 4 bytes; the nodes add their headers.
	if per := (full - base) / 1000; per < 8 || per > 20 {
		t.Errorf("charged %d bytes an entry", per)
	}
	st.Trim(Trim{MaxLen: 0})
	if st.charge() != base {
		t.Errorf("an emptied stream charged %d, want %d", st.charge(), base)
	}
}

func BenchmarkStreamAdd(b *testing.B) {
	st := NewStream()
	fields := [][]byte{[]byte("name"), []byte("value"), []byte("n"), []byte("12345")}
	for i := range b.N {
		st.Add(fields, nil, false, uint64(i/8))
	}
}
