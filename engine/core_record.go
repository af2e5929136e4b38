package engine

import (
	"encoding/binary"
	"math"
	"time"
)

// A record is what the store keeps for one key, packed into an arena block:
//
//	byte 0     tag: the key's Type and how its value is held (types.go)
//	byte 1     flags: flagDeadlines, flagFill, flagRoom; the top four
//	           bits are the key's database (dbShift)
//	uvarint    key length
//	uvarint    fill metadata length, if flagFill
//	8+8 bytes  fresh and stale deadlines (unix ns, little endian), if flagDeadlines
//	key
//	fill metadata: loader, ETag, Last-Modified, each a uvarint length and
//	           bytes, then the load time in nanoseconds as a uvarint
//	value, to the end of the block, or if flagRoom to the room left
//	           after it, then that room's length (4 bytes, little endian)
//
// A plain key with no deadline costs its key, its value and 3 bytes (plus
// the arena's 4-byte block header). The deadlines are written in place when
// they change (the block is only read under the shard's lock), so EXPIRE,
// PERSIST and GETEX copy nothing; a key that had no deadline gets a new
// record with room for them. A string that Grow lengthened past its
// record gets one with room to grow into (flagRoom), as Redis's sds
// strings do, so that APPEND, SETRANGE and SETBIT change it in place; a
// compact collection's blob a write lengthens gets room too (types.go,
// blobRoom), so that later writes rewrite it in place.
const (
	flagDeadlines = 1 << iota // fresh and stale deadlines follow the lengths
	flagFill                  // fill metadata follows the key
	flagRoom                  // the value is followed by unused room and its length
)

// dbShift is where the flags byte keeps the record's database, in its top
// four bits (Databases).
const dbShift = 4

// recordDB returns the database of the record in block p.
func recordDB(p []byte) uint8 { return p[1] >> dbShift }

// roomTail is the length of the count of unused bytes that ends a record
// with flagRoom.
const roomTail = 4

// record is a parsed view of a block; its slices alias the arena and are
// valid only under the shard's lock.
type record struct {
	tag          byte
	db           uint8 // the key's database
	key, value   []byte
	fill         []byte // encoded FillMeta, empty if none
	deadlines    int    // offset of the deadlines, 0 if the record has none
	fresh, stale int64  // 0: none
	valueOff     int    // offset of the value
	room         int    // unused bytes after the value (flagRoom)
	hasRoom      bool   // flagRoom: the block ends with room and its length
}

// recordKey returns the key of the record in block p, parsing no more.
func recordKey(p []byte) []byte {
	klen, n := binary.Uvarint(p[2:])
	start := 2 + n
	if p[1]&flagFill != 0 {
		_, m := binary.Uvarint(p[start:])
		start += m
	}
	if p[1]&flagDeadlines != 0 {
		start += 16
	}
	return p[start : start+int(klen)]
}

// recordStale returns the stale deadline of the record in block p, 0 if it
// has none, parsing no more.
func recordStale(p []byte) int64 {
	if p[1]&flagDeadlines == 0 {
		return 0
	}
	_, n := binary.Uvarint(p[2:])
	off := 2 + n
	if p[1]&flagFill != 0 {
		_, m := binary.Uvarint(p[off:])
		off += m
	}
	return int64(binary.LittleEndian.Uint64(p[off+8:]))
}

func parseRecord(p []byte) record {
	r := record{tag: p[0], db: recordDB(p)}
	klen, n := binary.Uvarint(p[2:])
	off := 2 + n
	var flen uint64
	if p[1]&flagFill != 0 {
		var m int
		flen, m = binary.Uvarint(p[off:])
		off += m
	}
	if p[1]&flagDeadlines != 0 {
		r.deadlines = off
		r.fresh = int64(binary.LittleEndian.Uint64(p[off:]))
		r.stale = int64(binary.LittleEndian.Uint64(p[off+8:]))
		off += 16
	}
	r.key = p[off : off+int(klen)]
	off += int(klen)
	r.fill = p[off : off+int(flen)]
	off += int(flen)
	r.valueOff = off
	end := len(p)
	if p[1]&flagRoom != 0 {
		r.hasRoom = true
		r.room = int(binary.LittleEndian.Uint32(p[end-roomTail:]))
		end -= roomTail + r.room
	}
	r.value = p[off:end:end] // an append to it must not write into the room
	return r
}

// cost is what the record is charged against MaxMemory: for a collection
// held on the heap, the bytes its object is charged instead of its value;
// a string's room to grow counts as its own.
func (r *record) cost() int64 { return entryCost(len(r.key), r.valueCharge()+len(r.fill)) }

func (r *record) valueCharge() int {
	if r.onHeap() {
		return int(heapCharge(r.value))
	}
	if r.hasRoom {
		return len(r.value) + r.room + roomTail
	}
	return len(r.value)
}

// fillMeta decodes the record's fill metadata, nil if it has none.
func (r *record) fillMeta() *FillMeta {
	if len(r.fill) == 0 {
		return nil
	}
	// One copy of the encoding, whose parts the strings share: a GETFILL
	// hit read the metadata each time, and it was four allocations.
	all := string(r.fill)
	at, load := fillParts(r.fill)
	return &FillMeta{Loader: all[at[0][0]:at[0][1]], ETag: all[at[1][0]:at[1][1]],
		LastModified: all[at[2][0]:at[2][1]], LoadTime: load}
}

