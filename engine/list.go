package engine

import (
	"encoding/binary"
	"slices"
	"sync/atomic"
)

// A list is held in one of two forms, both made of the same entries: an
// element's length as a uvarint, its bytes, and the length's uvarint
// again with its bytes reversed, so that the entries can be read from
// either end, as Redis's listpack entries carry a back-length.
//
//   - a blob in the record, for a small list (at most listMaxCompactEntries
//     elements and listMaxCompactBytes of entries, and within one node of
//     list-max-listpack-size): a kind byte and the entries;
//   - a listObject on the heap past that: a deque of chunks, each a buffer
//     of entries with room at both ends, filled up to the node size
//     list-max-listpack-size sets, as Redis's quicklist nodes are. A push
//     or pop at either end touches one chunk.
//
// Redis 7.0 holds every list in a quicklist, and OBJECT ENCODING says
// "quicklist" for both forms.
const (
	listKindBlob byte = 1

	listMaxCompactEntries = 128
	listMaxCompactBytes   = 1024
)

// ListMaxListpackSize is the default of list-max-listpack-size: nodes of
// at most 8 KB.
const ListMaxListpackSize = -2

// listNodeLimit is a node's bound as list-max-listpack-size gives it: a
// positive size is a count of entries (and at most 8 KB of them, Redis's
// safety limit); -1 to -5 are 4, 8, 16, 32 and 64 KB, a smaller size being
// -5, as Redis reads it.
type listNodeLimit struct {
	entries int // 0: no count limit
	bytes   int
}

func nodeLimitOf(size int64) listNodeLimit {
	if size >= 0 {
		return listNodeLimit{entries: int(max(size, 1)), bytes: 8192}
	}
	level := min(-size, 5)
	return listNodeLimit{bytes: 4096 << (level - 1)}
}

// listConfig holds list-max-listpack-size for a Store.
type listConfig struct {
	size atomic.Int64 // list-max-listpack-size; the zero Store's is set by New
}

// SetListMaxListpackSize sets list-max-listpack-size, which bounds the
// nodes of lists written from now on.
func (s *Store) SetListMaxListpackSize(n int64) { s.lists.size.Store(n) }

// ListMaxListpackSize is list-max-listpack-size.
func (s *Store) ListMaxListpackSize() int64 { return s.lists.size.Load() }

func (s *Store) nodeLimit() listNodeLimit { return nodeLimitOf(s.lists.size.Load()) }

// entryLen is the length of e's entry.
func entryLen(n int) int { return 2*uvarintLen(uint64(n)) + n }

func appendEntry(b, e []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(e)))
	b = append(b, e...)
	var tmp [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(tmp[:], uint64(len(e)))
	for i := k - 1; i >= 0; i-- {
		b = append(b, tmp[i])
	}
	return b
}

// putEntry writes e's entry into b, which is exactly entryLen long.
func putEntry(b, e []byte) {
	k := binary.PutUvarint(b, uint64(len(e)))
	copy(b[k:], e)
	for i := range k {
		b[len(b)-1-i] = b[i]
	}
}

// entryAt is the element whose entry starts at b[pos] and where the next
// entry starts.
func entryAt(b []byte, pos int) (e []byte, next int) {
	n, k := binary.Uvarint(b[pos:])
	start := pos + k
	end := start + int(n)
	return b[start:end:end], end + k
}

// entryBefore is the element whose entry ends at b[end] and where the entry
// starts.
func entryBefore(b []byte, end int) (e []byte, start int) {
	// The reversed uvarint: read from its last byte back, its first is
	// the one without the continuation bit.
	var tmp [binary.MaxVarintLen64]byte
	k := 0
	for {
		c := b[end-1-k]
		tmp[k] = c
		k++
		if c < 0x80 {
			break
		}
	}
	n, _ := binary.Uvarint(tmp[:k])
	stop := end - k
	begin := stop - int(n)
	return b[begin:stop:stop], begin - k
}

// listChunk is a heap list's node: entries in buf[lo:hi], n of them.
type listChunk struct {
	buf    []byte
	lo, hi int
	n      int
}

