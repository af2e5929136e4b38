// Package tinylfu is the frequency sketch behind the store's LFU eviction:
// how often each key was asked for lately, kept for keys the store holds and
// for keys it no longer holds, in two bytes per key and no per-key map.
//
// It is TinyLFU's sketch (Einziger, Friedman and Manes): a count-min sketch
// of 4-bit counters with conservative update, a doorkeeper bit set that
// takes a key's first occurrence so that keys seen once leave the counters
// alone, and a periodic halving of every counter (and a clearing of the
// doorkeeper) that ages what it remembers, so that a key hot an hour ago
// does not stay hot for ever.
//
// Everything a key touches lies in one 16-byte block: a word of 16
// counters (four rows of four; a key has one counter in each row) and a
// word of 64 doorkeeper bits (a key has one). Reading a key's count is
// one cache miss, an increment one compare-and-swap, and a key whose
// counters are at 15 (a hot key) costs a read only.
//
// All methods are safe for concurrent use without a lock: the words are
// updated with atomic operations, and Resize swaps the whole table.
package tinylfu

import (
	"math/bits"
	"sync/atomic"
)

const (
	// keysPerBlock sizes a table for a capacity: a block of 16 bytes for
	// every eight keys, two bytes a key; the capacity is rounded up to a
	// power of two.
	keysPerBlock = 8
	// sampleFactor is how many increments (per key of capacity) pass
	// between two halvings: TinyLFU's sample size W = 10 x capacity.
	sampleFactor = 10
	// MinCapacity is the smallest table Resize makes.
	MinCapacity = 1 << 10
	// MaxCapacity is the largest: 2^27 keys, 256 MiB.
	MaxCapacity = 1 << 27

	maxCount   = 15
	halfMask   = 0x7777_7777_7777_7777
	fibonacci  = 0x9E37_79B9_7F4A_7C15
	nibbleBits = 4
)

// Sketch estimates how often each key was counted since about the last
// sampleFactor x capacity increments. The zero value counts nothing until
// Resize gives it a table.
type Sketch struct {
	t atomic.Pointer[table]
}

type table struct {
	// words holds the blocks: words[2i] is block i's counters (row r in
	// nibbles 4r..4r+3), words[2i+1] its doorkeeper bits.
	words     []uint64
	blockBits uint // len(words) == 2<<blockBits
	capacity  int
	period    int64

	added   atomic.Int64 // increments since the last halving
	halving atomic.Bool
}

// Capacity returns the number of keys the sketch is sized for, 0 before the
// first Resize.
func (s *Sketch) Capacity() int {
	if t := s.t.Load(); t != nil {
		return t.capacity
	}
	return 0
}

// Bytes returns the memory the sketch's table takes.
func (s *Sketch) Bytes() int {
	if t := s.t.Load(); t != nil {
		return 8 * len(t.words)
	}
	return 0
}

// Resize sizes the sketch for about keys keys (rounded up to a power of
// two, within MinCapacity and MaxCapacity), or frees it if keys is zero or
// less. A sketch already of that size is left as it is. One that grows
// keeps what it counted: a key's block is chosen by the top bits of a
// product of its bits, so its block in the larger table is a copy of its
// block in the smaller. One that shrinks starts empty. Increments that
// race with Resize may be lost.
func (s *Sketch) Resize(keys int) {
	if keys <= 0 {
		s.t.Store(nil)
		return
	}
	c := CapacityFor(keys)
	old := s.t.Load()
	if old != nil && old.capacity == c {
		return
	}
	blocks := c / keysPerBlock
	t := &table{
		words:     make([]uint64, 2*blocks),
		blockBits: uint(bits.TrailingZeros(uint(blocks))),
		capacity:  c,
		period:    int64(c) * sampleFactor,
	}
	if old != nil && old.capacity < c {
		shift := t.blockBits - old.blockBits
		for i := range blocks {
			j := i >> shift
			t.words[2*i] = atomic.LoadUint64(&old.words[2*j])
			t.words[2*i+1] = atomic.LoadUint64(&old.words[2*j+1])
		}
		t.added.Store(old.added.Load())
	}
	s.t.Store(t)
}

