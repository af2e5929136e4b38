package engine

import (
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/stampedeless/stampedeless/internal/redisnum"
)

// Type is the kind of value a key holds, as Redis's TYPE names it.
type Type uint8

// The types a key can hold. TypeString is the zero value: every record
// written before hashes and sets existed is a string.
const (
	TypeString Type = iota
	TypeHash
	TypeSet
	TypeZSet
	TypeList
	TypeStream
)

// String is the type's name as TYPE replies it.
func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeHash:
		return "hash"
	case TypeSet:
		return "set"
	case TypeZSet:
		return "zset"
	case TypeList:
		return "list"
	case TypeStream:
		return "stream"
	}
	return "unknown"
}

// ParseType is the Type whose String is name (SCAN's TYPE option); ok is
// false for a name that is no type of this store.
func ParseType(name string) (t Type, ok bool) {
	for _, t := range []Type{TypeString, TypeHash, TypeSet, TypeZSet, TypeList, TypeStream} {
		if t.String() == name {
			return t, true
		}
	}
	return 0, false
}

// ErrWrongType is returned by an operation of one type on a key that holds
// another.
var ErrWrongType = errors.New("engine: key holds the wrong kind of value")

// A record's tag byte says its type (high nibble) and how its value is
// held (low nibble):
//
//   - held in the record, the type's compact encoding: a string's bytes,
//     or a small hash's, set's, sorted set's or list's encoding (hash.go,
//     set.go, zset.go, list.go);
//   - held on Go's heap (heapHeld), for a collection grown past its compact
//     encoding's limits: the record's value is a handle into its shard's
//     heap table and the bytes the object is charged (heapValueLen), so
//     that a big collection changes in place instead of being rewritten
//     on every write.
const (
	heldInRecord byte = 0
	heapHeld     byte = 1
)

func makeTag(t Type, held byte) byte { return byte(t)<<4 | held }

func (r *record) typ() Type          { return Type(r.tag >> 4) }
func (r *record) onHeap() bool       { return r.tag&0x0f == heapHeld }
func (r *newRecord) onHeap() bool    { return r.tag&0x0f == heapHeld }
func (r *record) isString() bool     { return r.tag == makeTag(TypeString, heldInRecord) }
func heapHandle(value []byte) uint64 { return binary.LittleEndian.Uint64(value) }
func heapCharge(value []byte) int64  { return int64(binary.LittleEndian.Uint64(value[8:])) }

// heapValueLen is the length of a heap-held record's value: the handle and
// the charge.
const heapValueLen = 16

func heapValue(handle uint64, charge int64) []byte {
	v := make([]byte, heapValueLen)
	binary.LittleEndian.PutUint64(v, handle)
	binary.LittleEndian.PutUint64(v[8:], uint64(charge))
	return v
}

// heapObject is a collection held on Go's heap. Its type's code passes
// its charge on to the record (collection.charge) whenever it changes.
type heapObject interface {
	// clone is a deep copy, for COPY.
	clone() heapObject
	// charge is what the object holds on Go's heap, counted as Go's
	// allocator and maps lay it out (heapsize.go).
	charge() int64
}

// collection is a collection's value as its type's code reads and
// changes it: in its compact encoding (blob; while read, it aliases the
// arena and must not be kept) or on the heap (obj, with the bytes it is
// charged). The zero collection is an empty one.
type collection struct {
	blob   []byte
	obj    heapObject
	charge int64 // of obj
}

// collectionOf is the value of the record r of a collection, whose
// shard's lock the caller holds.
func (sh *shard) collectionOf(r *record) collection {
	if r.onHeap() {
		return collection{obj: sh.heap[heapHandle(r.value)], charge: heapCharge(r.value)}
	}
	return collection{blob: r.value}
}

// freeHeapLocked forgets the heap object of r, if it has one.
func (sh *shard) freeHeapLocked(r *record) {
	if r.onHeap() {
		delete(sh.heap, heapHandle(r.value))
	}
}

// dropNewLocked forgets the heap object that r, a record not stored after
// all, refers to, if any.
func (sh *shard) dropNewLocked(r *newRecord) {
	if r.onHeap() {
		delete(sh.heap, heapHandle(r.value))
	}
}

// holdLocked puts obj in sh's heap table and returns the value of a record
// referring to it.
func (s *Store) holdLocked(sh *shard, obj heapObject, charge int64) []byte {
	if sh.heap == nil {
		sh.heap = make(map[uint64]heapObject)
	}
	handle := s.heapHandles.Add(1)
	sh.heap[handle] = obj
	return heapValue(handle, charge)
}

