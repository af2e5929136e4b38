package engine

import (
	"fmt"
	"testing"
	"time"
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
	if _, err := s.Copy([]byte("b"), []byte("c"), false); err != nil {
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

	s.Flush(false)
	want(0, "FLUSHALL")
}