// fillParts splits an encoded FillMeta (not empty): where its Loader, ETag
// and LastModified lie in b, and its LoadTime.
func fillParts(b []byte) (at [3][2]int, load time.Duration) {
	off := 0
	for i := range at {
		n, m := binary.Uvarint(b[off:])
		off += m
		at[i] = [2]int{off, off + int(n)}
		off += int(n)
	}
	l, _ := binary.Uvarint(b[off:])
	return at, time.Duration(l)
}

// fillLoadTime is the LoadTime of an encoded FillMeta, 0 for none.
func fillLoadTime(b []byte) time.Duration {
	if len(b) == 0 {
		return 0
	}
	_, load := fillParts(b)
	return load
}

// envelope copies r out of the arena; only a string's value is copied.
func (r *record) envelope() Envelope {
	env := Envelope{Type: r.typ(), FreshUntil: r.fresh, StaleUntil: r.stale, Fill: r.fillMeta()}
	if r.isString() {
		env.Value = cloneValue(r.value)
	}
	return env
}

// newRecord describes a record to write.
type newRecord struct {
	tag          byte  // the zero tag is a string's
	db           uint8 // set by the database that places it (placeLocked)
	key, value   []byte
	obj          heapObject // for Set of a heap-held collection: to hold once written
	fresh, stale int64
	fill         *FillMeta
	fillLen      int // encoded length of fill
	// grow, if set, builds the value in the block instead of value (Grow).
	grow *growth
	// outside: key and value lie outside the arena (a client's write), so
	// the record may be written over the one it replaces (overwriteLocked).
	outside bool
}

// growth is a string value Grow builds in its new block: old, then zeros
// to n bytes, changed by edit, then room unused bytes; changed is what
// edit reported.
type growth struct {
	old     []byte
	n, room int
	edit    func(v []byte) bool
	changed bool
}

func makeNewRecord(key, value []byte, fresh, stale int64, fill *FillMeta) newRecord {
	r := newRecord{key: key, value: value, fresh: fresh, stale: stale, fill: fill}
	if fill != nil {
		for _, s := range []string{fill.Loader, fill.ETag, fill.LastModified} {
			r.fillLen += uvarintLen(uint64(len(s))) + len(s)
		}
		r.fillLen += uvarintLen(loadNanos(fill))
	}
	return r
}

func (r *newRecord) cost() int64 {
	n := len(r.value)
	if r.onHeap() {
		n = int(heapCharge(r.value))
	}
	if r.grow != nil {
		n = r.grow.n + r.grow.room + roomTail
	}
	return entryCost(len(r.key), n+r.fillLen)
}

// valueLen is the length of the value's part of the block.
func (r *newRecord) valueLen() int {
	if r.grow != nil {
		return r.grow.n + r.grow.room + roomTail
	}
	return len(r.value)
}

// size is the length of the block the record takes.
func (r *newRecord) size() int {
	n := 2 + uvarintLen(uint64(len(r.key))) + len(r.key) + r.valueLen()
	if r.fill != nil {
		n += uvarintLen(uint64(r.fillLen)) + r.fillLen
	}
	if r.stale != 0 || r.fresh != 0 {
		n += 16
	}
	return n
}

// write encodes the record into p, of length size().
func (r *newRecord) write(p []byte) {
	p[0] = r.tag
	p[1] = r.db << dbShift
	off := 2 + binary.PutUvarint(p[2:], uint64(len(r.key)))
	if r.fill != nil {
		p[1] |= flagFill
		off += binary.PutUvarint(p[off:], uint64(r.fillLen))
	}
	if r.stale != 0 || r.fresh != 0 {
		p[1] |= flagDeadlines
		putDeadlines(p[off:], r.fresh, r.stale)
		off += 16
	}
	off += copy(p[off:], r.key)
	if r.fill != nil {
		for _, s := range []string{r.fill.Loader, r.fill.ETag, r.fill.LastModified} {
			off += binary.PutUvarint(p[off:], uint64(len(s)))
			off += copy(p[off:], s)
		}
		off += binary.PutUvarint(p[off:], loadNanos(r.fill))
	}
	if g := r.grow; g != nil {
		p[1] |= flagRoom
		v := p[off:]
		copy(v, g.old)
		// A reused block holds old bytes: the value's new part and the room
		// must read as zeros.
		clear(v[len(g.old) : len(v)-roomTail])
		g.changed = g.edit(v[:g.n])
		binary.LittleEndian.PutUint32(v[len(v)-roomTail:], uint32(g.room))
		return
	}
	copy(p[off:], r.value)
}

// loadNanos is the fill's load time as the record stores it; a negative
// one, which no clock gives, is stored as none.
func loadNanos(f *FillMeta) uint64 { return uint64(max(f.LoadTime, 0)) }

func putDeadlines(p []byte, fresh, stale int64) {
	binary.LittleEndian.PutUint64(p, uint64(fresh))
	binary.LittleEndian.PutUint64(p[8:], uint64(stale))
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// renewed is a new record of r's key and value, with these deadlines.
func (r *record) renewed(fresh, stale int64) newRecord {
	n := makeNewRecord(r.key, r.value, fresh, stale, r.fillMeta())
	n.tag = r.tag
	return n
}

// maxRecordValue bounds a value so its block length fits the arena's 32-bit
// block header with room for the rest of the record.
const maxRecordValue = math.MaxUint32 - 1<<20
