package engine

import (
	"strconv"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// A frozen store changes no key on its own: an expired key reads as
// missing but stays, to neither the read nor the sweeper removing it, and
// writes past the bound evict nothing. Once thawed, the key expires at its
// next read and eviction brings the store back within its bound.
func TestFrozenStoreNeitherExpiresNorEvicts(t *testing.T) {
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: 256 << 10, Policy: AllKeysLRU, Now: clk.Now, ExpireInterval: time.Millisecond})
	mustSet(t, s, "ttl", "v", SetOptions{StaleUntil: clk.in(time.Second)})
	s.SetFrozen(true)
	if !s.Frozen() {
		t.Fatal("Frozen() = false after SetFrozen(true)")
	}
	clk.advance(2 * time.Second)
	wantMiss(t, s, "ttl")
	time.Sleep(20 * time.Millisecond) // sweeps
	if !inIndex(s, "ttl") {
		t.Fatal("an expired key was removed while the store was frozen")
	}
	if n := s.Stats().Expired; n != 0 {
		t.Fatalf("Expired = %d while frozen, want 0", n)
	}

	value := make([]byte, 100)
	n := 0
	for ; s.Stats().Cost < 512<<10; n++ {
		if _, err := s.Set([]byte("k:"+strconv.Itoa(n)), value, SetOptions{}); err != nil {
			t.Fatalf("write %d past the bound while frozen: %v", n, err)
		}
	}
	if ev := s.Stats().Evicted; ev != 0 {
		t.Fatalf("%d keys evicted while frozen", ev)
	}
	for i := range n {
		wantValue(t, s, "k:"+strconv.Itoa(i), string(value))
	}

	s.SetFrozen(false)
	wantMiss(t, s, "ttl")
	if inIndex(s, "ttl") {
		t.Error("an expired key read after the thaw is still there")
	}
	if got := s.Stats().Expired; got != 1 {
		t.Errorf("Expired = %d after the thaw, want 1", got)
	}
	// The sweeper evicts back within the bound, with no write to start it.
	testwait.For(t, "the store back within its bound after the thaw", func() bool { return !s.overBound(0) })
	if s.Stats().Evicted == 0 {
		t.Error("nothing evicted after the thaw")
	}
	checkInvariants(t, s)
}