func (ch *listChunk) size() int { return ch.hi - ch.lo }

// fits reports whether an entry of l bytes may join ch under limit.
func (ch *listChunk) fits(l int, limit listNodeLimit) bool {
	if limit.entries > 0 && ch.n >= limit.entries {
		return false
	}
	return ch.size()+l <= limit.bytes
}

// room makes room for l bytes at ch's front or back, growing buf by
// doubling up to what the limit allows.
func (ch *listChunk) room(l int, front bool, limit listNodeLimit) {
	if front && ch.lo >= l || !front && len(ch.buf)-ch.hi >= l {
		return
	}
	used := ch.size()
	capacity := max(64, 2*len(ch.buf))
	for capacity < used+l {
		capacity *= 2
	}
	capacity = min(capacity, max(limit.bytes, used+l))
	buf := make([]byte, capacity)
	lo := 0
	if front {
		lo = capacity - used
	}
	copy(buf[lo:], ch.buf[ch.lo:ch.hi])
	ch.buf, ch.lo, ch.hi = buf, lo, lo+used
}

func (ch *listChunk) pushBack(e []byte, limit listNodeLimit) {
	l := entryLen(len(e))
	ch.room(l, false, limit)
	putEntry(ch.buf[ch.hi:ch.hi+l], e)
	ch.hi += l
	ch.n++
}

func (ch *listChunk) pushFront(e []byte, limit listNodeLimit) {
	l := entryLen(len(e))
	ch.room(l, true, limit)
	putEntry(ch.buf[ch.lo-l:ch.lo], e)
	ch.lo -= l
	ch.n++
}

// each calls fn with ch's elements from the first until fn returns false,
// and reports whether fn always returned true.
func (ch *listChunk) each(fn func([]byte) bool) bool {
	for pos := ch.lo; pos < ch.hi; {
		var e []byte
		e, pos = entryAt(ch.buf, pos)
		if !fn(e) {
			return false
		}
	}
	return true
}

// eachRev is each from the last element.
func (ch *listChunk) eachRev(fn func([]byte) bool) bool {
	for end := ch.hi; end > ch.lo; {
		var e []byte
		e, end = entryBefore(ch.buf, end)
		if !fn(e) {
			return false
		}
	}
	return true
}

// listObject is a list on the heap: its chunks in order, none empty.
type listObject struct {
	chunks []*listChunk
	n      int   // elements
	bytes  int64 // the chunks' buffers' capacity
}

// What a heap list is charged: its chunks' buffers, and per chunk its
// struct and the pointer to it, over a fixed base.
const (
	listObjectBase    = 64
	listChunkOverhead = 64
)

func (o *listObject) charge() int64 {
	return listObjectBase + o.bytes + int64(cap(o.chunks))*8 + int64(len(o.chunks))*listChunkOverhead
}

func (o *listObject) clone() heapObject {
	c := &listObject{chunks: make([]*listChunk, len(o.chunks)), n: o.n}
	for i, ch := range o.chunks {
		buf := slices.Clone(ch.buf[ch.lo:ch.hi])
		c.chunks[i] = &listChunk{buf: buf, hi: len(buf), n: ch.n}
		c.bytes += int64(len(buf))
	}
	return c
}

// nextChunk is a new chunk beside full, a chunk that had no room left,
// its buffer as big as full's, with all its room at the front or the back:
// a list that fills chunks grows by whole ones, where doubling a buffer up
// to full's size would allocate it about twice.
func nextChunk(full *listChunk, front bool) *listChunk {
	ch := &listChunk{buf: make([]byte, len(full.buf))}
	if front {
		ch.lo, ch.hi = len(ch.buf), len(ch.buf)
	}
	return ch
}

