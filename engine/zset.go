package engine

import (
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// A sorted set is held in one of two forms, as Redis 7.0 holds it:
//
//   - a listpack blob in the record, while it has at most
//     zset-max-listpack-entries members (128) of at most
//     zset-max-listpack-value bytes (64): a kind byte, then the members in
//     order, each its score (8 bytes, little-endian IEEE 754) and a uvarint
//     length and its bytes. Operations decode it, O(n) as Redis's listpack.
//   - a zsetObject on the heap ("skiplist") past those limits, for good:
//     members are not moved back as they are removed, as in Redis. A set
//     built anew (ZUNIONSTORE and the like, ZRANGESTORE) takes the form its
//     contents call for.
//
// The limits are the store's (SetZSetListpackLimits), read when a set
// grows, as Redis reads its configuration.
const zsetKindListpack byte = 1

// Redis's defaults of zset-max-listpack-entries and zset-max-listpack-value.
const (
	DefaultZSetListpackEntries = 128
	DefaultZSetListpackValue   = 64
)

// ScoreMember is a member of a sorted set and its score. Member is a copy
// the caller may keep.
type ScoreMember struct {
	Member []byte
	Score  float64
}

// zsetObject is a sorted set on the heap: a member's score by member, and
// the order (ztree). Both share each member's string.
type zsetObject struct {
	scores map[string]float64
	tree   ztree
	bytes  int64 // the members' summed length
}

// What a heap sorted set is charged: per member its string's allocation
// rounding, its 24-byte tree entry in leaves about 70% full, and its map
// slot (string header, score and the table's slack), over a fixed base.
// Measured as Go's live heap after a collection for a million members of
// 14 bytes: 117 bytes a member (docs/design.md).
const (
	zsetObjectBase     = 128
	zsetMemberOverhead = 104
)

func newZSetObject(n int) *zsetObject {
	return &zsetObject{scores: make(map[string]float64, n)}
}

func (o *zsetObject) charge() int64 {
	return zsetObjectBase + o.bytes + int64(len(o.scores))*zsetMemberOverhead
}

func (o *zsetObject) clone() heapObject {
	c := &zsetObject{scores: make(map[string]float64, len(o.scores)), tree: o.tree.clone(), bytes: o.bytes}
	c.tree.walk(0, c.tree.len(), false, func(e zent) bool {
		c.scores[e.member] = e.score
		return true
	})
	return c
}

// set gives m the score s, adding it if new; m must be the caller's own.
// A member already there keeps its string, which map and tree share.
func (o *zsetObject) set(m string, s float64) {
	if old, ok := o.scores[m]; ok {
		if had, ok := o.tree.remove(zent{member: m, score: old}); ok {
			m = had.member
		}
	} else {
		o.bytes += int64(len(m))
	}
	o.scores[m] = s
	o.tree.insert(zent{member: m, score: s})
}

func (o *zsetObject) remove(m string) bool {
	s, ok := o.scores[m]
	if !ok {
		return false
	}
	o.removeEnt(zent{member: m, score: s})
	return true
}

// removeEnt takes out e, a member with its score.
func (o *zsetObject) removeEnt(e zent) {
	o.tree.remove(e)
	o.forget(e)
}

// forget drops e, already out of the tree, from the member index.
func (o *zsetObject) forget(e zent) {
	delete(o.scores, e.member)
	o.bytes -= int64(len(e.member))
}

// add adds m, which is not a member, with the score s; m may alias
// anything.
func (o *zsetObject) add(m []byte, s float64) {
	ms := string(m)
	o.scores[ms] = s
	o.bytes += int64(len(ms))
	o.tree.insert(zent{member: ms, score: s})
}

// rescore moves the member m from the score old to s; m may alias
// anything, the set keeps its own string.
func (o *zsetObject) rescore(m []byte, old, s float64) {
	had, ok := o.tree.remove(zent{member: unsafe.String(unsafe.SliceData(m), len(m)), score: old})
	if !ok {
		// Not a member after all: the caller read its score wrong.
		o.set(string(m), s)
		return
	}
	o.scores[had.member] = s
	o.tree.insert(zent{member: had.member, score: s})
}

// pop removes the n members (at most its size) of the lowest scores, or
// of the highest, and returns copies of them in that order, their bytes
// in one allocation: ZPOPMIN and ZPOPMAX take the tree's first or last
// rank, with no search, and one lookup of each member where remove takes
// two.
func (o *zsetObject) pop(n int, highest bool) []ScoreMember {
	n = min(n, o.tree.len())
	out := make([]ScoreMember, n)
	members := make([]string, n)
	bytes := 0
	for i := range n {
		rank := 0
		if highest {
			rank = o.tree.len() - 1
		}
		e := o.tree.removeAt(rank)
		o.forget(e)
		members[i], out[i].Score = e.member, e.score
		bytes += len(e.member)
	}
	buf := make([]byte, 0, bytes)
	for i, m := range members {
		at := len(buf)
		buf = append(buf, m...)
		out[i].Member = buf[at:len(buf):len(buf)]
	}
	return out
}

// zsetView reads a sorted set in either form. A listpack is decoded only
// for what needs its order (ranks, ranges); ZSCORE and ZCARD read the blob
// as it is. Members it hands out (zent's member) alias the blob, so the
// arena, for a listpack: they must be copied to be kept.
type zsetView struct {
	blob    []byte
	ents    []zent // the listpack's members in order, once decoded
	decoded bool
	obj     *zsetObject
}

func viewZSet(c collection) *zsetView {
	if c.obj != nil {
		return &zsetView{obj: c.obj.(*zsetObject)}
	}
	return &zsetView{blob: c.blob}
}

// list is the listpack's members in order.
func (v *zsetView) list() []zent {
	if !v.decoded {
		v.ents, v.decoded = decodeZSet(v.blob), true
	}
	return v.ents
}

// eachBlobEntry calls fn with each member of a listpack blob, aliasing it,
// until fn returns false.
func eachBlobEntry(b []byte, fn func(zent) bool) {
	if len(b) < 1 {
		return
	}
	for rest := b[1:]; len(rest) >= 9; {
		s := math.Float64frombits(binary.LittleEndian.Uint64(rest))
		n, k := binary.Uvarint(rest[8:])
		m := rest[8+k : 8+k+int(n)]
		if !fn(zent{member: unsafe.String(unsafe.SliceData(m), len(m)), score: s}) {
			return
		}
		rest = rest[8+k+int(n):]
	}
}

// decodeZSet is the members of a listpack blob, aliasing it.
func decodeZSet(b []byte) []zent { return decodeZSetInto(nil, b) }

// decodeZSetInto is decodeZSet appending to ents[:0].
func decodeZSetInto(ents []zent, b []byte) []zent {
	n := 0
	eachBlobEntry(b, func(zent) bool { n++; return true })
	// Room for one more: ZADD of a new member inserts without copying.
	ents = slices.Grow(ents[:0], n+1)
	eachBlobEntry(b, func(e zent) bool { ents = append(ents, e); return true })
	return ents
}

// encodeZSet is the listpack blob of ents, in order.
func encodeZSet(ents []zent) []byte { return encodeZSetInto(nil, ents) }

// encodeZSetInto is encodeZSet written over buf[:0].
func encodeZSetInto(buf []byte, ents []zent) []byte {
	size := 1
	for _, e := range ents {
		size += 8 + uvarintLen(uint64(len(e.member))) + len(e.member)
	}
	b := append(slices.Grow(buf[:0], size), zsetKindListpack)
	for _, e := range ents {
		// A listpack holds a score as text, and reads "-0" back as the
		// integer 0: Redis's small sets lose the sign of zero.
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.score+0))
		b = binary.AppendUvarint(b, uint64(len(e.member)))
		b = append(b, e.member...)
	}
	return b
}