// TypeOf reports the type of key, if it is live, touching no counter.
func (s *Store) TypeOf(key []byte) (t Type, found bool) {
	found, _ = s.read(key, 0, func(r record) { t = r.typ() })
	return t, found
}

// readColl calls fn with the value of key, if it is live and holds t,
// under the shard's read lock, counting a hit or a miss and feeding the
// eviction policy. It returns ErrWrongType if key holds another type.
func (s *Store) readColl(key []byte, t Type, fn func(collection)) (found bool, err error) {
	h := s.hash(key)
	sh := s.shardOf(h)
	found, _ = s.readAt(sh, h, key, readAll, func(r record) {
		if r.typ() != t {
			err = ErrWrongType
			return
		}
		fn(sh.collectionOf(&r))
	})
	return found && err == nil, err
}

// collChange is what a collection's writer decided.
type collChange uint8

const (
	collUnchanged collChange = iota // nothing to store
	collStore                       // store the returned collection
	collDelete                      // the collection is empty: remove the key
)

// writeColl changes the value of key, of type t: fn gets the current
// value (the zero collection if key is missing; exists says which) and
// returns the next and what to do with it. A heap object may be changed
// in place and returned with its new charge. Deadlines are kept; a key
// whose collection empties is removed, as Redis removes it. It returns
// ErrWrongType, without calling fn, if key holds another type, and fn's
// error as it is. fn runs under the key's shard lock: it must be quick and
// not call the store.
func (s *Store) writeColl(key []byte, t Type, fn func(cur collection, exists bool) (collection, collChange, error)) error {
	if err := s.admit(0); err != nil {
		return err
	}
	err := s.shrinkColl(key, t, fn)
	s.grown(s.hash(key))
	return err
}

// shrinkColl is writeColl without its admission check, for the writes
// that only remove (SREM, SPOP, HDEL): Redis runs them past maxmemory even
// with noeviction, since they are how memory is given back.
func (s *Store) shrinkColl(key []byte, t Type, fn func(cur collection, exists bool) (collection, collChange, error)) error {
	h := s.hash(key)
	sh := s.shardOf(h)
	sh.mu.Lock()
	err := s.writeCollLocked(sh, h, key, t, fn)
	sh.mu.Unlock()
	return err
}

// writeCollLocked is writeColl for a caller holding sh's write lock (for
// commands of several keys, with lockShards); the caller calls grown
// after unlocking.
func (s *Store) writeCollLocked(sh *shard, h uint64, key []byte, t Type, fn func(collection, bool) (collection, collChange, error)) error {
	sl, found := s.liveKeyLocked(sh, h, key)
	var cur collection
	if found {
		if sl.rec.typ() != t {
			return ErrWrongType
		}
		cur = sh.collectionOf(&sl.rec)
	}
	next, change, err := fn(cur, found)
	if err != nil || change == collUnchanged {
		return err
	}
	if change == collDelete {
		if found {
			sh.wroteLocked(s.db, key)
			s.deleteLocked(sh, h, sl)
		}
		return nil
	}
	sh.wroteLocked(s.db, key)
	if next.obj != nil && found && cur.obj == next.obj {
		// Changed in place: only its charge is rewritten.
		s.rechargeLocked(sl, next.charge, key)
		return nil
	}
	room := 0
	if found && next.obj == nil && cur.obj == nil {
		if s.rewriteBlobLocked(sl, next.blob) {
			s.notify(Written, key)
			return nil
		}
		if len(next.blob) > len(cur.blob) {
			room = blobRoom(len(next.blob))
		}
	}
	return s.storeCollLocked(sh, h, sl, found, key, t, next, sl.rec.fresh, sl.rec.stale, room)
}

// A compact collection that a write lengthens past its record moves to a
// record with room to grow into (flagRoom), as a string Grow lengthens
// does, and later writes that fit the room rewrite the blob in place. A
// blob rewritten whole into a new record on every write left its old
// record dead in the arena: under a churn of SADDs or ZADDs to small sets
// (2 KB of arena a write, 50 MB/s) the dead bytes outran compaction by a
// few MiB between two of its passes, which was the typed churn's peak.
// The room is a quarter of the blob (Redis's allocator, jemalloc, rounds
// an allocation up to classes a quarter apart, so a listpack's realloc
// has about as much), and is charged as the value's.
func blobRoom(n int) int { return min(max(n/4, 16), growRoomMax) }

