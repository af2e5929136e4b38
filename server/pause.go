package server

import (
	"math"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/scripting"
	"github.com/stampedeless/stampedeless/server/internal/pause"
)

// CLIENT PAUSE and CLIENT UNPAUSE, as Redis 7.0 has them: while a pause is
// in force, the commands it holds (every command under ALL, those that
// may write under WRITE) wait, in the order they arrived, until it ends
// at its timeout or at CLIENT UNPAUSE, and then run as if sent then. The
// store is frozen meanwhile (engine.Store.SetFrozen): no key expires or is
// evicted, so that a replica promoted during the pause has exactly the
// data the clients wrote, which is what failover tooling pauses for. The
// gate that decides and orders is package pause's; here are the commands,
// what a pause holds (mayReplicate), and the waits.
//
// A held command never waits on its event loop, nor holding a lock: the
// connection parks (Conn.whereItMayWait) and its continuation waits for
// its turn; the commands pipelined after it stay unread until it has run.

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

// holdPaused asks the pause whether c's command cmd waits (pause.Gate's
// Hold). A monitor is exempt, as Redis exempts its replicas.
func (s *Server) holdPaused(c *Conn, cmd *command, args [][]byte, onlyByMode bool) *pause.Waiter {
	if c.monitoring.Load() {
		return nil
	}
	writes := func() bool { return s.mayReplicate(c, cmd, args) }
	return s.pause.Hold(&c.pauseHeld, writes, c.pauseTurn != nil, onlyByMode)
}

// holdIfPaused holds c's command if the pause holds it, and reports
// whether it did; the command then runs afresh once its turn comes
// (postpone).
func (s *Server) holdIfPaused(c *Conn, cmd *command, args [][]byte) bool {
	w := s.holdPaused(c, cmd, args, false)
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
	if !s.pause.Pausing() || c.pauseTurn != nil {
		return false
	}
	w := s.holdPaused(c, cmd, args, true)
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
func (s *Server) postpone(c *Conn, w *pause.Waiter, args [][]byte) {
	s.commandsTotal.Add(-1)
	s.pause.Postponed()
	c.whereItMayWaitWith(args, func(args [][]byte) { s.awaitTurn(c, w, args) })
}

// awaitTurn waits for w's turn and runs its command, then lets the next
// one go. It runs in c's continuation, where c may wait.
func (s *Server) awaitTurn(c *Conn, w *pause.Waiter, args [][]byte) {
	p := &s.pause
	if prev := c.pauseTurn; prev != nil {
		// Held again during its turn (a pause began or tightened
		// meanwhile): the others go on.
		c.pauseTurn = nil
		p.EndTurn(prev)
	}
	ctx := c.link.Context()
	select {
	case <-w.Ready():
	case <-ctx.Done(): // the client left, or the server closes
		if !p.Leave(w) {
			break // its turn came meanwhile: it has to end it
		}
		return
	case <-p.Shut():
		if !p.Leave(w) {
			break
		}
		// As Redis's shutdown closes the clients it holds: no reply to
		// the held command, and nothing after it runs.
		c.quit = true
		return
	}
	if w.Gone() {
		p.EndTurn(w)
		return
	}
	c.pauseTurn = w
	s.dispatchCommand(c, args)
	if c.pauseTurn == w {
		c.pauseTurn = nil
		p.EndTurn(w)
	}
	// What the command left to wait for (a blocked pop, a load) waits
	// after its turn, as Redis's next client runs while it is blocked.
	if c.next.run != nil {
		s.runContinuation(c)
	}
}

// registerPauseMetrics exports the pause: its mode and the commands it
// holds.
func (s *Server) registerPauseMetrics() {
	p, m := &s.pause, s.metrics
	m.Gauge("client_pause", "The CLIENT PAUSE in force: 0 none, 1 WRITE, 2 ALL.", func() float64 {
		return float64(p.Shown())
	})
	m.Gauge("paused_clients", "Client connections whose command CLIENT PAUSE holds.", func() float64 {
		return float64(p.Held())
	})
	m.Counter("paused_commands_total", "Commands CLIENT PAUSE held, each counted once per hold.", func() float64 {
		return float64(p.HeldTotal())
	})
}

// cmdClientPause implements CLIENT PAUSE timeout [WRITE|ALL]: the mode
// first, then the timeout in milliseconds, checked as Redis checks them.
// It sets the pause holding the atomic section exclusively (where the
// connection may wait: commands inside the section finish first), unless
// EXEC holds it already, where the pause starts once the transaction
// ends, as in Redis.
func cmdClientPause(c *Conn, args [][]byte) {
	mode := pause.All
	if len(args) == 4 {
		switch {
		case resp.EqualFold(args[3], "write"):
			mode = pause.Write
		case resp.EqualFold(args[3], "all"):
			mode = pause.All
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
		s.pause.Pause(mode, end)
		c.w.OK()
		return
	}
	c.whereItMayWait(func() {
		if !s.gate.lock() {
			s.replyBusy(c, c.lastCommand.Load())
			return
		}
		s.pause.Pause(mode, end)
		s.gate.unlock()
		c.w.OK()
	})
}

// cmdClientUnpause implements CLIENT UNPAUSE: the held commands run, in
// the order they arrived.
func cmdClientUnpause(c *Conn, _ [][]byte) {
	c.srv.pause.Unpause()
	c.w.OK()
}
