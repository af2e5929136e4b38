package slab

import "sync/atomic"

// TagBits is how many bits of a key's hash an Index keeps per slot. They
// choose the slot a key starts probing from, so the index never needs the
// key to move a slot (growing, deleting), and they reject almost every
// other key in the probe without reading its record.
const TagBits = 64 - LocBits

// maxIndexBits bounds an Index at 2^TagBits slots: the home slot is the
// tag's top bits.
const maxIndexBits = TagBits

const minIndexBits = 3

// Index maps keys to the locations of their records: an open-addressing
// table with linear probing, one uint64 per slot (the tag in the top TagBits
// bits, the Loc below; zero is empty). It holds no pointers, so it costs the
// collector nothing however many keys it holds. Keys themselves live in the
// records: callers compare them in Find's match function. The zero value is
// an empty index. An Index is not safe for concurrent use, except that
// Stamp and SetStamp may be called by readers holding a lock that keeps
// writers out (a shard's read lock).
//
// Each slot also has a 32-bit stamp, kept beside it as it moves, that the
// index does not interpret: the store's per-key access clock or counter
// (OBJECT IDLETIME and FREQ), 4 bytes a slot.
type Index struct {
	slots  []uint64
	stamps []uint32 // stamps[i] is slots[i]'s; read and written atomically
	count  int
	bits   uint // len(slots) == 1<<bits once allocated
}

// Find returns the position of the first slot, probing from tag's home,
// whose tag is tag and for whose location match is true.
func (ix *Index) Find(tag uint32, match func(Loc) bool) (pos int, ok bool) {
	ix.ForTag(tag, func(p int, loc Loc) bool {
		if match(loc) {
			pos, ok = p, true
			return false
		}
		return true
	})
	return pos, ok
}

// ForTag calls fn with the position and location of every slot with tag
// tag in tag's probe run, until fn returns false. fn must not change the
// index.
func (ix *Index) ForTag(tag uint32, fn func(pos int, loc Loc) bool) {
	if ix.count == 0 {
		return
	}
	mask := len(ix.slots) - 1
	for i := ix.home(tag); ; i = (i + 1) & mask {
		s := ix.slots[i]
		if s == 0 {
			return
		}
		if uint32(s>>LocBits) == tag && !fn(i, Loc(s&(1<<LocBits-1))) {
			return
		}
	}
}

// Insert adds a slot for tag and loc with stamp; the caller knows the key
// is absent. It reports false only if the index is at its largest size and
// full.
func (ix *Index) Insert(tag uint32, loc Loc, stamp uint32) bool {
	if (ix.count+1)*4 > len(ix.slots)*3 && ix.bits < maxIndexBits {
		ix.resize(max(ix.bits+1, minIndexBits))
	}
	if ix.count+1 >= len(ix.slots) { // one slot stays empty, so every probe ends
		return false
	}
	ix.put(uint64(tag)<<LocBits|uint64(loc), stamp)
	ix.count++
	return true
}

// Reserve grows the table, if it must, so that it holds n slots without
// growing again (a bulk load, told how many keys are coming).
func (ix *Index) Reserve(n int) {
	bits := max(ix.bits, minIndexBits)
	for bits < maxIndexBits && n*4 > (1<<bits)*3 {
		bits++
	}
	if bits > ix.bits || ix.slots == nil {
		ix.resize(bits)
	}
}

// Stamp returns the stamp of the slot at pos.
func (ix *Index) Stamp(pos int) uint32 { return atomic.LoadUint32(&ix.stamps[pos]) }

// SetStamp sets the stamp of the slot at pos.
func (ix *Index) SetStamp(pos int, stamp uint32) { atomic.StoreUint32(&ix.stamps[pos], stamp) }

// Loc returns the location in the slot at pos.
func (ix *Index) Loc(pos int) Loc { return Loc(ix.slots[pos] & (1<<LocBits - 1)) }

// Tag returns the tag in the slot at pos.
func (ix *Index) Tag(pos int) uint32 { return uint32(ix.slots[pos] >> LocBits) }

// Replace points the slot at pos to loc, keeping its tag.
func (ix *Index) Replace(pos int, loc Loc) {
	ix.slots[pos] = ix.slots[pos]&^(1<<LocBits-1) | uint64(loc)
}

// Delete empties the slot at pos, shifting later slots of its probe run back
// so that no tombstone is needed. It may shrink the table, so positions
// found before it are no longer valid.
func (ix *Index) Delete(pos int) {
	mask := len(ix.slots) - 1
	i := pos
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := ix.slots[j]
		if s == 0 {
			break
		}
		// s may move to i unless its home lies cyclically in (i, j].
		h := ix.home(uint32(s >> LocBits))
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			ix.slots[i] = s
			ix.stamps[i] = ix.stamps[j]
			i = j
		}
	}
	ix.slots[i] = 0
	ix.stamps[i] = 0
	ix.count--
	if ix.count*8 < len(ix.slots) && ix.bits > minIndexBits {
		ix.resize(ix.bits - 1)
	}
}

// Len returns the number of slots in use.
func (ix *Index) Len() int { return ix.count }

// slotBytes is what a slot takes: its uint64 and its stamp.
const slotBytes = 8 + 4

// Bytes returns the memory the table takes, stamps included.
func (ix *Index) Bytes() int { return len(ix.slots) * slotBytes }

// Range calls fn with the position and location of every slot in use, in
// slot order, until fn returns false. fn must not change the index.
func (ix *Index) Range(fn func(pos int, loc Loc) bool) {
	ix.RangeFrom(0, fn)
}

// RangeFrom is Range starting at slot start, wrapping around to the slots
// before it.
func (ix *Index) RangeFrom(start int, fn func(pos int, loc Loc) bool) {
	n := len(ix.slots)
	if ix.count == 0 || n == 0 {
		return
	}
	start &= n - 1
	for k := range n {
		i := (start + k) & (n - 1)
		if s := ix.slots[i]; s != 0 && !fn(i, Loc(s&(1<<LocBits-1))) {
			return
		}
	}
}

// Slots returns the size of the table, for RangeFrom's start.
func (ix *Index) Slots() int { return len(ix.slots) }

// Reset empties the index and frees its table.
func (ix *Index) Reset() { *ix = Index{} }

func (ix *Index) home(tag uint32) int { return int(tag >> (TagBits - ix.bits)) }

func (ix *Index) resize(bits uint) {
	old, oldStamps := ix.slots, ix.stamps
	ix.slots = make([]uint64, 1<<bits)
	ix.stamps = make([]uint32, 1<<bits)
	ix.bits = bits
	for i, s := range old {
		if s != 0 {
			ix.put(s, oldStamps[i])
		}
	}
}

// put stores slot value s and its stamp at the first free slot from its
// home.
func (ix *Index) put(s uint64, stamp uint32) {
	mask := len(ix.slots) - 1
	i := ix.home(uint32(s >> LocBits))
	for ix.slots[i] != 0 {
		i = (i + 1) & mask
	}
	ix.slots[i] = s
	ix.stamps[i] = stamp
}
