package engine

import (
	"bytes"
	"cmp"
	"iter"
	"math/rand/v2"
	"slices"
	"sync"
)

// The operations of the set commands. Each is atomic under its keys'
// shard locks; a key holding another type makes it return ErrWrongType
// and change nothing. Members returned are copies.

// SAdd adds members to the set at key, creating it, and returns how many
// were not in it yet.
func (s *Store) SAdd(key []byte, members [][]byte) (int, error) {
	var added int
	// The scratch is given back once writeColl has copied the blob.
	sc := getSetScratch()
	defer putSetScratch(sc)
	err := s.writeColl(key, TypeSet, func(cur collection, _ bool) (collection, collChange, error) {
		var next collection
		next, added = setAddIn(cur, members, s.IntsetLimit(), sc)
		if added == 0 {
			return cur, collUnchanged, nil
		}
		return next, collStore, nil
	})
	return added, err
}

// SRem removes members from the set at key, deleting the key if it
// empties, and returns how many it had.
func (s *Store) SRem(key []byte, members [][]byte) (int, error) {
	var removed int
	err := s.shrinkColl(key, TypeSet, func(cur collection, exists bool) (collection, collChange, error) {
		if !exists {
			return cur, collUnchanged, nil
		}
		var next collection
		next, removed = setRemove(cur, members)
		return next, setChange(next, removed > 0), nil
	})
	return removed, err
}

// setChange is what a writer of a set decides for next: nothing if it did
// not change, removal if it emptied, else to store it.
func setChange(next collection, changed bool) collChange {
	switch {
	case !changed:
		return collUnchanged
	case viewSet(next).card() == 0:
		return collDelete
	}
	return collStore
}

// SCard is the number of members of the set at key, 0 if it is missing.
func (s *Store) SCard(key []byte) (n int, err error) {
	_, err = s.readColl(key, TypeSet, func(c collection) { n = viewSet(c).card() })
	return n, err
}

// SIsMember reports, for each of members, whether the set at key has it.
func (s *Store) SIsMember(key []byte, members [][]byte) ([]bool, error) {
	out := make([]bool, len(members))
	_, err := s.readColl(key, TypeSet, func(c collection) {
		v := viewSet(c)
		for i, m := range members {
			out[i] = v.has(m)
		}
	})
	return out, err
}

// SMembers is the members of the set at key, none if it is missing; an
// intset's come in ascending order.
func (s *Store) SMembers(key []byte) (members [][]byte, err error) {
	_, err = s.readColl(key, TypeSet, func(c collection) { members = viewSet(c).members() })
	return members, err
}

// SRandMember draws from the set at key as SRANDMEMBER does: with count
// >= 0, that many distinct members (all of them if it has no more); with
// count < 0, -count members drawn independently, possibly repeated. found
// is false if key is missing.
func (s *Store) SRandMember(key []byte, count int64) (members [][]byte, found bool, err error) {
	found, err = s.readColl(key, TypeSet, func(c collection) {
		v := viewSet(c)
		if count < 0 {
			members = make([][]byte, 0, -count)
			for range -count {
				members = append(members, v.random())
			}
			return
		}
		members = v.sample(int(min(count, int64(v.card()))))
	})
	return members, found, err
}

// sample is n distinct members drawn uniformly, n at most the set's size;
// all of them, in the set's order, if n is its size.
func (v setView) sample(n int) [][]byte {
	size := v.card()
	if n == size {
		return v.members()
	}
	if v.obj != nil && n*3 <= size {
		// Few of many: draw until enough distinct ones.
		picked := make(map[int]bool, n)
		out := make([][]byte, 0, n)
		for len(out) < n {
			i := rand.IntN(size)
			if !picked[i] {
				picked[i] = true
				out = append(out, []byte(v.obj.members[i]))
			}
		}
		return out
	}
	all := v.members()
	for i := range n {
		j := i + rand.IntN(size-i)
		all[i], all[j] = all[j], all[i]
	}
	return all[:n]
}

