package engine

import (
	"encoding/binary"
	"hash/maphash"
	"sync"

	"github.com/stampedeless/stampedeless/internal/glob"
)

// A hash is held in one of two forms:
//
//   - in its record, as a compact encoding: a header byte, then each
//     field and its value as a uvarint length and the bytes, in insertion
//     order (as Redis's listpack keeps them);
//   - on Go's heap, as a hashTable, once it is too big to be rewritten on
//     every write.
//
// Which encoding OBJECT ENCODING reports is Redis's rule, kept apart from
// how the hash is held: "listpack" while it has at most
// hash-max-listpack-entries fields and no field or value it was ever given
// was longer than hash-max-listpack-value bytes, then "hashtable" for good,
// as Redis never converts back. The limits are the store's
// (SetHashListpackLimits), read when a hash is written, as Redis reads its
// configuration. A hash that Redis would hold as a
// hashtable but that is still small (a .NET IDistributedCache entry: three
// fields, one of them its data) stays in its record with a header saying
// so, instead of costing a Go map per key.
const (
	DefaultHashListpackEntries = 512 // Redis's hash-max-listpack-entries
	DefaultHashListpackValue   = 64  // Redis's hash-max-listpack-value
	// hashInRecordMax is the largest encoding of a hashtable-reported hash
	// kept in its record; past it the hash moves to the heap. A listpack
	// one (at most about 66 KB under the default limits) always stays in
	// its record, which keeps its order, as Redis's listpack does. At 1 KB
	// a cache entry of a few KB (an IDistributedCache entry's data, the
	// typed churn's 4 KB hashes) cost a Go map on the heap, which the
	// collector scans and whose freed spans other values could not use:
	// at 8 KB the churn of 4 KB hashes keeps 11-18% more keys at the same
	// bound, and an HSET rewrites at most 8 KB.
	hashInRecordMax = 8192
)

// hashLimits are the listpack limits a hash is written under.
type hashLimits struct{ entries, value int64 }

// defaultHashLimits are Redis's defaults, for a hash read from a snapshot
// or a RESTORE, which keeps the encoding it was saved with unless it is
// past them.
var defaultHashLimits = hashLimits{entries: DefaultHashListpackEntries, value: DefaultHashListpackValue}

func (s *Store) hashLimits() hashLimits {
	entries, value := s.hashConfig.get()
	return hashLimits{entries: entries, value: value}
}

// SetHashListpackLimits sets hash-max-listpack-entries and
// hash-max-listpack-value: the most fields, and the longest field or
// value, a hash is reported as a listpack with. Hashes already past them
// stay as they are.
func (s *Store) SetHashListpackLimits(entries, value int64) {
	s.hashConfig.set(entries, value)
}

// HashListpackLimits returns what SetHashListpackLimits set.
func (s *Store) HashListpackLimits() (entries, value int64) { return s.hashConfig.get() }

// Header bytes of a hash's compact encoding.
const (
	hashHeaderListpack  byte = 0 // Redis would report "listpack"
	hashHeaderHashtable byte = 1 // Redis would report "hashtable"
)

// hashTable is a hash held on the heap, changed in place under its shard's
// write lock.
type hashTable struct {
	m     map[string]string
	bytes int64 // what the fields' and values' strings take (stringBytes)
	peak  int   // the most fields m has held: a Go map never shrinks
}

// hashTableBase is what a hashTable takes besides its map and strings: the
// struct and its entry in its shard's heap table.
var hashTableBase = allocBytes(32) + heapTableEntry

func newHashTable(n int) *hashTable {
	return &hashTable{m: make(map[string]string, n), peak: n}
}

// charge is what the hash holds on Go's heap (heapsize.go).
func (h *hashTable) charge() int64 {
	return hashTableBase + mapBytes(h.peak, slotStringString) + h.bytes
}

func (h *hashTable) clone() heapObject {
	c := newHashTable(len(h.m))
	for f, v := range h.m {
		c.m[f] = v
	}
	c.bytes = h.bytes
	return c
}

