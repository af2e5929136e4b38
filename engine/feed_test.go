package engine

import (
	"fmt"
	"testing"
)

// Within the bound, changes wait for a batch before ristretto hears of
// them; the sweeper's flush sends what waits; and a write that takes the
// store past its bound sends everything, so ristretto evicts from a
// complete picture.
func TestFeedBatchesWithinBound(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 8 << 20, ExpireInterval: noSweep})
	held := func(key string) bool {
		s.policy.Wait()
		_, ok := s.policy.GetTTL(s.hash([]byte(key)))
		return ok
	}
	mustSet(t, s, "a", "v", SetOptions{})
	if held("a") {
		t.Fatalf("one change, within the bound: ristretto heard of it before %d waited", feedBatch)
	}
	s.feeder.flush()
	if !held("a") {
		t.Fatal("after flush, ristretto does not hold the key")
	}
	for i := range feedBatch {
		mustSet(t, s, fmt.Sprintf("b%d", i), "v", SetOptions{})
	}
	if !held("b0") {
		t.Fatalf("%d changes waited and none was sent", feedBatch)
	}

	// Past the bound every write sends: values of 64 KB, 8 MiB of them and
	// more; what ristretto evicts keeps the store near its bound.
	value := string(make([]byte, 64<<10))
	for i := range 256 {
		mustSet(t, s, fmt.Sprintf("big%d", i), value, SetOptions{})
	}
	settle(s)
	if used, bound := s.Stats().Cost, s.MaxMemory(); used > bound+s.overSlack() {
		t.Fatalf("entries cost %d after writing past the bound %d (slack %d)", used, bound, s.overSlack())
	}
	if s.evicted.Load() == 0 && s.rejected.Load() == 0 {
		t.Fatal("nothing evicted or rejected after writing twice the bound")
	}
	checkInvariants(t, s)
}
