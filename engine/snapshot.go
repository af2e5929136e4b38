package engine

import (
	"slices"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
)

// SnapshotItem is one key as Store.Snapshot hands it out: its envelope
// and, for a collection, its contents, every byte copied out of the store.
type SnapshotItem struct {
	Key []byte
	// Envelope's Value is set for a string only.
	Envelope
	// Members are a set's members, or a list's elements, head first.
	Members [][]byte
	// Pairs are a hash's fields and values: field, value, field, value...
	Pairs [][]byte
	// Scored are a sorted set's members in ascending order.
	Scored []ScoreMember
	// Stream is a stream's value.
	Stream *StreamData
	// Big is true when Redis would hold the collection in its big
	// encoding (a hashtable hash or set, a skiplist sorted set) although
	// it may be small enough now for the compact one: it left it once.
	Big bool
}

// Snapshot calls fn with the database's live keys of each shard in turn, and stops at
// fn's first error. items is reused, and so are the bytes of its strings
// (a string's key and value): fn must not keep them past its return (a
// collection's it may keep). Each shard is copied under its read lock, which is
// released before fn is called, so fn may do I/O and writers wait at most
// for one shard's copy; a shard's keys are as of one instant, and each key
// as of some instant during the whole call. A write that spans shards (a
// transaction, RENAME across shards) may be seen in part. The copy of one
// shard is the call's memory beyond the store's: about 1/256 of the
// data.
func (s *Store) Snapshot(fn func(items []SnapshotItem) error) error {
	var items []SnapshotItem
	var locs []slab.Loc
	var buf []byte
	for i := range s.shards {
		sh := &s.shards[i]
		now := s.now()
		items = items[:0]
		sh.mu.RLock()
		if sh.keys[s.db] == 0 {
			sh.mu.RUnlock()
			continue
		}
		// The records are read in the arena's order, not the index's: one
		// pass through memory instead of a jump per key (a third of a
		// save's time was the misses of the index's order).
		locs = locs[:0]
		sh.index.Range(func(_ int, loc slab.Loc) bool {
			if recordDB(s.arena.Block(loc)) == s.db {
				locs = append(locs, loc)
			}
			return true
		})
		slices.Sort(locs)
		// A string's key and value are copied into one buffer, reused for
		// every shard, not a slice each: a save would otherwise make as
		// much garbage as the store holds, and the collector's work would
		// slow the server's replies meanwhile.
		buf = buf[:0]
		for _, loc := range locs {
			r := parseRecord(s.arena.Block(loc))
			switch {
			case r.expiredAt(now):
			case r.isString():
				at, kl := len(buf), len(r.key)
				buf = append(append(buf, r.key...), r.value...)
				items = append(items, SnapshotItem{Key: buf[at : at+kl : at+kl], Envelope: Envelope{
					Type: TypeString, Value: buf[at+kl : len(buf) : len(buf)],
					FreshUntil: r.fresh, StaleUntil: r.stale, Fill: r.fillMeta()}})
			default:
				items = append(items, sh.snapshotItemLocked(&r))
			}
		}
		sh.mu.RUnlock()
		if len(items) == 0 {
			continue
		}
		if err := fn(items); err != nil {
			return err
		}
		clear(items) // let the copies go before the next shard's are made
	}
	return nil
}

func (sh *shard) snapshotItemLocked(r *record) SnapshotItem {
	it := SnapshotItem{Key: cloneValue(r.key), Envelope: r.envelope()}
	t := r.typ()
	if t == TypeString {
		return it
	}
	c := sh.collectionOf(r)
	switch t {
	case TypeHash:
		hashEach(c, func(f, v []byte) bool {
			it.Pairs = append(it.Pairs, cloneValue(f), cloneValue(v))
			return true
		})
		it.Big = hashEncoding(c) != "listpack"
	case TypeSet:
		viewSet(c).each(func(m []byte) bool {
			it.Members = append(it.Members, cloneValue(m))
			return true
		})
		it.Big = setEncoding(c) != "intset"
	case TypeZSet:
		v := viewZSet(c)
		it.Scored = v.entries(0, v.card(), false)
		it.Big = zsetEncoding(c) != "listpack"
	case TypeList:
		viewList(c).each(0, func(_ int, e []byte) bool {
			it.Members = append(it.Members, cloneValue(e))
			return true
		})
	case TypeStream:
		it.Stream = c.obj.(*Stream).export()
	}
	return it
}

// SnapshotKey is key as Snapshot would hand it out (DUMP); found is false
// if key is not live.
func (s *Store) SnapshotKey(key []byte) (it SnapshotItem, found bool) {
	h := s.hash(key)
	sh := s.shardOf(h)
	found, _ = s.readAt(sh, h, key, 0, func(r record) {
		it = sh.snapshotItemLocked(&r)
	})
	return it, found
}
