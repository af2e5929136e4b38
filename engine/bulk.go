package engine

import (
	"errors"
	"fmt"
	"runtime"
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
	// FreshUntil and StaleUntil are unix nanoseconds, 0 for none; a zero
	// FreshUntil is StaleUntil, as in SetOptions. A collection has one
	// deadline, StaleUntil.
	FreshUntil, StaleUntil int64
	Fill                   *FillMeta // a string's only
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
// collection is built whole before it is placed, the indexes are sized
// for the keys to come, and the eviction policy learns of the keys after
// the load, in the background (Done). A Loader is not safe for concurrent
// use.
//
// Telling ristretto of a key costs more than everything else a load does
// per key (three lookups or inserts in its maps of every key, on two
// goroutines: 1M keys loaded in 0.6-1.3 s were told to it in 1.6-4.8 s
// more on a busy 2-core machine), so a load that waited for it would take
// two to four times as long (measured: a restart of 1M keys until PING
// went from 2.1-2.5 s to 14-20 s, against redis-server's 3.4-6.0 s). Until
// it has learnt of a key, ristretto cannot evict it, and what it has not
// learnt of it does not count against its bound: a store past its bound
// meanwhile would pass it, or ristretto would turn the loaded keys away
// for the writes it heard of first. So a write that leaves the store over
// its bound while the feed runs waits for the feed to end (feeder.feed),
// and the load tells ristretto of every key at once (Write) if they pass
// the bound: eviction is always decided knowing every key.
type Loader struct {
	s      *Store
	hashes []uint64     // of the batch's keys
	order  []int32      // the batch's items by shard
	built  []collection // the batch's collections, by item (strings: none)
	unfed  []uint64     // hashes whose cost changed, not yet sent to ristretto
}

// NewLoader returns a Loader for about keys keys (a snapshot's count,
// which the file may overstate: at most what the memory bound holds at
// EntryOverhead each is believed).
func (s *Store) NewLoader(keys int) *Loader {
	// A load tells ristretto of its keys whatever the store's size: it
	// must know of those already here too.
	s.tellAll()
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
		h := s.hash(items[i].Key)
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
	if s.overBound() {
		s.feedHashes(l.unfed)
		l.unfed = l.unfed[:0]
	}
	return nil
}

// writeLocked writes the items at idx, all of shard sh, whose lock the
// caller holds for writing. Their changes are kept for ristretto in
// l.unfed, not queued (the sweeper sends the queue every 100 ms).
func (l *Loader) writeLocked(sh *shard, items []LoadItem, idx []int32) error {
	s := l.s
	for _, i := range idx {
		it, h := &items[i], l.hashes[i]
		fresh := it.FreshUntil
		if fresh == 0 {
			fresh = it.StaleUntil
		}
		var r newRecord
		if it.Type == TypeString {
			r = makeNewRecord(it.Key, it.Value, fresh, it.StaleUntil, it.Fill)
		} else {
			c := l.built[i]
			r = newRecord{tag: makeTag(it.Type, heldInRecord), key: it.Key, value: c.blob, fresh: it.StaleUntil, stale: it.StaleUntil}
			if c.obj != nil {
				r.tag = makeTag(it.Type, heapHeld)
				r.value = s.holdLocked(sh, c.obj, c.charge)
			}
		}
		if err := s.admit(r.cost()); err != nil {
			sh.dropNewLocked(&r)
			return err
		}
		sl, found := s.liveKeyLocked(sh, h, r.key)
		sh.wroteLocked(r.key)
		changed, err := s.placeLocked(sh, h, sl, found, r)
		if err != nil {
			sh.dropNewLocked(&r)
			return err
		}
		if changed {
			l.unfed = append(l.unfed, h)
		}
		s.notify(Written, r.key)
	}
	return nil
}

// loadFeedChunk is how many loaded keys are told to ristretto at a time,
// holding the feeder's lock: a writer that must send meanwhile waits for
// one chunk at most.
const loadFeedChunk = 4096

// Done starts telling ristretto of the loaded keys, on a goroutine of the
// store's, and returns at once: the keys are served meanwhile, a write
// that leaves the store over its bound waits for the feed to end, and Sync
// waits for it.
func (l *Loader) Done() {
	s, hashes := l.s, l.unfed
	l.unfed = nil
	if len(hashes) == 0 {
		return
	}
	s.feedInBackground(func() { s.feedHashes(hashes) })
}

// feedInBackground runs feed, a feed of keys to ristretto (a load's, or
// tellAll's), on a goroutine of the store's: a write that leaves the
// store over its bound meanwhile waits for it (waitLoadFeedIfOver), and
// Sync waits for it.
func (s *Store) feedInBackground(feed func()) {
	s.loadFeeding.Add(1)
	s.loadFeeds.Add(1)
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.loadFeeds.Done()
		defer s.loadFeeding.Add(-1)
		feed()
	}()
}

// feedHashes tells ristretto the cost of the keys of each hash, as the
// index holds them when it is sent. Each cost is read under its shard's
// lock while no other change is being sent, so that whether a write of the
// same key (queued as writes are) is sent before or after it, ristretto
// is left with the index's last word (see feeder).
func (s *Store) feedHashes(hashes []uint64) {
	chunk := make([]policyOp, 0, min(len(hashes), loadFeedChunk))
	for len(hashes) > 0 && !s.closed.Load() {
		n := min(len(hashes), loadFeedChunk)
		s.feeder.sendMu.Lock()
		chunk = chunk[:0]
		for _, h := range hashes[:n] {
			sh := s.shardOf(h)
			sh.mu.RLock()
			chunk = append(chunk, policyOp{h, s.hashCostLocked(sh, h)})
			sh.mu.RUnlock()
		}
		s.feeder.send(chunk)
		s.feeder.sendMu.Unlock()
		hashes = hashes[n:]
		// In the background, after a load, the server is serving: let
		// the replies that became ready meanwhile go first.
		runtime.Gosched()
	}
}

// buildCollection is the collection of it, a hash, set, sorted set or
// list, as its one write (HSet, SAdd, ZAdd, RPUSH) into a missing key
// would make it.
func (s *Store) buildCollection(it *LoadItem) (collection, error) {
	var c collection
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