// rewriteBlobLocked writes blob over the value of the compact collection
// in sl, in place, if it fits the record's room and leaves at most twice
// the room a blob of its length gets unused (a collection that shrank
// much moves to a record of its size). blob may alias the record. The
// record's cost, which counts its room, stays. The caller holds sl's
// shard's lock for writing, so no reader sees the bytes change.
func (s *Store) rewriteBlobLocked(sl slot, blob []byte) bool {
	if !sl.rec.hasRoom {
		return false
	}
	left := len(sl.rec.value) + sl.rec.room - len(blob)
	if left < 0 || left > 2*blobRoom(len(blob)) {
		return false
	}
	p := s.arena.Block(sl.loc)
	copy(p[sl.rec.valueOff:], blob)
	binary.LittleEndian.PutUint32(p[len(p)-roomTail:], uint32(left))
	return true
}

// replaceCollLocked makes key hold next, of type t, with no deadline,
// whatever it held before, as Redis's setKey does for SINTERSTORE and the
// like; the zero collection deletes key instead. It reports whether key
// changed. The caller holds key's shard lock for writing and calls grown
// after unlocking.
func (s *Store) replaceCollLocked(key []byte, t Type, next collection) (bool, error) {
	h := s.hash(key)
	sh := s.shardOf(h)
	sl, found := s.liveKeyLocked(sh, h, key)
	if next.obj == nil && len(next.blob) == 0 {
		if found {
			sh.wroteLocked(s.db, key)
			s.deleteLocked(sh, h, sl)
		}
		return found, nil
	}
	sh.wroteLocked(s.db, key)
	return true, s.storeCollLocked(sh, h, sl, found, key, t, next, 0, 0, 0)
}

// storeCollLocked writes a record of key holding next, of type t, with
// these deadlines, replacing the one in sl if found; a blob gets room
// bytes to grow into (rewriteBlobLocked) while they fit the bound.
func (s *Store) storeCollLocked(sh *shard, h uint64, sl slot, found bool, key []byte, t Type, next collection, fresh, stale int64, room int) error {
	r := newRecord{tag: makeTag(t, heldInRecord), key: key, value: next.blob, fresh: fresh, stale: stale}
	if next.obj != nil {
		r.tag = makeTag(t, heapHeld)
		r.value = s.holdLocked(sh, next.obj, next.charge)
	} else if room > 0 && s.fits(entryCost(len(key), len(next.blob)+room+roomTail)) == nil {
		r.value = nil
		r.grow = &growth{old: next.blob, n: len(next.blob), room: room, edit: keepBlob}
	}
	if err := s.fits(r.cost()); err != nil {
		sh.dropNewLocked(&r)
		return err
	}
	if err := s.storeLocked(sh, h, sl, found, r); err != nil {
		sh.dropNewLocked(&r)
		return err
	}
	s.notify(Written, key)
	return nil
}

// keepBlob is the edit of a blob that growth copies as it is.
func keepBlob([]byte) bool { return false }

// readCollLocked is readColl for a caller holding key's shard lock for
// writing (lockShards): the value of key, if it is live and holds t,
// counting a hit or a miss. The collection's blob aliases the arena until
// the lock is released or key is written.
func (s *Store) readCollLocked(key []byte, t Type) (c collection, found bool, err error) {
	h := s.hash(key)
	sh := s.shardOf(h)
	sl, found := s.liveKeyLocked(sh, h, key)
	if !found {
		s.missed(sh, key)
		return collection{}, false, nil
	}
	sh.hits.Add(1)
	if sl.rec.typ() != t {
		return collection{}, false, ErrWrongType
	}
	return sh.collectionOf(&sl.rec), true, nil
}

// lookupCollLocked is readCollLocked as Redis's lookupKeyWrite, for a
// key the command writes (LMOVE's, SMOVE's, the pops'): neither a hit nor
// a miss is counted.
func (s *Store) lookupCollLocked(key []byte, t Type) (c collection, found bool, err error) {
	h := s.hash(key)
	sh := s.shardOf(h)
	sl, found := s.liveKeyLocked(sh, h, key)
	switch {
	case !found:
		return collection{}, false, nil
	case sl.rec.typ() != t:
		return collection{}, false, ErrWrongType
	}
	return sh.collectionOf(&sl.rec), true, nil
}

// rechargeLocked rewrites in place the charge of the heap-held record in
// sl, whose object its type's code changed.
func (s *Store) rechargeLocked(sl slot, charge int64, key []byte) {
	s.setChargeLocked(sl, charge)
	s.notify(Written, key)
}

// setChargeLocked makes charge the charge of sl's heap object.
func (s *Store) setChargeLocked(sl slot, charge int64) {
	old := sl.rec.cost()
	// The record's value aliases the arena: its cost reads the new charge.
	binary.LittleEndian.PutUint64(sl.rec.value[8:], uint64(charge))
	s.used.Add(sl.rec.cost() - old)
}