func (v *zsetView) card() int {
	switch {
	case v.obj != nil:
		return len(v.obj.scores)
	case v.decoded:
		return len(v.ents)
	}
	n := 0
	eachBlobEntry(v.blob, func(zent) bool { n++; return true })
	return n
}

func (v *zsetView) score(m []byte) (score float64, found bool) {
	if v.obj != nil {
		s, ok := v.obj.scores[string(m)]
		return s, ok
	}
	find := func(e zent) bool {
		if e.member == string(m) {
			score, found = e.score, true
		}
		return !found
	}
	if v.decoded {
		for _, e := range v.ents {
			if !find(e) {
				break
			}
		}
		return score, found
	}
	eachBlobEntry(v.blob, find)
	return score, found
}

// at is the member of rank i.
func (v *zsetView) at(i int) zent {
	if v.obj != nil {
		return v.obj.tree.at(i)
	}
	return v.list()[i]
}

// before is how many members p is false for (p false for a prefix of the
// order, true after).
func (v *zsetView) before(p func(zent) bool) int {
	if v.obj != nil {
		return v.obj.tree.before(p)
	}
	ents := v.list()
	return sort.Search(len(ents), func(i int) bool { return p(ents[i]) })
}

// walk calls fn with the members of ranks [from, to), backwards if rev,
// until fn returns false.
func (v *zsetView) walk(from, to int, rev bool, fn func(zent) bool) {
	if v.obj != nil {
		v.obj.tree.walk(from, to, rev, fn)
		return
	}
	ents := v.list()
	if rev {
		for i := to - 1; i >= from; i-- {
			if !fn(ents[i]) {
				return
			}
		}
		return
	}
	for _, e := range ents[from:to] {
		if !fn(e) {
			return
		}
	}
}

