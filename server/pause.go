package server

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/scripting"
)

// CLIENT PAUSE and CLIENT UNPAUSE, as Redis 7.0 has them: while a pause is
// in force, the commands it holds (every command under ALL, those that
// may write under WRITE) wait, in the order they arrived, until it ends
// at its timeout or at CLIENT UNPAUSE, and then run as if sent then. The
// store is frozen meanwhile (engine.Store.SetFrozen): no key expires or is
// evicted, so that a replica promoted during the pause has exactly the
// data the clients wrote, which is what failover tooling pauses for.
//
// A held command never waits on its event loop, nor holding a lock: the
// connection parks (Conn.whereItMayWait) and its continuation waits for
// its turn; the commands pipelined after it stay unread until it has run.

// pauseMode is what a pause holds, in Redis's order of its pause types: a
// later pause keeps the more restrictive of the two.
type pauseMode uint32

const (
	pauseOff   pauseMode = iota
	pauseWrite           // commands that may write or replicate
	pauseAll             // every command
)

func (m pauseMode) String() string {
	switch m {
	case pauseWrite:
		return "write"
	case pauseAll:
		return "all"
	}
	return "off"
}

// pauseDraining is a bit of clientPause.state: held commands the pause
// let go are still taking their turns, and new commands queue behind
// them, as Redis runs the clients it unblocks before it reads new input.
const pauseDraining = 1 << 8

// clientPause is the server's pause.
type clientPause struct {
	srv *Server
	// state is the mode in force, with pauseDraining: what dispatch reads
	// without the lock, one atomic load per command.
	state atomic.Uint32
	// held counts the commands waiting, for INFO and metrics; heldTotal,
	// those held since the start.
	held, heldTotal atomic.Int64

	mu    sync.Mutex
	mode  pauseMode
	endMs int64 // Unix milliseconds: the pause ends once the clock passes it
	// shown is mode, for metrics, which read it without the lock.
	shown atomic.Uint32
	timer *time.Timer
	// queue are the commands the mode holds, in the order they arrived;
	// released, those it let go, which run one at a time in that order
	// (turn: one is running), and the commands that arrived meanwhile.
	queue    []*pauseWaiter
	released []*pauseWaiter
	turn     bool
	// shut is closed when the server shuts down (close): held commands
	// never run, and their connections close.
	shut   chan struct{}
	closed bool
}

// pauseWaiter is one held command.
type pauseWaiter struct {
	c *Conn
	// ready is closed at its turn.
	ready chan struct{}
	// Guarded by clientPause.mu: its turn came (ready is closed), and it
	// has ended; gone: its client left before its turn.
	started, ended, gone bool
}

// pausing reports whether a pause is in force or its commands are still
// being run: dispatch then asks holds.
func (p *clientPause) pausing() bool { return p.state.Load() != 0 }

// syncState publishes the mode and whether commands are still released;
// p.mu is held.
func (p *clientPause) syncState() {
	st := uint32(p.mode)
	if p.turn || len(p.released) > 0 {
		st |= pauseDraining
	}
	p.state.Store(st)
}

// mayReplicate reports whether the pause's WRITE mode holds cmd, as Redis
// decides with its write and may-replicate flags: EXEC as the commands it
// queued, a script or function as its flags declare it (no-writes), or as
// its command is flagged when it has none or is not known yet.
func (s *Server) mayReplicate(c *Conn, cmd *command, args [][]byte) bool {
	switch {
	case cmd.Name == "exec":
		for _, q := range c.tx.queue {
			if s.mayReplicate(c, q.cmd, q.args) {
				return true
			}
		}
		return false
	case cmd.Script && len(args) > 1:
		var flags scripting.Flags
		var ok bool
		switch cmd.Name {
		case "fcall", "fcall_ro":
			flags, ok = s.scripts.eng.FunctionFlags(args[1])
		default:
			flags, ok = s.scripts.eng.ScriptFlags(args[1], cmd.Name == "evalsha" || cmd.Name == "evalsha_ro")
		}
		if ok && flags&scripting.FlagEvalCompat == 0 {
			return flags&scripting.FlagNoWrites == 0
		}
	}
	return cmd.Flags&(commands.Write|commands.MayReplicate) != 0
}

