package engine

import (
	"bytes"
	"errors"
	"slices"
	"sync"
)

// SORT and SORT_RO (Redis's sort.c): the elements of a list, set or sorted
// set, ordered by themselves or by the values a BY pattern names, and the
// values GET patterns name for each, read and (with STORE) written at one
// instant.

// ErrSortWeight is SORT's error for a weight that is no number, in a
// numeric sort.
var ErrSortWeight = errors.New("One or more scores can't be converted into double")

// SortQuery is one call of SORT, its options parsed.
type SortQuery struct {
	// By is the last BY pattern, nil for none: the elements are ordered
	// by themselves.
	By []byte
	// NoSort: a BY pattern names no key (SortNamesKeys is false for it,
	// "BY nosort"), so the elements keep the order their collection
	// keeps, from its tail with Desc, and LIMIT takes that range. A set,
	// which has no order to keep, keeps the order it is read in, unless
	// Ordered.
	NoSort bool
	// Ordered: a set is sorted (ALPHA, by itself) even with NoSort, so
	// that the result does not depend on how the set is held, as Redis
	// does in scripts and with STORE.
	Ordered bool
	// Get are the GET patterns, in order; none: the elements themselves.
	Get         [][]byte
	Desc, Alpha bool
	// Offset and Count are LIMIT's, as given: Redis clamps them to the
	// collection (a negative Count is every element from Offset on).
	Offset, Count int64
	// Weight reads a weight for a numeric sort (not Alpha): ok is false
	// for one that is no number, which fails the whole call with
	// ErrSortWeight.
	Weight func(b []byte) (w float64, ok bool)
	// DenyOOM refuses the call with ErrOOM as a write is refused, as Redis
	// refuses SORT (flagged denyoom) even without STORE.
	DenyOOM bool
}

// SortNamesKeys reports whether a BY or GET pattern names keys by the
// elements: it has a '*' before any NUL byte (Redis reads a pattern as a
// C string). A BY pattern that names none leaves the elements unsorted.
func SortNamesKeys(pattern []byte) bool {
	return bytes.IndexByte(cString(pattern), '*') >= 0
}

// cString is b up to its first NUL byte, as C's string functions read it.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// sortPattern is a BY or GET pattern as Redis's lookupKeyByPattern reads
// it: "#" is the element itself; otherwise the element replaces the first
// '*' to make a key name, whose string value it names, or, with "->field"
// after the '*', that field of the hash at the key. A pattern without '*'
// names nothing.
type sortPattern struct {
	self, none     bool
	prefix, suffix []byte
	field          []byte // nil: the key's string value
}

func parseSortPattern(p []byte) sortPattern {
	c := cString(p)
	if len(c) == 1 && c[0] == '#' {
		return sortPattern{self: true}
	}
	star := bytes.IndexByte(c, '*')
	if star < 0 {
		return sortPattern{none: true}
	}
	sp := sortPattern{prefix: p[:star], suffix: p[star+1:]}
	// The arrow is found in the C string after the '*', and needs a byte
	// after it; the field is then the rest of the whole pattern.
	if a := bytes.Index(c[star+1:], []byte("->")); a >= 0 && star+1+a+2 < len(c) {
		sp.suffix = p[star+1 : star+1+a]
		sp.field = p[star+1+a+2:]
	}
	return sp
}

// sortItem is one element with what it is sorted by.
type sortItem struct {
	elem   []byte
	weight float64
	by     []byte // an Alpha sort's BY value; nil if its key is missing
}

// SortResult is what a SORT found: without STORE, the reply's values (an
// element, or a GET's value, nil for a GET whose key or field is missing;
// found values, empty ones too, are not nil); with STORE, how many values
// it stored.
type SortResult struct {
	Values [][]byte
	Stored int
	// Changed: with a destination, it was stored, or deleted (it existed
	// and the result is empty).
	Changed bool
}