// rank is m's 0-based rank from the lowest score, if m is a member.
func (v *zsetView) rank(m []byte) (int, bool) {
	s, ok := v.score(m)
	if !ok {
		return 0, false
	}
	key := zent{member: string(m), score: s}
	return v.before(func(x zent) bool { return zcmp(x, key) >= 0 }), true
}

// entries are copies of the members of ranks [from, to), backwards if rev,
// their bytes in one allocation.
func (v *zsetView) entries(from, to int, rev bool) []ScoreMember {
	out := make([]ScoreMember, 0, max(to-from, 0))
	size := 0
	v.walk(from, to, rev, func(e zent) bool {
		size += len(e.member)
		return true
	})
	buf := make([]byte, 0, size)
	v.walk(from, to, rev, func(e zent) bool {
		at := len(buf)
		buf = append(buf, e.member...)
		out = append(out, ScoreMember{Member: buf[at:len(buf):len(buf)], Score: e.score})
		return true
	})
	return out
}

// zsetLimits are the listpack limits a sorted set is held under.
type zsetLimits struct{ entries, value int64 }

func (s *Store) zsetLimits() zsetLimits {
	entries, value := s.zsetConfig.get()
	return zsetLimits{entries: entries, value: value}
}

// SetZSetListpackLimits sets zset-max-listpack-entries and
// zset-max-listpack-value: the most members, and the longest member, a
// sorted set is held as a listpack with. Sets already past them stay as
// they are.
func (s *Store) SetZSetListpackLimits(entries, value int64) {
	s.zsetConfig.set(entries, value)
}

// ZSetListpackLimits returns what SetZSetListpackLimits set.
func (s *Store) ZSetListpackLimits() (entries, value int64) { return s.zsetConfig.get() }

// fitsListpack reports whether ents may be a listpack under l.
func (l zsetLimits) fitsListpack(ents []zent) bool {
	if int64(len(ents)) > l.entries {
		return false
	}
	for _, e := range ents {
		if int64(len(e.member)) > l.value {
			return false
		}
	}
	return true
}

// newZSetOf is a sorted set of ents (distinct members, in order), in the
// form its contents call for; members aliasing anything are copied.
func newZSetOf(ents []zent, l zsetLimits) collection {
	if l.fitsListpack(ents) {
		return collection{blob: encodeZSet(ents)}
	}
	o := newZSetObject(len(ents))
	for _, e := range ents {
		o.set(strings.Clone(e.member), e.score)
	}
	return collection{obj: o, charge: o.charge()}
}

