package engine

import (
	"bytes"
	"slices"
)

// Envelope is a copy of what the store holds for a key. Value is shared with
// the store and must not be modified.
type Envelope struct {
	Value []byte
	// FreshUntil and StaleUntil are unix nanoseconds; zero means no deadline.
	// For plain writes they are equal.
	FreshUntil int64
	StaleUntil int64
	// Fill is nil unless a read-through fill wrote the entry.
	Fill *FillMeta
}

// Condition restricts when a write happens.
type Condition uint8

// Conditions for Set, matching SET's NX and XX.
const (
	Always    Condition = iota
	IfAbsent            // NX
	IfPresent           // XX
)

// SetOptions says how Set writes. The zero value writes unconditionally with
// no expiry.
type SetOptions struct {
	Condition Condition
	// KeepTTL keeps the deadlines of an existing entry (SET ... KEEPTTL).
	KeepTTL bool
	// FreshUntil and StaleUntil are unix nanoseconds; zero means none. A zero
	// FreshUntil with a non-zero StaleUntil means they are equal.
	FreshUntil int64
	StaleUntil int64
	// Fill records a read-through fill's metadata; nil for plain writes.
	Fill *FillMeta
	// Fence, if not nil, makes the write a fill's: it is skipped when the
	// key was written since the fence was taken, and the fence is released
	// either way.
	Fence *Fence
}

// SetResult reports what Set found and did.
type SetResult struct {
	// Old is the value the key had before the call, if HadOld.
	Old     []byte
	HadOld  bool
	Written bool
}

// Get returns the value of key if it is live.
func (s *Store) Get(key []byte) ([]byte, bool) {
	env, ok := s.Lookup(key)
	return env.Value, ok
}

// Lookup returns the envelope of key if it is live, counting a hit or a miss.
func (s *Store) Lookup(key []byte) (Envelope, bool) {
	env, found, _ := s.LookupExpired(key)
	return env, found
}

// LookupExpired is Lookup that also reports whether the read found the key
// past its stale deadline (and removed it), which read-through counts as
// reaching the stale limit. Keys the background sweeper removed first are
// plain misses.
func (s *Store) LookupExpired(key []byte) (env Envelope, found, expired bool) {
	sh := s.shardFor(key)
	sh.mu.RLock()
	e := sh.m[string(key)]
	if e == nil {
		sh.mu.RUnlock()
		sh.misses.Add(1)
		return Envelope{}, false, false
	}
	if e.staleUntil != 0 && e.expiredAt(s.now()) {
		sh.mu.RUnlock()
		s.expire(sh, e)
		sh.misses.Add(1)
		return Envelope{}, false, true
	}
	env = e.envelope()
	id := e.id
	sh.mu.RUnlock()
	sh.hits.Add(1)
	s.noteRead(id)
	return env, true, false
}

func (e *entry) envelope() Envelope {
	return Envelope{Value: e.value, FreshUntil: e.freshUntil, StaleUntil: e.staleUntil, Fill: e.fill}
}

// Peek is Lookup without touching hit counters or access frequency, for
// commands such as TTL, TYPE and EXISTS.
func (s *Store) Peek(key []byte) (Envelope, bool) {
	sh := s.shardFor(key)
	sh.mu.RLock()
	e := sh.m[string(key)]
	if e == nil || e.expiredAt(s.now()) {
		sh.mu.RUnlock()
		return Envelope{}, false
	}
	env := e.envelope()
	sh.mu.RUnlock()
	return env, true
}

// Touch records an access to key and reports whether it is live.
func (s *Store) Touch(key []byte) bool {
	sh := s.shardFor(key)
	sh.mu.RLock()
	e := sh.m[string(key)]
	live := e != nil && !e.expiredAt(s.now())
	var id uint64
	if live {
		id = e.id
	}
	sh.mu.RUnlock()
	if live {
		s.noteRead(id)
	}
	return live
}