// Sort sorts the list, set or sorted set at key (a missing key is an empty
// list) as q says. With dst it stores the result at dst as a list,
// replacing whatever dst held, without a deadline, or deletes dst if the
// result is empty (SORT ... STORE); without, it returns the values.
// Patterns that name keys read them under the locks of every shard, so
// that the call sees the keyspace at one instant.
func (s *Store) Sort(key, dst []byte, q SortQuery) (SortResult, error) {
	if q.DenyOOM || dst != nil {
		if err := s.admit(0); err != nil {
			return SortResult{}, err
		}
	}
	by := sortPattern{none: true}
	if q.By != nil && !q.NoSort {
		by = parseSortPattern(q.By)
	}
	gets := make([]sortPattern, len(q.Get))
	wide := !by.self && !by.none
	for i, g := range q.Get {
		gets[i] = parseSortPattern(g)
		wide = wide || !gets[i].self && !gets[i].none
	}
	var shards []*shard
	if wide {
		shards = s.lockAllShards((*sync.RWMutex).Lock)
	} else {
		locking := [][]byte{key}
		if dst != nil {
			locking = append(locking, dst)
		}
		shards = s.lockShards(locking, 1)
	}
	res, err := s.sortLocked(key, dst, q, by, gets)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	if dst != nil {
		s.grown(s.hash(dst))
	}
	return res, err
}

// sortLocked is Sort for a caller holding the locks of every shard it
// reads or writes.
func (s *Store) sortLocked(key, dst []byte, q SortQuery, by sortPattern, gets []sortPattern) (SortResult, error) {
	h := s.hash(key)
	sh := s.shardOf(h)
	sl, found := s.liveKeyLocked(sh, h, key)
	var c collection
	t := TypeList
	if found {
		sh.hits.Add(1)
		t = sl.rec.typ()
		if t != TypeList && t != TypeSet && t != TypeZSet {
			return SortResult{}, ErrWrongType
		}
		c = sh.collectionOf(&sl.rec)
	} else {
		s.missed(sh, key)
	}
	noSort := q.NoSort
	alpha := q.Alpha
	if noSort && t == TypeSet && (q.Ordered || dst != nil) {
		noSort, alpha, by = false, true, sortPattern{none: true}
	}
	n := collLen(t, c)
	// Redis's LIMIT: start within [0, n], count within [-1, n].
	start := min(max(q.Offset, 0), int64(n))
	count := min(max(q.Count, -1), int64(n))
	end := int64(n) - 1
	if count >= 0 {
		end = start + count - 1
	}
	if start >= int64(n) {
		start, end = int64(n)-1, int64(n)-2
	}
	end = min(end, int64(n)-1)
	var items []sortItem
	if noSort && t != TypeSet {
		// The range is read directly, in the collection's order.
		items = sortRange(t, c, int(start), int(end), q.Desc)
		end -= start
		start = 0
	} else {
		items = sortElems(t, c, n)
	}
	if !noSort {
		if err := s.weighLocked(items, by, alpha, q.Weight); err != nil {
			return SortResult{}, err
		}
		slices.SortStableFunc(items, sortCompare(alpha, !by.none, dst != nil, q.Desc))
	}
	var out [][]byte
	if end >= start {
		out = make([][]byte, 0, int(end-start+1)*max(len(gets), 1))
		for _, it := range items[start : end+1] {
			if len(gets) == 0 {
				out = append(out, it.elem)
			}
			for _, g := range gets {
				v, _ := s.sortLookupLocked(g, it.elem)
				out = append(out, v)
			}
		}
	}
	if dst == nil {
		return SortResult{Values: out}, nil
	}
	var next collection
	if len(out) > 0 {
		next = newListOf(out, s.nodeLimit()) // a missing value is stored empty
	}
	changed, err := s.replaceCollLocked(dst, TypeList, next)
	return SortResult{Stored: len(out), Changed: changed}, err
}

// collLen is the number of elements of c, a collection of type t.
func collLen(t Type, c collection) int {
	switch t {
	case TypeSet:
		return viewSet(c).card()
	case TypeZSet:
		return viewZSet(c).card()
	}
	return viewList(c).len()
}

// sortElems are copies of every element of c, of type t, in the order
// it keeps them (a set's as it is held).
func sortElems(t Type, c collection, n int) []sortItem {
	items := make([]sortItem, 0, n)
	add := func(e []byte) bool {
		items = append(items, sortItem{elem: own(e)})
		return true
	}
	switch t {
	case TypeSet:
		viewSet(c).each(add)
	case TypeZSet:
		v := viewZSet(c)
		v.walk(0, v.card(), false, func(e zent) bool {
			items = append(items, sortItem{elem: append([]byte{}, e.member...)})
			return true
		})
	default:
		viewList(c).each(0, func(_ int, e []byte) bool { return add(e) })
	}
	return items
}