// set sets f to v and reports whether f is new.
func (h *hashTable) set(f, v []byte) bool {
	old, found := h.m[string(f)]
	if found {
		h.bytes += stringBytes(len(v)) - stringBytes(len(old))
	} else {
		h.bytes += stringBytes(len(f)) + stringBytes(len(v))
	}
	h.m[string(f)] = string(v)
	h.peak = max(h.peak, len(h.m))
	return !found
}

func (h *hashTable) del(f []byte) bool {
	old, found := h.m[string(f)]
	if found {
		h.bytes -= stringBytes(len(f)) + stringBytes(len(old))
		delete(h.m, string(f))
	}
	return found
}

// eachPair calls fn with each field and value of the compact encoding b
// (its header skipped), until fn returns false. It reports false if b is
// malformed.
func eachPair(b []byte, fn func(f, v []byte) bool) bool {
	if len(b) == 0 {
		return true
	}
	if b[0] > hashHeaderHashtable {
		return false
	}
	b = b[1:]
	next := func() ([]byte, bool) {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return nil, false
		}
		s := b[w : w+int(n)]
		b = b[w+int(n):]
		return s, true
	}
	for len(b) > 0 {
		f, ok := next()
		if !ok {
			return false
		}
		v, ok := next()
		if !ok {
			return false
		}
		if !fn(f, v) {
			return true
		}
	}
	return true
}

// hashEach calls fn with each field and value of the hash c, until fn
// returns false. The slices may alias the arena.
func hashEach(c collection, fn func(f, v []byte) bool) {
	if h, ok := c.obj.(*hashTable); ok {
		for f, v := range h.m {
			if !fn([]byte(f), []byte(v)) {
				return
			}
		}
		return
	}
	eachPair(c.blob, fn)
}

// hashGet is the value of field f of the hash c.
func hashGet(c collection, f []byte) (v []byte, found bool) {
	if h, ok := c.obj.(*hashTable); ok {
		s, found := h.m[string(f)]
		return []byte(s), found
	}
	eachPair(c.blob, func(k, val []byte) bool {
		if string(k) == string(f) {
			v, found = val, true
		}
		return !found
	})
	return v, found
}

func hashLen(c collection) int {
	if h, ok := c.obj.(*hashTable); ok {
		return len(h.m)
	}
	n := 0
	eachPair(c.blob, func(_, _ []byte) bool { n++; return true })
	return n
}

// hashEncoding names how Redis would hold the hash c: "listpack" while it
// is small, "hashtable" once past hash-max-listpack-entries (512) or
// hash-max-listpack-value (64 bytes).
func hashEncoding(c collection) string {
	if c.obj != nil || len(c.blob) > 0 && c.blob[0] == hashHeaderHashtable {
		return "hashtable"
	}
	return "listpack"
}

// exportHash is the portable form of the hash c (see Store.Export): its
// compact encoding, however it is held.
func exportHash(c collection) []byte {
	e := editHash(c, defaultHashLimits)
	if e.heap != nil {
		e.table = true
		hashEach(c, func(f, v []byte) bool {
			e.flat = append(e.flat, f, v)
			return true
		})
	}
	return encodeHash(e.flat, e.table)
}

// importHash is the hash whose portable form is b.
func importHash(b []byte) (collection, bool) {
	if len(b) == 0 {
		return collection{}, false
	}
	e := &hashEdit{table: b[0] == hashHeaderHashtable, lim: defaultHashLimits}
	if !eachPair(b, func(f, v []byte) bool {
		e.flat = append(e.flat, f, v)
		return true
	}) || len(e.flat) == 0 {
		return collection{}, false
	}
	// done encodes anew or copies into a heap object: nothing aliases b.
	c, _ := e.done()
	return c, true
}

func encodeHash(flat [][]byte, table bool) []byte {
	return appendHash(make([]byte, 0, hashSize(flat)), flat, table)
}