// expire removes e if it is still the entry of its key; a reader found it
// past its stale deadline.
func (s *Store) expire(sh *shard, e *entry) {
	sh.mu.Lock()
	removed := sh.m[e.key] == e
	if removed {
		sh.removeLocked(e)
		s.notifyRemoved(Expired, e)
	}
	sh.mu.Unlock()
	if removed {
		s.expired.Add(1)
		s.policy.Del(e.id)
	}
}

// liveLocked returns the live entry of key in sh, removing an expired one.
// The caller holds sh.mu for writing and must unregister *dead afterwards.
func (s *Store) liveLocked(sh *shard, key []byte, now int64, dead *[]*entry) *entry {
	e := sh.m[string(key)]
	if e != nil && e.expiredAt(now) {
		sh.removeLocked(e)
		s.notifyRemoved(Expired, e)
		s.expired.Add(1)
		*dead = append(*dead, e)
		return nil
	}
	return e
}

// Set writes value under key as opts says. It copies key and value.
func (s *Store) Set(key, value []byte, opts SetOptions) (SetResult, error) {
	if opts.Fence != nil {
		return s.setFenced(key, value, &opts)
	}
	return s.set(key, value, &opts)
}

// setFenced is a fill's Set. A fill is background work: it waits for an
// atomic batch rather than interleave with it (Section).
func (s *Store) setFenced(key, value []byte, opts *SetOptions) (SetResult, error) {
	hint := s.hash(key)
	s.section.RLock(hint)
	defer s.section.RUnlock(hint)
	return s.set(key, value, opts)
}

func (s *Store) set(key, value []byte, opts *SetOptions) (SetResult, error) {
	cost := entryCost(len(key), len(value))
	// The bound is read from ristretto each time: SetMaxMemory changes it.
	if cost > s.MaxMemory() {
		return SetResult{}, ErrTooLarge
	}
	owned := bytes.Clone(value)
	if owned == nil {
		owned = []byte{}
	}
	fresh, stale := opts.FreshUntil, opts.StaleUntil
	if fresh == 0 {
		fresh = stale
	}
	sh := s.shardFor(key)
	var dead []*entry
	now := s.now()
	sh.mu.Lock()
	e := s.liveLocked(sh, key, now, &dead)
	res := SetResult{HadOld: e != nil}
	if e != nil {
		res.Old = e.value
	}
	fenced := opts.Fence != nil && sh.storeRefusedLocked(opts.Fence, fresh, now)
	if fenced || (opts.Condition == IfAbsent && e != nil) || (opts.Condition == IfPresent && e == nil) {
		sh.mu.Unlock()
		s.unregister(dead)
		return res, nil
	}
	res.Written = true
	sh.wroteLocked(key)
	s.notify(Written, key)
	isNew := e == nil
	if isNew {
		e = &entry{key: string(key), id: s.nextID.Add(1)}
		sh.m[e.key] = e
	} else if opts.KeepTTL {
		fresh, stale = e.freshUntil, e.staleUntil
	}
	sh.setDeadlinesLocked(e, fresh, stale)
	e.value = owned
	e.fill = opts.Fill
	changed := sh.chargeLocked(e, cost, isNew)
	sh.mu.Unlock()
	s.unregister(dead)
	if changed {
		s.register(e)
	}
	return res, nil
}

// setDeadlinesLocked sets e's deadlines, keeping sh.volatile in step.
func (sh *shard) setDeadlinesLocked(e *entry, fresh, stale int64) {
	if (e.staleUntil != 0) != (stale != 0) {
		if stale != 0 {
			sh.volatile++
		} else {
			sh.volatile--
		}
	}
	e.freshUntil, e.staleUntil = fresh, stale
}