// zsetEditor changes a sorted set: a heap one in place, a listpack as a
// sorted slice it encodes again at the end, turning it into a heap object
// once it outgrows the limits.
type zsetEditor struct {
	ents    []zent
	obj     *zsetObject
	lim     zsetLimits
	changed bool
	scratch *zsetScratch // where ents and the new blob are built, if not nil
}

// zsetScratch is the memory a listpack's edit decodes into and encodes
// into. Without it every ZADD to a small set leaves its decoded slice and
// its new blob behind (both about the size of the set: 88% of what a
// churn of ZADDs allocates), which the store copies into the arena at
// once; under churn that garbage outruns the collector and carries the
// process past its bound. A scratch is used by one write at a time, and
// given back once the store has copied the blob.
type zsetScratch struct {
	ents []zent
	blob []byte
}

var zsetScratchPool = sync.Pool{New: func() any { return new(zsetScratch) }}

// getZSetScratch is a scratch for one write; putZSetScratch gives it back
// once nothing of the write's blob is kept.
func getZSetScratch() *zsetScratch { return zsetScratchPool.Get().(*zsetScratch) }

func putZSetScratch(sc *zsetScratch) {
	// The members alias arena records and blobs: drop them, and drop
	// buffers past what a listpack's edit needs.
	clear(sc.ents[:cap(sc.ents)])
	if cap(sc.ents) > 4*DefaultZSetListpackEntries || cap(sc.blob) > 64<<10 {
		return
	}
	sc.ents, sc.blob = sc.ents[:0], sc.blob[:0]
	zsetScratchPool.Put(sc)
}

func editZSet(c collection, l zsetLimits) *zsetEditor { return editZSetIn(c, l, nil) }

// editZSetIn is editZSet building a listpack's edit in sc (nil: fresh
// memory); the caller keeps sc until the result is stored.
func editZSetIn(c collection, l zsetLimits, sc *zsetScratch) *zsetEditor {
	if c.obj != nil {
		return &zsetEditor{obj: c.obj.(*zsetObject), lim: l}
	}
	if sc == nil {
		return &zsetEditor{ents: decodeZSet(c.blob), lim: l}
	}
	sc.ents = decodeZSetInto(sc.ents, c.blob)
	return &zsetEditor{ents: sc.ents, lim: l, scratch: sc}
}

func (e *zsetEditor) view() *zsetView { return &zsetView{ents: e.ents, decoded: true, obj: e.obj} }

// set gives m (which may alias anything) the score s, adding it if new.
func (e *zsetEditor) set(m []byte, s float64) {
	e.changed = true
	if e.obj == nil {
		i := slices.IndexFunc(e.ents, func(x zent) bool { return x.member == string(m) })
		if i < 0 && (int64(len(e.ents))+1 > e.lim.entries || int64(len(m)) > e.lim.value) {
			e.toHeap()
		} else {
			if i < 0 {
				ne := zent{member: string(m), score: s}
				j, _ := slices.BinarySearchFunc(e.ents, ne, zcmp)
				e.ents = slices.Insert(e.ents, j, ne)
				return
			}
			// A new score for a member there: it moves within the slice,
			// keeping its string (the blob's, copied when encoded).
			ne := zent{member: e.ents[i].member, score: s}
			j, _ := slices.BinarySearchFunc(e.ents, ne, zcmp)
			switch {
			case j > i+1: // the members between shift down
				copy(e.ents[i:j-1], e.ents[i+1:j])
				e.ents[j-1] = ne
			case j <= i: // the members between shift up
				copy(e.ents[j+1:i+1], e.ents[j:i])
				e.ents[j] = ne
			default:
				e.ents[i] = ne
			}
			return
		}
	}
	if old, ok := e.obj.scores[string(m)]; ok {
		if old == s {
			return
		}
	}
	e.obj.set(string(m), s)
}

// add is set for a member m the caller found not to be one.
func (e *zsetEditor) add(m []byte, s float64) {
	if e.obj == nil {
		e.set(m, s)
		return
	}
	e.changed = true
	e.obj.add(m, s)
}

