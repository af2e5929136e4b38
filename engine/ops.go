package engine

import (
	"encoding/binary"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
)

// Envelope is a copy of what the store holds for a key.
type Envelope struct {
	// Type is the key's type; Value is set only for a string.
	Type  Type
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

// readMode says what a read does besides reading.
type readMode uint8

const (
	readCounts  readMode = 1 << iota // counts a hit or a miss
	readNotes                        // reports the read to the eviction policy
	readExpires                      // removes a key found past its deadline
	readStrings                      // finds only strings: another type reads as missing
	readPast                         // finds a key past its deadline too, as live
)

// readAll is what GET does: count, note, expire.
const readAll = readCounts | readNotes | readExpires

// readString is what a command of strings does: GET's read of strings only.
const readString = readAll | readStrings

// read finds key and calls fn with its record under the shard's read lock;
// fn must not keep the record's slices. It reports whether the key was live
// (and, with readStrings, a string) and whether it was found past its stale
// deadline.
func (s *Store) read(key []byte, mode readMode, fn func(record)) (found, expired bool) {
	h := s.hash(key)
	return s.readAt(s.shardOf(h), h, key, mode, fn)
}

// readAt is read of key, whose hash is h and shard sh, for a caller that
// needs the shard too (a collection's heap object: shard.collectionOf).
func (s *Store) readAt(sh *shard, h uint64, key []byte, mode readMode, fn func(record)) (found, expired bool) {
	sh.mu.RLock()
	r := s.readLocked(sh, h, key, mode, fn)
	sh.mu.RUnlock()
	s.afterRead(sh, h, key, mode, r)
	return r.found, r.expired
}

// readResult is what readLocked found, for afterRead.
type readResult struct {
	found, expired bool
	// otherType: live but not a string, for a read of strings only
	// (readStrings), which reads it as missing. Redis counts the lookup
	// of a key of another type as a hit.
	otherType bool
	loc       slab.Loc // the expired record's
}

// readLocked finds key in sh, whose read lock the caller holds, and calls fn
// with its record if it is live (and, with readStrings, a string).
func (s *Store) readLocked(sh *shard, h uint64, key []byte, mode readMode, fn func(record)) readResult {
	sl, ok := s.findLocked(sh, h, key)
	switch {
	case !ok:
		return readResult{}
	case sl.rec.stale != 0 && mode&readPast == 0 && sl.rec.expiredAt(s.now()):
		return readResult{expired: true, loc: sl.loc}
	case mode&readStrings != 0 && !sl.rec.isString():
		return readResult{otherType: true}
	}
	fn(sl.rec)
	r := readResult{found: true}
	if mode&readNotes != 0 {
		s.accessedLocked(sh, sl.pos)
	}
	return r
}

// afterRead does what mode asks of a read once the shard's lock is
// released: an expired key is removed and counts as a miss, but is not
// counted by the eviction policy; a key missing or live is (countAccess).
func (s *Store) afterRead(sh *shard, h uint64, key []byte, mode readMode, r readResult) {
	if r.expired && mode&readExpires != 0 && !s.frozen.Load() {
		s.expireIfStill(sh, h, r.loc)
	}
	if mode&readCounts != 0 {
		if r.found || r.otherType {
			sh.hits.Add(1)
		} else {
			s.missed(sh, key)
		}
	}
	if !r.expired && mode&readNotes != 0 {
		s.countAccess(h)
	}
}

// ReadMode says what a read does besides reading (ReadMulti).
type ReadMode = readMode

// The read modes of ReadMulti: what GET does (ReadAll), what a client in
// CLIENT NO-TOUCH mode does (ReadCounts), what TOUCH does (ReadNotes), and
// nothing besides reading (zero: EXISTS).
const (
	ReadCounts  = readCounts  // count a hit or a miss
	ReadNotes   = readNotes   // report the read to the eviction policy
	ReadExpires = readExpires // remove a key found past its deadline
	ReadAll     = readAll
)

// ReadMulti reads keys at one instant, as Redis's MGET, EXISTS and TOUCH
// do: it holds the read locks of all their shards at once, so a write of
// several keys (SetMulti, DeleteMulti, Rename, Flush) is seen whole or not
// at all. It calls fn with each key's index, its type, its value (a
// string's; nil for another type) and whether it is live, in order, under
// those locks: fn must be quick, must not keep or modify value and must
// not call the store. It returns how many keys were live (a key given
// twice counts twice).
func (s *Store) ReadMulti(keys [][]byte, mode ReadMode, fn func(i int, t Type, value []byte, found bool)) int {
	found := func(i int) func(record) {
		return func(r record) {
			if r.isString() {
				fn(i, TypeString, r.value, true)
			} else {
				fn(i, r.typ(), nil, true)
			}
		}
	}
	if len(keys) == 1 {
		// One key is one shard: read's lock is the instant (EXISTS k,
		// MGET k, the common calls, allocate nothing).
		if ok, _ := s.read(keys[0], mode, found(0)); ok {
			return 1
		}
		fn(0, TypeString, nil, false)
		return 0
	}
	hashes := make([]uint64, len(keys))
	for i, k := range keys {
		hashes[i] = s.hash(k)
	}
	results := make([]readResult, len(keys))
	shards := s.lockShardsOf(hashes, (*sync.RWMutex).RLock)
	live := 0
	for i, k := range keys {
		results[i] = s.readLocked(s.shardOf(hashes[i]), hashes[i], k, mode, found(i))
		if results[i].found {
			live++
		} else {
			fn(i, TypeString, nil, false)
		}
	}
	unlockShards(shards, (*sync.RWMutex).RUnlock)
	for i, h := range hashes {
		s.afterRead(s.shardOf(h), h, keys[i], mode, results[i])
	}
	return live
}

// expireIfStill removes the record at loc, which a reader found past its
// deadline, if it is still its key's and still past it: a SET of the same
// length may have written over it in place meanwhile, and a freed block
// may hold another key's record since.
func (s *Store) expireIfStill(sh *shard, h uint64, loc slab.Loc) {
	sh.mu.Lock()
	pos, ok := sh.index.Find(tagOf(h), func(l slab.Loc) bool { return l == loc })
	if ok {
		if rec := parseRecord(s.arena.Block(loc)); rec.expiredAt(s.now()) && s.hashOf(&rec) == h {
			s.expireLocked(sh, h, slot{pos: pos, loc: loc, rec: rec})
		}
	}
	sh.mu.Unlock()
}

// Get returns a copy of the value of key if it is a live string. A key of
// another type reads as missing in Get, View, AppendValue, Lookup and
// LookupExpired: TypeOf tells a caller which it was.
func (s *Store) Get(key []byte) ([]byte, bool) {
	var v []byte
	found, _ := s.read(key, readString, func(r record) { v = cloneValue(r.value) })
	return v, found
}

// View calls fn with the value of key, if it is live, without copying it,
// and reports whether it was. fn runs under the key's shard's read lock, so
// the value can neither change nor be freed meanwhile; fn must be quick,
// must not keep or modify the slice and must not call the store. It counts
// a hit or miss and feeds the eviction policy as Get does.
func (s *Store) View(key []byte, fn func(value []byte)) bool {
	found, _ := s.read(key, readString, func(r record) { fn(r.value) })
	return found
}

// An EntryView is a live string entry as Store.ViewEntry shows it, under
// its shard's read lock: Value lies in the arena, valid only during the
// call.
type EntryView struct {
	Value                  []byte
	FreshUntil, StaleUntil int64
	fill                   []byte // the record's encoded FillMeta
}

// LoadTime is how long the fill that stored the entry took (its
// FillMeta's), 0 if no fill did.
func (v EntryView) LoadTime() time.Duration { return fillLoadTime(v.fill) }

// ViewEntry calls fn with key's entry, if it is a live string, under the
// shard's read lock and without a copy, and returns what fn returns. A read
// fn accepts counts as GET's does (a hit, an access, reported to the
// eviction policy); one it declines, or a key missing, expired or of
// another type, counts as nothing and changes nothing, for the caller to
// read again its usual way: so a read-through hit is answered with no copy
// and anything else is counted once.
func (s *Store) ViewEntry(key []byte, fn func(EntryView) bool) bool {
	h := s.hash(key)
	sh := s.shardOf(h)
	accepted := false
	sh.mu.RLock()
	if sl, ok := s.findLocked(sh, h, key); ok && sl.rec.isString() && !sl.rec.expiredAt(s.now()) {
		rec := &sl.rec
		if accepted = fn(EntryView{Value: rec.value, FreshUntil: rec.fresh, StaleUntil: rec.stale, fill: rec.fill}); accepted {
			s.accessedLocked(sh, sl.pos)
		}
	}
	sh.mu.RUnlock()
	if accepted {
		s.afterRead(sh, h, key, readCounts|readNotes, readResult{found: true})
	}
	return accepted
}

// AppendValue appends the value of key, if it is live, to dst and returns
// the result, as Get does without allocating a copy of its own.
func (s *Store) AppendValue(dst, key []byte) ([]byte, bool) {
	found, _ := s.read(key, readString, func(r record) { dst = append(dst, r.value...) })
	return dst, found
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
	found, expired = s.read(key, readString, func(r record) { env = r.envelope() })
	return env, found, expired
}

// Peek is Lookup without touching hit counters or access frequency, for
// commands such as TTL, TYPE and EXISTS.
func (s *Store) Peek(key []byte) (Envelope, bool) {
	var env Envelope
	found, _ := s.read(key, 0, func(r record) { env = r.envelope() })
	return env, found
}

// PeekPast is Peek that finds a key past its deadline and not yet removed
// too, as Redis's DEBUG OBJECT looks in the dictionary itself.
func (s *Store) PeekPast(key []byte) (Envelope, bool) {
	var env Envelope
	found, _ := s.read(key, readPast, func(r record) { env = r.envelope() })
	return env, found
}

// Touch records an access to key and reports whether it is live.
func (s *Store) Touch(key []byte) bool {
	found, _ := s.read(key, readNotes, func(record) {})
	return found
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
	sh.wroteLocked(r.key)
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
		err = s.storeCopyLocked(sh, h, sl, found, r)
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
		sh.wroteLocked(key)
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
			sh.wroteLocked(dst)
			s.deleteLocked(sh, h, sl)
		}
		return 0, found, nil
	}
	if err := s.admitLocked(entryCost(len(dst), len(value))); err != nil {
		return 0, found, err
	}
	sh.wroteLocked(dst)
	r := makeNewRecord(dst, value, 0, 0, nil)
	r.outside = true // fn's result, not a source's bytes
	if err := s.storeLocked(sh, h, sl, found, r); err != nil {
		return 0, found, err
	}
	s.notify(Written, dst)
	return len(value), found, nil
}

