package engine

// A write, top to bottom: SET's path through the store (Set), then the
// removals every other write, expiry and eviction end in.
//
//  1. The record is made outside any lock (makeNewRecord, core_record.go)
//     and admitted against the memory bound (admit, core_evict.go): over
//     it, the write evicts first, before it changes anything and holding
//     no shard lock, or is refused (ErrOOM, ErrTooLarge).
//  2. Under the key's shard's write lock (setLocked), the key's record is
//     found as a read finds it (liveKeyLocked: one past its deadline is
//     removed as expired, a live one's access is stamped), and NX, XX or
//     a fill's fence decide whether the write happens.
//  3. The key's fences are marked written (wroteLocked, fence.go) and the
//     record placed (storeLocked, placeLocked): over the old one if it is
//     the same size (overwriteLocked), otherwise in a block of the arena
//     (slab.Arena.Alloc) that the key's index slot then points to, the old
//     block freed; the store's use (used) moves by the difference.
//  4. The listener is told (Created for a new key, then Written) under the
//     lock, so WATCH, tracking and keyspace events know of the write
//     before any later reader sees it.

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
	// Type is what value holds: a string (the zero Type), or the portable
	// form of a hash or a set (Store.Export), for copying a key from
	// elsewhere. A value that is no such form is refused with
	// ErrWrongType.
	Type Type
	// Get asks for the key's old value (SET ... GET, GETSET) in
	// SetResult.Old: the write is refused with ErrWrongType if the key
	// holds another type than a string.
	Get bool
	// Fence, if not nil, makes the write a fill's: it is skipped when the
	// key was written since the fence was taken, and the fence is released
	// either way.
	Fence *Fence
	// Loaded marks the write of what a loader returned (a read-through
	// fill or refresh), on no client's command: its Change says so
	// (Change.Loaded), for the keyspace event a client's write sends
	// itself. A copy of another replica's value is not Loaded.
	Loaded bool
}

// SetResult reports what Set found and did.
type SetResult struct {
	// Old is the value the key had before the call, if HadOld and
	// SetOptions.Get.
	Old     []byte
	HadOld  bool
	Written bool
}

// Set writes value under key as opts says. It copies key and value. Like
// every Store call it does not enter the Section: a caller outside a
// command's handler (a fill's flight) enters it around the call.
func (s *Store) Set(key, value []byte, opts SetOptions) (SetResult, error) {
	return s.set(key, value, &opts)
}

func (s *Store) set(key, value []byte, opts *SetOptions) (SetResult, error) {
	fresh, stale := opts.FreshUntil, opts.StaleUntil
	if fresh == 0 {
		fresh = stale
	}
	r := makeNewRecord(key, value, fresh, stale, opts.Fill)
	if opts.Type != TypeString {
		c, ok := importCollection(opts.Type, value)
		if !ok {
			return SetResult{}, ErrWrongType
		}
		r.tag, r.value = makeTag(opts.Type, heldInRecord), c.blob
		if c.obj != nil {
			r.tag, r.value, r.obj = makeTag(opts.Type, heapHeld), heapValue(0, c.charge), c.obj
		}
	}
	// The bound is read each time: SetMaxMemory changes it.
	if err := s.admit(r.cost()); err != nil {
		return SetResult{}, err
	}
	h := s.hash(key)
	sh := s.shardOf(h)
	res, err := s.setLocked(sh, h, r, opts)
	return res, err
}

func (s *Store) setLocked(sh *shard, h uint64, r newRecord, opts *SetOptions) (SetResult, error) {
	now := s.now()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sl, found := s.liveKeyLocked(sh, h, r.key)
	res := SetResult{HadOld: found}
	if found && opts.Get {
		if !sl.rec.isString() {
			return SetResult{}, ErrWrongType
		}
		res.Old = cloneValue(sl.rec.value)
	}
	fenced := opts.Fence != nil && sh.storeRefusedLocked(opts.Fence, r.fresh, now)
	if fenced || (opts.Condition == IfAbsent && found) || (opts.Condition == IfPresent && !found) {
		return res, nil
	}
	sh.wroteLocked(s.db, r.key)
	if found && opts.KeepTTL {
		r.fresh, r.stale = sl.rec.fresh, sl.rec.stale
	}
	if r.obj != nil {
		r.value = s.holdLocked(sh, r.obj, heapCharge(r.value))
	}
	r.outside = true // Set's key and value are its caller's
	var err error
	if opts.Fence != nil && !opts.Loaded {
		// A fenced write of no load is a copy from the shared tier.
		err = s.placeLocked(sh, h, sl, found, r)
	} else {
		err = s.storeLocked(sh, h, sl, found, r)
	}
	if err != nil {
		sh.dropNewLocked(&r)
		return SetResult{}, err
	}
	if opts.Loaded {
		s.notifyLoaded(r.key)
	} else {
		s.notify(Written, r.key)
	}
	res.Written = true
	return res, nil
}

// liveKeyLocked finds key in sh for a write, lazily expiring it: the
// caller holds sh.mu for writing.
func (s *Store) liveKeyLocked(sh *shard, h uint64, key []byte) (slot, bool) {
	sl, ok := s.findLocked(sh, h, key)
	if ok && sl.rec.stale != 0 && sl.rec.expiredAt(s.now()) {
		s.expireLocked(sh, h, sl)
		return slot{}, false
	}
	if ok {
		s.accessedLocked(sh, sl.pos)
		s.countAccess(h)
	}
	return sl, ok
}

