package engine

import (
	"bytes"
	"hash/maphash"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
)

// A read, top to bottom: GET's path through the store. GET calls View,
// which hands the value in the arena to the reply's writer; Get copies it
// out. Each step is a function below, in the order it runs:
//
//  1. The key's place (read, readAt): its hash in this database (hash)
//     picks one of the shards (shardOf), whose read lock is taken.
//  2. The lookup in the shard's index (readLocked, findLocked): the slots
//     whose tag is the hash's (tagOf), probed from its home slot
//     (slab.Index.Find, in engine/internal/slab/index.go); for each, the
//     record's database and key are compared where it lies in the arena;
//     the match is parsed (parseRecord, core_record.go), its value a slice
//     of the arena.
//  3. The expiry check (expiredAt): a record past its stale deadline reads
//     as missing, to be removed once the read lock is released. A key of
//     another type reads as missing to a read of strings.
//  4. The copy out: fn gets the record under the read lock, so no write
//     changes or frees it meanwhile (View's fn writes it into the reply;
//     Get's copies it, cloneValue).
//  5. The access stamp (accessedLocked): the slot's stamp takes the access
//     clock's second (clockSeconds), and under an LFU policy Redis's
//     counter may grow (lfuCounter); it is written only if it changed.
//  6. After the lock (afterRead): a hit or a miss is counted (missed tells
//     the listener of a keymiss), an expired record is removed if it is
//     still there (expireIfStill), and the LFU policies' sketch counts the
//     access (countAccess).
//
// The other reads (ViewEntry, Lookup, Peek, ReadMulti) follow, on the same
// functions.

// Get returns a copy of the value of key if it is a live string. A key of
// another type reads as missing in Get, View, Lookup and LookupExpired:
// TypeOf tells a caller which it was.
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

// hash is key's hash in this database: the same name hashes apart in
// each, so the databases share the shards without crowding one slot.
func (s *Store) hash(key []byte) uint64 { return inDB(maphash.Bytes(s.seed, key), s.db) }

func (s *Store) shardOf(h uint64) *shard { return &s.shards[h>>(64-shardBits)] }

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

// slot is a key found in its shard's index: where its slot is and its
// parsed record. It is valid until the shard's lock is released or the
// index changes.
type slot struct {
	pos int
	loc slab.Loc
	rec record
}

// findLocked looks key up in sh, whose lock the caller holds.
func (s *Store) findLocked(sh *shard, h uint64, key []byte) (slot, bool) {
	pos, ok := sh.index.Find(tagOf(h), func(loc slab.Loc) bool {
		b := s.arena.Block(loc)
		return recordDB(b) == s.db && bytes.Equal(recordKey(b), key)
	})
	if !ok {
		return slot{}, false
	}
	loc := sh.index.Loc(pos)
	return slot{pos: pos, loc: loc, rec: parseRecord(s.arena.Block(loc))}, true
}

// tagOf is the part of a hash the index keeps: the bits after the shard's.
func tagOf(h uint64) uint32 { return uint32(h << shardBits >> (64 - slab.TagBits)) }

// expiredAt reports whether r is past its stale deadline at now.
func (r *record) expiredAt(now int64) bool { return r.stale != 0 && r.stale <= now }

// accessedLocked records an access to the key in the slot at pos; the
// caller holds sh.mu, for reading or writing.
func (s *Store) accessedLocked(sh *shard, pos int) {
	old := sh.index.Stamp(pos)
	now := s.clockSeconds()
	next := now
	if s.EvictionPolicy().LFU() {
		counter := s.lfuCounter(old, now)
		if counter < lfuCounterMax {
			base := max(int(counter)-lfuInitVal, 0)
			if rand.Float64() < 1/float64(base*s.params.Load().LFULogFactor+1) {
				counter++
			}
		}
		next = lfuStamp(now, counter)
	}
	if next != old {
		sh.index.SetStamp(pos, next)
	}
}

// clockSeconds is the access clock, in unix seconds: the sweeper's, set
// every ExpireInterval, unless Options.Now sets the store's clock, which
// is then read each time (tests move it).
func (s *Store) clockSeconds() uint32 {
	if s.sweptClock {
		return s.clock.Load()
	}
	return uint32(s.nowFunc().Unix())
}

// lfuCounter is the counter of stamp at now, decayed for the minutes since
// its last access, as Redis's LFUDecrAndReturn.
func (s *Store) lfuCounter(stamp, now uint32) uint32 {
	counter := stamp & 0xff
	decay := uint32(s.params.Load().LFUDecayTime)
	if decay == 0 {
		return counter
	}
	if periods := lfuElapsedMinutes(stamp, now) / decay; periods < counter {
		return counter - periods
	}
	return 0
}

func lfuStamp(now uint32, counter uint32) uint32 {
	return (now&lfuSecondMask)<<8 | counter
}

// lfuElapsedSeconds is how many seconds passed between the LFU stamp's
// last access and now.
func lfuElapsedSeconds(stamp, now uint32) uint32 {
	return (now - stamp>>8) & lfuSecondMask
}

// lfuElapsedMinutes is how many minutes passed between the LFU stamp's
// last access and now, as Redis's LFUTimeElapsed.
func lfuElapsedMinutes(stamp, now uint32) uint32 { return lfuElapsedSeconds(stamp, now) / 60 }

// cloneValue copies a value out of the arena; an empty value stays non-nil.
func cloneValue(v []byte) []byte { return append(make([]byte, 0, len(v)), v...) }

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

// missed counts a read of key in sh that found no live key.
func (s *Store) missed(sh *shard, key []byte) {
	sh.misses.Add(1)
	s.notifyQuiet(Missed, key)
}

// countAccess counts an access to the key with hash h, held or not, in the
// frequency sketch of the LFU policies.
func (s *Store) countAccess(h uint64) {
	if s.EvictionPolicy().LFU() {
		s.sketch.Increment(keyBits(h))
	}
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

// Present reports whether the store holds key, live or past its deadline
// and not yet removed (Redis's dictFind), and whether it is past its
// deadline (Redis's keyIsExpired); it counts and removes nothing, for
// WATCH, which treats a stale key apart.
func (s *Store) Present(key []byte) (present, expired bool) {
	now := s.now()
	present, _ = s.read(key, readPast, func(r record) { expired = r.expiredAt(now) })
	return present, expired
}

// Peek is Lookup without touching hit counters or access frequency, for
// commands such as TTL, TYPE and EXISTS.
func (s *Store) Peek(key []byte) (Envelope, bool) {
	var env Envelope
	found, _ := s.read(key, 0, func(r record) { env = r.envelope() })
	return env, found
}
