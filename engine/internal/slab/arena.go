// Package slab keeps the engine's records off Go's heap: an Arena of large
// mapped segments that records are appended to, and an Index, a
// pointer-free open-addressing table from a key's hash to where its record
// is. The collector never scans either, so its work does not grow with the
// number of keys.
//
// The arena is log-structured. Small blocks are appended to a head segment;
// a full head is sealed and a new one mapped. Freeing a block counts its
// bytes as dead, and remembers the block for the next Alloc of its exact
// size, which fills it again (a cache's churn writes values of the sizes
// it evicts: a freed block is then written over rather than moved away);
// a sealed segment whose blocks are all dead is unmapped at once. Space
// freed in segments still partly live and not taken again is won back by
// compaction: the owner picks the segment with the fewest live bytes (Pick),
// walks its blocks (Walk), moves each one still in use to the head with
// Alloc and frees it, and finally calls Unpin, which unmaps the emptied
// segment. Only the owner knows which blocks are in use, so compaction is
// driven from outside. Blocks too large for a segment get a mapping of their
// own, unmapped when they are freed.
//
// Locations are stable until their block is freed, and the bytes of a block
// never change after Alloc returns: a reader needs no lock of the arena's,
// only the guarantee (the owner's) that the block is not freed while it
// reads.
package slab

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
)

const (
	// SegmentSize is the size of the segments small blocks share.
	SegmentSize = 1 << offsetBits
	// MaxSmall is the largest block, header included, kept in a shared
	// segment; larger ones get a mapping of their own, so compaction never
	// copies them and freeing one returns its memory at once.
	MaxSmall = SegmentSize / 8

	offsetBits  = 20
	idBits      = 20
	maxSegments = 1 << idBits
	headerSize  = 4 // each block starts with its payload length
	pageSize    = 4096
	// maxReuse bounds the freed blocks remembered for reuse, of all sizes
	// together (16 bytes each).
	maxReuse = 1 << 16
)

// ErrFull is returned when the arena cannot map more memory or has used
// every segment id.
var ErrFull = errors.New("slab: arena full")

// Loc is where a block is: its segment id and offset. The zero Loc is never
// a block's, and a Loc fits in LocBits bits.
type Loc uint64

// LocBits is the number of bits a Loc uses.
const LocBits = idBits + offsetBits

func makeLoc(id uint32, off int) Loc { return Loc(uint64(id)<<offsetBits | uint64(off)) }

func (l Loc) id() uint32 { return uint32(l >> offsetBits) }
func (l Loc) off() int   { return int(l & (SegmentSize - 1)) }

// segment is one mapping. Its fields but mem are guarded by Arena.mu; mem is
// set before the segment is published and never changes.
type segment struct {
	mem    []byte
	seq    uint64 // which mapping this is: ids are used again
	used   int    // bytes handed out, from the start
	live   int    // bytes of blocks handed out and not freed
	sealed bool   // takes no more blocks: full, or a single large block
	large  bool   // holds a single large block
	pinned bool   // being compacted: kept mapped when it empties
}

// Arena is a log-structured allocator of blocks in mapped memory. The zero
// value is ready to use. All methods are safe for concurrent use.
type Arena struct {
	mu    sync.Mutex
	table atomic.Pointer[[]*segment] // by id; id 0 is never used
	free  []uint32                   // released ids, reused first
	head  uint32                     // the segment small blocks go to; 0: none yet
	seq   uint64                     // the last mapping's segment.seq
	// reuse holds freed blocks of shared segments by size, header
	// included, newest last; reused counts them. An entry whose segment
	// was unmapped or is being compacted since is dropped when found.
	reuse  map[int][]freed
	reused int

	mapped    atomic.Int64 // bytes mapped
	live      atomic.Int64 // bytes of live blocks, headers included
	smallMap  atomic.Int64 // bytes mapped for shared segments
	smallLive atomic.Int64 // live bytes in shared segments
}

// freed is a block Free remembered for reuse.
type freed struct {
	loc Loc
	seq uint64 // its segment's, when freed
}

// Block returns the payload of the block at loc. The slice aliases the
// arena: it must not be written, and is valid only while the block is not
// freed.
func (a *Arena) Block(loc Loc) []byte {
	seg := (*a.table.Load())[loc.id()]
	off := loc.off()
	n := int(binary.LittleEndian.Uint32(seg.mem[off:]))
	start := off + headerSize
	return seg.mem[start : start+n : start+n]
}