// storeLocked writes a record for r.key in sh, replacing the one in old if
// found. The caller holds sh.mu for writing. A key it adds is told as
// Created.
func (s *Store) storeLocked(sh *shard, h uint64, old slot, found bool, r newRecord) error {
	err := s.placeLocked(sh, h, old, found, r)
	if !found && err == nil {
		s.notifyQuiet(Created, r.key)
	}
	return err
}

// placeLocked writes r's record as storeLocked does, telling no listener:
// also the write of a copy of a key that is elsewhere (the shared tier's),
// which is no key created.
func (s *Store) placeLocked(sh *shard, h uint64, old slot, found bool, r newRecord) error {
	if r.valueLen() > maxRecordValue {
		return ErrTooLarge
	}
	r.db = s.db
	if found && r.outside && r.grow == nil && !old.rec.onHeap() && !r.onHeap() {
		if b := s.arena.Block(old.loc); len(b) == r.size() {
			s.overwriteLocked(sh, old, b, r)
			return nil
		}
	}
	loc, err := s.arena.Alloc(r.size(), r.write)
	if err != nil {
		return err
	}
	cost := r.cost()
	var oldCost int64
	if found {
		// Read before the old record's bytes are freed: its segment may
		// be unmapped with them.
		oldCost = old.rec.cost()
		if old.rec.onHeap() && (!r.onHeap() || heapHandle(r.value) != heapHandle(old.rec.value)) {
			sh.freeHeapLocked(&old.rec)
		}
		sh.index.Replace(old.pos, loc)
		s.used.Add(cost - oldCost)
		s.arena.Free(old.loc)
		if old.rec.stale != 0 {
			sh.volatile--
		}
	} else {
		if !sh.index.Insert(tagOf(h), loc, s.freshStamp()) {
			s.arena.Free(loc)
			return ErrTooLarge
		}
		sh.keys[r.db]++
		s.used.Add(cost)
		s.countAccess(h)
		s.growSketchLocked(sh)
	}
	if r.stale != 0 {
		sh.volatile++
	}
	s.kickCompactor()
	return nil
}

// overwriteLocked writes r over the record in old, whose block b is
// exactly r's size: a SET of a value as long as the one it replaces (a
// counter, a session, a pipelined SET of one key) takes no block from the
// arena, frees none and leaves compaction nothing to do. Readers hold the
// shard's read lock, so nobody sees the bytes change. r's key and value
// must lie outside the arena (newRecord.outside), or writing could
// overwrite them before they are copied.
func (s *Store) overwriteLocked(sh *shard, old slot, b []byte, r newRecord) {
	sh.staleChangedLocked(old.rec.stale, r.stale)
	s.used.Add(r.cost() - old.rec.cost())
	r.write(b)
}

// staleChangedLocked keeps sh.volatile, its count of keys with a
// deadline, when a record written in place has its stale deadline go from
// was to is. The caller holds sh.mu for writing.
func (sh *shard) staleChangedLocked(was, is int64) {
	switch {
	case was == 0 && is != 0:
		sh.volatile++
	case was != 0 && is == 0:
		sh.volatile--
	}
}

// setDeadlinesLocked changes the deadlines of the record in sl, in place if
// it has room for them. The caller holds sh.mu for writing.
func (s *Store) setDeadlinesLocked(sh *shard, h uint64, sl slot, fresh, stale int64) error {
	if sl.rec.deadlines == 0 && fresh == 0 && stale == 0 {
		return nil
	}
	if sl.rec.deadlines == 0 {
		return s.storeLocked(sh, h, sl, true, sl.rec.renewed(fresh, stale))
	}
	sh.staleChangedLocked(sl.rec.stale, stale)
	// Readers hold the shard's read lock, so nobody sees the bytes change.
	putDeadlines(s.arena.Block(sl.loc)[sl.rec.deadlines:], fresh, stale)
	return nil
}

// removeLocked takes the entry in sl out of sh and frees its record,
// telling no listener. Each kind of removal (delete, expire, evict, drop)
// has its own function that calls it and says why. The caller holds sh.mu
// for writing.
func (s *Store) removeLocked(sh *shard, h uint64, sl slot) {
	sh.index.Delete(sl.pos)
	sh.keys[sl.rec.db]--
	sh.freeHeapLocked(&sl.rec)
	if sl.rec.stale != 0 {
		sh.volatile--
	}
	s.used.Add(-sl.rec.cost())
	s.arena.Free(sl.loc)
	s.kickCompactor()
}

// deleteLocked removes a live key on a client's request (DEL, GETDEL,
// EXPIRE in the past, a fill learning the key is gone).
func (s *Store) deleteLocked(sh *shard, h uint64, sl slot) { s.removeTellingLocked(sh, h, sl, Deleted) }

// expireLocked removes a key found past its stale deadline.
func (s *Store) expireLocked(sh *shard, h uint64, sl slot) {
	s.removeTellingLocked(sh, h, sl, Expired)
	s.expired.Add(1)
}

// removeTellingLocked is removeLocked that tells the listener why. The
// key is told while its record is still allocated: it aliases the arena.
func (s *Store) removeTellingLocked(sh *shard, h uint64, sl slot, why ChangeKind) {
	s.dbs[sl.rec.db].notify(why, sl.rec.key) // the record's database: the sweeper's and eviction's are any
	s.removeLocked(sh, h, sl)
}