// CapacityFor is the capacity Resize gives a sketch for keys keys.
func CapacityFor(keys int) int {
	keys = min(max(keys, MinCapacity), MaxCapacity)
	return 1 << bits.Len(uint(keys-1))
}

// Clear forgets every count.
func (s *Sketch) Clear() {
	if t := s.t.Load(); t != nil {
		for i := range t.words {
			atomic.StoreUint64(&t.words[i], 0)
		}
		t.added.Store(0)
	}
}

// Increment counts one occurrence of key, 32 bits of a well-mixed hash (the
// store's seeded maphash, the bits its index keeps a slot by).
func (s *Sketch) Increment(key uint32) {
	t := s.t.Load()
	if t == nil {
		return
	}
	x := mix(key)
	counters, door := t.block(x)
	if bit := doorBit(x); atomic.LoadUint64(door)&bit == 0 {
		atomic.OrUint64(door, bit)
		t.tick()
		return
	}
	for {
		old := atomic.LoadUint64(counters)
		next := increment(old, x)
		if next == old {
			return // every counter of key is at its top
		}
		if atomic.CompareAndSwapUint64(counters, old, next) {
			t.tick()
			return
		}
	}
}

// Estimate returns how often key was counted, 0 to 16: its counters' count
// (at most 15), and one if the doorkeeper has seen it since it was last
// cleared.
func (s *Sketch) Estimate(key uint32) int {
	t := s.t.Load()
	if t == nil {
		return 0
	}
	x := mix(key)
	counters, door := t.block(x)
	n := int(minCount(atomic.LoadUint64(counters), x))
	if atomic.LoadUint64(door)&doorBit(x) != 0 {
		n++
	}
	return n
}

// mix spreads key over 64 bits: the top bits choose the block, bits 16 to
// 23 the counters in it and bits 24 to 29 the doorkeeper bit.
func mix(key uint32) uint64 { return uint64(key) * fibonacci }

// block returns the counters and the doorkeeper word of x's block.
func (t *table) block(x uint64) (counters, door *uint64) {
	i := 2 * (x >> (64 - t.blockBits) & (1<<t.blockBits - 1))
	return &t.words[i], &t.words[i+1]
}

func doorBit(x uint64) uint64 { return 1 << (x >> 24 & 63) }

// nibble is the position, 0 to 15, of x's counter in row r of its block:
// one of the row's four.
func nibble(x uint64, r int) uint {
	return uint(r*4) + uint(x>>(16+2*r)&3)
}

func minCount(w, x uint64) uint64 {
	m := uint64(maxCount)
	for r := range 4 {
		m = min(m, w>>(nibble(x, r)*nibbleBits)&maxCount)
	}
	return m
}

// increment adds one to those of x's counters in w that hold the least of
// them (conservative update: a counter shared with a more frequent key is
// not pushed further up), unless they are at their top.
func increment(w, x uint64) uint64 {
	m := minCount(w, x)
	if m == maxCount {
		return w
	}
	next := w
	for r := range 4 {
		n := nibble(x, r) * nibbleBits
		if w>>n&maxCount == m {
			next += 1 << n
		}
	}
	return next
}

// tick counts an increment and, every period, halves the counters and
// clears the doorkeeper. The increment that reaches the period does the
// halving; others that arrive meanwhile count on.
func (t *table) tick() {
	if t.added.Add(1) < t.period || !t.halving.CompareAndSwap(false, true) {
		return
	}
	for i := 0; i < len(t.words); i += 2 {
		w := &t.words[i]
		for {
			old := atomic.LoadUint64(w)
			if atomic.CompareAndSwapUint64(w, old, old>>1&halfMask) {
				break
			}
		}
		atomic.StoreUint64(&t.words[i+1], 0)
	}
	t.added.Store(0)
	t.halving.Store(false)
}