func (o *listObject) pushBack(e []byte, limit listNodeLimit) {
	l := entryLen(len(e))
	switch {
	case len(o.chunks) == 0:
		o.chunks = append(o.chunks, &listChunk{})
	case !o.chunks[len(o.chunks)-1].fits(l, limit):
		ch := nextChunk(o.chunks[len(o.chunks)-1], false)
		o.chunks = append(o.chunks, ch)
		o.bytes += int64(len(ch.buf))
	}
	ch := o.chunks[len(o.chunks)-1]
	before := len(ch.buf)
	ch.pushBack(e, limit)
	o.bytes += int64(len(ch.buf) - before)
	o.n++
}

func (o *listObject) pushFront(e []byte, limit listNodeLimit) {
	l := entryLen(len(e))
	switch {
	case len(o.chunks) == 0:
		o.chunks = append(o.chunks, &listChunk{})
	case !o.chunks[0].fits(l, limit):
		ch := nextChunk(o.chunks[0], true)
		o.chunks = slices.Insert(o.chunks, 0, ch)
		o.bytes += int64(len(ch.buf))
	}
	ch := o.chunks[0]
	before := len(ch.buf)
	ch.pushFront(e, limit)
	o.bytes += int64(len(ch.buf) - before)
	o.n++
}

// popFront removes the first element and returns a copy of it; the list
// is not empty.
func (o *listObject) popFront() []byte {
	ch := o.chunks[0]
	e, next := entryAt(ch.buf, ch.lo)
	e = slices.Clone(e)
	ch.lo = next
	ch.n--
	o.n--
	if ch.n == 0 {
		o.bytes -= int64(len(ch.buf))
		o.chunks[0] = nil
		o.chunks = o.chunks[1:]
	}
	return e
}

// popBack removes the last element and returns a copy of it; the list is
// not empty.
func (o *listObject) popBack() []byte {
	last := len(o.chunks) - 1
	ch := o.chunks[last]
	e, start := entryBefore(ch.buf, ch.hi)
	e = slices.Clone(e)
	ch.hi = start
	ch.n--
	o.n--
	if ch.n == 0 {
		o.bytes -= int64(len(ch.buf))
		o.chunks[last] = nil
		o.chunks = o.chunks[:last]
	}
	return e
}

// editAt changes the heap list o around index i (0 <= i < o.n): edit
// gets copies of the elements of the chunk holding i and i's index among
// them, and returns the chunk's new elements, which replace it in as many
// chunks as limit calls for. LSET and LINSERT cost one chunk so, not the
// list.
func (o *listObject) editAt(i int, limit listNodeLimit, edit func(elems [][]byte, at int) [][]byte) {
	ci := 0
	for ; i >= o.chunks[ci].n; ci++ {
		i -= o.chunks[ci].n
	}
	old := o.chunks[ci]
	var elems [][]byte
	old.each(func(e []byte) bool { elems = append(elems, slices.Clone(e)); return true })
	rebuilt := &listObject{}
	for _, e := range edit(elems, i) {
		rebuilt.pushBack(e, limit)
	}
	o.chunks = slices.Replace(o.chunks, ci, ci+1, rebuilt.chunks...)
	o.n += rebuilt.n - old.n
	o.bytes += rebuilt.bytes - int64(len(old.buf))
}

// listView reads a list in either form. Elements it hands out alias the
// blob (so the arena) or a chunk: they must be copied to be kept.
type listView struct {
	blob []byte
	obj  *listObject
}

func viewList(c collection) listView {
	v := listView{blob: c.blob}
	if c.obj != nil {
		v.obj = c.obj.(*listObject)
	}
	return v
}

func (v listView) len() int {
	if v.obj != nil {
		return v.obj.n
	}
	if len(v.blob) == 0 {
		return 0
	}
	n := 0
	for pos := 1; pos < len(v.blob); n++ {
		_, pos = entryAt(v.blob, pos)
	}
	return n
}

// each calls fn with the elements from index from (>= 0) on, with their
// indexes, until fn returns false.
func (v listView) each(from int, fn func(i int, e []byte) bool) {
	i := 0
	if v.obj == nil {
		if len(v.blob) == 0 {
			return
		}
		for pos := 1; pos < len(v.blob); i++ {
			var e []byte
			e, pos = entryAt(v.blob, pos)
			if i >= from && !fn(i, e) {
				return
			}
		}
		return
	}
	for _, ch := range v.obj.chunks {
		if i+ch.n <= from {
			i += ch.n
			continue
		}
		if !ch.each(func(e []byte) bool {
			ok := i < from || fn(i, e)
			i++
			return ok
		}) {
			return
		}
	}
}

