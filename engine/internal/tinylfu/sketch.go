// Package tinylfu is the frequency sketch behind the store's LFU eviction:
// how often each key was asked for lately, kept for keys the store holds and
// for keys it no longer holds, in about a byte and a half per key and no
// per-key map.
//
// It is TinyLFU's sketch (Einziger, Friedman and Manes): a count-min sketch
// of 4-bit counters with conservative update, a doorkeeper bit set that
// takes a key's first occurrence so that keys seen once leave the counters
// alone, and a periodic halving of every counter (and a clearing of the
// doorkeeper) that ages what it remembers, so that a key hot an hour ago
// does not stay hot for ever. The four counters of a key share one 64-bit
// word (one row of four counters each), so an increment is one
// compare-and-swap, and a counter at 15 (a hot key) costs a read only.
//
// All methods are safe for concurrent use without a lock: counters are
// updated with atomic operations, and Resize swaps the whole table.
package tinylfu

import (
	"math/bits"
	"sync/atomic"
)

const (
	// keysPerWord and doorBitsPerKey size a table for a capacity: a word
	// (16 counters) for every eight keys and four doorkeeper bits a key,
	// 1.5 bytes a key; the capacity is rounded up to a power of two.
	keysPerWord    = 8
	doorBitsPerKey = 4
	// sampleFactor is how many increments (per key of capacity) pass
	// between two halvings: TinyLFU's sample size W = 10 x capacity.
	sampleFactor = 10
	// MinCapacity is the smallest table Resize makes.
	MinCapacity = 1 << 10
	// MaxCapacity is the largest: 2^27 keys, 192 MiB.
	MaxCapacity = 1 << 27

	maxCount   = 15
	halfMask   = 0x7777_7777_7777_7777
	fibonacci  = 0x9E37_79B9_7F4A_7C15
	nibbleBits = 4
)

// Sketch estimates how often each hash was counted since about the last
// sampleFactor x capacity increments. The zero value counts nothing until
// Resize gives it a table.
type Sketch struct {
	t atomic.Pointer[table]
}

type table struct {
	words    []uint64 // 16 counters each: row r holds nibbles 4r..4r+3
	door     []uint64 // the doorkeeper's bits
	wordMask uint64
	doorBits uint // len(door)*64 == 1<<doorBits
	capacity int
	period   int64

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
		return 8 * (len(t.words) + len(t.door))
	}
	return 0
}

// Resize sizes the sketch for about keys keys (rounded up to a power of
// two, within MinCapacity and MaxCapacity), or frees it if keys is zero or
// less. A sketch already of that size is left as it is. One that grows
// keeps what it counted: a key's word in the larger table is a copy of its
// word in the smaller (the word is chosen by the hash's low bits), and its
// doorkeeper bit is set if its old one was. One that shrinks starts empty.
// Increments that race with Resize may be lost.
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
	nWords := c / keysPerWord
	nDoor := c * doorBitsPerKey / 64
	t := &table{
		words:    make([]uint64, nWords),
		door:     make([]uint64, nDoor),
		wordMask: uint64(nWords - 1),
		doorBits: uint(bits.TrailingZeros(uint(nDoor * 64))),
		capacity: c,
		period:   int64(c) * sampleFactor,
	}
	if old != nil && old.capacity < c {
		for i := range t.words {
			t.words[i] = atomic.LoadUint64(&old.words[uint64(i)&old.wordMask])
		}
		// A doorkeeper index is the top bits of a product: each old bit
		// becomes a run of 2^shift new ones.
		shift := t.doorBits - old.doorBits
		for j := range uint64(len(old.door)) * 64 {
			if atomic.LoadUint64(&old.door[j>>6])&(1<<(j&63)) == 0 {
				continue
			}
			for k := j << shift; k < (j+1)<<shift; k++ {
				t.door[k>>6] |= 1 << (k & 63)
			}
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
		for i := range t.door {
			atomic.StoreUint64(&t.door[i], 0)
		}
		t.added.Store(0)
	}
}

// Increment counts one occurrence of h. h must be a well-mixed hash (the
// store's seeded maphash): the word, the doorkeeper bit and the counters
// are chosen from its bits.
func (s *Sketch) Increment(h uint64) {
	t := s.t.Load()
	if t == nil {
		return
	}
	d, bit := t.doorOf(h)
	if atomic.LoadUint64(d)&bit == 0 {
		atomic.OrUint64(d, bit)
		t.tick()
		return
	}
	w := &t.words[h&t.wordMask]
	for {
		old := atomic.LoadUint64(w)
		next := increment(old, h)
		if next == old {
			return // every counter of h is at its top
		}
		if atomic.CompareAndSwapUint64(w, old, next) {
			t.tick()
			return
		}
	}
}

// Estimate returns how often h was counted, 0 to 16: the counters' count
// (at most 15), and one if the doorkeeper has seen h since it was last
// cleared.
func (s *Sketch) Estimate(h uint64) int {
	t := s.t.Load()
	if t == nil {
		return 0
	}
	n := int(minCount(atomic.LoadUint64(&t.words[h&t.wordMask]), h))
	if d, bit := t.doorOf(h); atomic.LoadUint64(d)&bit != 0 {
		n++
	}
	return n
}

// doorOf returns the doorkeeper word and bit of h, from bits of h that the
// word's index and the counters' choice do not use.
func (t *table) doorOf(h uint64) (*uint64, uint64) {
	i := (h * fibonacci) >> (64 - t.doorBits)
	return &t.door[i>>6], 1 << (i & 63)
}

// nibble is the position, 0 to 15, of h's counter in row r of its word: one
// of the row's four, chosen by two bits of h above those that choose the
// word (a table has at most 2^24 words).
func nibble(h uint64, r int) uint {
	return uint(r*4) + uint(h>>(32+2*r)&3)
}

func minCount(w, h uint64) uint64 {
	m := uint64(maxCount)
	for r := range 4 {
		m = min(m, w>>(nibble(h, r)*nibbleBits)&maxCount)
	}
	return m
}

// increment adds one to those of h's counters in w that hold the least of
// them (conservative update: a counter shared with a more frequent key is
// not pushed further up), unless they are at their top.
func increment(w, h uint64) uint64 {
	m := minCount(w, h)
	if m == maxCount {
		return w
	}
	next := w
	for r := range 4 {
		n := nibble(h, r) * nibbleBits
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
	for i := range t.words {
		w := &t.words[i]
		for {
			old := atomic.LoadUint64(w)
			if atomic.CompareAndSwapUint64(w, old, old>>1&halfMask) {
				break
			}
		}
	}
	for i := range t.door {
		atomic.StoreUint64(&t.door[i], 0)
	}
	t.added.Store(0)
	t.halving.Store(false)
}
