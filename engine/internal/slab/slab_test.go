package slab

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// put allocates a block holding payload.
func put(t testing.TB, a *Arena, payload []byte) Loc {
	t.Helper()
	loc, err := a.Alloc(len(payload), func(b []byte) { copy(b, payload) })
	if err != nil {
		t.Fatalf("Alloc(%d): %v", len(payload), err)
	}
	return loc
}

func TestArenaBlocksReadBack(t *testing.T) {
	var a Arena
	defer a.Reset()
	r := rand.New(rand.NewPCG(1, 1))
	want := map[Loc][]byte{}
	for i := range 5000 {
		n := r.IntN(600)
		if i%500 == 0 {
			n = MaxSmall + r.IntN(3*SegmentSize) // a mapping of its own
		}
		p := make([]byte, n)
		for j := range p {
			p[j] = byte(i + j)
		}
		want[put(t, &a, p)] = p
	}
	var live int64
	for loc, p := range want {
		if got := a.Block(loc); !bytes.Equal(got, p) {
			t.Fatalf("Block(%#x): %d bytes, want the %d written", loc, len(got), len(p))
		}
		if got := a.Block(loc); cap(got) != len(got) {
			t.Fatalf("Block(%#x) has room past its end (cap %d, len %d): an append would overwrite the next block", loc, cap(got), len(got))
		}
		live += int64(len(p)) + headerSize
	}
	if a.Live() != live {
		t.Errorf("Live() = %d, want %d", a.Live(), live)
	}
	for loc := range want {
		a.Free(loc)
	}
	if a.Live() != 0 {
		t.Errorf("Live() = %d after freeing everything", a.Live())
	}
	// Only the head segment, still taking blocks, stays mapped.
	if a.Mapped() > SegmentSize {
		t.Errorf("Mapped() = %d after freeing everything, want at most one segment", a.Mapped())
	}
}

func TestArenaEmptyZeroLength(t *testing.T) {
	var a Arena
	defer a.Reset()
	loc := put(t, &a, nil)
	if loc == 0 {
		t.Fatal("Alloc returned the zero Loc")
	}
	if b := a.Block(loc); len(b) != 0 {
		t.Fatalf("Block of an empty payload = %d bytes", len(b))
	}
}

// TestArenaReusesFreedSpace: blocks freed under churn never make the arena
// grow past what is live plus the space compaction leaves, and a segment
// whose blocks all die is reused.
func TestArenaReusesFreedSpace(t *testing.T) {
	var a Arena
	defer a.Reset()
	r := rand.New(rand.NewPCG(2, 2))
	var live []Loc
	const keep = 20000
	for i := range 400000 {
		live = append(live, put(t, &a, make([]byte, 20+r.IntN(200))))
		if len(live) > keep {
			j := r.IntN(len(live))
			a.Free(live[j])
			live[j] = live[len(live)-1]
			live = live[:len(live)-1]
		}
		if i%1000 == 0 {
			live = compactAll(&a, live, SegmentSize/2)
		}
	}
	live = compactAll(&a, live, SegmentSize/2)
	// Every segment but the head is at least half live after compaction.
	if limit := 2*a.Live() + 2*SegmentSize; a.Mapped() > limit {
		t.Errorf("Mapped() = %d with %d live bytes: freed space is not reused", a.Mapped(), a.Live())
	}
	if a.Slack() < 0 || a.Slack() > a.Mapped() {
		t.Errorf("Slack() = %d, Mapped() = %d", a.Slack(), a.Mapped())
	}
}

// compactAll compacts every segment at most maxLive live, as the engine
// does: blocks still in live move, the others are skipped. It returns live
// with the moved locations.
func compactAll(a *Arena, live []Loc, maxLive int) []Loc {
	where := make(map[Loc]int, len(live))
	for i, l := range live {
		where[l] = i
	}
	for {
		id := a.Pick(maxLive)
		if id == 0 {
			return live
		}
		a.Walk(id, func(loc Loc, p []byte) {
			i, ok := where[loc]
			if !ok {
				return
			}
			moved := move(a, loc, p)
			live[i] = moved
			delete(where, loc)
			where[moved] = i
		})
		a.Unpin(id)
	}
}

// move copies the block at loc, payload p, to a new block and frees it, as
// compaction does.
func move(a *Arena, loc Loc, p []byte) Loc {
	moved, err := a.Alloc(len(p), func(b []byte) { copy(b, p) })
	if err != nil {
		panic(err)
	}
	a.Free(loc)
	return moved
}

