package engine

import (
	"encoding/binary"
	"sync"
	"unsafe"
)

// SetMulti writes pairs (key, value, key, value, ...) atomically with no
// expiry, as MSET does. With IfAbsent nothing is written if any key exists
// (MSETNX); it reports whether the pairs were written.
func (s *Store) SetMulti(pairs [][]byte, cond Condition) (bool, error) {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := s.admit(entryCost(len(pairs[i]), len(pairs[i+1]))); err != nil {
			return false, err
		}
	}
	shards := s.lockShards(pairs, 2)
	ok, err := s.setMultiLocked(pairs, cond)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	return ok, err
}

func (s *Store) setMultiLocked(pairs [][]byte, cond Condition) (bool, error) {
	if cond == IfAbsent {
		for i := 0; i < len(pairs); i += 2 {
			h := s.hash(pairs[i])
			if _, found := s.liveKeyLocked(s.shardOf(h), h, pairs[i]); found {
				return false, nil
			}
		}
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		key := pairs[i]
		h := s.hash(key)
		sh := s.shardOf(h)
		sl, found := s.liveKeyLocked(sh, h, key)
		sh.wroteLocked(s.db, key)
		r := makeNewRecord(key, pairs[i+1], 0, 0, nil)
		r.outside = true
		if err := s.storeLocked(sh, h, sl, found, r); err != nil {
			return false, err
		}
		s.notify(Written, key)
	}
	return true, nil
}

// Derive replaces dst with the string fn makes of the strings at srcs,
// read (with mode, as ReadMulti reads) and written under one hold of all
// their shards' locks, so no write to a source or to dst comes between
// the read and the write (BITOP). fn gets the sources' values (nil for a
// missing key), which it must not keep or change, and returns bytes of its
// own; it runs under the locks: it must be quick and must not call the
// store. A source of another type is ErrWrongType and nothing changes.
// dst loses its deadline; an empty result deletes it. Derive returns the
// result's length and whether dst was live before.
func (s *Store) Derive(dst []byte, srcs [][]byte, mode ReadMode, fn func(values [][]byte) []byte) (n int, existed bool, err error) {
	if err := s.admit(0); err != nil {
		return 0, false, err
	}
	shards := s.lockShards(append([][]byte{dst}, srcs...), 1)
	read := make([]readResult, len(srcs))
	n, existed, err = s.deriveLocked(dst, srcs, mode, read, fn)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	for i, k := range srcs {
		h := s.hash(k)
		s.afterRead(s.shardOf(h), h, k, mode, read[i])
	}
	s.grown(s.hash(dst))
	return n, existed, err
}

func (s *Store) deriveLocked(dst []byte, srcs [][]byte, mode ReadMode, read []readResult, fn func(values [][]byte) []byte) (int, bool, error) {
	values := make([][]byte, len(srcs))
	wrongType := false
	for i, k := range srcs {
		h := s.hash(k)
		read[i] = s.readLocked(s.shardOf(h), h, k, mode, func(r record) {
			values[i] = r.value
			wrongType = wrongType || !r.isString()
		})
	}
	if wrongType {
		return 0, false, ErrWrongType
	}
	value := fn(values)
	h := s.hash(dst)
	sh := s.shardOf(h)
	sl, found := s.liveKeyLocked(sh, h, dst)
	if len(value) == 0 {
		if found {
			sh.wroteLocked(s.db, dst)
			s.deleteLocked(sh, h, sl)
		}
		return 0, found, nil
	}
	if err := s.admitLocked(entryCost(len(dst), len(value))); err != nil {
		return 0, found, err
	}
	sh.wroteLocked(s.db, dst)
	r := makeNewRecord(dst, value, 0, 0, nil)
	r.outside = true // fn's result, not a source's bytes
	if err := s.storeLocked(sh, h, sl, found, r); err != nil {
		return 0, found, err
	}
	s.notify(Written, dst)
	return len(value), found, nil
}

// Update replaces the value of key with what fn returns, keeping its
// deadlines; a missing key is created without expiry. fn receives the current
// value (nil, false if absent) and runs under the key's lock, so it must be
// quick and must not call the store. The current value is the store's own
// bytes: fn must not modify or keep them, but may return them with bytes
// appended (append copies them: the slice has no room past its end). If fn
// returns an error nothing changes.
func (s *Store) Update(key []byte, fn func(old []byte, exists bool) ([]byte, error)) ([]byte, error) {
	if err := s.admit(0); err != nil {
		return nil, err
	}
	h := s.hash(key)
	value, err := s.updateLocked(s.shardOf(h), h, key, fn)
	s.grown(h)
	return value, err
}