// SPop removes count random members from the set at key and returns them
// (all of them if it has no more), deleting the key if it empties.
func (s *Store) SPop(key []byte, count int64) (popped [][]byte, err error) {
	err = s.shrinkColl(key, TypeSet, func(cur collection, exists bool) (collection, collChange, error) {
		if !exists || count == 0 {
			return cur, collUnchanged, nil
		}
		v := viewSet(cur)
		size := int64(v.card())
		if count >= size {
			popped = v.members()
			return collection{}, collDelete, nil
		}
		if remaining := size - count; remaining*5 <= count {
			// As Redis: most of the set goes, so the few members that
			// stay make a new set, in the form they call for.
			kept := v.sample(int(remaining))
			keep := make(map[string]bool, len(kept))
			for _, m := range kept {
				keep[string(m)] = true
			}
			v.each(func(m []byte) bool {
				if !keep[string(m)] {
					popped = append(popped, bytes.Clone(m))
				}
				return true
			})
			return newSetOf(kept, s.IntsetLimit()), collStore, nil
		}
		popped = v.sample(int(count))
		next, _ := setRemove(cur, popped)
		return next, collStore, nil
	})
	return popped, err
}

// SMove moves member from the set at src to the set at dst, creating it,
// and reports whether src had it, as SMOVE does: a missing src moves
// nothing whatever dst holds; dst holding another type is ErrWrongType;
// src equal to dst reports membership and changes nothing. added reports
// whether dst did not have the member before (SMOVE's sadd event).
func (s *Store) SMove(src, dst, member []byte) (moved, added bool, err error) {
	if err := s.admit(0); err != nil {
		return false, false, err
	}
	shards := s.lockShards([][]byte{src, dst}, 1)
	moved, added, err = s.smoveLocked(src, dst, member)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	s.grown(s.hash(dst))
	return moved, added, err
}

func (s *Store) smoveLocked(src, dst, member []byte) (moved, added bool, err error) {
	from, found, err := s.lookupCollLocked(src, TypeSet)
	if err != nil || !found {
		return false, false, err
	}
	if _, _, err := s.lookupCollLocked(dst, TypeSet); err != nil {
		return false, false, err
	}
	if bytes.Equal(src, dst) {
		return viewSet(from).has(member), false, nil
	}
	if !viewSet(from).has(member) {
		return false, false, nil
	}
	one := [][]byte{member}
	hs, hd := s.hash(src), s.hash(dst)
	err = s.writeCollLocked(s.shardOf(hs), hs, src, TypeSet, func(cur collection, _ bool) (collection, collChange, error) {
		next, removed := setRemove(cur, one)
		return next, setChange(next, removed > 0), nil
	})
	if err != nil {
		return false, false, err
	}
	err = s.writeCollLocked(s.shardOf(hd), hd, dst, TypeSet, func(cur collection, _ bool) (collection, collChange, error) {
		next, n := setAdd(cur, one, s.IntsetLimit())
		added = n > 0
		return next, setChange(next, added), nil
	})
	return err == nil, added, err
}

// SetOp is an operation of several sets.
type SetOp uint8

// The operations of SINTER, SUNION and SDIFF.
const (
	SetInter SetOp = iota
	SetUnion
	SetDiff
)

// SetCompute is the members of op applied to the sets at keys, a missing
// key being an empty set (SINTER, SUNION, SDIFF).
func (s *Store) SetCompute(op SetOp, keys [][]byte) ([][]byte, error) {
	shards := s.lockShards(keys, 1)
	members, err := s.setOpLocked(op, keys, 0)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	return members, err
}

// SetStore stores at dst the result of op applied to the sets at keys
// and returns its size and whether dst changed: stored, or deleted
// (SINTERSTORE, SUNIONSTORE, SDIFFSTORE). dst is replaced whatever it
// held, losing its deadline; an empty result deletes it.
func (s *Store) SetStore(op SetOp, dst []byte, keys [][]byte) (stored int, changed bool, err error) {
	if err := s.admit(0); err != nil {
		return 0, false, err
	}
	shards := s.lockShards(append([][]byte{dst}, keys...), 1)
	stored, changed, err = s.setStoreLocked(op, dst, keys)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	s.grown(s.hash(dst))
	return stored, changed, err
}

func (s *Store) setStoreLocked(op SetOp, dst []byte, keys [][]byte) (int, bool, error) {
	members, err := s.setOpLocked(op, keys, 0)
	if err != nil {
		return 0, false, err
	}
	var next collection
	if len(members) > 0 {
		next = newSetOf(members, s.IntsetLimit())
	}
	changed, err := s.replaceCollLocked(dst, TypeSet, next)
	if err != nil {
		return 0, false, err
	}
	return len(members), changed, nil
}

