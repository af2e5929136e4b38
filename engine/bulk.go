package engine

import (
	"errors"
	"fmt"
	"slices"
)

// LoadItem is one key for Loader.Write: a string with what Set would be
// given for it, or a collection with its members.
type LoadItem struct {
	Key []byte
	// Type is the key's type; the zero Type is a string, whose value is
	// Value. A hash's fields and values are in Pairs (field, value,
	// field...), a set's members and a list's elements (head first) in
	// Members, a sorted set's members in Scored.
	Type    Type
	Value   []byte
	Pairs   [][]byte
	Members [][]byte
	Scored  []ScoreMember
	Stream  *StreamData
	// FreshUntil and StaleUntil are unix nanoseconds, 0 for none; a zero
	// FreshUntil is StaleUntil, as in SetOptions. A collection has one
	// deadline, StaleUntil.
	FreshUntil, StaleUntil int64
	Fill                   *FillMeta // a string's only
	// DB is the key's database, below Databases.
	DB int
}

// ErrDuplicateMember is Loader.Write's error for a hash, set or sorted set
// whose members repeat: a snapshot that holds one is corrupt (Redis's
// loader refuses it too).
var ErrDuplicateMember = errors.New("engine: a collection's members repeat")

// ErrEmptyCollection is Loader.Write's error for a collection without
// members, which no key holds.
var ErrEmptyCollection = errors.New("engine: a collection without members")

// Loader writes the keys of a snapshot into the store at the start, far
// faster than a Set (or an HSet, SAdd... and an Expire) per key: each
// batch takes a shard's lock once for all of its keys in that shard, a
// collection is built whole before it is placed, and the indexes are
// sized for the keys to come. A load into a store past its bound evicts
// after each batch, as a write would before it. A Loader is not safe for
// concurrent use.
type Loader struct {
	s      *Store
	hashes []uint64     // of the batch's keys
	order  []int32      // the batch's items by shard
	built  []collection // the batch's collections, by item (strings: none)
}

// NewLoader returns a Loader for about keys keys (a snapshot's count,
// which the file may overstate: at most what the memory bound holds at
// EntryOverhead each is believed).
func (s *Store) NewLoader(keys int) *Loader {
	keys = int(min(int64(keys), s.bound()/EntryOverhead))
	if keys > 0 {
		// Keys fall into shards unevenly: a little room above the mean.
		per := keys/numShards + keys/numShards/8 + 16
		for i := range s.shards {
			sh := &s.shards[i]
			sh.mu.Lock()
			sh.index.Reserve(sh.index.Len() + per)
			sh.mu.Unlock()
		}
	}
	return &Loader{s: s}
}

// Write writes items as Set with no condition writes a string, and a
// collection as if its key were deleted, the collection written with all
// of its members by one HSet, SAdd, ZAdd or RPUSH and given its deadline,
// in order (a key that repeats keeps its last value). It copies their
// bytes. An error (ErrDuplicateMember, ErrTooLarge, ErrOOM) stops the
// batch where it happened.
func (l *Loader) Write(items []LoadItem) error {
	s := l.s
	// The collections are built before any lock is taken: a shard's lock
	// is then held only to place them.
	l.built = slices.Grow(l.built[:0], len(items))[:len(items)]
	for i := range items {
		if items[i].Type == TypeString {
			l.built[i] = collection{}
			continue
		}
		c, err := s.buildCollection(&items[i])
		if err != nil {
			return fmt.Errorf("key %q: %w", items[i].Key, err)
		}
		l.built[i] = c
	}
	var starts [numShards + 1]int32 // where each shard's items begin in order
	l.hashes = l.hashes[:0]
	for i := range items {
		h := s.dbs[items[i].DB].hash(items[i].Key)
		l.hashes = append(l.hashes, h)
		starts[h>>(64-shardBits)+1]++
	}
	for i := 1; i <= numShards; i++ {
		starts[i] += starts[i-1]
	}
	next := starts
	l.order = slices.Grow(l.order[:0], len(items))[:len(items)]
	for i, h := range l.hashes {
		n := h >> (64 - shardBits)
		l.order[next[n]] = int32(i)
		next[n]++
	}
	for n := range numShards {
		if starts[n] == starts[n+1] {
			continue
		}
		sh := &s.shards[n]
		sh.mu.Lock()
		err := l.writeLocked(sh, items, l.order[starts[n]:starts[n+1]])
		sh.mu.Unlock()
		if err != nil {
			clear(l.built) // the heap objects not placed are garbage
			return err
		}
	}
	clear(l.built)
	if s.overBound(0) && s.EvictionPolicy() != NoEviction {
		// The next batch is refused with ErrOOM if nothing can go.
		_ = s.makeRoom(forBound, 0)
	}
	return nil
}

