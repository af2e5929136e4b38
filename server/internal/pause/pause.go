// Package pause is CLIENT PAUSE's gate, as Redis 7.0 has it: while a
// pause is in force, the commands it holds (every command under All,
// those that may write under Write) wait, in the order they arrived,
// until it ends at its timeout or at Unpause, and then take their turns
// one at a time, before the commands that arrive meanwhile. The store is
// frozen meanwhile (the freeze Init is given). It decides and orders;
// the server parks the connections whose commands wait and runs them.
package pause

import (
	"sync"
	"sync/atomic"
	"time"
)

// Mode is what a pause holds, in Redis's order of its pause types: a
// later pause keeps the more restrictive of the two.
type Mode uint32

// The modes.
const (
	Off   Mode = iota
	Write      // commands that may write or replicate
	All        // every command
)

// String is the mode as INFO shows it.
func (m Mode) String() string {
	switch m {
	case Write:
		return "write"
	case All:
		return "all"
	}
	return "off"
}

// pauseDraining is a bit of Gate.state: held commands the pause
// let go are still taking their turns, and new commands queue behind
// them, as Redis runs the clients it unblocks before it reads new input.
const pauseDraining = 1 << 8

// Gate is the server's pause. Its zero value is not ready: Init it.
type Gate struct {
	// freeze freezes the store (true) while a pause holds anything, and
	// thaws it (false).
	freeze func(bool)
	// state is the mode in force, with pauseDraining: what dispatch reads
	// without the lock, one atomic load per command.
	state atomic.Uint32
	// held counts the commands waiting, for INFO and metrics; heldTotal,
	// those held since the start.
	held, heldTotal atomic.Int64

	mu    sync.Mutex
	mode  Mode
	endMs int64 // Unix milliseconds: the pause ends once the clock passes it
	// shown is mode, for metrics, which read it without the lock.
	shown atomic.Uint32
	timer *time.Timer
	// queue are the commands the mode holds, in the order they arrived;
	// released, those it let go, which run one at a time in that order
	// (turn: one is running), and the commands that arrived meanwhile.
	queue    []*Waiter
	released []*Waiter
	turn     bool
	// shut is closed when the server shuts down (Close): held commands
	// never run, and their connections close.
	shut   chan struct{}
	closed bool
}

// Waiter is one held command.
type Waiter struct {
	// held is its connection's flag of a command held, which CLIENT LIST
	// shows.
	held *atomic.Bool
	// ready is closed at its turn.
	ready chan struct{}
	// Guarded by Gate.mu: its turn came (ready is closed), and it has
	// ended; gone: its client left before its turn.
	started, ended, gone bool
}

// Ready is closed at w's turn.
func (w *Waiter) Ready() <-chan struct{} { return w.ready }

// Gone reports, once its turn has come, whether w's client left before
// it: the turn is then only to be ended.
func (w *Waiter) Gone() bool { return w.gone }

// Init readies p, which freezes the store through freeze.
func (p *Gate) Init(freeze func(bool)) {
	p.freeze = freeze
	p.shut = make(chan struct{})
}

// Pausing reports whether a pause is in force or its commands are still
// being run: dispatch then asks Hold.
func (p *Gate) Pausing() bool { return p.state.Load() != 0 }

// Shut is closed when the server shuts down: a held command never runs.
func (p *Gate) Shut() <-chan struct{} { return p.shut }

// Held is how many commands wait; HeldTotal, how many were held since the
// start (Postponed counts them).
func (p *Gate) Held() int64      { return p.held.Load() }
func (p *Gate) HeldTotal() int64 { return p.heldTotal.Load() }

// Postponed counts a command held.
func (p *Gate) Postponed() { p.heldTotal.Add(1) }

// Shown is the mode in force, read without the lock.
func (p *Gate) Shown() Mode { return Mode(p.shown.Load()) }

// syncState publishes the mode and whether commands are still released;
// p.mu is held.
func (p *Gate) syncState() {
	st := uint32(p.mode)
	if p.turn || len(p.released) > 0 {
		st |= pauseDraining
	}
	p.state.Store(st)
}