// SetMulti writes pairs (key, value, key, value, ...) atomically with no
// expiry, as MSET does. With IfAbsent nothing is written if any key exists
// (MSETNX); it reports whether the pairs were written.
func (s *Store) SetMulti(pairs [][]byte, cond Condition) (bool, error) {
	for i := 0; i+1 < len(pairs); i += 2 {
		if entryCost(len(pairs[i]), len(pairs[i+1])) > s.MaxMemory() {
			return false, ErrTooLarge
		}
	}
	shards := s.lockShards(pairs, 2)
	var dead []*entry
	now := s.now()
	if cond == IfAbsent {
		for i := 0; i < len(pairs); i += 2 {
			sh := s.shardFor(pairs[i])
			if s.liveLocked(sh, pairs[i], now, &dead) != nil {
				unlockShards(shards)
				s.unregister(dead)
				return false, nil
			}
		}
	}
	var touched []*entry
	for i := 0; i+1 < len(pairs); i += 2 {
		key, value := pairs[i], pairs[i+1]
		sh := s.shardFor(key)
		e := s.liveLocked(sh, key, now, &dead)
		isNew := e == nil
		if isNew {
			e = &entry{key: string(key), id: s.nextID.Add(1)}
			sh.m[e.key] = e
		}
		sh.wroteLocked(key)
		s.notify(Written, key)
		sh.setDeadlinesLocked(e, 0, 0)
		e.value = append([]byte{}, value...)
		e.fill = nil
		if sh.chargeLocked(e, entryCost(len(key), len(value)), isNew) {
			touched = append(touched, e)
		}
	}
	unlockShards(shards)
	s.unregister(dead)
	for _, e := range touched {
		s.register(e)
	}
	return true, nil
}