// sortRange are copies of the elements of ranks start to end, inclusive,
// of c, a list or sorted set of type t, counted from its tail if desc.
func sortRange(t Type, c collection, start, end int, desc bool) []sortItem {
	if end < start {
		return nil
	}
	items := make([]sortItem, 0, end-start+1)
	if t == TypeZSet {
		v := viewZSet(c)
		from, to := start, end+1
		if desc {
			from, to = v.card()-1-end, v.card()-start
		}
		v.walk(from, to, desc, func(e zent) bool {
			items = append(items, sortItem{elem: append([]byte{}, e.member...)})
			return true
		})
		return items
	}
	v := viewList(c)
	add := func(i int, e []byte) bool {
		items = append(items, sortItem{elem: own(e)})
		return len(items) < cap(items)
	}
	if desc {
		v.eachRev(v.len()-1-start, add)
	} else {
		v.each(start, add)
	}
	return items
}

// weighLocked sets what each item is sorted by: for a numeric sort, the
// weight of the element or of the value by names (0 if missing); for an
// Alpha sort by a pattern, that value. Every weight is read, those of
// items past LIMIT too, as Redis reads them.
func (s *Store) weighLocked(items []sortItem, by sortPattern, alpha bool, weight func([]byte) (float64, bool)) error {
	bad := false
	for i := range items {
		v := items[i].elem
		if !by.none {
			var found bool
			if v, found = s.sortLookupLocked(by, items[i].elem); !found {
				continue
			}
		}
		switch {
		case alpha && !by.none:
			items[i].by = v
		case !alpha:
			w, ok := weight(v)
			items[i].weight = w
			bad = bad || !ok
		}
	}
	if bad {
		return ErrSortWeight
	}
	return nil
}

// sortCompare is Redis's sortCompare: a numeric sort by weight, equal
// weights by the elements' bytes; an Alpha sort by the BY values (a
// missing one first) or the elements. Alpha compares as strcoll in the C
// locale (up to a NUL byte), or, when the result is stored, as bytes.
// Equal items keep their order: Redis's qsort (glibc's merge sort) does
// too.
func sortCompare(alpha, byPattern, store, desc bool) func(a, b sortItem) int {
	collate := bytes.Compare
	if !store {
		collate = func(a, b []byte) int { return bytes.Compare(cString(a), cString(b)) }
	}
	var cmp func(a, b sortItem) int
	switch {
	case !alpha:
		cmp = func(a, b sortItem) int {
			switch {
			case a.weight > b.weight:
				return 1
			case a.weight < b.weight:
				return -1
			}
			return bytes.Compare(a.elem, b.elem)
		}
	case byPattern:
		cmp = func(a, b sortItem) int {
			switch {
			case a.by == nil && b.by == nil:
				return 0
			case a.by == nil:
				return -1
			case b.by == nil:
				return 1
			}
			return collate(a.by, b.by)
		}
	default:
		cmp = func(a, b sortItem) int { return collate(a.elem, b.elem) }
	}
	if desc {
		return func(a, b sortItem) int { return -cmp(a, b) }
	}
	return cmp
}

// sortLookupLocked is the value p names for elem: a copy (never nil), or
// nil and false if the key is missing or holds another type, or the hash
// has no such field. The lookup of a key counts a hit or a miss.
func (s *Store) sortLookupLocked(p sortPattern, elem []byte) ([]byte, bool) {
	switch {
	case p.self:
		return elem, true
	case p.none:
		return nil, false
	}
	key := make([]byte, 0, len(p.prefix)+len(elem)+len(p.suffix))
	key = append(append(append(key, p.prefix...), elem...), p.suffix...)
	h := s.hash(key)
	sh := s.shardOf(h)
	sl, found := s.liveKeyLocked(sh, h, key)
	if !found {
		s.missed(sh, key)
		return nil, false
	}
	sh.hits.Add(1)
	var v []byte
	switch {
	case p.field == nil && sl.rec.isString():
		v = sl.rec.value
	case p.field != nil && sl.rec.typ() == TypeHash:
		if v, found = hashGet(sh.collectionOf(&sl.rec), p.field); !found {
			return nil, false
		}
	default:
		return nil, false
	}
	return own(v), true
}

// own is a copy of b, never nil: a value found, even empty, is told from
// one missing.
func own(b []byte) []byte { return append([]byte{}, b...) }
