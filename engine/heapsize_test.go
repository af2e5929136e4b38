package engine

import (
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// liveHeap is the heap's live bytes after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestHeapChargeMatchesHeap builds heap-held hashes and sets of several
// shapes, as the commands build them, and compares what they are charged
// with what runtime.MemStats says they hold: the charge must cover the
// heap (a bound that under-charges is exceeded) and stay near it.
func TestHeapChargeMatchesHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocations take")
	}
	value := func(n, i int) []byte {
		v := make([]byte, n)
		copy(v, strconv.Itoa(i))
		return v
	}
	cases := []struct {
		name           string
		objects, items int
		build          func(items int) heapObject
	}{}
	for _, items := range []int{1, 3, 200, 513, 3000} {
		for _, size := range []int{8, 100, 4096} {
			objects := max(2000/items, 4)
			if size == 4096 {
				objects = max(200/items, 2)
			}
			cases = append(cases, struct {
				name           string
				objects, items int
				build          func(items int) heapObject
			}{"hash/" + strconv.Itoa(items) + "x" + strconv.Itoa(size), objects, items, func(items int) heapObject {
				h := newHashTable(0)
				for i := range items {
					h.set([]byte("field:"+strconv.Itoa(i)), value(size, i))
				}
				return h
			}})
		}
		for _, size := range []int{6, 40, 100} {
			cases = append(cases, struct {
				name           string
				objects, items int
				build          func(items int) heapObject
			}{"set/" + strconv.Itoa(items) + "x" + strconv.Itoa(size), max(4000/items, 4), items, func(items int) heapObject {
				o := newSetObject(0)
				for i := range items {
					o.add(value(size, i))
				}
				return o
			}})
		}
	}
	for _, items := range []int{200, 3000} {
		for _, size := range []int{10, 100} {
			cases = append(cases, struct {
				name           string
				objects, items int
				build          func(items int) heapObject
			}{"list/" + strconv.Itoa(items) + "x" + strconv.Itoa(size), max(4000/items, 4), items, func(items int) heapObject {
				o := &listObject{}
				for i := range items {
					o.pushBack(value(size, i), nodeLimitOf(ListMaxListpackSize))
				}
				return o
			}})
			cases = append(cases, struct {
				name           string
				objects, items int
				build          func(items int) heapObject
			}{"zset/" + strconv.Itoa(items) + "x" + strconv.Itoa(size), max(4000/items, 4), items, func(items int) heapObject {
				o := newZSetObject(0)
				for i := range items {
					o.set(string(value(size, i)), float64(i))
				}
				return o
			}})
		}
	}
	for _, c := range cases {
		objs := make([]heapObject, 0, c.objects)
		// Each object is in a heap table, as in a shard.
		table := make(map[uint64]heapObject, c.objects)
		before := liveHeap()
		for i := range c.objects {
			o := c.build(c.items)
			objs = append(objs, o)
			table[uint64(i)] = o
		}
		used := liveHeap() - before
		var charged int64
		for _, o := range objs {
			charged += o.charge()
		}
		runtime.KeepAlive(objs)
		runtime.KeepAlive(table)
		// The slice of objects is the test's, not the store's.
		used -= allocBytes(16 * c.objects)
		ratio := float64(charged) / float64(used)
		t.Logf("%s: %d objects, heap %d bytes, charged %d (%.3f)", c.name, c.objects, used, charged, ratio)
		if ratio < 0.98 || ratio > 1.4 {
			t.Errorf("%s: charged %d bytes for %d on the heap (%.3f; want 0.98 to 1.4)", c.name, charged, used, ratio)
		}
	}
}

