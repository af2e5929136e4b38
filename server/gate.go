package server

import (
	"sync"

	"github.com/stampedeless/stampedeless/engine"
)

// sectionGate is the commands' way into the store's atomic section
// (engine.Section). The exclusive holders, EXEC and scripts, take turns
// at the gate: one has the section at a time, and the others wait on a
// channel, never inside the section's locks. A command that needs the
// section shared enters it at once when no holder has it, with one
// TryRLock; else it waits on the same channel until the holder leaves,
// or until a script turns busy: it is answered BUSY then, as Redis
// answers while a script runs past busy-reply-threshold, rather than
// waiting as long as the script runs. Nothing waits holding a lock, and
// an event loop never waits at the gate: a command that would wait
// finishes in its connection's continuation (Conn.whereItMayWait).
//
// Shared waiters go first: once they wait, a new exclusive holder waits
// for them to have entered, so a stream of transactions cannot starve
// them, as the section's read-write locks would not.
type sectionGate struct {
	sec *engine.Section
	// busy is the scripting engine's Busy: a script has run past the
	// busy threshold.
	busy func() bool

	mu sync.Mutex
	// held: an exclusive holder has the section or is taking it.
	held bool
	// sharedWaiting counts the shared entrants waiting for the holder.
	sharedWaiting int
	// changed is closed and replaced when held turns false, when the last
	// shared waiter has entered, and when a script turns busy (wake).
	changed chan struct{}
}

func newSectionGate(sec *engine.Section, busy func() bool) *sectionGate {
	return &sectionGate{sec: sec, busy: busy, changed: make(chan struct{})}
}

// signal wakes every waiter; g.mu is held.
func (g *sectionGate) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// wake wakes the waiters to look again: a script turned busy.
func (g *sectionGate) wake() {
	g.mu.Lock()
	g.signal()
	g.mu.Unlock()
}

// claim makes the caller the exclusive holder if no one holds the
// section and no shared entrant waits for it.
func (g *sectionGate) claim() (ok bool, changed chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held || g.sharedWaiting > 0 {
		return false, g.changed
	}
	g.held = true
	return true, nil
}

// tryLock takes the section exclusively if it can without waiting for
// another holder, and reports whether it did. It waits only for the
// shared holders to leave, each after one command.
func (g *sectionGate) tryLock() bool {
	ok, _ := g.claim()
	if ok {
		g.sec.Lock()
	}
	return ok
}

// lock takes the section exclusively, waiting for the holder to leave.
// It reports false, holding nothing, when a script is or turns busy
// first: the caller answers BUSY.
func (g *sectionGate) lock() bool {
	for {
		ok, changed := g.claim()
		if ok {
			g.sec.Lock()
			return true
		}
		if g.busy() {
			return false
		}
		<-changed
	}
}

// unlock leaves the exclusive section.
func (g *sectionGate) unlock() {
	g.sec.Unlock()
	g.mu.Lock()
	g.held = false
	g.signal()
	g.mu.Unlock()
}

// rlock enters the section shared on hint's lock, waiting for an
// exclusive holder to leave. Unless allowBusy (the commands Redis runs
// while a script is busy), it reports false, holding nothing, when a
// script is or turns busy first.
func (g *sectionGate) rlock(hint uint64, allowBusy bool) bool {
	if g.sec.TryRLock(hint) {
		return true
	}
	g.mu.Lock()
	g.sharedWaiting++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		if g.sharedWaiting--; g.sharedWaiting == 0 {
			g.signal() // exclusive holders may go
		}
		g.mu.Unlock()
	}()
	for {
		if g.sec.TryRLock(hint) {
			return true
		}
		g.mu.Lock()
		held, changed := g.held, g.changed
		g.mu.Unlock()
		if !held {
			// The holder has just left (held turns false after its
			// Unlock), and no new one claims the section while a shared
			// entrant waits: the next TryRLock succeeds.
			continue
		}
		if !allowBusy && g.busy() {
			return false
		}
		<-changed
	}
}
