package engine

import "sync"

// Fence lets a read-through fill store its result only if nothing else
// wrote the key meanwhile. A fill takes a fence before it calls the origin
// and stores with SetOptions.Fence; a SET, DEL, EXPIRE, APPEND, FLUSHALL or
// any other write of the key in between wins, and the fill's result is not
// stored (it still goes to the callers waiting for it). Expiry, eviction and
// DropStale are not writes: a fill after them is exactly what is wanted.
// After DropStale, though, a fill stores only a fresh entry: what it took
// before a newer value was announced is as old as the copy dropped.
//
// A Fence must be given to exactly one Set, or to Release.
type Fence struct {
	at      fenceKey
	shard   *shard
	written bool // a write of key happened since the fence was taken; guarded by shard.mu
	// superseded: DropStale was called on key since the fence was taken;
	// guarded by shard.mu.
	superseded bool
}

// fenceKey is what a fence is taken on: a key of one database. The same
// name in two databases is two keys, and a write of one is no write of the
// other, even where both hash to one shard.
type fenceKey struct {
	db  uint8
	key string
}

// Fence takes a fence on key in this database.
func (s *Store) Fence(key []byte) *Fence {
	sh := s.shardFor(key)
	sh.mu.Lock()
	f := sh.fenceLocked(s.db, key)
	sh.mu.Unlock()
	return f
}

// Release drops a fence whose fill stores nothing.
func (f *Fence) Release() {
	f.shard.mu.Lock()
	f.shard.releaseFenceLocked(f)
	f.shard.mu.Unlock()
}

// releaseFenceLocked removes f from its shard and reports whether the key
// was written since f was taken. The caller holds sh.mu.
func (sh *shard) releaseFenceLocked(f *Fence) (written bool) {
	list := sh.fences[f.at]
	for i, g := range list {
		if g == f {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(sh.fences, f.at)
	} else {
		sh.fences[f.at] = list
	}
	return f.written
}

// storeRefusedLocked releases f for a fenced store of an entry fresh until
// fresh (0: no deadline) and reports whether the store is skipped: the key
// was written since f was taken, or DropStale superseded its stale copies
// and this entry is stale at now too. The caller holds sh.mu.
func (sh *shard) storeRefusedLocked(f *Fence, fresh, now int64) bool {
	written := sh.releaseFenceLocked(f)
	return written || f.superseded && fresh != 0 && fresh <= now
}

// supersededLocked records, for the fences taken on key of database db,
// that DropStale superseded its stale copies. The caller holds sh.mu.
func (sh *shard) supersededLocked(db uint8, key []byte) {
	for _, f := range sh.fences[fenceKey{db, string(key)}] {
		f.superseded = true
	}
}

// wroteLocked records a write of key of database db for the fences taken
// on it. It costs a length check when no fill is running in the shard. The
// caller holds sh.mu.
func (sh *shard) wroteLocked(db uint8, key []byte) {
	if len(sh.fences) == 0 {
		return
	}
	for _, f := range sh.fences[fenceKey{db, string(key)}] {
		f.written = true
	}
}

// wroteAllLocked records a write of every key in sh, for FLUSHALL.
func (sh *shard) wroteAllLocked() { sh.wroteDBLocked(AllDatabases) }

// wroteDBLocked records a write of every key of database db in sh
// (AllDatabases: of every database), for FLUSHDB and SWAPDB: a fence on a
// key that does not exist is broken too, so a fill that began before the
// flush stores nothing. The caller holds sh.mu.
func (sh *shard) wroteDBLocked(db int) {
	for at, list := range sh.fences {
		if db != AllDatabases && int(at.db) != db {
			continue
		}
		for _, f := range list {
			f.written = true
		}
	}
}

// DeleteFenced removes the fence's key for a fill that learned the key no
// longer exists at its origin, unless the key was written since the fence
// was taken. It releases the fence and reports whether a live entry was
// removed.
func (s *Store) DeleteFenced(f *Fence) bool {
	sh, s := f.shard, s.DB(int(f.at.db))
	key := []byte(f.at.key)
	h := s.hash(key)
	sh.mu.Lock()
	written := sh.releaseFenceLocked(f)
	found := false
	if !written {
		var sl slot
		if sl, found = s.liveKeyLocked(sh, h, key); found {
			s.deleteLocked(sh, h, sl)
		}
	}
	sh.mu.Unlock()
	return found
}

// Written reports whether key was written since f was taken. After f was
// given to Set, DeleteFenced or Release it is final: whether that store
// was skipped because of a write.
func (f *Fence) Written() bool {
	f.shard.mu.Lock()
	defer f.shard.mu.Unlock()
	return f.written
}

// SnapshotFenced is SnapshotKey of each of keys at one instant, under
// every one of their shards' locks: the live ones, in keys' order (a key
// named twice, twice). With fence, each copy comes with a fence taken in
// the same hold, so that whoever sends the copies elsewhere (MIGRATE) can
// delete each key afterwards only if nothing wrote it since
// (DeleteUnwritten); fences is nil without. Each fence must be given to
// DeleteUnwritten or to Release. Each key counts as a hit or a miss, as
// a read's.
func (s *Store) SnapshotFenced(keys [][]byte, fence bool) (items []SnapshotItem, fences []*Fence) {
	shards := s.lockShards(keys, 1)
	var missing [][]byte
	for _, key := range keys {
		h := s.hash(key)
		sh := s.shardOf(h)
		sl, found := s.liveKeyLocked(sh, h, key)
		if !found {
			missing = append(missing, key)
			continue
		}
		sh.hits.Add(1)
		items = append(items, sh.snapshotItemLocked(&sl.rec))
		if fence {
			fences = append(fences, sh.fenceLocked(s.db, key))
		}
	}
	unlockShards(shards, (*sync.RWMutex).Unlock)
	for _, key := range missing {
		s.missed(s.shardFor(key), key)
	}
	return items, fences
}

// fenceLocked takes a fence on key of database db; the caller holds
// sh.mu for writing.
func (sh *shard) fenceLocked(db uint8, key []byte) *Fence {
	f := &Fence{at: fenceKey{db, string(key)}, shard: sh}
	if sh.fences == nil {
		sh.fences = make(map[fenceKey][]*Fence)
	}
	sh.fences[f.at] = append(sh.fences[f.at], f)
	return f
}

// DeleteUnwritten removes the key of each fence of fences, taken on this
// database by SnapshotFenced, for which remove(i) is true (the copy sent
// was taken: MIGRATE's target accepted it), unless the key was written
// since the fence was taken: a write that came meanwhile is never lost. It
// is one change, under every one of their shards' locks; it releases
// every fence, and calls deleted(i) for each key it removed. A removal is
// a write to the other fences on the key, as DEL's is.
func (s *Store) DeleteUnwritten(fences []*Fence, remove func(i int) bool, deleted func(i int)) {
	keys := make([][]byte, len(fences))
	for i, f := range fences {
		keys[i] = []byte(f.at.key)
	}
	shards := s.lockShards(keys, 1)
	defer unlockShards(shards, (*sync.RWMutex).Unlock)
	for i, f := range fences {
		written := f.shard.releaseFenceLocked(f)
		if written || !remove(i) {
			continue
		}
		h := s.hash(keys[i])
		if s.removeKeyLocked(f.shard, h, keys[i], Deleted, nil) {
			deleted(i)
		}
	}
}
