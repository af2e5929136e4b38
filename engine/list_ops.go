package engine

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"sync"
)

// The operations of the list commands (Redis's t_list.c). Each is atomic
// under its keys' shard locks; a key holding another type makes it return
// ErrWrongType and change nothing. Elements returned are copies. Indexes
// are Redis's: from 0 at the head, negative from -1 at the tail.

// ErrIndexOutOfRange is LSET's error for an index past either end.
var ErrIndexOutOfRange = errors.New("engine: index out of range")

// listChange is what a writer of a list decides for next: removal if it
// emptied, else to store it.
func listChange(next collection) collChange {
	if viewList(next).len() == 0 {
		return collDelete
	}
	return collStore
}

// LPush pushes elems, one by one, at the head (left) or tail of the list
// at key, creating it unless onlyExisting (LPUSHX, RPUSHX), and returns
// its length then, 0 if onlyExisting found no key.
func (s *Store) LPush(key []byte, elems [][]byte, left, onlyExisting bool) (n int, err error) {
	limit := s.nodeLimit()
	err = s.writeColl(key, TypeList, func(cur collection, exists bool) (collection, collChange, error) {
		if !exists && onlyExisting {
			return cur, collUnchanged, nil
		}
		next := listPush(cur, elems, left, limit)
		n = viewList(next).len()
		return next, collStore, nil
	})
	return n, err
}

// LPop removes up to count elements from the head (left) or tail of the
// list at key, deleting it if it empties, and returns them in the order
// popped; found is false if key is missing.
func (s *Store) LPop(key []byte, count int, left bool) (popped [][]byte, found bool, err error) {
	limit := s.nodeLimit()
	err = s.shrinkColl(key, TypeList, func(cur collection, exists bool) (collection, collChange, error) {
		found = exists
		if !exists || count == 0 {
			return cur, collUnchanged, nil
		}
		var next collection
		next, popped = listPop(cur, count, left, limit)
		return next, listChange(next), nil
	})
	return popped, found, err
}

// LPopOne is LPop of one element, as LPOP and RPOP without a count pop:
// the element, with no slice around it to allocate.
func (s *Store) LPopOne(key []byte, left bool) (elem []byte, found bool, err error) {
	limit := s.nodeLimit()
	var one [1][]byte
	err = s.shrinkColl(key, TypeList, func(cur collection, exists bool) (collection, collChange, error) {
		found = exists
		if !exists {
			return cur, collUnchanged, nil
		}
		next, popped := listPopInto(cur, 1, left, limit, one[:0])
		elem = popped[0] // a list is never empty
		return next, listChange(next), nil
	})
	return elem, found, err
}

// LLen is the length of the list at key, 0 if it is missing.
func (s *Store) LLen(key []byte) (n int, err error) {
	_, err = s.readColl(key, TypeList, func(c collection) { n = viewList(c).len() })
	return n, err
}

// listRange is Redis's range of start and stop, inclusive, in a list of
// n elements: negative indexes count from the tail; ok is false if the
// range is empty.
func listRange(start, stop int64, n int) (from, to int, ok bool) {
	size := int64(n)
	if start < 0 {
		start += size
	}
	if stop < 0 {
		stop += size
	}
	start = max(start, 0)
	if start > stop || start >= size {
		return 0, 0, false
	}
	stop = min(stop, size-1)
	return int(start), int(stop), true
}

// ElemWriter takes a range of a list's elements as the engine walks
// them: first how many there are, then each in order. *resp.Writer is
// one, so LRANGE writes the elements straight into its reply.
type ElemWriter interface {
	Array(n int)
	Bulk(e []byte)
}

// LRangeTo writes to w the elements of the list at key from start to
// stop, inclusive, as LRange returns them (none if key is missing), without
// copying them first. w runs under the key's shard's read lock, as View's
// fn: it must be quick, must not keep or modify the elements and must not
// call the store. On an error w is not called.
func (s *Store) LRangeTo(key []byte, start, stop int64, w ElemWriter) error {
	found, err := s.readColl(key, TypeList, func(c collection) {
		v := viewList(c)
		from, to, ok := listRange(start, stop, v.len())
		if !ok {
			w.Array(0)
			return
		}
		w.Array(to - from + 1)
		v.each(from, func(i int, e []byte) bool {
			if i > to {
				return false
			}
			w.Bulk(e)
			return true
		})
	})
	if err == nil && !found {
		w.Array(0)
	}
	return err
}

// listIndex is index i of a list of n elements as an index from the head;
// ok is false past either end.
func listIndex(i int64, n int) (int, bool) {
	if i < 0 {
		i += int64(n)
	}
	if i < 0 || i >= int64(n) {
		return 0, false
	}
	return int(i), true
}