// writeLocked writes the items at idx, all of shard sh, whose lock the
// caller holds for writing.
func (l *Loader) writeLocked(sh *shard, items []LoadItem, idx []int32) error {
	for _, i := range idx {
		it, h := &items[i], l.hashes[i]
		s := &l.s.dbs[it.DB]
		r := s.itemRecordLocked(sh, it, l.built[i])
		if err := s.admitLocked(r.cost()); err != nil {
			sh.dropNewLocked(&r)
			return err
		}
		sl, found := s.liveKeyLocked(sh, h, r.key)
		sh.wroteLocked(s.db, r.key)
		if err := s.placeLocked(sh, h, sl, found, r); err != nil {
			sh.dropNewLocked(&r)
			return err
		}
		s.notify(Written, r.key)
	}
	return nil
}

// itemRecordLocked is the record of it: a string's, or a collection's,
// built as c (buildCollection), put in sh's heap table if it is held
// there. The caller holds sh.mu for writing, and drops the record
// (dropNewLocked) if it does not store it.
func (s *Store) itemRecordLocked(sh *shard, it *LoadItem, c collection) newRecord {
	if it.Type == TypeString {
		fresh := it.FreshUntil
		if fresh == 0 {
			fresh = it.StaleUntil
		}
		return makeNewRecord(it.Key, it.Value, fresh, it.StaleUntil, it.Fill)
	}
	r := newRecord{tag: makeTag(it.Type, heldInRecord), key: it.Key, value: c.blob, fresh: it.StaleUntil, stale: it.StaleUntil}
	if c.obj != nil {
		r.tag = makeTag(it.Type, heapHeld)
		r.value = s.holdLocked(sh, c.obj, c.charge)
	}
	return r
}

// buildCollection is the collection of it, a hash, set, sorted set or
// list, as its one write (HSet, SAdd, ZAdd, RPUSH) into a missing key
// would make it.
func (s *Store) buildCollection(it *LoadItem) (collection, error) {
	var c collection
	if it.Type == TypeStream && it.Stream != nil {
		st, err := s.streamOf(it.Stream)
		if err != nil {
			return c, err
		}
		return collection{obj: st, charge: st.charge()}, nil
	}
	if len(it.Pairs) < 2 && len(it.Members) == 0 && len(it.Scored) == 0 {
		return c, ErrEmptyCollection
	}
	distinct := true
	switch it.Type {
	case TypeHash:
		e := editHash(collection{}, s.hashLimits())
		for i := 0; i+1 < len(it.Pairs); i += 2 {
			distinct = e.set(it.Pairs[i], it.Pairs[i+1]) && distinct
		}
		c, _ = e.done()
	case TypeSet:
		var added int
		c, added = setAdd(collection{}, it.Members, s.IntsetLimit())
		distinct = added == len(it.Members)
	case TypeZSet:
		e := editZSet(collection{}, s.zsetLimits())
		for _, m := range it.Scored {
			e.set(m.Member, m.Score)
		}
		distinct = e.view().card() == len(it.Scored)
		c, _ = e.result()
	case TypeList:
		c = listPush(collection{}, it.Members, false, s.nodeLimit())
	default:
		return c, ErrWrongType
	}

	if !distinct {
		return collection{}, ErrDuplicateMember
	}
	return c, nil
}
