package engine

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
)

// heapObjects counts the collections held on the heap, in every shard.
func heapObjects(s *Store) int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		n += len(sh.heap)
		sh.mu.RUnlock()
	}
	return n
}

// bigSet adds enough members to key's set that it is held on the heap.
func bigSet(t *testing.T, s *Store, key string) {
	t.Helper()
	members := make([][]byte, 600)
	for i := range members {
		members[i] = fmt.Appendf(nil, "member-%d", i)
	}
	if _, err := s.SAdd([]byte(key), members); err != nil {
		t.Fatal(err)
	}
	if !onHeap(s, key) {
		t.Fatalf("%q is not held on the heap", key)
	}
}

// TestHeapObjectsFollowTheirRecords: a collection held on the heap lives
// exactly as long as a record refers to it, whatever ends the record:
// DEL, an overwrite by SET, RENAME (moved, not copied), COPY (a clone of
// its own), expiry, eviction by FLUSHALL. Nothing is left behind, and
// nothing a live key needs is freed.
func TestHeapObjectsFollowTheirRecords(t *testing.T) {
	s, clk := newClockStore(t)
	want := func(n int, after string) {
		t.Helper()
		if got := heapObjects(s); got != n {
			t.Fatalf("after %s: %d heap objects, want %d", after, got, n)
		}
	}
	bigSet(t, s, "a")
	want(1, "SADD")
	s.Delete([]byte("a"))
	want(0, "DEL")

	bigSet(t, s, "a")
	set(t, s, "a", "now a string")
	want(0, "SET over it")
	s.Delete([]byte("a"))

	bigSet(t, s, "a")
	if _, err := s.Rename([]byte("a"), []byte("b"), false); err != nil {
		t.Fatal(err)
	}
	want(1, "RENAME")
	if n, err := s.SCard([]byte("b")); err != nil || n != 600 {
		t.Fatalf("SCARD of the renamed set = %d, %v", n, err)
	}
	if _, err := s.Copy([]byte("b"), nil, []byte("c"), false); err != nil {
		t.Fatal(err)
	}
	want(2, "COPY")
	if _, err := s.SRem([]byte("c"), [][]byte{[]byte("member-1")}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.SCard([]byte("b")); n != 600 {
		t.Fatalf("SREM of the copy changed the original: SCARD %d", n)
	}

	s.Expire([]byte("c"), clk.in(time.Second), ExpireAlways)
	clk.advance(2 * time.Second)
	if _, err := s.SCard([]byte("c")); err != nil {
		t.Fatal(err)
	}
	want(1, "expiry")

	s.FlushAll()
	want(0, "FLUSHALL")
}

// recordLoc is where key's record is in the arena.
func recordLoc(s *Store, key string) slab.Loc {
	h := s.hash([]byte(key))
	sh := s.shardOf(h)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	sl, _ := s.findLocked(sh, h, []byte(key))
	return sl.loc
}

// TestCompactCollectionsGrowInPlace: a compact set (strings and intset),
// sorted set or hash written one member at a time gets room in its record
// and is rewritten in place while the room lasts, so that 120 adds move
// its record a few dozen times at most, not once each (each move left the
// old record dead in the arena, and under a churn of small SADDs and ZADDs
// those dead bytes outran compaction: the typed churn's peak). What it
// holds reads back whole, its room is charged, and one that shrinks to a
// few members moves to a record of its size.
func TestCompactCollectionsGrowInPlace(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20, ExpireInterval: noSweep})
	const n = 120
	member := func(i int) []byte { return fmt.Appendf(nil, "member-%d", i) }
	cases := []struct {
		key, encoding string
		n             int
		add, remove   func(key []byte, i int) error
		read          func(key []byte) ([]string, error)
	}{
		{key: "set", encoding: "hashtable", n: n,
			add:    func(k []byte, i int) error { _, err := s.SAdd(k, [][]byte{member(i)}); return err },
			remove: func(k []byte, i int) error { _, err := s.SRem(k, [][]byte{member(i)}); return err },
			read:   func(k []byte) ([]string, error) { m, err := s.SMembers(k); return sortedStrs(m), err }},
		{key: "ints", encoding: "intset", n: n,
			add: func(k []byte, i int) error {
				_, err := s.SAdd(k, [][]byte{strconv.AppendInt(nil, int64(i), 10)})
				return err
			},
			remove: func(k []byte, i int) error {
				_, err := s.SRem(k, [][]byte{strconv.AppendInt(nil, int64(i), 10)})
				return err
			},
			read: func(k []byte) ([]string, error) { m, err := s.SMembers(k); return sortedStrs(m), err }},
		{key: "zset", encoding: "listpack", n: n,
			add: func(k []byte, i int) error {
				_, err := s.ZAdd(k, ZAddOptions{}, []ScoreMember{{Member: member(i), Score: float64(i % 7)}})
				return err
			},
			remove: func(k []byte, i int) error { _, err := s.ZRem(k, [][]byte{member(i)}); return err },
			read: func(k []byte) ([]string, error) {
				all, err := zrange(s, k, ZRange{By: ZByRank, Start: 0, Stop: -1})
				var out []string
				for _, x := range all {
					out = append(out, fmt.Sprintf("%s=%g", x.Member, x.Score))
				}
				return out, err
			}},
		// Past 1 KB a hash moves to the heap: 60 fields stay compact.
		{key: "hash", encoding: "listpack", n: 60,
			add:    func(k []byte, i int) error { _, err := s.HSet(k, [][]byte{member(i), []byte("v")}); return err },
			remove: func(k []byte, i int) error { _, err := s.HDel(k, [][]byte{member(i)}); return err },
			read: func(k []byte) ([]string, error) {
				all, err := s.HGetAll(k)
				var out []string
				for i := 0; i+1 < len(all); i += 2 {
					out = append(out, string(all[i])+"="+string(all[i+1]))
				}
				slices.Sort(out)
				return out, err
			}},
	}
	for _, c := range cases {
		key := []byte(c.key)
		moves := 0
		var last slab.Loc
		for i := range c.n {
			if err := c.add(key, i); err != nil {
				t.Fatal(err)
			}
			if l := recordLoc(s, c.key); l != last {
				moves++
				last = l
			}
		}
		wantEncoding(t, s, c.key, c.encoding)
		// A quarter as much again each move: about 20.
		if moves > 30 {
			t.Errorf("%s: %d adds moved its record %d times", c.key, c.n, moves)
		}
		before, err := c.read(key)
		if err != nil || len(before) != c.n {
			t.Fatalf("%s: reads back %d members (%v), want %d", c.key, len(before), err, c.n)
		}
		grown, _ := s.Cost(key)
		for i := range c.n - 2 {
			if err := c.remove(key, i); err != nil {
				t.Fatal(err)
			}
		}
		after, err := c.read(key)
		if err != nil || len(after) != 2 || !slices.Contains(before, after[0]) || !slices.Contains(before, after[1]) {
			t.Fatalf("%s: after the removals reads %v (%v)", c.key, after, err)
		}
		if cost, _ := s.Cost(key); cost > EntryOverhead+100 || cost >= grown {
			t.Errorf("%s: two members are charged %d (%d with %d)", c.key, cost, grown, c.n)
		}
	}
	checkInvariants(t, s)
}
