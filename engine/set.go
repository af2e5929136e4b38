package engine

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"

	"github.com/stampedeless/stampedeless/internal/redisnum"
)

// A set is held in one of three forms:
//
//   - an intset blob in the record, while every member is an integer as
//     Redis's string2ll reads one and there are at most
//     set-max-intset-entries (the store's, SetIntsetLimit): a kind byte, a
//     width byte (2, 4 or 8) and the members in ascending order,
//     little-endian, each of that width. OBJECT ENCODING says "intset",
//     and members come out in ascending order, as from Redis's intset.
//   - a strings blob in the record, for a small set that is not an intset
//     (at most setMaxCompactEntries members of at most setMaxCompactMember
//     bytes): a kind byte and the members in insertion order, each a
//     uvarint length and its bytes. Redis 7.0 holds such a set in a hash
//     table, and OBJECT ENCODING says "hashtable" for it too; the blob only
//     keeps the many small sets of tag-based caches compact.
//   - a setObject on the heap, past those limits: "hashtable".
//
// As in Redis, a set that left the intset form never goes back to it as
// members are removed; a set built anew (SINTERSTORE, SUNIONSTORE,
// SDIFFSTORE, SPOP of most of a set) takes the form its contents call for.
const (
	setKindIntset  byte = 1
	setKindStrings byte = 2

	// DefaultIntsetEntries is Redis's set-max-intset-entries default.
	DefaultIntsetEntries = 512
	// noIntset, as newSetOf's limit, holds the set in another form.
	noIntset = -1
	// setMaxCompactEntries and setMaxCompactMember bound the strings blob.
	setMaxCompactEntries = 128
	setMaxCompactMember  = 64
)

// SetIntsetLimit sets set-max-intset-entries: the most members a set of
// integers is held as an intset with. Sets already past it stay as they
// are.
func (s *Store) SetIntsetLimit(n int64) { s.intsetMax.Store(n) }

// IntsetLimit is set-max-intset-entries.
func (s *Store) IntsetLimit() int64 { return s.intsetMax.Load() }

// setEncoding names how Redis 7.0 would hold the set c: "intset" while
// every member is an integer and there are at most set-max-intset-entries,
// else "hashtable".
func setEncoding(c collection) string {
	if viewSet(c).isIntset() {
		return "intset"
	}
	return "hashtable"
}

// exportSet is the portable form of the set c (see Store.Export): the
// blob of a set held in the record, or a strings blob of all the members
// of one on the heap.
func exportSet(c collection) []byte {
	if c.obj == nil {
		return slices.Clone(c.blob)
	}
	o := c.obj.(*setObject)
	b := []byte{setKindStrings}
	for _, m := range o.members {
		b = appendSetMember(b, []byte(m))
	}
	return b
}

// importSet is the set whose portable form is b: in the form its contents
// call for, except that an intset stays one. ok is false if b is no set's
// form or holds no member.
func importSet(b []byte) (collection, bool) {
	if len(b) == 0 {
		return collection{}, false
	}
	switch b[0] {
	case setKindIntset:
		if !validIntset(b) || len(b) == 2 {
			return collection{}, false
		}
		return collection{blob: slices.Clone(b)}, true
	case setKindStrings:
		var members [][]byte
		seen := make(map[string]bool)
		for rest := b[1:]; len(rest) > 0; {
			n, k := binary.Uvarint(rest)
			if k <= 0 || n > uint64(len(rest)-k) {
				return collection{}, false
			}
			m := rest[k : k+int(n)]
			rest = rest[k+int(n):]
			if seen[string(m)] {
				return collection{}, false
			}
			seen[string(m)] = true
			members = append(members, m)
		}
		if len(members) == 0 {
			return collection{}, false
		}
		return newSetOf(members, noIntset), true
	}
	return collection{}, false
}

// validIntset reports whether b is a well-formed intset blob.
func validIntset(b []byte) bool {
	if len(b) < 2 || (b[1] != 2 && b[1] != 4 && b[1] != 8) || (len(b)-2)%int(b[1]) != 0 {
		return false
	}
	is := intset(b)
	for i := 1; i < is.len(); i++ {
		if is.at(i-1) >= is.at(i) {
			return false
		}
	}
	return true
}

// intset is an intset blob: kind, width, members in ascending order.
type intset []byte

func (is intset) width() int { return int(is[1]) }
func (is intset) len() int   { return (len(is) - 2) / is.width() }