// Hold decides whether a command waits: the mode holds it (writes says
// whether it may write, asked only under Write), or released commands
// are still taking their turns (unless it is one of them: inTurn; and
// not onlyByMode). It returns the command's place in line, or nil if it
// runs now; held is its connection's flag of a held command, set until
// its turn.
func (p *Gate) Hold(held *atomic.Bool, writes func() bool, inTurn, onlyByMode bool) *Waiter {
	st := p.state.Load()
	if st == 0 {
		return nil
	}
	// Outside the lock: a script's flags are looked up in the engine.
	mayWrite := Mode(st&^pauseDraining) == Write && writes()
	p.mu.Lock()
	defer p.mu.Unlock()
	w := &Waiter{held: held, ready: make(chan struct{})}
	switch {
	case p.closed:
		return nil
	case p.mode == All || (p.mode == Write && mayWrite):
		p.queue = append(p.queue, w)
	case !onlyByMode && !inTurn && (p.turn || len(p.released) > 0):
		p.released = append(p.released, w)
	default:
		return nil
	}
	p.held.Add(1)
	held.Store(true)
	return w
}

// Leave takes w out of line, its client gone, and reports whether it was
// still waiting; false: its turn has come, which it must end.
func (p *Gate) Leave(w *Waiter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.started {
		w.gone = true
		return false
	}
	w.gone = true
	p.held.Add(-1)
	w.held.Store(false)
	p.queue = remove(p.queue, w)
	p.released = remove(p.released, w)
	p.syncState()
	return true
}

func remove(list []*Waiter, w *Waiter) []*Waiter {
	for i, x := range list {
		if x == w {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// EndTurn ends w's turn and starts the next one's.
func (p *Gate) EndTurn(w *Waiter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.ended {
		return
	}
	w.ended = true
	p.turn = false
	p.nextTurn()
}

// nextTurn lets the first released command go, if none is running; p.mu
// is held.
func (p *Gate) nextTurn() {
	defer p.syncState()
	if p.turn || len(p.released) == 0 || p.closed {
		return
	}
	w := p.released[0]
	p.released[0] = nil
	p.released = p.released[1:]
	w.started = true
	p.turn = true
	p.held.Add(-1)
	w.held.Store(false)
	close(w.ready)
}

// release lets go the queued commands the mode no longer holds: all of
// them when the pause ends, the reads when ALL turns to WRITE (those that
// may write take their turn and are held again, as Redis reprocesses every
// postponed client). p.mu is held.
func (p *Gate) release() {
	p.released = append(p.released, p.queue...)
	p.queue = nil
	p.nextTurn()
}

// Pause starts a pause of mode until endMs (Unix milliseconds), or makes
// the one in force at least as long and as restrictive, as Redis's
// pauseClients. A pause whose end has passed (CLIENT PAUSE 0) ends at
// once. The caller holds the atomic section exclusively: once it leaves
// it, no command that the pause holds runs and nothing changes the store.
func (p *Gate) Pause(mode Mode, endMs int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == Off {
		p.mode, p.endMs = mode, endMs
	} else {
		p.mode, p.endMs = max(p.mode, mode), max(p.endMs, endMs)
	}
	p.update(Off)
}

// Unpause ends the pause in force, if any.
func (p *Gate) Unpause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	was := p.mode
	p.mode = Off
	p.update(was)
}

// expire is the pause's timer: the pause ends if its time has passed.
func (p *Gate) expire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.update(p.mode)
}

// update ends the pause if its time has passed, and applies the mode: the
// store is frozen while it holds anything, the timer set for its end,
// and what it held before (was) but no longer does is let go. p.mu is
// held.
func (p *Gate) update(was Mode) {
	now := time.Now().UnixMilli()
	if p.mode != Off && p.endMs < now {
		p.mode = Off
	}
	p.freeze(p.mode != Off)
	p.shown.Store(uint32(p.mode))
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if p.mode != Off {
		// Redis's pause lasts while its end is not past: until the
		// millisecond after it.
		d := time.Duration(p.endMs-now+1) * time.Millisecond
		p.timer = time.AfterFunc(d, p.expire)
	}
	if p.mode < was {
		p.release()
		return
	}
	p.syncState()
}

// Close ends the pause for the server's shutdown: the store thaws, and
// the commands held, which never run, close their connections, as in
// Redis a held write is never acknowledged once failover tooling has
// stopped the server it paused.
func (p *Gate) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	p.mode = Off
	p.update(Off)
	close(p.shut)
}