// TestGrowthInPlaceEvicts grows collections and strings already held, past
// the bound: growth in place evicts as a new key does (grown).
func TestGrowthInPlaceEvicts(t *testing.T) {
	const bound = 1 << 20
	s := newStore(t, Options{MaxMemory: bound})
	member := make([]byte, 40)
	for round := range underRace(400, 100) {
		for k := range 50 {
			copy(member, strconv.Itoa(round)+"/"+strconv.Itoa(k))
			key := []byte("set:" + strconv.Itoa(k))
			if _, err := s.SAdd(key, [][]byte{member}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.HSet([]byte("hash:"+strconv.Itoa(k)), [][]byte{member, member}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Grow([]byte("str:"+strconv.Itoa(k)), func(old []byte, _ bool) (int, error) { return len(old) + 40, nil }, func([]byte) bool { return true }); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, cost := liveCost(s); cost > bound {
		t.Errorf("the entries cost %d bytes, over the bound of %d", cost, bound)
	}
	checkInvariants(t, s)
}

// appendTo appends suffix to key's string with Grow, as APPEND does.
func appendTo(t testing.TB, s *Store, key, suffix []byte) int {
	var at int
	n, err := s.Grow(key, func(old []byte, _ bool) (int, error) {
		at = len(old)
		return len(old) + len(suffix), nil
	}, func(v []byte) bool { copy(v[at:], suffix); return true })
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestGrowAmortized: a string appended to gets room to grow into, so that
// 3,000 appends of 1 KB copy it a logarithmic number of times, not once
// each; the room is charged, and the value reads back whole.
func TestGrowAmortized(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20, ExpireInterval: noSweep})
	key := []byte("log")
	suffix := make([]byte, 1024)
	var want []byte
	moves := 0
	var last slab.Loc
	for i := range 3000 {
		copy(suffix, strconv.Itoa(i))
		want = append(want, suffix...)
		if n := appendTo(t, s, key, suffix); n != len(want) {
			t.Fatalf("append %d: length %d, want %d", i, n, len(want))
		}
		h := s.hash(key)
		sh := s.shardOf(h)
		sh.mu.RLock()
		sl, _ := s.findLocked(sh, h, key)
		sh.mu.RUnlock()
		if sl.loc != last {
			moves++
			last = sl.loc
		}
	}
	// Doubling up to 1 MiB, then 1 MiB at a time: 11 + 2.
	if moves > 16 {
		t.Errorf("3,000 appends moved the value %d times", moves)
	}
	if got, _ := s.Get(key); string(got) != string(want) {
		t.Fatalf("the appended value reads back wrong (%d bytes, want %d)", len(got), len(want))
	}
	cost, _ := s.Cost(key)
	if cost < int64(len(want)) || cost > int64(len(want))+growRoomMax+EntryOverhead+64 {
		t.Errorf("a %d-byte value with its room is charged %d", len(want), cost)
	}
	checkInvariants(t, s)
}

// BenchmarkAppend is issue 18's APPEND case: 3,000 appends of 1 KB to one
// key (redis-server: about 0.14 s for the lot over the network), with
// Grow, and for comparison with Update, which copies the value each time
// (as APPEND did).
func BenchmarkAppend(b *testing.B) {
	s := newStore(b, Options{MaxMemory: 64 << 20, ExpireInterval: noSweep})
	suffix := make([]byte, 1024)
	b.Run("grow", func(b *testing.B) {
		for b.Loop() {
			s.Delete([]byte("log"))
			for range 3000 {
				appendTo(b, s, []byte("log"), suffix)
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		for b.Loop() {
			s.Delete([]byte("log"))
			for range 3000 {
				s.Update([]byte("log"), func(old []byte, _ bool) ([]byte, error) { return append(old, suffix...), nil })
			}
		}
	})
}

// TestProcessLimitLeavesTheArenaItsShare: Go's memory limit is what the
// bound leaves beside the arena, even when that is little: a floor above it
// (there was one of 32 MiB) let a server at a 32 MiB bound reach 92 MB.
func TestProcessLimitLeavesTheArenaItsShare(t *testing.T) {
	const bound = 32 << 20
	s := newStore(t, Options{MaxMemory: bound, ExpireInterval: noSweep})
	value := make([]byte, 4000)
	for i := range 6000 { // 24 MB of records
		set(t, s, "k"+strconv.Itoa(i), string(value))
	}
	// The promise, less the peak's slack (an eighth of the bound, at
	// least 4 MiB), the binary's pages and 2 MiB.
	total := int64(bound) + bound*15/100 + 24<<20 - 4<<20 - fileResident() - 2<<20
	mapped := s.Stats().ArenaBytes
	if mapped < 20<<20 {
		t.Fatalf("the arena maps only %d bytes", mapped)
	}
	// The binary's resident pages may change between the two reads.
	if got, want := s.processLimit(), total-mapped; got < want-1<<20 || got > want+1<<20 {
		t.Errorf("processLimit = %d MiB with %d MiB mapped, want %d MiB", got>>20, mapped>>20, want>>20)
	}
}

// TestDriftCharged: what a process that the store owns holds beyond what
// is charged (here a buffer the test keeps) is charged too, so the
// entries get less of the bound.
func TestDriftCharged(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	s := newStore(t, Options{MaxMemory: 256 << 20, OwnsProcess: true, ExpireInterval: time.Millisecond})
	before := s.Stats().Cost
	held := make([]byte, 32<<20)
	for i := range held {
		held[i] = byte(i)
	}
	runtime.GC()
	testwait.For(t, "the held buffer to be charged", func() bool { return s.Stats().Cost-before >= 24<<20 })
	runtime.KeepAlive(held)
}

// TestOneWriterStaysWithinTheBound: a write makes room for its entry
// before it writes, so one writer of big values to new keys never carries
// the store past its bound, while it does fill it.
func TestOneWriterStaysWithinTheBound(t *testing.T) {
	const bound = 8 << 20
	s := newStore(t, Options{MaxMemory: bound, ExpireInterval: noSweep})
	value := string(make([]byte, 4096))
	worst := int64(math.MinInt64)
	for i := range underRace(20000, 5000) {
		set(t, s, "k"+strconv.Itoa(i), value)
		worst = max(worst, s.Stats().Cost-bound)
	}
	if limit := -entryCost(6, len(value)); worst > 0 || worst < limit {
		t.Errorf("the entries came to %d bytes of the bound at most, want 0 to %d below it", worst, -limit)
	}
	checkInvariants(t, s)
}

// TestChargeEvictsWithoutWrites: when the bytes charged beside the entries
// rise (the drift charge, measured every 10 ms) and no write follows, the
// sweeper evicts the entries down to what the bound leaves them, but never
// a key accessed in the last seconds.
func TestChargeEvictsWithoutWrites(t *testing.T) {
	const bound = 1 << 20
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: bound, ExpireInterval: noSweep, Policy: AllKeysLRU, Now: clk.Now})
	value := string(make([]byte, 1000))
	for i := range 2000 {
		set(t, s, "k"+strconv.Itoa(i), value)
	}
	keys := s.Len()
	s.Charge(bound / 4)
	_ = s.makeRoom(forSweep, 0)
	if !s.overBound(0) || s.Len() != keys {
		t.Fatalf("the sweeper evicted %d keys written in the last second", keys-s.Len())
	}
	clk.advance(recentSeconds * time.Second)
	// Each pass evicts for as long as the tenacity allows (less than the
	// race detector's slow runs need): the sweeper's passes go on.
	for i := 0; s.overBound(0) && i < 1000; i++ {
		_ = s.makeRoom(forSweep, 0)
	}
	if s.overBound(0) {
		t.Fatalf("the sweeper left the store over its bound: %+v", s.Stats())
	}
	s.Charge(-bound / 4) // checkInvariants counts the entries alone
	checkInvariants(t, s)
}
