package engine

import "sync"

// sectionLocks is how many locks a Section spreads its shared holders over;
// a power of two.
const sectionLocks = 32

// Section is the store's atomic section. Whoever holds it exclusively (a
// transaction's EXEC, a script) sees no other user's reads or writes
// of the store between its own, and its writes reach other users all at
// once. Users of the store hold it shared around each operation that must
// not interleave with such a batch: a command's handler, the sweeper's pass
// over a shard, a read-through fill's write.
//
// The Store's calls never enter it (the sweeper, the store's own
// goroutine, excepted): who enters is the caller's business, decided at
// the outermost layer, so no path can enter it twice. A command's handler
// runs inside it, entered by the dispatcher (or held by EXEC or the
// script that runs the command); code that writes the store on no
// command's behalf (a fill's flight, a fleet listener) enters it shared
// around each write, and code that runs both ways is told which by its
// caller (swr.Caller). Eviction is a write's, inside the section its
// write holds; the sweeper's enters it shared.
//
// Where the Section stands among the other locks: LOCKS.md, at the
// repository root.
//
// Neither mode may be held across I/O, a channel operation that can wait,
// or a wait for another goroutine that may need the section; and a
// goroutine that holds the section must not enter it again (an exclusive
// holder calls handlers directly, never through the shared path): with
// Go's read-write locks a second shared entry waits behind a waiting
// exclusive holder, which waits for the first.
//
// A shared entry is one uncontended RLock: the section is several locks,
// and a shared holder takes only the one its hint picks (a connection's
// id, a shard's index), so holders on different cores rarely share a cache
// line. The exclusive holder takes them all, in order.
type Section struct {
	locks [sectionLocks]sectionLock
}

type sectionLock struct {
	sync.RWMutex
	_ [64]byte // keep neighbouring locks off one cache line
}

// RLock enters the section shared, on the lock hint picks.
func (s *Section) RLock(hint uint64) { s.locks[hint%sectionLocks].RLock() }

// TryRLock enters the section shared, on the lock hint picks, if no
// exclusive holder holds it or waits for it, and reports whether it did.
// It never waits: a server that must not block behind a long exclusive
// holder (a script) waits elsewhere and answers BUSY instead.
func (s *Section) TryRLock(hint uint64) bool { return s.locks[hint%sectionLocks].TryRLock() }

// RUnlock leaves a shared entry made with the same hint.
func (s *Section) RUnlock(hint uint64) { s.locks[hint%sectionLocks].RUnlock() }

// Shared runs fn holding the section shared on hint's lock, and leaves it
// even if fn panics.
func (s *Section) Shared(hint uint64, fn func()) {
	s.RLock(hint)
	defer s.RUnlock(hint)
	fn()
}

// Lock enters the section exclusively, once every shared holder has left.
// Shared entries that arrive meanwhile wait for Unlock.
func (s *Section) Lock() {
	for i := range s.locks {
		s.locks[i].Lock()
	}
}

// Unlock leaves the exclusive section.
func (s *Section) Unlock() {
	for i := range s.locks {
		s.locks[i].Unlock()
	}
}

// Section returns the store's atomic section.
func (s *Store) Section() *Section { return &s.section }