// liveStringLocked is the live key in sh and its string value, which
// aliases the arena; ErrWrongType if the key holds another type. The
// caller holds sh's lock.
func (s *Store) liveStringLocked(sh *shard, h uint64, key []byte) (sl slot, value []byte, found bool, err error) {
	sl, found = s.liveKeyLocked(sh, h, key)
	if found {
		if !sl.rec.isString() {
			return sl, nil, false, ErrWrongType
		}
		value = sl.rec.value
	}
	return sl, value, found, nil
}

// updateLocked is Update's critical section. The deferred unlock matters:
// fn is the caller's code, and if it panics the shard must not stay locked.
func (s *Store) updateLocked(sh *shard, h uint64, key []byte, fn func([]byte, bool) ([]byte, error)) ([]byte, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sl, old, found, err := s.liveStringLocked(sh, h, key)
	if err != nil {
		return nil, err
	}
	value, err := fn(old, found)
	if err != nil {
		return nil, err
	}
	return s.rewriteLocked(sh, h, sl, found, key, value)
}

// rewriteLocked stores value under key, found at sl (if found) in sh,
// whose write lock the caller holds, keeping its deadlines: the write of a
// read-modify-write of a string.
func (s *Store) rewriteLocked(sh *shard, h uint64, sl slot, found bool, key, value []byte) ([]byte, error) {
	if err := s.admitLocked(entryCost(len(key), len(value))); err != nil {
		return nil, err
	}
	if found && aliases(value, sl.rec.value) {
		// The old record is freed below; the caller gets its own copy.
		value = cloneValue(value)
	}
	sh.wroteLocked(s.db, key)
	// The value is no longer the origin's, so the fill's validators must
	// not renew it on a later revalidation: the record has no fill.
	r := makeNewRecord(key, value, sl.rec.fresh, sl.rec.stale, nil)
	r.outside = true // value is not the old record's (cloned above)
	if err := s.storeLocked(sh, h, sl, found, r); err != nil {
		return nil, err
	}
	s.notify(Written, key)
	return value, nil
}

// Grow changes key's string as Redis's in-place string commands (APPEND,
// SETRANGE, SETBIT, BITFIELD) do, keeping its deadlines. size gets the
// current value (nil, false if key is missing), which it must not keep or
// change, and returns the length the value is to have (no shorter than it
// is) or an error, returned as it is; edit then changes the value of that
// length: the old bytes, then zeros, and reports whether it changed one.
// Both run under the key's lock and must be quick. A key that neither
// appeared, nor grew, nor had a byte changed is no write: the listener is
// not told, so Redis's dirty counter, WATCH and client-side caching see
// none, as Redis's SETBIT and BITFIELD leave them. The length is checked
// against the bound before any
// memory is taken (ErrTooLarge), so no command builds a value it cannot
// keep. A value that grows past its record moves to one with room to grow
// again, as Redis's sds strings get: as much again as its length, at most
// growRoomMax, and only while that fits the bound; the room is charged as
// the value's. A change that fits the record's room is made in place.
// Grow returns the value's new length.
func (s *Store) Grow(key []byte, size func(old []byte, exists bool) (int, error), edit func(v []byte) bool) (int, error) {
	if err := s.admit(0); err != nil {
		return 0, err
	}
	h := s.hash(key)
	n, err := s.growLocked(s.shardOf(h), h, key, size, edit)
	s.grown(h)
	return n, err
}

// growRoomMax bounds the room Grow gives a value, as Redis's
// SDS_MAX_PREALLOC (1 MiB) does.
const growRoomMax = 1 << 20