func (is intset) at(i int) int64 {
	p := is[2+i*is.width():]
	switch is.width() {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(p)))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(p)))
	}
	return int64(binary.LittleEndian.Uint64(p))
}

// find is the position of v, or where it would go.
func (is intset) find(v int64) (int, bool) {
	lo, hi := 0, is.len()
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if is.at(mid) < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < is.len() && is.at(lo) == v
}

// ints are the members of the intset.
func (is intset) ints() []int64 {
	out := make([]int64, is.len())
	for i := range out {
		out[i] = is.at(i)
	}
	return out
}

// makeIntset is the intset blob of vs, sorted and without duplicates, in
// the narrowest width that holds them all.
func makeIntset(vs []int64) []byte {
	w := 2
	for _, v := range vs {
		switch {
		case v < math.MinInt32 || v > math.MaxInt32:
			w = 8
		case (v < math.MinInt16 || v > math.MaxInt16) && w < 4:
			w = 4
		}
	}
	b := make([]byte, 2+len(vs)*w)
	b[0], b[1] = setKindIntset, byte(w)
	for i, v := range vs {
		p := b[2+i*w:]
		switch w {
		case 2:
			binary.LittleEndian.PutUint16(p, uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(p, uint32(v))
		default:
			binary.LittleEndian.PutUint64(p, uint64(v))
		}
	}
	return b
}

func appendSetMember(b, m []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	return append(b, m...)
}

// eachStringsMember calls fn with each member of a strings blob, which fn
// must not keep, until fn returns false.
func eachStringsMember(b []byte, fn func([]byte) bool) {
	for rest := b[1:]; len(rest) > 0; {
		n, k := binary.Uvarint(rest)
		if !fn(rest[k : k+int(n)]) {
			return
		}
		rest = rest[k+int(n):]
	}
}

// setObject is a set on the heap: its members, and where each is among
// them, so that a random member is one draw and a removal is a swap with
// the last.
type setObject struct {
	index   map[string]int
	members []string
	bytes   int64 // what the members' strings take (stringBytes)
	peak    int   // the most members index has held: a Go map never shrinks
}

// setObjectBase is what a setObject takes besides its map, slice and
// strings: the struct and its entry in its shard's heap table.
var setObjectBase = allocBytes(56) + heapTableEntry

func newSetObject(n int) *setObject {
	return &setObject{index: make(map[string]int, n), members: make([]string, 0, n), peak: n}
}

// charge is what the set holds on Go's heap (heapsize.go): each member's
// string is shared by the map and the slice.
func (o *setObject) charge() int64 {
	return setObjectBase + mapBytes(o.peak, slotStringInt) + allocBytes(16*cap(o.members)) + o.bytes
}

func (o *setObject) clone() heapObject {
	c := newSetObject(len(o.members))
	for _, m := range o.members {
		c.add([]byte(m))
	}
	return c
}

func (o *setObject) has(m []byte) bool {
	_, ok := o.index[string(m)]
	return ok
}

func (o *setObject) add(m []byte) bool {
	if o.has(m) {
		return false
	}
	s := string(m)
	o.index[s] = len(o.members)
	o.members = append(o.members, s)
	o.bytes += stringBytes(len(s))
	o.peak = max(o.peak, len(o.index))
	return true
}

func (o *setObject) remove(m []byte) bool {
	i, ok := o.index[string(m)]
	if !ok {
		return false
	}
	last := len(o.members) - 1
	if i != last {
		o.members[i] = o.members[last]
		o.index[o.members[i]] = i
	}
	o.members[last] = ""
	o.members = o.members[:last]
	delete(o.index, string(m))
	o.bytes -= stringBytes(len(m))
	return true
}

// setView reads a set in any of its forms. Members it hands out alias the
// blob (so the arena) or a scratch buffer: they must be copied to be kept.
type setView struct {
	blob []byte
	obj  *setObject
}

func viewSet(c collection) setView {
	v := setView{blob: c.blob}
	if c.obj != nil {
		v.obj = c.obj.(*setObject)
	}
	return v
}

func (v setView) isIntset() bool {
	return v.obj == nil && len(v.blob) > 0 && v.blob[0] == setKindIntset
}

func (v setView) card() int {
	switch {
	case v.obj != nil:
		return len(v.obj.members)
	case len(v.blob) == 0:
		return 0
	case v.isIntset():
		return intset(v.blob).len()
	}
	n := 0
	eachStringsMember(v.blob, func([]byte) bool { n++; return true })
	return n
}

func (v setView) has(m []byte) bool {
	switch {
	case v.obj != nil:
		return v.obj.has(m)
	case len(v.blob) == 0:
		return false
	case v.isIntset():
		n, ok := redisnum.ParseInt(m)
		if !ok {
			return false
		}
		_, found := intset(v.blob).find(n)
		return found
	}
	found := false
	eachStringsMember(v.blob, func(x []byte) bool {
		found = string(x) == string(m)
		return !found
	})
	return found
}

// each calls fn with every member until fn returns false.
func (v setView) each(fn func([]byte) bool) {
	switch {
	case v.obj != nil:
		for _, m := range v.obj.members {
			if !fn([]byte(m)) {
				return
			}
		}
	case len(v.blob) == 0:
	case v.isIntset():
		is := intset(v.blob)
		var buf [20]byte
		for i := range is.len() {
			if !fn(strconv.AppendInt(buf[:0], is.at(i), 10)) {
				return
			}
		}
	default:
		eachStringsMember(v.blob, fn)
	}
}

// members are copies of all the members.
func (v setView) members() [][]byte {
	out := make([][]byte, 0, v.card())
	v.each(func(m []byte) bool {
		out = append(out, slices.Clone(m))
		return true
	})
	return out
}

// random is a copy of a member drawn uniformly; the set is not empty.
func (v setView) random() []byte {
	switch {
	case v.obj != nil:
		return []byte(v.obj.members[rand.IntN(len(v.obj.members))])
	case v.isIntset():
		is := intset(v.blob)
		return strconv.AppendInt(nil, is.at(rand.IntN(is.len())), 10)
	}
	i := rand.IntN(v.card())
	var out []byte
	eachStringsMember(v.blob, func(m []byte) bool {
		if i == 0 {
			out = slices.Clone(m)
			return false
		}
		i--
		return true
	})
	return out
}

// newSetOf is a set of the distinct members, in the form its contents
// call for: an intset if every member is an integer and there are at most
// maxIntset (set-max-intset-entries, or noIntset), else a strings blob if
// small enough, else a heap object.
func newSetOf(members [][]byte, maxIntset int64) collection {
	if int64(len(members)) <= maxIntset {
		ints := make([]int64, 0, len(members))
		for _, m := range members {
			n, ok := redisnum.ParseInt(m)
			if !ok {
				break
			}
			ints = append(ints, n)
		}
		if len(ints) == len(members) {
			slices.Sort(ints)
			return collection{blob: makeIntset(ints)}
		}
	}
	if len(members) <= setMaxCompactEntries {
		small := true
		size := 1
		for _, m := range members {
			small = small && len(m) <= setMaxCompactMember
			size += uvarintLen(uint64(len(m))) + len(m)
		}
		if small {
			b := make([]byte, 1, size)
			b[0] = setKindStrings
			for _, m := range members {
				b = appendSetMember(b, m)
			}
			return collection{blob: b}
		}
	}
	o := newSetObject(len(members))
	for _, m := range members {
		o.add(m)
	}
	return collection{obj: o, charge: o.charge()}
}

// appendCompact is setAdd of a few members to a set of strings that stays
// compact: the blob with the new members appended, as the general path
// would build it, without copying every member and a map of them first
// (at a few KB a SADD, that garbage was most of the sets churn's
// allocation), built in sc if not nil. ok is false where the general path
// must decide.
func appendCompact(v setView, members [][]byte, sc *setScratch) (c collection, added int, ok bool) {
	const fewMembers = 8
	if len(v.blob) == 0 || v.blob[0] != setKindStrings || len(members) > fewMembers {
		return collection{}, 0, false
	}
	var fresh [fewMembers][]byte
	n := 0
	for _, m := range members {
		if len(m) > setMaxCompactMember {
			return collection{}, 0, false
		}
		if v.has(m) || slices.ContainsFunc(fresh[:n], func(f []byte) bool { return string(f) == string(m) }) {
			continue
		}
		fresh[n] = m
		n++
	}
	if n == 0 {
		return collection{blob: v.blob}, 0, true // unchanged: the callers store nothing
	}
	if v.card()+n > setMaxCompactEntries {
		return collection{}, 0, false
	}
	size := len(v.blob)
	for _, m := range fresh[:n] {
		size += uvarintLen(uint64(len(m))) + len(m)
	}
	var b []byte
	if sc != nil {
		b = slices.Grow(sc.blob[:0], size)
	} else {
		b = make([]byte, 0, size)
	}
	b = append(b, v.blob...)
	for _, m := range fresh[:n] {
		b = appendSetMember(b, m)
	}
	if sc != nil {
		sc.blob = b
	}
	return collection{blob: b}, n, true
}

// setScratch is the memory SADD builds a compact set's new blob in, which
// the store copies into the set's record (in place while its room lasts)
// before the scratch is reused: a fresh blob a SADD was the size of the
// set, 1.4 KB a SADD to a set of 128 members, all garbage at once.
type setScratch struct{ blob []byte }

var setScratchPool = sync.Pool{New: func() any { return new(setScratch) }}

func getSetScratch() *setScratch { return setScratchPool.Get().(*setScratch) }

// putSetScratch gives sc back once nothing of the write's blob is kept.
func putSetScratch(sc *setScratch) {
	if cap(sc.blob) > 64<<10 {
		return
	}
	setScratchPool.Put(sc)
}

// setAdd is c with members added, and how many of them were new; an
// intset stays one up to maxIntset members. A heap set changes in place; a
// blob is rewritten.
func setAdd(c collection, members [][]byte, maxIntset int64) (collection, int) {
	return setAddIn(c, members, maxIntset, nil)
}

// setAddIn is setAdd building a compact set of strings's new blob in sc
// (nil: fresh memory); the caller keeps sc until the result is stored.
func setAddIn(c collection, members [][]byte, maxIntset int64, sc *setScratch) (collection, int) {
	v := viewSet(c)
	if v.obj != nil {
		added := 0
		for _, m := range members {
			if v.obj.add(m) {
				added++
			}
		}
		return collection{obj: v.obj, charge: v.obj.charge()}, added
	}
	if len(v.blob) == 0 || v.isIntset() {
		var ints []int64
		if len(v.blob) > 0 {
			ints = intset(v.blob).ints()
		}
		before := len(ints)
		allInts := true
		for _, m := range members {
			n, ok := redisnum.ParseInt(m)
			if !ok {
				allInts = false
				break
			}
			ints = append(ints, n)
		}
		if allInts {
			slices.Sort(ints)
			ints = slices.Compact(ints)
			if int64(len(ints)) <= maxIntset {
				return collection{blob: makeIntset(ints)}, len(ints) - before
			}
		}
	}
	if c, added, ok := appendCompact(v, members, sc); ok {
		return c, added
	}
	// A hash table from here on: the members so far, then the new ones.
	all := v.members()
	seen := make(map[string]bool, len(all)+len(members))
	for _, m := range all {
		seen[string(m)] = true
	}
	added := 0
	for _, m := range members {
		if !seen[string(m)] {
			seen[string(m)] = true
			all = append(all, m)
			added++
		}
	}
	return newSetOf(all, noIntset), added
}

// setRemove is c without members, and how many of them it had. A heap set
// changes in place; a blob is rewritten in the same form.
func setRemove(c collection, members [][]byte) (collection, int) {
	v := viewSet(c)
	if v.obj != nil {
		removed := 0
		for _, m := range members {
			if v.obj.remove(m) {
				removed++
			}
		}
		return collection{obj: v.obj, charge: v.obj.charge()}, removed
	}
	gone := make(map[string]bool, len(members))
	for _, m := range members {
		gone[string(m)] = true
	}
	return v.without(gone)
}

// without is the blob set v without the members in gone, and how many it
// lost. It keeps v's form: an intset stays one, a strings blob stays one.
func (v setView) without(gone map[string]bool) (collection, int) {
	removed := 0
	if v.isIntset() {
		is := intset(v.blob)
		kept := make([]int64, 0, is.len())
		var buf [20]byte
		for i := range is.len() {
			if gone[string(strconv.AppendInt(buf[:0], is.at(i), 10))] {
				removed++
			} else {
				kept = append(kept, is.at(i))
			}
		}
		return collection{blob: makeIntset(kept)}, removed
	}
	b := []byte{setKindStrings}
	eachStringsMember(v.blob, func(m []byte) bool {
		if gone[string(m)] {
			removed++
		} else {
			b = appendSetMember(b, m)
		}
		return true
	})
	return collection{blob: b}, removed
}