// hold decides whether cmd, which c sent, waits: the mode holds it, or
// released commands are still taking their turns (unless it is one of
// them). It returns the command's place in line, or nil if it runs now.
// A monitor is exempt, as Redis exempts its replicas.
func (p *clientPause) hold(c *Conn, cmd *command, args [][]byte, onlyByMode bool) *pauseWaiter {
	if c.monitoring.Load() {
		return nil
	}
	st := p.state.Load()
	if st == 0 {
		return nil
	}
	// Outside the lock: a script's flags are looked up in the engine.
	writes := pauseMode(st&^pauseDraining) == pauseWrite && p.srv.mayReplicate(c, cmd, args)
	p.mu.Lock()
	defer p.mu.Unlock()
	w := &pauseWaiter{c: c, ready: make(chan struct{})}
	switch {
	case p.closed:
		return nil
	case p.mode == pauseAll || (p.mode == pauseWrite && writes):
		p.queue = append(p.queue, w)
	case !onlyByMode && c.pauseTurn == nil && (p.turn || len(p.released) > 0):
		p.released = append(p.released, w)
	default:
		return nil
	}
	p.held.Add(1)
	c.pauseHeld.Store(true)
	return w
}

// holdIfPaused holds c's command if the pause holds it, and reports
// whether it did; the command then runs afresh once its turn comes
// (postpone).
func (s *Server) holdIfPaused(c *Conn, cmd *command, args [][]byte) bool {
	w := s.pause.hold(c, cmd, args, false)
	if w == nil {
		return false
	}
	s.postpone(c, w, args)
	return true
}

// heldAfterAll is holdIfPaused for a command that has entered the atomic
// section since dispatch let it through: CLIENT PAUSE sets its mode
// holding the section exclusively, so a command that looks again once in
// the section either ran before the pause began or sees it. If the pause
// holds it, it leaves the section (leave) and is held as at dispatch;
// c.postponed then tells the callers up to dispatch that it has not run.
func (s *Server) heldAfterAll(c *Conn, cmd *command, args [][]byte, leave func()) bool {
	if !s.pause.pausing() || c.pauseTurn != nil {
		return false
	}
	w := s.pause.hold(c, cmd, args, true)
	if w == nil {
		return false
	}
	leave()
	s.postpone(c, w, args)
	c.postponed = true
	return true
}

// postpone leaves c's command waiting for its turn (w) where c may wait,
// and has it run afresh from dispatch then, as Redis reprocesses a
// postponed client's command: it is counted and timed then, not now.
func (s *Server) postpone(c *Conn, w *pauseWaiter, args [][]byte) {
	s.commandsTotal.Add(-1)
	s.pause.heldTotal.Add(1)
	c.whereItMayWaitWith(args, func(args [][]byte) { s.awaitTurn(c, w, args) })
}

// awaitTurn waits for w's turn and runs its command, then lets the next
// one go. It runs in c's continuation, where c may wait.
func (s *Server) awaitTurn(c *Conn, w *pauseWaiter, args [][]byte) {
	p := &s.pause
	if prev := c.pauseTurn; prev != nil {
		// Held again during its turn (a pause began or tightened
		// meanwhile): the others go on.
		c.pauseTurn = nil
		p.endTurn(prev)
	}
	ctx := c.link.Context()
	select {
	case <-w.ready:
	case <-ctx.Done(): // the client left, or the server closes
		if !p.leave(w) {
			break // its turn came meanwhile: it has to end it
		}
		return
	case <-p.shut:
		if !p.leave(w) {
			break
		}
		// As Redis's shutdown closes the clients it holds: no reply to
		// the held command, and nothing after it runs.
		c.quit = true
		return
	}
	if w.gone {
		p.endTurn(w)
		return
	}
	c.pauseTurn = w
	s.dispatchCommand(c, args)
	if c.pauseTurn == w {
		c.pauseTurn = nil
		p.endTurn(w)
	}
	// What the command left to wait for (a blocked pop, a load) waits
	// after its turn, as Redis's next client runs while it is blocked.
	if c.next.run != nil {
		s.runContinuation(c)
	}
}

// leave takes w out of line, its client gone, and reports whether it was
// still waiting; false: its turn has come, which it must end.
func (p *clientPause) leave(w *pauseWaiter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.started {
		w.gone = true
		return false
	}
	w.gone = true
	p.held.Add(-1)
	w.c.pauseHeld.Store(false)
	p.queue = remove(p.queue, w)
	p.released = remove(p.released, w)
	p.syncState()
	return true
}