// lockShards write-locks, in index order, every shard holding one of the keys
// keys[0], keys[stride], ..., and returns them for unlockShards.
func (s *Store) lockShards(keys [][]byte, stride int) []*shard {
	idx := make([]int, 0, (len(keys)+stride-1)/stride)
	for i := 0; i < len(keys); i += stride {
		idx = append(idx, int(s.hash(keys[i])>>(64-shardBits)))
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	locked := make([]*shard, len(idx))
	for i, n := range idx {
		locked[i] = &s.shards[n]
		locked[i].mu.Lock()
	}
	return locked
}

func unlockShards(shards []*shard) {
	for _, sh := range shards {
		sh.mu.Unlock()
	}
}

// Update replaces the value of key with what fn returns, keeping its
// deadlines; a missing key is created without expiry. fn receives the current
// value (nil, false if absent) and runs under the key's lock, so it must be
// quick and must not call the store. It may return old with bytes appended:
// the store never lets a reader see bytes past a length it published. If fn
// returns an error nothing changes.
func (s *Store) Update(key []byte, fn func(old []byte, exists bool) ([]byte, error)) ([]byte, error) {
	var dead []*entry
	e, value, changed, err := s.updateLocked(s.shardFor(key), key, fn, &dead)
	s.unregister(dead)
	if changed {
		s.register(e)
	}
	return value, err
}

// updateLocked is Update's critical section. The deferred unlock matters:
// fn is the caller's code, and if it panics the shard must not stay locked.
func (s *Store) updateLocked(sh *shard, key []byte, fn func([]byte, bool) ([]byte, error), dead *[]*entry) (e *entry, value []byte, changed bool, err error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e = s.liveLocked(sh, key, s.now(), dead)
	var old []byte
	if e != nil {
		old = e.value
	}
	value, err = fn(old, e != nil)
	if err == nil && entryCost(len(key), len(value)) > s.MaxMemory() {
		err = ErrTooLarge
	}
	if err != nil {
		return nil, nil, false, err
	}
	isNew := e == nil
	if isNew {
		e = &entry{key: string(key), id: s.nextID.Add(1)}
		sh.m[e.key] = e
	}
	sh.wroteLocked(key)
	s.notify(Written, key)
	e.value = value
	// The value is no longer the origin's, so its validators must not
	// renew it on a later revalidation.
	e.fill = nil
	changed = sh.chargeLocked(e, entryCost(len(key), len(value)), isNew)
	return e, value, changed, nil
}

// Delete removes key and reports whether it was live.
func (s *Store) Delete(key []byte) bool {
	_, ok := s.GetDel(key)
	return ok
}

// GetDel removes key and returns the value it had.
func (s *Store) GetDel(key []byte) ([]byte, bool) {
	e := s.remove(key, Deleted)
	if e == nil {
		return nil, false
	}
	return e.value, true
}

// Invalidate removes key, as Delete does, because its value changed
// elsewhere (with --redis, another replica wrote it), and reports whether
// the store had it. The listener is told (Invalidated) whether or not the
// store had a copy.
func (s *Store) Invalidate(key []byte) bool { return s.remove(key, Invalidated) != nil }

// remove removes key, if live, and returns its entry. The listener is told
// with kind: Deleted only if the key was live, Invalidated in any case.
func (s *Store) remove(key []byte, kind ChangeKind) *entry {
	sh := s.shardFor(key)
	var dead []*entry
	sh.mu.Lock()
	// A delete wins over a fill in progress even when the key is absent:
	// the fill must not bring back what was just deleted.
	sh.wroteLocked(key)
	e := s.liveLocked(sh, key, s.now(), &dead)
	if e != nil {
		sh.removeLocked(e)
		dead = append(dead, e)
	}
	if e != nil || kind == Invalidated {
		s.notify(kind, key)
	}
	sh.mu.Unlock()
	s.unregister(dead)
	return e
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
	sh := s.shardFor(key)
	var dead []*entry
	now := s.now()
	sh.mu.Lock()
	sh.supersededLocked(key)
	e := s.liveLocked(sh, key, now, &dead)
	stale := e != nil && e.freshUntil != 0 && e.freshUntil <= now
	if stale {
		sh.removeLocked(e)
		dead = append(dead, e)
	}
	if e == nil || stale {
		s.notify(Invalidated, key)
	}
	sh.mu.Unlock()
	s.unregister(dead)
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
	sh := s.shardFor(key)
	var dead []*entry
	now := s.now()
	sh.mu.Lock()
	e := s.liveLocked(sh, key, now, &dead)
	ok := e != nil && expireAllowed(e.staleUntil, at, cond)
	if ok {
		sh.wroteLocked(key)
		if at <= now {
			sh.removeLocked(e)
			s.notify(Deleted, key)
			dead = append(dead, e)
		} else {
			fresh := at
			if e.freshUntil != 0 && e.freshUntil < at {
				fresh = e.freshUntil
			}
			sh.setDeadlinesLocked(e, fresh, at)
			s.notify(Written, key)
		}
	}
	sh.mu.Unlock()
	s.unregister(dead)
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
	sh := s.shardFor(key)
	var dead []*entry
	sh.mu.Lock()
	e := s.liveLocked(sh, key, s.now(), &dead)
	ok := e != nil && e.staleUntil != 0
	if ok {
		sh.wroteLocked(key)
		sh.setDeadlinesLocked(e, 0, 0)
		s.notify(Written, key)
	}
	sh.mu.Unlock()
	s.unregister(dead)
	return ok
}

// GetEx returns key's value and, if persist or at is set, changes its
// deadline the way GETEX does: at (unix nanoseconds) not in the future
// deletes the key after reading it.
func (s *Store) GetEx(key []byte, at int64, persist bool) ([]byte, bool) {
	if at == 0 && !persist {
		return s.Get(key)
	}
	sh := s.shardFor(key)
	var dead []*entry
	now := s.now()
	sh.mu.Lock()
	e := s.liveLocked(sh, key, now, &dead)
	// Read the value under the lock: e stays in the map, so a concurrent
	// Set may replace e.value as soon as the lock is released.
	var value []byte
	if e != nil {
		value = e.value
		sh.wroteLocked(key)
		switch {
		case persist:
			// As Redis, a key that had no deadline did not change.
			if e.staleUntil != 0 {
				sh.setDeadlinesLocked(e, 0, 0)
				s.notify(Written, key)
			}
		case at <= now:
			sh.removeLocked(e)
			s.notify(Deleted, key)
			dead = append(dead, e)
		default:
			sh.setDeadlinesLocked(e, at, at)
			s.notify(Written, key)
		}
	}
	sh.mu.Unlock()
	s.unregister(dead)
	if e == nil {
		sh.misses.Add(1)
		return nil, false
	}
	sh.hits.Add(1)
	return value, true
}
