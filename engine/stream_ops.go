package engine

import (
	"slices"
	"sync"
)

// StreamTx is one stream command's hold of its keys: Store.StreamOp gives
// it to the command's function under the keys' shard locks, so that what
// the command reads and writes of every key is one instant (XREADGROUP of
// several streams, XCLAIM). A stream the function changes must be told
// (Changed), which charges its new size and tells the listeners (blocked
// readers, WATCH, tracking) once the function returns; one Redis changes
// without signalling the key modified, ChangedUnsignalled, which tells
// blocked readers alone.
type StreamTx struct {
	s       *Store
	now     int64 // unix ms
	touched []string
	quiet   []string // keys changed unsignalled (ChangedUnsignalled)
	created map[string]*Stream
}

// StreamOp runs fn with the streams of keys under their shards' write
// locks. grow says the command may add (XADD, XGROUP CREATE ...
// MKSTREAM, XREADGROUP): it is refused, as Redis refuses a deny-oom
// command, while the store is over its bound and cannot evict. fn must
// not call the store.
func (s *Store) StreamOp(keys [][]byte, grow bool, fn func(tx *StreamTx) error) error {
	if grow {
		if err := s.admit(0); err != nil {
			return err
		}
	}
	shards := s.lockShards(keys, 1)
	tx := &StreamTx{s: s, now: s.now() / 1e6}
	err := fn(tx)
	if cerr := tx.commit(); err == nil {
		err = cerr
	}
	unlockShards(shards, (*sync.RWMutex).Unlock)
	for _, k := range tx.touched {
		s.grown(s.hashString(k))
	}
	return err
}

// NowMs is the operation's time, the store's clock in unix milliseconds:
// what XADD's generated IDs and the PELs' delivery times read.
func (tx *StreamTx) NowMs() int64 { return tx.now }

// Stream is the stream at key, nil if key is missing; a key of another
// type is ErrWrongType. read counts a hit or a miss, as a read command's
// lookup does.
func (tx *StreamTx) Stream(key []byte, read bool) (*Stream, error) {
	if st, ok := tx.created[string(key)]; ok {
		return st, nil
	}
	var c collection
	var found bool
	var err error
	if read {
		c, found, err = tx.s.readCollLocked(key, TypeStream)
	} else {
		c, found, err = tx.s.lookupCollLocked(key, TypeStream)
	}
	if err != nil || !found {
		return nil, err
	}
	st := c.obj.(*Stream)
	st.nodeEntries, st.nodeBytes = tx.s.streamNode.get()
	return st, nil
}

// TrimLimit is the LIMIT of an approximate trim given none: a hundred
// nodes' worth, as Redis bounds it.
func (tx *StreamTx) TrimLimit() int64 {
	entries, _ := tx.s.streamNode.get()
	limit := 100 * entries
	if entries > 1000000/100 || limit > 1000000 {
		return 1000000
	}
	if limit <= 0 {
		return 10000
	}
	return limit
}

// TypeOf is the type of key, if it is live, for a command that answers
// differently for another type (an XREADGROUP client served from a key
// that is no stream any more).
func (tx *StreamTx) TypeOf(key []byte) (Type, bool) {
	if _, ok := tx.created[string(key)]; ok {
		return TypeStream, true
	}
	h := tx.s.hash(key)
	sl, found := tx.s.liveKeyLocked(tx.s.shardOf(h), h, key)
	if !found {
		return 0, false
	}
	return sl.rec.typ(), true
}

// Create makes key an empty stream, which is stored when the operation
// ends; key must be missing.
func (tx *StreamTx) Create(key []byte) *Stream {
	st := NewStream()
	st.nodeEntries, st.nodeBytes = tx.s.streamNode.get()
	if tx.created == nil {
		tx.created = make(map[string]*Stream)
	}
	tx.created[string(key)] = st
	tx.Changed(key)
	return st
}

// Changed tells that the stream at key changed: its entries or its
// existence (XADD, XDEL, XTRIM, a stream made).
func (tx *StreamTx) Changed(key []byte) {
	tx.quiet = slices.DeleteFunc(tx.quiet, func(k string) bool { return k == string(key) })
	if !slices.Contains(tx.touched, string(key)) {
		tx.touched = append(tx.touched, string(key))
	}
}

// ChangedUnsignalled tells that the stream at key changed in what Redis
// changes without signalling the key modified: its consumer groups
// (XREADGROUP, XACK, XCLAIM, XAUTOCLAIM, XGROUP on an existing stream) or
// its last ID (XSETID). It is charged its new size and counted as a
// change, and blocked readers are told (a destroyed group's answer
// NOGROUP), but WATCH and client-side caching are not.
func (tx *StreamTx) ChangedUnsignalled(key []byte) {
	if !slices.Contains(tx.touched, string(key)) && !slices.Contains(tx.quiet, string(key)) {
		tx.quiet = append(tx.quiet, string(key))
	}
}

func (tx *StreamTx) commit() error {
	var first error
	for _, k := range tx.touched {
		key := []byte(k)
		h := tx.s.hash(key)
		err := tx.s.writeCollLocked(tx.s.shardOf(h), h, key, TypeStream, func(cur collection, exists bool) (collection, collChange, error) {
			st := tx.created[k]
			if st == nil {
				if !exists {
					return cur, collUnchanged, nil
				}
				st = cur.obj.(*Stream)
			}
			return collection{obj: st, charge: st.charge()}, collStore, nil
		})
		if err != nil && first == nil {
			first = err
		}
	}
	for _, k := range tx.quiet {
		key := []byte(k)
		h := tx.s.hash(key)
		sh := tx.s.shardOf(h)
		sl, found := tx.s.liveKeyLocked(sh, h, key)
		if !found || sl.rec.typ() != TypeStream {
			continue
		}
		st := sh.collectionOf(&sl.rec).obj.(*Stream)
		tx.s.setChargeLocked(sl, st.charge())
		tx.s.notifyUnsignalled(key)
	}
	return first
}