func remove(list []*pauseWaiter, w *pauseWaiter) []*pauseWaiter {
	for i, x := range list {
		if x == w {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// endTurn ends w's turn and starts the next one's.
func (p *clientPause) endTurn(w *pauseWaiter) {
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
func (p *clientPause) nextTurn() {
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
	w.c.pauseHeld.Store(false)
	close(w.ready)
}

// release lets go the queued commands the mode no longer holds: all of
// them when the pause ends, the reads when ALL turns to WRITE (those that
// may write take their turn and are held again, as Redis reprocesses every
// postponed client). p.mu is held.
func (p *clientPause) release() {
	p.released = append(p.released, p.queue...)
	p.queue = nil
	p.nextTurn()
}

// pause starts a pause of mode until endMs (Unix milliseconds), or makes
// the one in force at least as long and as restrictive, as Redis's
// pauseClients. A pause whose end has passed (CLIENT PAUSE 0) ends at
// once. The caller holds the atomic section exclusively: once it leaves
// it, no command that the pause holds runs and nothing changes the store.
func (p *clientPause) pause(mode pauseMode, endMs int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == pauseOff {
		p.mode, p.endMs = mode, endMs
	} else {
		p.mode, p.endMs = max(p.mode, mode), max(p.endMs, endMs)
	}
	p.update(pauseOff)
}

// unpause ends the pause in force, if any.
func (p *clientPause) unpause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	was := p.mode
	p.mode = pauseOff
	p.update(was)
}

// expire is the pause's timer: the pause ends if its time has passed.
func (p *clientPause) expire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.update(p.mode)
}

// update ends the pause if its time has passed, and applies the mode: the
// store is frozen while it holds anything, the timer set for its end,
// and what it held before (was) but no longer does is let go. p.mu is
// held.
func (p *clientPause) update(was pauseMode) {
	now := time.Now().UnixMilli()
	if p.mode != pauseOff && p.endMs < now {
		p.mode = pauseOff
	}
	p.srv.store.SetFrozen(p.mode != pauseOff)
	p.shown.Store(uint32(p.mode))
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if p.mode != pauseOff {
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

// close ends the pause for the server's shutdown: the store thaws, and
// the commands held, which never run, close their connections, as in
// Redis a held write is never acknowledged once failover tooling has
// stopped the server it paused.
func (p *clientPause) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	p.mode = pauseOff
	p.update(pauseOff)
	close(p.shut)
}

// registerMetrics exports the pause: its mode and the commands it holds.
func (p *clientPause) registerMetrics() {
	m := p.srv.metrics
	m.Gauge("client_pause", "The CLIENT PAUSE in force: 0 none, 1 WRITE, 2 ALL.", func() float64 {
		return float64(p.shown.Load())
	})
	m.Gauge("paused_clients", "Client connections whose command CLIENT PAUSE holds.", func() float64 {
		return float64(p.held.Load())
	})
	m.Counter("paused_commands_total", "Commands CLIENT PAUSE held, each counted once per hold.", func() float64 {
		return float64(p.heldTotal.Load())
	})
}

// cmdClientPause implements CLIENT PAUSE timeout [WRITE|ALL]: the mode
// first, then the timeout in milliseconds, checked as Redis checks them.
// It sets the pause holding the atomic section exclusively (where the
// connection may wait: commands inside the section finish first), unless
// EXEC holds it already, where the pause starts once the transaction
// ends, as in Redis.
func cmdClientPause(c *Conn, args [][]byte) {
	mode := pauseAll
	if len(args) == 4 {
		switch {
		case resp.EqualFold(args[3], "write"):
			mode = pauseWrite
		case resp.EqualFold(args[3], "all"):
			mode = pauseAll
		default:
			c.w.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	} else if len(args) != 3 {
		c.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(commands.Truncate(args[1], 128)) + "'. Try CLIENT HELP.")
		return
	}
	ms, ok := resp.ParseInt(args[2])
	if !ok {
		c.w.Error("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		c.w.Error("ERR timeout is negative")
		return
	}
	end := int64(0) // Redis's for 0: a pause already over
	if ms > 0 {
		// Redis adds the time to a timeout past int64's range and
		// wraps to a pause already over; that is kept, without the
		// overflow.
		if now := time.Now().UnixMilli(); ms <= math.MaxInt64-now {
			end = now + ms
		} else {
			end = math.MinInt64
		}
	}
	s := c.srv
	if c.tx.inSection {
		s.pause.pause(mode, end)
		c.w.OK()
		return
	}
	c.whereItMayWait(func() {
		if !s.gate.lock() {
			s.replyBusy(c, c.lastCommand.Load())
			return
		}
		s.pause.pause(mode, end)
		s.gate.unlock()
		c.w.OK()
	})
}

// cmdClientUnpause implements CLIENT UNPAUSE: the held commands run, in
// the order they arrived.
func cmdClientUnpause(c *Conn, _ [][]byte) {
	c.srv.pause.unpause()
	c.w.OK()
}