// lockShards write-locks, in index order, every shard holding one of the keys
// keys[0], keys[stride], ..., and returns them for unlockShards.
func (s *Store) lockShards(keys [][]byte, stride int) []*shard {
	// On the stack for the usual few keys (an MSET, a SMOVE): a multi-key
	// write made three allocations here, a sixtieth of MSET's time.
	var buf [16]uint64
	hashes := buf[:0]
	for i := 0; i < len(keys); i += stride {
		hashes = append(hashes, s.hash(keys[i]))
	}
	return s.lockShardsOf(hashes, (*sync.RWMutex).Lock)
}

// lockShardsOf locks with lock, once each and in index order (so that two
// callers never wait for each other), the shards of the given hashes, and
// returns them for unlockShards.
func (s *Store) lockShardsOf(hashes []uint64, lock func(*sync.RWMutex)) []*shard {
	var buf [16]int
	idx := buf[:0]
	for _, h := range hashes {
		idx = append(idx, int(h>>(64-shardBits)))
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	locked := make([]*shard, len(idx))
	for i, n := range idx {
		locked[i] = &s.shards[n]
		lock(&locked[i].mu)
	}
	return locked
}

// lockAllShards locks every shard with lock, in index order: what reads
// or writes keys it cannot name beforehand (SORT's BY and GET patterns,
// KEYS, FLUSHDB, SWAPDB) does so at one instant, as Redis's one thread does.
func (s *Store) lockAllShards(lock func(*sync.RWMutex)) []*shard {
	locked := make([]*shard, numShards)
	for i := range s.shards {
		locked[i] = &s.shards[i]
		lock(&locked[i].mu)
	}
	return locked
}

// unlockShards unlocks with unlock the shards lockShardsOf locked.
func unlockShards(shards []*shard, unlock func(*sync.RWMutex)) {
	for _, sh := range shards {
		unlock(&sh.mu)
	}
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
	sh.wroteLocked(key)
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
// length: the old bytes, then zeros. Both run under the key's lock and
// must be quick. The length is checked against the bound before any
// memory is taken (ErrTooLarge), so no command builds a value it cannot
// keep. A value that grows past its record moves to one with room to grow
// again, as Redis's sds strings get: as much again as its length, at most
// growRoomMax, and only while that fits the bound; the room is charged as
// the value's. A change that fits the record's room is made in place.
// Grow returns the value's new length.
func (s *Store) Grow(key []byte, size func(old []byte, exists bool) (int, error), edit func(v []byte)) (int, error) {
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
func (s *Store) growLocked(sh *shard, h uint64, key []byte, size func([]byte, bool) (int, error), edit func([]byte)) (int, error) {
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
	sh.wroteLocked(key)
	if found && len(sl.rec.fill) == 0 && n <= len(old)+sl.rec.room {
		// In place: readers hold the shard's read lock, so none sees the
		// bytes change; the record's cost, which counts its room, stays.
		p := s.arena.Block(sl.loc)
		edit(p[sl.rec.valueOff : sl.rec.valueOff+n])
		if grown := n - len(old); grown > 0 {
			binary.LittleEndian.PutUint32(p[len(p)-roomTail:], uint32(sl.rec.room-grown))
		}
		s.notify(Written, key)
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
	s.notify(Written, key)
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
// were live.
func (s *Store) DeleteMulti(keys [][]byte) int { return s.DeleteEach(keys, nil) }

// DeleteEach is DeleteMulti telling deleted, if not nil, the index of each
// key that was live, in order. It is called under the keys' shard locks:
// it must only note the index (the keyspace events are sent after).
func (s *Store) DeleteEach(keys [][]byte, deleted func(i int)) int {
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
	sh.wroteLocked(key)
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
	sh.supersededLocked(key)
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
		sh.wroteLocked(key)
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
		sh.wroteLocked(key)
		s.setDeadlinesLocked(sh, h, sl, 0, 0) // in place: the record has room
		s.notify(Written, key)
	}
	sh.mu.Unlock()
	return ok
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
		sh.wroteLocked(key)
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