// eachRev calls fn with the elements from index from (< len) back to the
// first, with their indexes, until fn returns false.
func (v listView) eachRev(from int, fn func(i int, e []byte) bool) {
	if v.obj == nil {
		if len(v.blob) == 0 {
			return
		}
		i := v.len() - 1
		for end := len(v.blob); end > 1; i-- {
			var e []byte
			e, end = entryBefore(v.blob, end)
			if i <= from && !fn(i, e) {
				return
			}
		}
		return
	}
	i := v.obj.n - 1
	for ci := len(v.obj.chunks) - 1; ci >= 0; ci-- {
		ch := v.obj.chunks[ci]
		if i-ch.n >= from {
			i -= ch.n
			continue
		}
		if !ch.eachRev(func(e []byte) bool {
			ok := i > from || fn(i, e)
			i--
			return ok
		}) {
			return
		}
	}
}

// at is the element at index i, 0 <= i < len, aliased.
func (v listView) at(i int) []byte {
	var out []byte
	if v.obj != nil && i >= v.obj.n/2 {
		v.eachRev(i, func(_ int, e []byte) bool { out = e; return false })
		return out
	}
	v.each(i, func(_ int, e []byte) bool { out = e; return false })
	return out
}

// elems are copies of the elements from start to stop, inclusive, both
// within the list.
func (v listView) elems(start, stop int) [][]byte {
	// The copies share one allocation: LRANGE of 100 elements made 101.
	size := 0
	v.each(start, func(i int, e []byte) bool {
		if i > stop {
			return false
		}
		size += len(e)
		return true
	})
	buf := make([]byte, 0, size)
	out := make([][]byte, 0, max(stop-start+1, 0))
	v.each(start, func(i int, e []byte) bool {
		if i > stop {
			return false
		}
		at := len(buf)
		buf = append(buf, e...)
		out = append(out, buf[at:len(buf):len(buf)])
		return true
	})
	return out
}

// newListOf is a list of elems in the form its size calls for.
func newListOf(elems [][]byte, limit listNodeLimit) collection {
	if compactFits(len(elems), listBytes(elems), limit) {
		b := make([]byte, 1, 1+listBytes(elems))
		b[0] = listKindBlob
		for _, e := range elems {
			b = appendEntry(b, e)
		}
		return collection{blob: b}
	}
	o := &listObject{}
	for _, e := range elems {
		o.pushBack(e, limit)
	}
	return collection{obj: o, charge: o.charge()}
}

func listBytes(elems [][]byte) int {
	n := 0
	for _, e := range elems {
		n += entryLen(len(e))
	}
	return n
}

// compactFits reports whether a list of n elements, whose entries take
// size bytes, is held in its record.
func compactFits(n, size int, limit listNodeLimit) bool {
	if n > listMaxCompactEntries || size > listMaxCompactBytes || size > limit.bytes {
		return false
	}
	return limit.entries == 0 || n <= limit.entries
}

// listPush is c with elems pushed one by one at its head (left) or tail,
// as LPUSH and RPUSH push them. A heap list changes in place; a blob is
// rewritten, or moves to the heap once it outgrows its record.
func listPush(c collection, elems [][]byte, left bool, limit listNodeLimit) collection {
	v := viewList(c)
	if v.obj == nil {
		n, size := v.len(), max(len(v.blob)-1, 0)
		if compactFits(n+len(elems), size+listBytes(elems), limit) {
			b := make([]byte, 0, 1+size+listBytes(elems))
			b = append(b, listKindBlob)
			if left {
				for i := len(elems) - 1; i >= 0; i-- {
					b = appendEntry(b, elems[i])
				}
				if size > 0 {
					b = append(b, v.blob[1:]...)
				}
			} else {
				if size > 0 {
					b = append(b, v.blob[1:]...)
				}
				for _, e := range elems {
					b = appendEntry(b, e)
				}
			}
			return collection{blob: b}
		}
		o := &listObject{}
		v.each(0, func(_ int, e []byte) bool { o.pushBack(e, limit); return true })
		v.obj = o
	}
	for _, e := range elems {
		if left {
			v.obj.pushFront(e, limit)
		} else {
			v.obj.pushBack(e, limit)
		}
	}
	return collection{obj: v.obj, charge: v.obj.charge()}
}