// Alloc reserves a block of n payload bytes, lets fill write them, and
// returns the block's location. fill must only write its argument; for a
// small block it runs under the arena's lock, so it must be quick.
func (a *Arena) Alloc(n int, fill func(payload []byte)) (Loc, error) {
	size := headerSize + n
	if size > MaxSmall {
		return a.allocLarge(n, fill)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if loc, seg, ok := a.takeFreed(size); ok {
		fill(seg.mem[loc.off()+headerSize : loc.off()+size : loc.off()+size])
		seg.live += size
		a.live.Add(int64(size))
		a.smallLive.Add(int64(size))
		return loc, nil
	}
	seg := a.segment(a.head)
	if seg == nil || seg.used+size > len(seg.mem) {
		if seg != nil {
			seg.sealed = true
			a.releaseIfEmpty(a.head, seg)
		}
		id, err := a.mapSegment(SegmentSize, false)
		if err != nil {
			a.head = 0
			return 0, err
		}
		a.head, seg = id, a.segment(id)
	}
	off := seg.used
	binary.LittleEndian.PutUint32(seg.mem[off:], uint32(n))
	fill(seg.mem[off+headerSize : off+size : off+size])
	seg.used += size
	seg.live += size
	a.live.Add(int64(size))
	a.smallLive.Add(int64(size))
	return makeLoc(a.head, off), nil
}

// allocLarge gives a block a mapping of its own. It is filled without the
// lock: nobody can reach the block before Alloc returns its location.
func (a *Arena) allocLarge(n int, fill func([]byte)) (Loc, error) {
	size := headerSize + n
	if size > 1<<32-1+headerSize {
		return 0, ErrFull
	}
	mapped := (size + pageSize - 1) &^ (pageSize - 1)
	a.mu.Lock()
	id, err := a.mapSegment(mapped, true)
	var seg *segment
	if err == nil {
		seg = a.segment(id)
		seg.used, seg.live = size, size
		a.live.Add(int64(size))
	}
	a.mu.Unlock()
	if err != nil {
		return 0, err
	}
	binary.LittleEndian.PutUint32(seg.mem, uint32(n))
	fill(seg.mem[headerSize:size:size])
	return makeLoc(id, 0), nil
}

// Free marks the block at loc dead. The caller guarantees nobody reads it
// any more.
func (a *Arena) Free(loc Loc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id := loc.id()
	seg := a.segment(id)
	size := headerSize + int(binary.LittleEndian.Uint32(seg.mem[loc.off():]))
	seg.live -= size
	a.live.Add(-int64(size))
	if seg.large {
		a.releaseIfEmpty(id, seg)
		return
	}
	a.smallLive.Add(-int64(size))
	a.releaseIfEmpty(id, seg)
	if a.segment(id) == seg && !seg.pinned {
		if a.reuse == nil || a.reused >= maxReuse {
			// Full of sizes no Alloc asks for any more: start again.
			a.reuse, a.reused = make(map[int][]freed), 0
		}
		a.reuse[size] = append(a.reuse[size], freed{loc, seg.seq})
		a.reused++
	}
}

// takeFreed returns a freed block of size bytes, header included, to be
// filled again, and its segment, if Free remembered one whose segment is
// still mapped and not being compacted. The caller holds mu.
func (a *Arena) takeFreed(size int) (Loc, *segment, bool) {
	list := a.reuse[size]
	for len(list) > 0 {
		f := list[len(list)-1]
		list = list[:len(list)-1]
		a.reused--
		if seg := a.segment(f.loc.id()); seg != nil && seg.seq == f.seq && !seg.pinned {
			a.reuse[size] = list
			return f.loc, seg, true
		}
	}
	delete(a.reuse, size)
	return 0, nil, false
}

// Mapped returns the bytes of memory the arena has mapped.
func (a *Arena) Mapped() int64 { return a.mapped.Load() }

// Live returns the bytes of live blocks, headers included.
func (a *Arena) Live() int64 { return a.live.Load() }

// Slack returns the bytes mapped for shared segments that hold no live
// block: what compaction can win back (at most a segment of it is the head's
// unused tail).
func (a *Arena) Slack() int64 { return a.smallMap.Load() - a.smallLive.Load() }

// Shared returns the bytes mapped for segments that small blocks share.
func (a *Arena) Shared() int64 { return a.smallMap.Load() }

// Pick chooses the sealed shared segment with the fewest live bytes, if its
// live bytes are at most maxLive, and pins it for compaction: it stays
// mapped, even once empty, until Unpin. It returns 0 if there is none.
func (a *Arena) Pick(maxLive int) uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var best uint32
	bestLive := maxLive + 1
	for id, seg := range a.segments() {
		if seg != nil && seg.sealed && !seg.large && !seg.pinned && seg.live < bestLive {
			best, bestLive = uint32(id), seg.live
		}
	}
	if best != 0 {
		a.segment(best).pinned = true
	}
	return best
}