// appendHash appends the compact encoding of flat to b.
func appendHash(b []byte, flat [][]byte, table bool) []byte {
	header := hashHeaderListpack
	if table {
		header = hashHeaderHashtable
	}
	b = append(b, header)
	for _, s := range flat {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// hashSize is the length of flat's compact encoding.
func hashSize(flat [][]byte) int {
	size := 1
	for _, s := range flat {
		size += uvarintLen(uint64(len(s))) + len(s)
	}
	return size
}

// hashScratch is the memory a record-held hash's edit lists its fields
// in and encodes its new blob in. Without it an HSET of one 4 KB field to
// a new key left its list and an encoding of the hash behind (the
// encoding, made before done knew the hash goes to the heap, the size of
// the hash: half of what the typed churn's 4 KB hashes allocated), and an
// HSET of 200 fields two thirds of what it allocated; where one kind of
// value replaces another that garbage is the heap's growth while the
// collector, at the process's memory limit, falls behind. A scratch is
// used by one write at a time, and given back once the store has copied
// the blob.
type hashScratch struct {
	flat [][]byte
	blob []byte
}

var hashScratchPool = sync.Pool{New: func() any { return new(hashScratch) }}

// getHashScratch is a scratch for one write; putHashScratch gives it back
// once nothing of the write's blob is kept.
func getHashScratch() *hashScratch { return hashScratchPool.Get().(*hashScratch) }

func putHashScratch(sc *hashScratch) {
	// The fields alias arena records and the command's arguments: drop
	// them, and drop buffers past what a listpack's edit needs.
	clear(sc.flat[:cap(sc.flat)])
	if cap(sc.flat) > 4*DefaultHashListpackEntries || cap(sc.blob) > 64<<10 {
		return
	}
	sc.flat, sc.blob = sc.flat[:0], sc.blob[:0]
	hashScratchPool.Put(sc)
}

// hashEdit is a hash being changed by one command under its shard's write
// lock: a heap-held one in place, a record-held one as its list of fields
// and values (aliasing the record until done encodes them anew).
type hashEdit struct {
	heap    *hashTable
	flat    [][]byte // field, value, field, value...
	table   bool     // Redis would report "hashtable"
	lim     hashLimits
	changed bool
	scratch *hashScratch // where flat and the new blob are built, if not nil
}

func editHash(c collection, l hashLimits) *hashEdit { return editHashIn(c, l, nil) }

// editHashIn is editHash building a record-held hash's edit in sc (nil:
// fresh memory); the caller keeps sc until the result is stored.
func editHashIn(c collection, l hashLimits, sc *hashScratch) *hashEdit {
	if h, ok := c.obj.(*hashTable); ok {
		return &hashEdit{heap: h, table: true, lim: l}
	}
	e := &hashEdit{table: len(c.blob) > 0 && c.blob[0] == hashHeaderHashtable, lim: l, scratch: sc}
	if sc != nil {
		e.flat = sc.flat[:0]
	}
	eachPair(c.blob, func(f, v []byte) bool {
		e.flat = append(e.flat, f, v)
		return true
	})
	return e
}

func (e *hashEdit) find(f []byte) int {
	for i := 0; i < len(e.flat); i += 2 {
		if string(e.flat[i]) == string(f) {
			return i
		}
	}
	return -1
}

func (e *hashEdit) get(f []byte) ([]byte, bool) {
	if e.heap != nil {
		return hashGet(collection{obj: e.heap}, f)
	}
	if i := e.find(f); i >= 0 {
		return e.flat[i+1], true
	}
	return nil, false
}

// set sets f to v, reporting whether f is new. As Redis's hashTypeSet, a
// field or value longer than hash-max-listpack-value makes the hash a
// hashtable, as does one field past hash-max-listpack-entries (in done).
func (e *hashEdit) set(f, v []byte) bool {
	e.changed = true
	if e.heap != nil {
		return e.heap.set(f, v)
	}
	if int64(len(f)) > e.lim.value || int64(len(v)) > e.lim.value {
		e.table = true
	}
	if i := e.find(f); i >= 0 {
		e.flat[i+1] = v
		return false
	}
	e.flat = append(e.flat, f, v)
	return true
}

func (e *hashEdit) del(f []byte) bool {
	if e.heap != nil {
		found := e.heap.del(f)
		e.changed = e.changed || found
		return found
	}
	i := e.find(f)
	if i < 0 {
		return false
	}
	e.changed = true
	e.flat = append(e.flat[:i], e.flat[i+2:]...)
	return true
}

func (e *hashEdit) len() int {
	if e.heap != nil {
		return len(e.heap.m)
	}
	return len(e.flat) / 2
}

// done is the changed hash and what writeColl is to do with it.
func (e *hashEdit) done() (collection, collChange) {
	switch {
	case e.len() == 0:
		return collection{}, collDelete
	case e.heap != nil:
		return collection{obj: e.heap, charge: e.heap.charge()}, collStore
	}
	if int64(e.len()) > e.lim.entries {
		e.table = true
	}
	if e.scratch != nil {
		e.scratch.flat = e.flat // it may have grown: kept for the next write
	}
	if e.table && hashSize(e.flat) > hashInRecordMax {
		h := newHashTable(e.len())
		for i := 0; i < len(e.flat); i += 2 {
			h.set(e.flat[i], e.flat[i+1])
		}
		return collection{obj: h, charge: h.charge()}, collStore
	}
	if e.scratch == nil {
		return collection{blob: encodeHash(e.flat, e.table)}, collStore
	}
	e.scratch.blob = appendHash(e.scratch.blob[:0], e.flat, e.table)
	return collection{blob: e.scratch.blob}, collStore
}

// editHashKey runs fn on key's hash under its shard's write lock and
// stores what fn made of it.
func (s *Store) editHashKey(key []byte, fn func(e *hashEdit) error) error {
	sc := getHashScratch()
	defer putHashScratch(sc)
	return s.writeColl(key, TypeHash, hashEditor(s.hashLimits(), sc, fn))
}

// hashEditor is the writeColl function that edits a hash with fn, a
// record-held one in sc, which the caller gives back once writeColl has
// returned.
func hashEditor(l hashLimits, sc *hashScratch, fn func(e *hashEdit) error) func(collection, bool) (collection, collChange, error) {
	return func(cur collection, _ bool) (collection, collChange, error) {
		e := editHashIn(cur, l, sc)
		if err := fn(e); err != nil || !e.changed {
			return collection{}, collUnchanged, err
		}
		next, change := e.done()
		return next, change, nil
	}
}

// HSet sets the fields of key's hash to the values that follow each in
// pairs (field, value, field, value...), creating the hash if key is
// missing, and reports how many fields are new.
func (s *Store) HSet(key []byte, pairs [][]byte) (added int, err error) {
	err = s.editHashKey(key, func(e *hashEdit) error {
		for i := 0; i+1 < len(pairs); i += 2 {
			if e.set(pairs[i], pairs[i+1]) {
				added++
			}
		}
		return nil
	})
	return added, err
}

// HSetNX sets field of key's hash to value only if the field is missing,
// and reports whether it did.
func (s *Store) HSetNX(key, field, value []byte) (set bool, err error) {
	err = s.editHashKey(key, func(e *hashEdit) error {
		if _, found := e.get(field); !found {
			set = e.set(field, value)
		}
		return nil
	})
	return set, err
}

// HUpdate sets field of key's hash to what fn makes of its value (exists
// false if the field or the hash is missing) and returns it; fn's error
// is returned as it is and changes nothing. fn runs under the shard's lock.
func (s *Store) HUpdate(key, field []byte, fn func(old []byte, exists bool) ([]byte, error)) (next []byte, err error) {
	err = s.editHashKey(key, func(e *hashEdit) error {
		old, found := e.get(field)
		next, err = fn(old, found)
		if err != nil {
			return err
		}
		e.set(field, next)
		return nil
	})
	return next, err
}

// HDel removes the fields of key's hash and reports how many it had; a
// hash left empty is removed.
func (s *Store) HDel(key []byte, fields [][]byte) (removed int, err error) {
	// Only removes: it runs over the bound under noeviction, as in Redis.
	sc := getHashScratch()
	defer putHashScratch(sc)
	err = s.shrinkColl(key, TypeHash, hashEditor(s.hashLimits(), sc, func(e *hashEdit) error {
		for _, f := range fields {
			if e.del(f) {
				removed++
			}
		}
		return nil
	}))
	return removed, err
}

// HGet returns a copy of the value of field in key's hash.
func (s *Store) HGet(key, field []byte) (v []byte, found bool, err error) {
	_, err = s.readColl(key, TypeHash, func(c collection) {
		var val []byte
		if val, found = hashGet(c, field); found {
			v = cloneValue(val)
		}
	})
	return v, found, err
}

// HMGet returns copies of the values of fields in key's hash, nil for a
// field it does not have (an empty value is not nil).
func (s *Store) HMGet(key []byte, fields [][]byte) ([][]byte, error) {
	values := make([][]byte, len(fields))
	_, err := s.readColl(key, TypeHash, func(c collection) {
		for i, f := range fields {
			if v, found := hashGet(c, f); found {
				values[i] = cloneValue(v)
			}
		}
	})
	return values, err
}

// HGetAll returns copies of the fields and values of key's hash (field,
// value, field, value...): in insertion order while it is held in its
// record, in no order once on the heap.
func (s *Store) HGetAll(key []byte) ([][]byte, error) {
	var flat [][]byte
	_, err := s.readColl(key, TypeHash, func(c collection) {
		flat = make([][]byte, 0, 2*hashLen(c))
		hashEach(c, func(f, v []byte) bool {
			flat = append(flat, cloneValue(f), cloneValue(v))
			return true
		})
	})
	return flat, err
}

// HLen is the number of fields of key's hash.
func (s *Store) HLen(key []byte) (n int, err error) {
	_, err = s.readColl(key, TypeHash, func(c collection) { n = hashLen(c) })
	return n, err
}

// hashScanSeed orders a heap-held hash's fields for HScan's cursor.
var hashScanSeed = maphash.MakeSeed()

// hashScanBuckets bounds the calls a scan of a heap-held hash takes, each
// of which reads every field: at most this many, whatever count says.
const hashScanBuckets = 64

// HScan returns part of key's hash (field, value, field, value...) for the
// cursor, the fields f keeps, and the next cursor, 0 when done, as HSCAN
// does. A hash held in
// its record is returned whole, as Redis returns a listpack. A heap-held
// hash is walked by ranges of a hash of its fields (the cursor is where the
// next range starts), so a field present for the whole scan is returned at
// least once however the hash changes between calls; count sets the size
// of the ranges, so that a call returns about count fields.
func (s *Store) HScan(key []byte, cursor uint64, f ScanFilter, count int) (next uint64, flat [][]byte, err error) {
	_, err = s.readColl(key, TypeHash, func(c collection) {
		h, ok := c.obj.(*hashTable)
		if !ok {
			hashEach(c, func(f, v []byte) bool {
				flat = append(flat, cloneValue(f), cloneValue(v))
				return true
			})
			return
		}
		const space = uint64(1) << 63
		if cursor >= space {
			return
		}
		buckets := uint64(max(1, min(len(h.m)/max(count, 1), hashScanBuckets)))
		end := cursor + space/buckets
		for f, v := range h.m {
			if p := maphash.String(hashScanSeed, f) >> 1; p >= cursor && p < end {
				flat = append(flat, []byte(f), []byte(v))
			}
		}
		if end < space {
			next = end
		}
	})
	return next, filterFields(f, flat), err
}

// filterFields keeps the field-value pairs of flat whose fields f keeps,
// in place.
func filterFields(f ScanFilter, flat [][]byte) [][]byte {
	if glob.MatchesAll(f.Pattern) {
		return flat
	}
	match := f.matcher()
	out := flat[:0]
	for i := 0; i+1 < len(flat); i += 2 {
		if match(string(flat[i])) {
			out = append(out, flat[i], flat[i+1])
		}
	}
	return out
}
