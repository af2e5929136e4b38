package engine

// ChangeKind says how a key changed.
type ChangeKind uint8

// The kinds of change a Listener is told of.
const (
	// Written: the key's value or deadlines were written: SET and the
	// other string writes, MSET, a read-through fill, EXPIRE and its
	// variants with a future deadline, PERSIST of a key that had one,
	// GETEX with an expiry option. Whether the key existed before does
	// not matter.
	Written ChangeKind = iota + 1
	// Deleted: a live key was removed by DEL, GETDEL, an EXPIRE or GETEX
	// with a deadline not in the future, or a fill whose origin said the
	// key is gone.
	Deleted
	// Expired: a key past its deadline was removed, by a reader that found
	// it so or by the sweeper. Readers stopped seeing it at its deadline.
	Expired
	// Evicted: the eviction policy removed the key to make room.
	Evicted
	// Flushed: every key of database DB was removed (FLUSHDB), or of
	// every database (FLUSHALL, DB AllDatabases); Change.Key is nil.
	Flushed
	// Invalidated: the key's value changed elsewhere (with --redis,
	// another replica wrote it or published a fill of it), and the local
	// copy, if any, was removed (Invalidate, DropStale). Reported even when
	// the store had no copy: a reader that misses here reads the key from
	// elsewhere, and what it gets has changed.
	Invalidated
	// Created: a write is about to add key, which was not live (Redis's
	// dbAdd, its "new" event): told before that write's Written, and not
	// counted in Changes. RENAME's and COPY's destination is created even
	// when it replaces a key, as Redis deletes it first.
	Created
	// Swapped: database DB now holds what database With held (SWAPDB),
	// told for each of the two once both are swapped; Change.Key is nil,
	// and no shard lock is held, so the listener may read the store.
	Swapped
	// Missed: a read found no live key (Redis's lookupKeyRead miss, its
	// "keymiss" event), counted in keyspace_misses and not in Changes. No
	// shard lock is held.
	Missed
)

// Change is one change to what a reader of a key would get.
type Change struct {
	Kind ChangeKind
	// Key is the key that changed, nil for Flushed. It is only valid during
	// the call: a listener copies what it keeps.
	Key []byte
	// DB is the key's database; for Flushed, the database emptied, or
	// AllDatabases.
	DB int
	// With is, for Swapped, the database DB was swapped with.
	With int
	// Loaded is set on the Written of a loader's value (SetOptions.Loaded).
	Loaded bool
	// Unsignalled is set on the Written of a stream that Redis changes
	// without signalling the key modified (signalModifiedKey): its consumer
	// groups (XREADGROUP, XACK, XCLAIM, XGROUP ...) or its last ID
	// (XSETID). Redis counts it as a change (dirty) and wakes the stream's
	// blocked readers, but neither WATCH nor client-side caching sees it.
	Unsignalled bool
}

// Listener is told of every change to the store, as it happens:
//
//   - It is called synchronously, by the goroutine that made the change,
//     before the call that made it returns: once a write has returned, the
//     listener has been told. Eviction and admission changes come from
//     the write that made room for itself, expiry from a reader or the
//     sweeper.
//   - A key's change is reported while the key's shard lock is held, so the
//     changes of one key arrive in the order they were made. Flushed is
//     reported with no lock held, once every key is gone.
//   - Therefore a listener must not block: no I/O, no channel operation
//     that can wait, no lock that anyone holds across either; a short mutex
//     of its own is fine. It must not call the Store, and must not panic.
//
// A change that leaves what a reader gets as it was (a SET NX that did not
// write, DEL of a missing key) is not reported.
type Listener func(Change)

// Listen makes l the store's listener, replacing the previous one; nil
// removes it. While there is none, a change costs one atomic load.
func (s *Store) Listen(l Listener) {
	if l == nil {
		s.listener.Store(nil)
		return
	}
	s.listener.Store(&l)
}

// OnSwap adds fn to what SwapDB calls once a swap of databases a and b is
// done, so that state kept by database outside the store (the
// read-through's origin tags) follows its keys. fn must not call SwapDB.
func (s *Store) OnSwap(fn func(a, b int)) {
	s.swapMu.Lock()
	s.onSwap = append(s.onSwap, fn)
	s.swapMu.Unlock()
}

// notify counts a change and tells the listener, if any, that key
// changed. It is inlined into the writers: with no listener it is an
// atomic add, one load and a branch.
func (s *Store) notify(kind ChangeKind, key []byte) {
	s.changes.Add(1)
	if s.listener.Load() != nil {
		s.tell(kind, key)
	}
}

// notifyLoaded is notify of a Written that stored a loader's value.
func (s *Store) notifyLoaded(key []byte) {
	s.changes.Add(1)
	if l := s.listener.Load(); l != nil {
		(*l)(Change{Kind: Written, Key: key, DB: int(s.db), Loaded: true})
	}
}

// notifyUnsignalled is notify of a Written that Redis does not signal
// (Change.Unsignalled).
func (s *Store) notifyUnsignalled(key []byte) {
	s.changes.Add(1)
	if l := s.listener.Load(); l != nil {
		(*l)(Change{Kind: Written, Key: key, DB: int(s.db), Unsignalled: true})
	}
}

// notifyQuiet tells the listener, if any, of a Created or Missed, which
// are no change of a value.
func (s *Store) notifyQuiet(kind ChangeKind, key []byte) {
	if s.listener.Load() != nil {
		s.tell(kind, key)
	}
}

// Changes counts the store's changes since it was made: every write and
// every removal (deleted, expired, evicted), as Redis's dirty counter
// counts them for rdb_changes_since_last_save and the save points.
func (s *Store) Changes() uint64 { return s.changes.Load() }

// tell calls the listener, unless it was removed meanwhile.
func (s *Store) tell(kind ChangeKind, key []byte) {
	if l := s.listener.Load(); l != nil {
		(*l)(Change{Kind: kind, Key: key, DB: int(s.db)})
	}
}