// LIndex is the element at index i of the list at key; found is false if
// key is missing or i is past either end.
func (s *Store) LIndex(key []byte, i int64) (elem []byte, found bool, err error) {
	_, err = s.readColl(key, TypeList, func(c collection) {
		v := viewList(c)
		if at, ok := listIndex(i, v.len()); ok {
			elem, found = slices.Clone(v.at(at)), true
		}
	})
	return elem, found, err
}

// LSet sets the element at index i of the list at key to elem. It returns
// ErrNoSuchKey if key is missing, ErrIndexOutOfRange if i is past either
// end.
func (s *Store) LSet(key []byte, i int64, elem []byte) error {
	limit := s.nodeLimit()
	return s.writeColl(key, TypeList, func(cur collection, exists bool) (collection, collChange, error) {
		if !exists {
			return cur, collUnchanged, ErrNoSuchKey
		}
		v := viewList(cur)
		at, ok := listIndex(i, v.len())
		if !ok {
			return cur, collUnchanged, ErrIndexOutOfRange
		}
		if v.obj != nil {
			v.obj.editAt(at, limit, func(elems [][]byte, j int) [][]byte {
				elems[j] = elem
				return elems
			})
			return collection{obj: v.obj, charge: v.obj.charge()}, collStore, nil
		}
		elems := v.elems(0, v.len()-1)
		elems[at] = elem
		return listReplace(elems, limit), collStore, nil
	})
}

// LInsert inserts elem before or after the first element equal to pivot
// in the list at key, and returns the list's length then: -1 if no
// element is pivot, 0 if key is missing.
func (s *Store) LInsert(key []byte, before bool, pivot, elem []byte) (n int, err error) {
	limit := s.nodeLimit()
	err = s.writeColl(key, TypeList, func(cur collection, exists bool) (collection, collChange, error) {
		if !exists {
			return cur, collUnchanged, nil
		}
		v := viewList(cur)
		at := -1
		v.each(0, func(i int, e []byte) bool {
			if bytes.Equal(e, pivot) {
				at = i
				return false
			}
			return true
		})
		if at < 0 {
			n = -1
			return cur, collUnchanged, nil
		}
		if v.obj != nil {
			v.obj.editAt(at, limit, func(elems [][]byte, j int) [][]byte {
				if !before {
					j++
				}
				return slices.Insert(elems, j, elem)
			})
			n = v.obj.n
			return collection{obj: v.obj, charge: v.obj.charge()}, collStore, nil
		}
		if !before {
			at++
		}
		elems := slices.Insert(v.elems(0, v.len()-1), at, elem)
		n = len(elems)
		return listReplace(elems, limit), collStore, nil
	})
	return n, err
}

// LRem removes from the list at key the first count elements equal to
// elem from the head (count > 0), from the tail (count < 0) or all of
// them (0), deleting the key if it empties, and returns how many it
// removed.
func (s *Store) LRem(key []byte, count int64, elem []byte) (removed int, err error) {
	limit := s.nodeLimit()
	err = s.shrinkColl(key, TypeList, func(cur collection, exists bool) (collection, collChange, error) {
		if !exists {
			return cur, collUnchanged, nil
		}
		v := viewList(cur)
		n := v.len()
		gone := make([]bool, n)
		match := func(i int, e []byte) bool {
			if bytes.Equal(e, elem) {
				gone[i] = true
				removed++
			}
			return count == 0 || int64(removed) < max(count, -count)
		}
		if count < 0 {
			v.eachRev(n-1, match)
		} else {
			v.each(0, match)
		}
		if removed == 0 {
			return cur, collUnchanged, nil
		}
		kept := make([][]byte, 0, n-removed)
		v.each(0, func(i int, e []byte) bool {
			if !gone[i] {
				kept = append(kept, slices.Clone(e))
			}
			return true
		})
		next := listReplace(kept, limit)
		return next, listChange(next), nil
	})
	return removed, err
}

// LTrim keeps only the elements of the list at key from start to stop,
// inclusive, deleting the key if none is left. It reports whether the key
// existed (LTRIM's event).
func (s *Store) LTrim(key []byte, start, stop int64) (existed bool, err error) {
	limit := s.nodeLimit()
	err = s.shrinkColl(key, TypeList, func(cur collection, exists bool) (collection, collChange, error) {
		existed = exists
		if !exists {
			return cur, collUnchanged, nil
		}
		v := viewList(cur)
		n := v.len()
		from, to, ok := listRange(start, stop, n)
		if !ok {
			return collection{}, collDelete, nil
		}
		if from == 0 && to == n-1 {
			// Nothing to trim, yet a write to Redis: WATCH and tracking
			// see the key changed.
			return cur, collStore, nil
		}
		if v.obj != nil {
			// From the ends, as Redis's quicklistDelRange: O(removed).
			next, _ := listPop(cur, from, true, limit)
			next, _ = listPop(next, n-1-to, false, limit)
			return next, collStore, nil
		}
		return listReplace(v.elems(from, to), limit), collStore, nil
	})
	return existed, err
}