func TestArenaCompactionKeepsContents(t *testing.T) {
	var a Arena
	defer a.Reset()
	var locs []Loc
	payload := func(i int) []byte { return fmt.Appendf(nil, "block %d %s", i, bytes.Repeat([]byte{'x'}, i%300)) }
	for i := range 30000 {
		locs = append(locs, put(t, &a, payload(i)))
	}
	// Free two in three, then compact: the third left must read the same.
	kept := map[int]bool{}
	var live []Loc
	for i, l := range locs {
		if i%3 == 0 {
			kept[i] = true
			live = append(live, l)
		} else {
			a.Free(l)
		}
	}
	before := a.Mapped()
	live = compactAll(&a, live, SegmentSize/2)
	if a.Mapped() >= before {
		t.Errorf("compaction left Mapped() at %d (was %d)", a.Mapped(), before)
	}
	i := 0
	for j := range locs {
		if !kept[j] {
			continue
		}
		if got := a.Block(live[i]); !bytes.Equal(got, payload(j)) {
			t.Fatalf("block %d after compaction = %q", j, got)
		}
		i++
	}
}

func TestArenaLargeBlocksAreUnmappedWhenFreed(t *testing.T) {
	var a Arena
	defer a.Reset()
	loc := put(t, &a, make([]byte, 10<<20))
	if a.Mapped() < 10<<20 {
		t.Fatalf("Mapped() = %d for a 10 MiB block", a.Mapped())
	}
	a.Free(loc)
	if a.Mapped() != 0 {
		t.Errorf("Mapped() = %d after freeing the only block", a.Mapped())
	}
}

// TestArenaConcurrent: writers allocate, read back and free their own
// blocks while others do the same and a compactor runs; nobody reads another
// block's bytes. A block's owner holds its own lock while it reads or frees,
// as the engine's shards do.
func TestArenaConcurrent(t *testing.T) {
	var a Arena
	defer a.Reset()
	type owned struct {
		mu   sync.Mutex
		locs map[Loc]uint64
	}
	owners := make([]*owned, 4)
	for i := range owners {
		owners[i] = &owned{locs: map[Loc]uint64{}}
	}
	stop := make(chan struct{})
	var compactor sync.WaitGroup
	compactor.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			id := a.Pick(SegmentSize * 3 / 4)
			if id == 0 {
				continue
			}
			a.Walk(id, func(loc Loc, p []byte) {
				o := owners[p[0]]
				o.mu.Lock()
				defer o.mu.Unlock()
				v, ok := o.locs[loc]
				if !ok {
					return
				}
				delete(o.locs, loc)
				o.locs[move(&a, loc, p)] = v
			})
			a.Unpin(id)
		}
	})
	var wg sync.WaitGroup
	for w, o := range owners {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 3))
			for i := range 30000 {
				v := uint64(w)<<32 | uint64(i)
				p := make([]byte, 9+r.IntN(100))
				p[0] = byte(w)
				binary.LittleEndian.PutUint64(p[1:], v)
				loc := put(t, &a, p)
				o.mu.Lock()
				o.locs[loc] = v
				for l, want := range o.locs { // map order: a random victim
					if got := binary.LittleEndian.Uint64(a.Block(l)[1:]); got != want {
						t.Errorf("block %#x holds %#x, want %#x", l, got, want)
					}
					if len(o.locs) > 500 {
						a.Free(l)
						delete(o.locs, l)
					}
					break
				}
				o.mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	compactor.Wait()
	var live int64
	for _, o := range owners {
		for l := range o.locs {
			live += int64(len(a.Block(l)) + headerSize)
		}
	}
	if a.Live() != live {
		t.Errorf("Live() = %d, the owners hold %d", a.Live(), live)
	}
}

// model is a set of keys stored at fake locations, for Index tests: the
// location is the key's position in keys, plus one.
type model struct {
	keys []string
	tags map[string]uint32
}

func (m *model) loc(key string) Loc {
	m.keys = append(m.keys, key)
	return Loc(len(m.keys))
}

func (m *model) find(ix *Index, key string) (int, bool) {
	return ix.Find(m.tags[key], func(l Loc) bool { return m.keys[l-1] == key })
}