// listPop is c with count elements (at most its length) removed from its
// head (left) or tail, and copies of them in the order they were popped.
func listPop(c collection, count int, left bool, limit listNodeLimit) (collection, [][]byte) {
	return listPopInto(c, count, left, limit, nil)
}

// listPopInto is listPop appending the popped elements to dst[:0] when
// it has room for them (LPopOne's array on its stack).
func listPopInto(c collection, count int, left bool, limit listNodeLimit, dst [][]byte) (collection, [][]byte) {
	v := viewList(c)
	count = min(count, v.len())
	popped := dst[:0]
	if cap(popped) < count {
		popped = make([][]byte, 0, count)
	}
	if v.obj != nil {
		for range count {
			if left {
				popped = append(popped, v.obj.popFront())
			} else {
				popped = append(popped, v.obj.popBack())
			}
		}
		return shrunk(v.obj, limit), popped
	}
	n := v.len()
	if left {
		popped = v.elems(0, count-1)
		return newListOf(v.elems(count, n-1), limit), popped
	}
	v.eachRev(n-1, func(i int, e []byte) bool {
		if len(popped) == count {
			return false
		}
		popped = append(popped, slices.Clone(e))
		return true
	})
	return newListOf(v.elems(0, n-count-1), limit), popped
}

// shrunk is the heap list o after removals: back in its record once it is
// a quarter of what a record holds, so that a list that grows and shrinks
// around the bound does not move at every write.
func shrunk(o *listObject, limit listNodeLimit) collection {
	if o.n <= listMaxCompactEntries/4 {
		size := 0
		for _, ch := range o.chunks {
			size += ch.size()
		}
		if size <= listMaxCompactBytes/4 {
			v := listView{obj: o}
			return newListOf(v.elems(0, o.n-1), limit)
		}
	}
	return collection{obj: o, charge: o.charge()}
}

// listReplace is a list of elems, for the commands that change a list in
// its middle (LREM; LSET, LINSERT and LTRIM of a list in its record):
// Redis's LREM is O(n) as this is.
func listReplace(elems [][]byte, limit listNodeLimit) collection {
	return newListOf(elems, limit)
}

// exportList is the portable form of the list c (see Store.Export): the
// blob of a list in its record, or a blob of all the elements of one on
// the heap, which may be longer than a record would hold.
func exportList(c collection) []byte {
	if c.obj == nil {
		return slices.Clone(c.blob)
	}
	v := viewList(c)
	b := []byte{listKindBlob}
	v.each(0, func(_ int, e []byte) bool { b = appendEntry(b, e); return true })
	return b
}

// importList is the list whose portable form is b, in the form its size
// calls for; ok is false if b is no list's form or holds no element.
func importList(b []byte) (collection, bool) {
	if len(b) < 2 || b[0] != listKindBlob {
		return collection{}, false
	}
	var elems [][]byte
	for pos := 1; pos < len(b); {
		n, k := binary.Uvarint(b[pos:])
		if k <= 0 || n > uint64(len(b)-pos-k) {
			return collection{}, false
		}
		end := pos + k + int(n)
		if len(b)-end < k {
			return collection{}, false
		}
		for i := range k {
			if b[end+i] != b[pos+k-1-i] {
				return collection{}, false
			}
		}
		elems = append(elems, b[pos+k:end])
		pos = end + k
	}
	return newListOf(elems, nodeLimitOf(ListMaxListpackSize)), true
}