// Walk calls fn with the location and payload of every block ever allocated
// in the pinned segment id, live or not, in order; the caller tells which
// are live.
func (a *Arena) Walk(id uint32, fn func(loc Loc, payload []byte)) {
	a.mu.Lock()
	seg := a.segment(id)
	used := seg.used // sealed: no longer changes
	a.mu.Unlock()
	for off := 0; off < used; {
		n := int(binary.LittleEndian.Uint32(seg.mem[off:]))
		start := off + headerSize
		fn(makeLoc(id, off), seg.mem[start:start+n:start+n])
		off = start + n
	}
}

// Unpin ends the compaction of segment id, unmapping it if it is empty.
func (a *Arena) Unpin(id uint32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	seg := a.segment(id)
	seg.pinned = false
	a.releaseIfEmpty(id, seg)
}

// Reset unmaps everything. The caller guarantees that no block is read or
// freed meanwhile or afterwards, and that no segment is pinned.
func (a *Arena) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, seg := range a.segments() {
		if seg != nil {
			a.release(uint32(id), seg)
		}
	}
	a.head = 0
	a.reuse, a.reused = nil, 0
}

// segments returns the table of segments by id, nil before the first.
func (a *Arena) segments() []*segment {
	if t := a.table.Load(); t != nil {
		return *t
	}
	return nil
}

func (a *Arena) segment(id uint32) *segment {
	if id == 0 {
		return nil
	}
	return (*a.table.Load())[id]
}

// mapSegment maps size bytes as a new segment and returns its id. The
// caller holds mu.
func (a *Arena) mapSegment(size int, large bool) (uint32, error) {
	id, err := a.newID()
	if err != nil {
		return 0, err
	}
	mem, err := mapMemory(size)
	if err != nil {
		a.free = append(a.free, id)
		return 0, ErrFull
	}
	a.seq++
	(*a.table.Load())[id] = &segment{mem: mem, seq: a.seq, sealed: large, large: large}
	a.mapped.Add(int64(size))
	if !large {
		a.smallMap.Add(int64(size))
	}
	return id, nil
}

// newID returns an unused segment id. The caller holds mu.
func (a *Arena) newID() (uint32, error) {
	if n := len(a.free); n > 0 {
		id := a.free[n-1]
		a.free = a.free[:n-1]
		return id, nil
	}
	cur := a.segments()
	if len(cur) == 0 {
		cur = make([]*segment, 1, 16) // id 0 stays unused
	}
	if len(cur) >= maxSegments {
		return 0, ErrFull
	}
	// Readers load the table without the lock: append either copies it or
	// extends it into an element that no reader knows of yet.
	next := append(cur, nil)
	a.table.Store(&next)
	return uint32(len(cur)), nil
}

// releaseIfEmpty unmaps seg if nothing in it is live or can become live.
// The caller holds mu.
func (a *Arena) releaseIfEmpty(id uint32, seg *segment) {
	if seg.sealed && !seg.pinned && seg.live == 0 {
		a.release(id, seg)
	}
}

func (a *Arena) release(id uint32, seg *segment) {
	(*a.table.Load())[id] = nil
	a.free = append(a.free, id)
	a.mapped.Add(-int64(len(seg.mem)))
	a.live.Add(-int64(seg.live))
	if !seg.large {
		a.smallMap.Add(-int64(len(seg.mem)))
		a.smallLive.Add(-int64(seg.live))
	}
	if id == a.head {
		a.head = 0
	}
	unmapMemory(seg.mem)
}