func TestIndexAgainstAMap(t *testing.T) {
	for _, tagSpace := range []uint32{1 << TagBits, 64} { // 64: long runs of equal tags
		t.Run(fmt.Sprint(tagSpace), func(t *testing.T) {
			r := rand.New(rand.NewPCG(4, uint64(tagSpace)))
			m := &model{tags: map[string]uint32{}}
			var ix Index
			want := map[string]bool{}
			for i := range 200000 {
				key := fmt.Sprint("k", r.IntN(5000))
				if _, ok := m.tags[key]; !ok {
					tag := r.Uint32N(1 << TagBits)
					if tagSpace < 1<<TagBits {
						tag = r.Uint32N(tagSpace) << (TagBits - 6)
					}
					m.tags[key] = tag
				}
				pos, found := m.find(&ix, key)
				if found != want[key] {
					t.Fatalf("op %d: Find(%q) = %v, want %v", i, key, found, want[key])
				}
				switch {
				case found && r.IntN(2) == 0:
					ix.Delete(pos)
					delete(want, key)
				case found:
					ix.Replace(pos, m.loc(key))
				default:
					if !ix.Insert(m.tags[key], m.loc(key), 0) {
						t.Fatal("Insert reported a full index")
					}
					want[key] = true
				}
				if ix.Len() != len(want) {
					t.Fatalf("Len() = %d, want %d", ix.Len(), len(want))
				}
			}
			seen := map[string]bool{}
			ix.Range(func(pos int, l Loc) bool {
				k := m.keys[l-1]
				if seen[k] || !want[k] {
					t.Errorf("Range: %q seen twice or not in the index", k)
				}
				seen[k] = true
				return true
			})
			if len(seen) != len(want) {
				t.Errorf("Range visited %d keys, want %d", len(seen), len(want))
			}
			for k := range want {
				ix.Delete(mustFind(t, m, &ix, k))
			}
			if ix.Len() != 0 || ix.Bytes() > slotBytes<<minIndexBits {
				t.Errorf("after deleting everything: Len() %d, Bytes() %d", ix.Len(), ix.Bytes())
			}
		})
	}
}

func mustFind(t *testing.T, m *model, ix *Index, key string) int {
	t.Helper()
	pos, ok := m.find(ix, key)
	if !ok {
		t.Fatalf("%q not found", key)
	}
	return pos
}

func TestIndexBytesPerKey(t *testing.T) {
	var ix Index
	for i := range 100000 {
		ix.Insert(uint32(rand.Uint64()>>(64-TagBits)), Loc(i+1), 0)
	}
	if per := float64(ix.Bytes()) / 100000; per > slotBytes/0.375 {
		t.Errorf("%.1f bytes per key: the table is emptier than its growth rule allows", per)
	}
}

// TestIndexStampsMoveWithSlots: a slot's stamp follows it as the table
// grows, shrinks and shifts slots back on Delete.
func TestIndexStampsMoveWithSlots(t *testing.T) {
	var ix Index
	const n = 5000
	for i := range n {
		// Few distinct tags make long probe runs for Delete to shift.
		ix.Insert(uint32(rand.IntN(64))<<(TagBits-6), Loc(i+1), uint32(i+1)*7)
	}
	check := func() {
		t.Helper()
		ix.Range(func(pos int, loc Loc) bool {
			if got := ix.Stamp(pos); got != uint32(loc)*7 {
				t.Fatalf("slot of loc %d has stamp %d, want %d", loc, got, uint32(loc)*7)
			}
			return true
		})
	}
	check()
	for i := 0; i < n; i += 3 {
		pos := -1
		ix.Range(func(p int, loc Loc) bool {
			if loc == Loc(i+1) {
				pos = p
				return false
			}
			return true
		})
		ix.Delete(pos)
	}
	check()
	ix.SetStamp(0, 1)
	if ix.Stamp(0) != 1 {
		t.Fatal("SetStamp did not set")
	}
}

// A freed block is filled again by the next Alloc of its size, unless its
// segment is being compacted or was unmapped since.
func TestArenaFillsFreedBlocksAgain(t *testing.T) {
	var a Arena
	defer a.Reset()
	first := put(t, &a, []byte("0123456789"))
	keep := put(t, &a, []byte("kept"))
	a.Free(first)
	if got := put(t, &a, []byte("abcdefghij")); got != first {
		t.Fatalf("a block of the freed one's size went to %v, not the freed %v", got, first)
	}
	if string(a.Block(first)) != "abcdefghij" || string(a.Block(keep)) != "kept" {
		t.Fatalf("blocks read %q and %q", a.Block(first), a.Block(keep))
	}
	if other := put(t, &a, []byte("x")); other == first {
		t.Fatal("a block of another size took the freed one")
	}
	// Fill the head segment so it is sealed, free a block in it, and pin
	// it: the freed block is not handed out while it is compacted.
	var locs []Loc
	for range SegmentSize / 64 {
		locs = append(locs, put(t, &a, make([]byte, 60)))
	}
	a.Free(locs[0])
	id := a.Pick(SegmentSize)
	if id != locs[0].id() {
		t.Fatalf("Pick chose segment %d, want %d", id, locs[0].id())
	}
	if got := put(t, &a, make([]byte, 60)); got == locs[0] {
		t.Fatal("a block of a pinned segment was handed out")
	}
	a.Unpin(id)
	// Reset forgets the freed blocks with the segments.
	a.Free(first)
	a.Reset()
	if fresh := put(t, &a, []byte("0123456789")); string(a.Block(fresh)) != "0123456789" {
		t.Fatalf("after Reset: %q", a.Block(fresh))
	}
}