// growLocked is Grow's critical section; the deferred unlock keeps the
// shard usable if the caller's functions panic.
func (s *Store) growLocked(sh *shard, h uint64, key []byte, size func([]byte, bool) (int, error), edit func([]byte) bool) (int, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sl, old, found, err := s.liveStringLocked(sh, h, key)
	if err != nil {
		return 0, err
	}
	n, err := size(old, found)
	if err != nil {
		return 0, err
	}
	n = max(n, len(old))
	if n > maxRecordValue {
		return 0, ErrTooLarge
	}
	if err := s.admitLocked(entryCost(len(key), n)); err != nil {
		return 0, err
	}
	sh.wroteLocked(s.db, key)
	if found && len(sl.rec.fill) == 0 && sl.rec.hasRoom && n <= len(old)+sl.rec.room {
		// In place: readers hold the shard's read lock, so none sees the
		// bytes change; the record's cost, which counts its room, stays.
		// Only a record Grow wrote (flagRoom, however little room) is
		// changed in place: one SET wrote moves to one, which makes it
		// Redis's "raw" string (stringEncoding) as Redis's in-place
		// commands make theirs.
		p := s.arena.Block(sl.loc)
		changed := edit(p[sl.rec.valueOff : sl.rec.valueOff+n])
		if grown := n - len(old); grown > 0 {
			binary.LittleEndian.PutUint32(p[len(p)-roomTail:], uint32(sl.rec.room-grown))
			changed = true
		}
		if changed {
			s.notify(Written, key)
		}
		return n, nil
	}
	g := &growth{old: old, n: n, edit: edit}
	if found && n > len(old) {
		g.room = min(n, growRoomMax, maxRecordValue-n)
		if s.fits(entryCost(len(key), n+g.room+roomTail)) != nil {
			g.room = 0
		}
	}
	// The value is no longer the origin's, so the fill's validators must
	// not renew it on a later revalidation: the record has no fill.
	r := makeNewRecord(key, nil, sl.rec.fresh, sl.rec.stale, nil)
	r.grow = g
	if err := s.storeLocked(sh, h, sl, found, r); err != nil {
		return 0, err
	}
	if !found || n > len(old) || g.changed {
		s.notify(Written, key)
	}
	return n, nil
}

// aliases reports whether v shares memory with old, which it can only do
// by starting inside it.
func aliases(v, old []byte) bool {
	if cap(v) == 0 || cap(old) == 0 {
		return false
	}
	vp, op := uintptr(unsafe.Pointer(unsafe.SliceData(v))), uintptr(unsafe.Pointer(unsafe.SliceData(old)))
	return vp >= op && vp < op+uintptr(cap(old))
}

// DeadlineChange is what GetEx did to its key's deadline.
type DeadlineChange uint8

// What GetEx did to the deadline.
const (
	DeadlineKept    DeadlineChange = iota // no change asked, or PERSIST of a key that had none
	DeadlineSet                           // the key has the new deadline
	DeadlineRemoved                       // PERSIST removed the key's deadline
	DeadlinePassed                        // the new deadline was not in the future: the key is deleted
)

// GetEx returns key's value and, if persist or at is set, changes its
// deadline the way GETEX does: at (unix nanoseconds) not in the future
// deletes the key after reading it. It reports what it did to the
// deadline, decided under the key's lock (GETEX's keyspace event).
func (s *Store) GetEx(key []byte, at int64, persist bool) ([]byte, bool, DeadlineChange) {
	if at == 0 && !persist {
		v, ok := s.Get(key)
		return v, ok, DeadlineKept
	}
	h := s.hash(key)
	sh := s.shardOf(h)
	now := s.now()
	change := DeadlineKept
	sh.mu.Lock()
	sl, found := s.liveKeyLocked(sh, h, key)
	found = found && sl.rec.isString()
	var value []byte
	if found {
		value = cloneValue(sl.rec.value)
		sh.wroteLocked(s.db, key)
		switch {
		case persist:
			// As Redis, a key that had no deadline did not change.
			if sl.rec.stale != 0 {
				s.setDeadlinesLocked(sh, h, sl, 0, 0)
				s.notify(Written, key)
				change = DeadlineRemoved
			}
		case at <= now:
			s.deleteLocked(sh, h, sl)
			change = DeadlinePassed
		default:
			// Out of arena memory the key keeps its deadline; the read
			// stands.
			if s.setDeadlinesLocked(sh, h, sl, at, at) == nil {
				s.notify(Written, key)
				change = DeadlineSet
			}
		}
	}
	sh.mu.Unlock()
	if !found {
		s.missed(sh, key)
		return nil, false, DeadlineKept
	}
	sh.hits.Add(1)
	return value, true, change
}
