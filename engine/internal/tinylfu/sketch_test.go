package tinylfu

import (
	"hash/maphash"
	"sync"
	"testing"
)

func hashOf(seed maphash.Seed, i int) uint32 {
	var h maphash.Hash
	h.SetSeed(seed)
	var b [8]byte
	for k := range b {
		b[k] = byte(i >> (8 * k))
	}
	h.Write(b[:])
	return uint32(h.Sum64() >> 32)
}

func TestZeroSketchCountsNothing(t *testing.T) {
	var s Sketch
	s.Increment(42)
	if got := s.Estimate(42); got != 0 {
		t.Fatalf("Estimate on a zero Sketch = %d, want 0", got)
	}
}

func TestEstimateFollowsCounts(t *testing.T) {
	var s Sketch
	s.Resize(1 << 14)
	seed := maphash.MakeSeed()
	// Key i is counted i%20 times.
	for i := range 4096 {
		for range i % 20 {
			s.Increment(hashOf(seed, i))
		}
	}
	over := 0
	for i := range 4096 {
		want := min(i%20, 16)
		got := s.Estimate(hashOf(seed, i))
		if got < want {
			t.Fatalf("key %d counted %d times estimated %d: a count-min sketch never underestimates", i, i%20, got)
		}
		if got > want+2 {
			over++
		}
	}
	// Conservative update keeps overestimates rare at this load.
	if over > 4096/20 {
		t.Fatalf("%d of 4096 keys overestimated by more than 2", over)
	}
}

func TestHalvingAges(t *testing.T) {
	var s Sketch
	s.Resize(MinCapacity)
	seed := maphash.MakeSeed()
	hot := hashOf(seed, -1)
	for range 15 {
		s.Increment(hot)
	}
	if got := s.Estimate(hot); got < 15 {
		t.Fatalf("hot key estimated %d after 15 counts", got)
	}
	// A period of other keys' increments halves every counter and clears
	// the doorkeeper.
	for i := range MinCapacity * sampleFactor * 2 {
		s.Increment(hashOf(seed, i%(MinCapacity*8)))
		if s.Estimate(hot) < 8 {
			return
		}
	}
	t.Fatalf("hot key still estimated %d after two periods of others' counts", s.Estimate(hot))
}

func TestResizeAndClear(t *testing.T) {
	var s Sketch
	s.Resize(5000)
	if got := s.Capacity(); got != 8192 {
		t.Fatalf("Capacity = %d, want 8192", got)
	}
	if got, want := s.Bytes(), 8192*2; got != want {
		t.Fatalf("Bytes = %d, want %d", got, want)
	}
	s.Increment(7)
	s.Increment(7)
	s.Resize(6000) // same capacity: kept
	if s.Estimate(7) != 2 {
		t.Fatalf("Resize to the same capacity lost counts: %d", s.Estimate(7))
	}
	s.Clear()
	if s.Estimate(7) != 0 {
		t.Fatalf("Clear kept counts: %d", s.Estimate(7))
	}
	s.Resize(0)
	if s.Capacity() != 0 || s.Bytes() != 0 {
		t.Fatalf("Resize(0) kept a table")
	}
}

func TestConcurrentIncrements(t *testing.T) {
	var s Sketch
	s.Resize(1 << 12)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20000 {
				s.Increment(uint32(i%64)*0x9E3779B9 + uint32(g))
				_ = s.Estimate(uint32(i))
			}
		}()
	}
	wg.Wait()
}

func TestGrowingKeepsCounts(t *testing.T) {
	var s Sketch
	s.Resize(MinCapacity)
	seed := maphash.MakeSeed()
	for i := range 500 {
		for range i % 10 {
			s.Increment(hashOf(seed, i))
		}
	}
	before := make([]int, 500)
	for i := range before {
		before[i] = s.Estimate(hashOf(seed, i))
	}
	s.Resize(MinCapacity * 16)
	for i := range before {
		if got := s.Estimate(hashOf(seed, i)); got != before[i] {
			t.Fatalf("key %d estimated %d before growing, %d after", i, before[i], got)
		}
	}
	s.Resize(MinCapacity)
	if got := s.Estimate(hashOf(seed, 9)); got != 0 {
		t.Fatalf("a shrunk sketch remembers %d", got)
	}
}