// LPosQuery is what LPOS looks for: the rank-th match on (negative: from
// the tail), count matches from there (0: all; -1: one, LPOS without
// COUNT), among the first maxLen elements scanned (0: all).
type LPosQuery struct {
	Rank, Count, MaxLen int64
}

// LPos is the indexes of the elements of the list at key equal to elem,
// as q asks; none if key is missing.
func (s *Store) LPos(key, elem []byte, q LPosQuery) (found []int64, err error) {
	_, err = s.readColl(key, TypeList, func(c collection) {
		v := viewList(c)
		rank, count := max(q.Rank, -q.Rank), q.Count
		if q.Rank == math.MinInt64 {
			// Redis negates it to itself, a rank every match passes,
			// and its count test overflows: every match, from the tail.
			rank = 1
			if count > 0 {
				count = 0
			}
		}
		var scanned, matches int64
		visit := func(i int, e []byte) bool {
			if q.MaxLen > 0 && scanned >= q.MaxLen {
				return false
			}
			scanned++
			if !bytes.Equal(e, elem) {
				return true
			}
			matches++
			if matches < rank {
				return true
			}
			found = append(found, int64(i))
			return count == 0 || (count > 0 && matches-rank+1 < count)
		}
		if q.Rank < 0 {
			v.eachRev(v.len()-1, visit)
		} else {
			v.each(0, visit)
		}
	})
	return found, err
}

// LMove pops an element from the head (fromLeft) or tail of the list at
// src and pushes it at the head (toLeft) or tail of the list at dst,
// creating it, and returns it; found is false if src is missing. dst
// holding another type is ErrWrongType, checked only when src has an
// element, as Redis does.
func (s *Store) LMove(src, dst []byte, fromLeft, toLeft bool) (elem []byte, found bool, err error) {
	if err := s.admit(0); err != nil {
		return nil, false, err
	}
	shards := s.lockShards([][]byte{src, dst}, 1)
	elem, found, err = s.lmoveLocked(src, dst, fromLeft, toLeft)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	s.grown(s.hash(dst))
	return elem, found, err
}

func (s *Store) lmoveLocked(src, dst []byte, fromLeft, toLeft bool) ([]byte, bool, error) {
	if _, found, err := s.lookupCollLocked(src, TypeList); err != nil || !found {
		return nil, false, err
	}
	if _, _, err := s.lookupCollLocked(dst, TypeList); err != nil {
		return nil, false, err
	}
	limit := s.nodeLimit()
	var elem []byte
	hs, hd := s.hash(src), s.hash(dst)
	if bytes.Equal(src, dst) {
		// One write: the list is never empty, so never removed and made
		// again (Redis sends no "new" for a rotation).
		err := s.writeCollLocked(s.shardOf(hs), hs, src, TypeList, func(cur collection, _ bool) (collection, collChange, error) {
			next, popped := listPop(cur, 1, fromLeft, limit)
			elem = popped[0]
			return listPush(next, [][]byte{elem}, toLeft, limit), collStore, nil
		})
		return elem, err == nil, err
	}
	err := s.writeCollLocked(s.shardOf(hs), hs, src, TypeList, func(cur collection, _ bool) (collection, collChange, error) {
		next, popped := listPop(cur, 1, fromLeft, limit)
		elem = popped[0]
		return next, listChange(next), nil
	})
	if err != nil {
		return nil, false, err
	}
	err = s.writeCollLocked(s.shardOf(hd), hd, dst, TypeList, func(cur collection, _ bool) (collection, collChange, error) {
		return listPush(cur, [][]byte{elem}, toLeft, limit), collStore, nil
	})
	if err != nil {
		return nil, false, err
	}
	return elem, true, nil
}

// LMPop pops up to count elements from the head (left) or tail of the
// first of keys that holds a list, as LMPOP does, and returns that key and
// the elements; key is nil if no key holds one. A key of another type
// before the first list is ErrWrongType.
func (s *Store) LMPop(keys [][]byte, count int, left bool) (key []byte, popped [][]byte, err error) {
	shards := s.lockShards(keys, 1)
	key, popped, err = s.lmpopLocked(keys, count, left)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	return key, popped, err
}

func (s *Store) lmpopLocked(keys [][]byte, count int, left bool) ([]byte, [][]byte, error) {
	limit := s.nodeLimit()
	for _, k := range keys {
		_, found, err := s.lookupCollLocked(k, TypeList)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			continue
		}
		var popped [][]byte
		h := s.hash(k)
		err = s.writeCollLocked(s.shardOf(h), h, k, TypeList, func(cur collection, _ bool) (collection, collChange, error) {
			var next collection
			next, popped = listPop(cur, count, left, limit)
			return next, listChange(next), nil
		})
		return k, popped, err
	}
	return nil, nil, nil
}