// rescore is set for a member m the caller found with the score old, a
// score other than s.
func (e *zsetEditor) rescore(m []byte, old, s float64) {
	if e.obj == nil {
		e.set(m, s)
		return
	}
	e.changed = true
	e.obj.rescore(m, old, s)
}

func (e *zsetEditor) toHeap() {
	o := newZSetObject(len(e.ents) + 1)
	for _, x := range e.ents {
		o.set(strings.Clone(x.member), x.score)
	}
	e.obj, e.ents = o, nil
}

// remove takes m out, reporting whether it was a member.
func (e *zsetEditor) remove(m []byte) bool {
	if e.obj != nil {
		if e.obj.remove(string(m)) {
			e.changed = true
			return true
		}
		return false
	}
	i := slices.IndexFunc(e.ents, func(x zent) bool { return x.member == string(m) })
	if i < 0 {
		return false
	}
	e.ents = slices.Delete(e.ents, i, i+1)
	e.changed = true
	return true
}

// removeRanks takes out the members of ranks [from, to) and returns how
// many went.
func (e *zsetEditor) removeRanks(from, to int) int {
	if from >= to {
		return 0
	}
	e.changed = true
	if e.obj == nil {
		e.ents = slices.Delete(e.ents, from, to)
		return to - from
	}
	gone := make([]string, 0, to-from)
	e.obj.tree.walk(from, to, false, func(x zent) bool { gone = append(gone, x.member); return true })
	for _, m := range gone {
		e.obj.remove(m)
	}
	return len(gone)
}

// result is the set as changed, and what to do with it.
func (e *zsetEditor) result() (collection, collChange) {
	switch {
	case !e.changed:
		return collection{}, collUnchanged
	case e.view().card() == 0:
		return collection{}, collDelete
	case e.obj != nil:
		return collection{obj: e.obj, charge: e.obj.charge()}, collStore
	}
	if e.scratch != nil {
		e.scratch.ents = e.ents // grown past the scratch's, maybe: keep it
		e.scratch.blob = encodeZSetInto(e.scratch.blob, e.ents)
		return collection{blob: e.scratch.blob}, collStore
	}
	return collection{blob: encodeZSet(e.ents)}, collStore
}

// zsetEncoding names how Redis would hold the sorted set c.
func zsetEncoding(c collection) string {
	if c.obj != nil {
		return "skiplist"
	}
	return "listpack"
}

// exportZSet is the portable form of the sorted set c: a listpack blob of
// all its members, however it is held.
func exportZSet(c collection) []byte {
	if c.obj == nil {
		return slices.Clone(c.blob)
	}
	o := c.obj.(*zsetObject)
	ents := make([]zent, 0, len(o.scores))
	o.tree.walk(0, o.tree.len(), false, func(e zent) bool { ents = append(ents, e); return true })
	return encodeZSet(ents)
}

// importZSet is the sorted set whose portable form is b, in the form its
// contents call for under the default limits. ok is false if b is no such
// form, holds no member, or is out of order.
func importZSet(b []byte) (collection, bool) {
	if len(b) < 1 || b[0] != zsetKindListpack {
		return collection{}, false
	}
	var ents []zent
	for rest := b[1:]; len(rest) > 0; {
		if len(rest) < 9 {
			return collection{}, false
		}
		s := math.Float64frombits(binary.LittleEndian.Uint64(rest))
		n, k := binary.Uvarint(rest[8:])
		if k <= 0 || n > uint64(len(rest)-8-k) || math.IsNaN(s) {
			return collection{}, false
		}
		m := rest[8+k : 8+k+int(n)]
		e := zent{member: string(m), score: s}
		if len(ents) > 0 && zcmp(ents[len(ents)-1], e) >= 0 {
			return collection{}, false
		}
		ents = append(ents, e)
		rest = rest[8+k+int(n):]
	}
	if len(ents) == 0 {
		return collection{}, false
	}
	seen := make(map[string]bool, len(ents))
	for _, e := range ents {
		if seen[e.member] {
			return collection{}, false
		}
		seen[e.member] = true
	}
	return newZSetOf(ents, zsetLimits{entries: DefaultZSetListpackEntries, value: DefaultZSetListpackValue}), true
}
