package swr

import "math/rand/v2"

// Caller says where a Filler call that writes the store or talks to the
// fleet runs, so that it meets the store's atomic section (engine.Section)
// the one right way: it never enters a section its caller holds, which
// would wait for itself, and never does I/O inside one, which would stop
// every transaction and script while Redis answers.
//
// The zero Caller runs outside the section (a command's work after its
// handler, a fleet listener): the call talks to the fleet at once and
// enters the section shared around each store access. The Filler's own
// goroutines (flights, followers, lease timers) always run so.
type Caller struct {
	// InSection: the caller holds the section, shared or exclusive (a
	// command's handler, EXEC, a script). The call's store accesses run
	// as they are, nothing in it waits, and its fleet I/O goes to Later.
	InSection bool
	// Later runs fn once the caller has left the section (the server runs
	// it after EXEC or the script). Needed only InSection; if nil, the
	// fleet I/O runs on a goroutine of its own.
	Later func(fn func())
}

// outside is the zero Caller, for the Filler's own goroutines.
var outside Caller

// within runs fn, which reads or writes the store, inside the section: at
// once if c holds it, else shared, on a lock picked at random (no
// connection is behind the call to pick one).
func (f *Filler) within(c Caller, fn func()) {
	if c.InSection {
		fn()
		return
	}
	f.opts.Store.Section().Shared(rand.Uint64(), fn)
}

// afterSection runs io, which talks to the fleet, where c may do I/O: at
// once outside the section, else once c has left it.
func (c Caller) afterSection(io func()) {
	switch {
	case !c.InSection:
		io()
	case c.Later != nil:
		c.Later(io)
	default:
		go io()
	}
}
