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
	held := func(key string) bool { return policyHolds(s, key) }
	// Below half the bound ristretto is told nothing until it is told of
	// every key (TestToldFromHalfTheBound); here it is, from the start.
	s.tellAll()
	settle(s)
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

// Below half its bound the store tells ristretto of no key; the write
// that takes it to half tells it of every key, and from then on each
// change is sent, so that it evicts knowing every key, as the store would
// had it told it of each from the first.
func TestToldFromHalfTheBound(t *testing.T) {
	const keys = 1000
	value := string(make([]byte, 100))
	s := newStore(t, Options{MaxMemory: 4 * keys * entryCost(9, len(value)), ExpireInterval: noSweep})
	held := func(key string) bool { return policyHolds(s, key) }
	for i := range keys {
		mustSet(t, s, fmt.Sprintf("key:%05d", i), value, SetOptions{})
	}
	if !s.Delete([]byte("key:00001")) {
		t.Fatal("DEL of a key set: not found")
	}
	settle(s)
	if s.pastHalf() || s.told.Load() {
		t.Fatalf("a quarter of the bound: pastHalf %v, told %v", s.pastHalf(), s.told.Load())
	}
	if held("key:00000") {
		t.Fatal("below half the bound, ristretto was told of a key")
	}
	checkInvariants(t, s)
	for i := keys; i < 3*keys; i++ {
		mustSet(t, s, fmt.Sprintf("key:%05d", i), value, SetOptions{})
	}
	settle(s)
	if !s.told.Load() {
		t.Fatal("three quarters of the bound, and ristretto is still not told")
	}
	for _, k := range []string{"key:00000", "key:00999", "key:02999"} {
		if !held(k) {
			t.Errorf("past half the bound, ristretto does not hold %s", k)
		}
	}
	if held("key:00001") {
		t.Error("ristretto holds a key deleted before it was told")
	}
	checkInvariants(t, s) // every key in ristretto, at its cost
	// Past the bound it evicts, and the store keeps to its bound.
	for i := 3 * keys; i < 8*keys; i++ {
		mustSet(t, s, fmt.Sprintf("key:%05d", i), value, SetOptions{})
	}
	settle(s)
	if st := s.Stats(); st.Evicted+st.Rejected == 0 || st.Cost > st.MaxCost {
		t.Errorf("twice the bound written: %+v", st)
	}
	checkInvariants(t, s)
}
