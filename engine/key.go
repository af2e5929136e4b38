package engine

import "sync"

// Delete removes key, of any type, and reports whether it was live.
func (s *Store) Delete(key []byte) bool {
	_, found := s.remove(key, Deleted, false)
	return found
}

// GetDel removes key and returns the value it had, if it is a live string;
// a key of another type stays (TypeOf tells which it was).
func (s *Store) GetDel(key []byte) ([]byte, bool) { return s.remove(key, Deleted, true) }

// Invalidate removes key, as Delete does, because its value changed
// elsewhere (with --redis, another replica wrote it), and reports whether
// the store had it. The listener is told (Invalidated) whether or not the
// store had a copy: a client may have cached the key's absence.
func (s *Store) Invalidate(key []byte) bool {
	_, found := s.remove(key, Invalidated, false)
	return found
}

// remove removes key, if live, and with get returns the value it had,
// leaving a key that is not a string. The listener is told with kind:
// Deleted only if the key was live, Invalidated in any case.
func (s *Store) remove(key []byte, kind ChangeKind, get bool) ([]byte, bool) {
	h := s.hash(key)
	sh := s.shardOf(h)
	var value []byte
	sh.mu.Lock()
	if get {
		if sl, found := s.liveKeyLocked(sh, h, key); found && !sl.rec.isString() {
			sh.mu.Unlock()
			return nil, false
		}
	}
	var old func([]byte)
	if get {
		old = func(v []byte) { value = cloneValue(v) }
	}
	found := s.removeKeyLocked(sh, h, key, kind, old)
	sh.mu.Unlock()
	return value, found
}

// DeleteMulti removes keys, of any type, at one instant, as Redis's DEL
// and UNLINK do: it holds the write locks of all their shards at once, so
// no reader sees some of them gone and others not yet. It returns how many
// were live, and tells deleted, if not nil, the index of each key that
// was, in order. deleted is called under the keys' shard locks: it must
// only note the index (the keyspace events are sent after).
func (s *Store) DeleteMulti(keys [][]byte, deleted func(i int)) int {
	if len(keys) == 1 {
		// One key is one shard (DEL k, the common call, allocates nothing).
		if s.Delete(keys[0]) {
			if deleted != nil {
				deleted(0)
			}
			return 1
		}
		return 0
	}
	shards := s.lockShards(keys, 1)
	n := 0
	for i, k := range keys {
		h := s.hash(k)
		if s.removeKeyLocked(s.shardOf(h), h, k, Deleted, nil) {
			n++
			if deleted != nil {
				deleted(i)
			}
		}
	}
	unlockShards(shards, (*sync.RWMutex).Unlock)
	return n
}

// removeKeyLocked is remove's critical section: the caller holds sh.mu for
// writing and must call s.feed after releasing it. If the key is
// live, its value is handed to old, if not nil, before the record is freed.
func (s *Store) removeKeyLocked(sh *shard, h uint64, key []byte, kind ChangeKind, old func([]byte)) bool {
	// A delete wins over a fill in progress even when the key is absent:
	// the fill must not bring back what was just deleted.
	sh.wroteLocked(s.db, key)
	sl, found := s.liveKeyLocked(sh, h, key)
	switch {
	case found:
		if old != nil {
			old(sl.rec.value)
		}
		s.removeTellingLocked(sh, h, sl, kind)
	case kind == Invalidated:
		s.notify(kind, key)
	}
	return found
}

// DropStale removes key if its entry is past its fresh deadline, and
// reports whether it did. It is for a copy that a newer value elsewhere
// supersedes (with --redis, another replica's published fill), and it is not
// a write: a fresh entry, or one with no fresh deadline, stays, and a fill
// running here still stores the newer value it is taking. Only a stale entry
// that fill may have taken before the newer value existed is refused, as
// old as the one dropped. The listener is told (Invalidated) unless a
// fresh entry stays: a reader now gets the newer value from elsewhere.
func (s *Store) DropStale(key []byte) bool {
	h := s.hash(key)
	sh := s.shardOf(h)
	now := s.now()
	sh.mu.Lock()
	sh.supersededLocked(s.db, key)
	sl, found := s.liveKeyLocked(sh, h, key)
	stale := found && sl.rec.fresh != 0 && sl.rec.fresh <= now
	switch {
	case stale:
		s.removeTellingLocked(sh, h, sl, Invalidated)
	case !found:
		// A client may have cached the key's absence here.
		s.notify(Invalidated, key)
	}
	sh.mu.Unlock()
	return stale
}

// ExpireCondition restricts when Expire changes a deadline, as EXPIRE's
// NX, XX, GT and LT options do.
type ExpireCondition uint8

// Conditions for Expire. A key without a deadline counts as expiring never,
// so GT never applies to it and LT always does.
const (
	ExpireAlways       ExpireCondition = iota
	ExpireIfNone                       // NX
	ExpireIfSet                        // XX
	ExpireIfLater                      // GT
	ExpireIfEarlier                    // LT
	ExpireIfSetEarlier                 // XX and LT
)

// Expire sets key's stale deadline to at (unix nanoseconds) and reports
// whether it did. A deadline not in the future deletes the key, as in Redis.
// The fresh deadline is pulled in to at if it was later.
func (s *Store) Expire(key []byte, at int64, cond ExpireCondition) bool {
	h := s.hash(key)
	sh := s.shardOf(h)
	now := s.now()
	sh.mu.Lock()
	sl, found := s.liveKeyLocked(sh, h, key)
	ok := found && expireAllowed(sl.rec.stale, at, cond)
	if ok {
		sh.wroteLocked(s.db, key)
		if at <= now {
			s.deleteLocked(sh, h, sl)
		} else {
			fresh := at
			if sl.rec.fresh != 0 && sl.rec.fresh < at {
				fresh = sl.rec.fresh
			}
			// Only a record without room for deadlines is rewritten; an
			// arena out of memory then leaves the key as it was.
			ok = s.setDeadlinesLocked(sh, h, sl, fresh, at) == nil
			if ok {
				s.notify(Written, key)
			}
		}
	}
	sh.mu.Unlock()
	return ok
}

func expireAllowed(current, at int64, cond ExpireCondition) bool {
	switch cond {
	case ExpireIfNone:
		return current == 0
	case ExpireIfSet:
		return current != 0
	case ExpireIfLater:
		return current != 0 && at > current
	case ExpireIfEarlier:
		return current == 0 || at < current
	case ExpireIfSetEarlier:
		return current != 0 && at < current
	}
	return true
}

// Persist removes key's deadlines and reports whether it had one.
func (s *Store) Persist(key []byte) bool {
	h := s.hash(key)
	sh := s.shardOf(h)
	sh.mu.Lock()
	sl, found := s.liveKeyLocked(sh, h, key)
	ok := found && sl.rec.stale != 0
	if ok {
		sh.wroteLocked(s.db, key)
		s.setDeadlinesLocked(sh, h, sl, 0, 0) // in place: the record has room
		s.notify(Written, key)
	}
	sh.mu.Unlock()
	return ok
}
