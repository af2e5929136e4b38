package engine

import (
	"errors"
	"testing"
	"time"
)

// TestIdleTime: a key's idle time is the seconds since its last access on
// the store's clock: a read that reports itself (Get, Touch) or a write's
// lookup resets it, a peek (LookupNoTouch, Peek, IdleTime itself) does not;
// with allkeys-lfu it is Redis's error.
func TestIdleTime(t *testing.T) {
	s, clk := newClockStore(t)
	s.SetEvictionPolicy(NoEviction)
	idle := func(key string, want int64) {
		t.Helper()
		got, found, err := s.IdleTime([]byte(key))
		if err != nil || !found || got != want {
			t.Fatalf("IdleTime(%s) = %d, %v, %v; want %d", key, got, found, err, want)
		}
	}
	set(t, s, "k", "v")
	set(t, s, "other", "v")
	idle("k", 0)
	clk.advance(10 * time.Second)
	idle("k", 10)
	s.LookupNoTouch([]byte("k"))
	s.Peek([]byte("k"))
	idle("k", 10)
	s.Get([]byte("k"))
	idle("k", 0)
	idle("other", 10)
	clk.advance(3 * time.Second)
	touch(s, "other")
	idle("other", 0)
	idle("k", 3)
	if _, err := s.Update([]byte("k"), func(old []byte, _ bool) ([]byte, error) { return append(old, 'x'), nil }); err != nil {
		t.Fatal(err)
	}
	idle("k", 0)
	if _, found, err := s.IdleTime([]byte("nokey")); found || err != nil {
		t.Fatalf("IdleTime(nokey) found %v, %v", found, err)
	}
	s.SetEvictionPolicy(AllKeysLFU)
	if _, found, err := s.IdleTime([]byte("k")); !found || !errors.Is(err, ErrLFUSelected) {
		t.Fatalf("IdleTime with allkeys-lfu: %v, %v", found, err)
	}
}

// TestAccessFrequency: Redis's LFU counter, from 5 for a new key, one more
// on the first access (certain at 5), decaying by one a minute; without an
// LFU policy it is Redis's error.
func TestAccessFrequency(t *testing.T) {
	s, clk := newClockStore(t)
	freq := func(want int64) {
		t.Helper()
		got, found, err := s.AccessFrequency([]byte("k"))
		if err != nil || !found || got != want {
			t.Fatalf("AccessFrequency = %d, %v, %v; want %d", got, found, err, want)
		}
	}
	set(t, s, "k", "v")
	freq(5)
	s.LookupNoTouch([]byte("k"))
	freq(5)
	s.Get([]byte("k"))
	freq(6)
	for range 2000 {
		s.Get([]byte("k"))
	}
	got, _, _ := s.AccessFrequency([]byte("k"))
	if got <= 6 || got > 255 {
		t.Fatalf("after 2000 reads the counter is %d", got)
	}
	clk.advance(3 * time.Minute)
	freq(got - 3)
	clk.advance(300 * time.Minute)
	freq(0)
	s.SetEvictionPolicy(NoEviction)
	if _, found, err := s.AccessFrequency([]byte("k")); !found || !errors.Is(err, ErrLFUNotSelected) {
		t.Fatalf("AccessFrequency with noeviction: %v, %v", found, err)
	}
}

// TestAccessAllocatesNothing: recording an access (a read's, a write's
// lookup) allocates nothing, under either policy.
func TestAccessAllocatesNothing(t *testing.T) {
	s := newStore(t, Options{})
	set(t, s, "k", "v")
	key := []byte("k")
	sh := s.shardOf(s.hash(key))
	for _, p := range []EvictionPolicy{AllKeysLFU, NoEviction} {
		s.SetEvictionPolicy(p)
		n := testing.AllocsPerRun(1000, func() {
			sh.mu.RLock()
			if sl, ok := s.findLocked(sh, s.hash(key), key); ok {
				s.accessedLocked(sh, sl.pos)
			}
			sh.mu.RUnlock()
		})
		if n != 0 {
			t.Fatalf("%v: %v allocations an access", p, n)
		}
	}
}