// SInterCard is the size of the intersection of the sets at keys, counted
// up to limit if limit > 0 (SINTERCARD).
func (s *Store) SInterCard(keys [][]byte, limit int) (int, error) {
	shards := s.lockShards(keys, 1)
	members, err := s.setOpLocked(SetInter, keys, limit)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	return len(members), err
}

// setOpLocked computes op over the sets at keys, whose shards the caller
// has locked; for an intersection, it stops at limit members if limit >
// 0. Every key is checked for its type before anything is computed, as
// Redis does.
func (s *Store) setOpLocked(op SetOp, keys [][]byte, limit int) ([][]byte, error) {
	views := make([]setView, len(keys))
	missing := false
	for i, k := range keys {
		c, found, err := s.readCollLocked(k, TypeSet)
		if err != nil {
			return nil, err
		}
		missing = missing || !found
		views[i] = viewSet(c)
	}
	var out [][]byte
	switch op {
	case SetInter:
		if missing {
			return nil, nil
		}
		// The smallest set's members, tested against the others.
		order := make([]int, len(views))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return views[a].card() - views[b].card() })
		first := views[order[0]]
		first.each(func(m []byte) bool {
			for _, i := range order[1:] {
				if !views[i].has(m) {
					return true
				}
			}
			out = append(out, bytes.Clone(m))
			return limit <= 0 || len(out) < limit
		})
	case SetUnion:
		seen := make(map[string]bool)
		for _, v := range views {
			v.each(func(m []byte) bool {
				if !seen[string(m)] {
					seen[string(m)] = true
					out = append(out, bytes.Clone(m))
				}
				return true
			})
		}
	case SetDiff:
		for _, k := range keys[1:] {
			if bytes.Equal(k, keys[0]) {
				return nil, nil // a set less itself
			}
		}
		views[0].each(func(m []byte) bool {
			for _, v := range views[1:] {
				if v.has(m) {
					return true
				}
			}
			out = append(out, bytes.Clone(m))
			return true
		})
	}
	if limit := s.IntsetLimit(); op != SetInter && int64(len(out)) <= limit {
		// Redis builds a union or difference as a new set, which it then
		// lists: an intset comes in ascending order.
		if v := viewSet(newSetOf(out, limit)); v.isIntset() {
			out = v.members()
		}
	}
	return out, nil
}

// SScan is one step of SSCAN over the set at key from cursor: members
// (those matching pattern, if it is not nil) and the cursor of the next
// step, 0 at the end. A set held in the record comes whole in one step, as
// Redis returns its intsets; a heap set is walked in the order of its
// members' hashes, so that every member present for a whole iteration is
// returned at least once however the set changes meanwhile, about count
// members a step.
func (s *Store) SScan(key []byte, cursor uint64, f ScanFilter, count int) (next uint64, members [][]byte, err error) {
	_, err = s.readColl(key, TypeSet, func(c collection) {
		v := viewSet(c)
		if v.obj == nil {
			members = v.members()
			return
		}
		var step []string
		step, next = s.hashOrderStep(slices.Values(v.obj.members), cursor, count)
		for _, m := range step {
			members = append(members, []byte(m))
		}
	})
	return next, filterNames(f, members, func(m []byte) []byte { return m }), err
}

// hashOrderStep is one step of a walk of a heap collection's members in
// the order of their hashes (SSCAN, ZSCAN): about count of those whose
// hash is at least cursor, and the cursor of the next step, 0 at the end.
// Every member present for a whole walk is returned at least once however
// the collection changes meanwhile.
func (s *Store) hashOrderStep(members iter.Seq[string], cursor uint64, count int) (step []string, next uint64) {
	type hashed struct {
		h uint64
		m string
	}
	var ahead []hashed
	for m := range members {
		if h := s.hashString(m); h >= cursor {
			ahead = append(ahead, hashed{h, m})
		}
	}
	slices.SortFunc(ahead, func(a, b hashed) int { return cmp.Compare(a.h, b.h) })
	// Members sharing a hash go in the same step: the cursor could not
	// tell them apart.
	n := min(count, len(ahead))
	for n < len(ahead) && n > 0 && ahead[n].h == ahead[n-1].h {
		n++
	}
	for _, a := range ahead[:n] {
		step = append(step, a.m)
	}
	if n < len(ahead) {
		next = ahead[n].h
	}
	return step, next
}