// copyValueLocked is the value of a new record holding what r holds, for
// COPY (move false) and RENAME (move true): a heap object is cloned, or
// moved to the destination shard under a new handle, so that removing the
// source frees only what is its own.
func (s *Store) copyValueLocked(from *shard, r *record, to *shard, move bool) []byte {
	if !r.onHeap() {
		return r.value
	}
	obj, charge := from.heap[heapHandle(r.value)], heapCharge(r.value)
	if !move {
		obj = obj.clone()
		charge = obj.charge() // a clone's map is sized for what it holds
	}
	return s.holdLocked(to, obj, charge)
}

// stringEncoding is the encoding Redis gives a string value, as OBJECT
// ENCODING and DEBUG OBJECT report it: "int" for a decimal integer in
// int64's range, written as Redis writes one, "embstr" up to 44 bytes and
// "raw" beyond, as SET makes them. A value Grow wrote (grown: APPEND,
// SETRANGE, SETBIT, BITFIELD) is "raw" however short, as Redis's in-place
// commands leave theirs until the next write replaces it (APPEND makes a
// missing key with Set, as Redis encodes it as SET does); a value whose
// record a first deadline replaced reads as SET made it. An HLL is "raw",
// as the PF commands make every one they touch.
func stringEncoding(v []byte, grown bool) string {
	if grown {
		return "raw"
	}
	if _, ok := redisnum.ParseInt(v); ok && len(v) <= 20 {
		return "int"
	}
	if len(v) <= 44 && !IsHLL(v) {
		return "embstr"
	}
	return "raw"
}

// Encoding names how Redis would hold key's value, as OBJECT ENCODING
// reports it. found is false if key is not live.
func (s *Store) Encoding(key []byte) (enc string, found bool) { return s.encoding(key, 0) }

// EncodingPast is Encoding that finds a key past its deadline and not yet
// removed too, as Redis's DEBUG OBJECT looks in the dictionary itself.
func (s *Store) EncodingPast(key []byte) (enc string, found bool) { return s.encoding(key, readPast) }

func (s *Store) encoding(key []byte, mode readMode) (enc string, found bool) {
	h := s.hash(key)
	sh := s.shardOf(h)
	found, _ = s.readAt(sh, h, key, mode, func(r record) {
		c := sh.collectionOf(&r)
		switch r.typ() {
		case TypeString:
			enc = stringEncoding(r.value, r.hasRoom)
		case TypeHash:
			enc = hashEncoding(c)
		case TypeSet:
			enc = setEncoding(c)
		case TypeZSet:
			enc = zsetEncoding(c)
		case TypeList:
			enc = "quicklist" // Redis 7.0's for every list
		case TypeStream:
			enc = "stream"
		}
	})
	return enc, found
}

// Export is Peek with the value of any type: a collection's in its
// portable form (the bytes of its compact encoding, however it is held;
// a stream's, exportStream's), which Set with SetOptions.Type
// takes back. It is for copying a key
// elsewhere (the --redis shared tier), not for commands.
func (s *Store) Export(key []byte) (Envelope, bool) {
	h := s.hash(key)
	sh := s.shardOf(h)
	var env Envelope
	found, _ := s.readAt(sh, h, key, 0, func(r record) {
		env = r.envelope()
		if t := r.typ(); t != TypeString {
			env.Value = exportCollection(t, sh.collectionOf(&r))
		}
	})
	return env, found
}

// exportCollection is the portable form of c, a collection of type t.
func exportCollection(t Type, c collection) []byte {
	switch t {
	case TypeHash:
		return exportHash(c)
	case TypeSet:
		return exportSet(c)
	case TypeZSet:
		return exportZSet(c)
	case TypeList:
		return exportList(c)
	case TypeStream:
		return exportStream(c)
	}
	return nil
}

// importCollection is the collection whose portable form is b; ok is
// false if b is no such form.
func importCollection(t Type, b []byte) (c collection, ok bool) {
	switch t {
	case TypeHash:
		return importHash(b)
	case TypeSet:
		return importSet(b)
	case TypeZSet:
		return importZSet(b)
	case TypeList:
		return importList(b)
	case TypeStream:
		return importStream(b)
	}
	return collection{}, false
}

// Deadlines beyond this many milliseconds cannot be held in the engine's
// nanosecond clock (the year 2262); Redis's own limit is higher.
const MaxDeadlineMillis = math.MaxInt64 / int64(time.Millisecond)
