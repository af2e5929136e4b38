package server

import (
	"bytes"
	"strings"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

// dispatch runs one command, or queues it inside MULTI, and counts its
// result; CLIENT REPLY then decides whether its reply is sent.
func (s *Server) dispatch(c *Conn, args [][]byte) {
	mark := c.w.Len()
	s.dispatchCommand(c, args)
	if c.reply != replyOn || c.skipNext {
		c.gateReplyAfter(mark)
	}
}

// dispatchCommand is dispatch but for CLIENT REPLY.
func (s *Server) dispatchCommand(c *Conn, args [][]byte) {
	if c.revoked.Load() { // its user was deleted: it runs nothing more
		c.quit = true
		return
	}
	s.commandsTotal.Add(1)
	c.refused, c.errorCounted = false, false // what a command not counted left
	cmd := s.lookup(c, args[0])
	before := c.w.Len()
	if cmd == nil {
		c.refuse(nil, unknownCommand(args))
		countReply(nil, c, before, 0)
		c.track.Caching = false
		return
	}
	container := cmd
	if len(cmd.subcommands) > 0 && len(args) > 1 {
		cmd = cmd.subcommand(args[1]) // nil: an unknown subcommand
	}
	// CLIENT LIST shows the subcommand, or NULL for an unknown one. A
	// repeated command is not stored again: an atomic store is a full
	// barrier, 7% of a pipelined GETFILL's dispatch.
	if c.lastCommand.Load() != cmd {
		c.lastCommand.Store(cmd)
	}
	timer := s.startCall()
	ran := false
	// Redis's order: the (sub)command exists, its arity, authentication,
	// the user's permissions, min-replicas-to-write, subscriber mode, a busy script; a command
	// refused so inside MULTI fails the transaction. Then MULTI queues all
	// but the transaction commands.
	switch {
	case cmd == nil:
		c.refuse(nil, "ERR unknown subcommand '"+string(commands.Truncate(args[1], 128))+"'. Try "+
			strings.ToUpper(container.Name)+" HELP.")
	case !cmd.arityOK(len(args)):
		c.refuse(cmd, "ERR wrong number of arguments for '"+cmd.Name+"' command")
	case cmd.Flags&commands.Protected != 0 && s.protectedRefusal(c, cmd) != "":
		c.refuse(cmd, s.protectedRefusal(c, cmd))
	case !c.authenticated() && cmd.Flags&commands.NoAuth == 0:
		c.refuse(cmd, commands.ErrNoAuth)
	case !c.permitted(cmd, args):
		// permitted refused it; inside MULTI that fails the transaction.
	case s.replicaMinimum.on() && s.writes(c, cmd, args):
		c.refuse(cmd, errNoReplicas)
	case c.subs.Total() > 0 && c.w.Protocol() == 2 && cmd.Flags&commands.SubscriberOK == 0:
		// A RESP2 client in subscriber mode reads only pushes and these
		// commands' replies; RESP3 tells them apart and has no limit.
		c.refuse(cmd, "ERR Can't execute '"+cmd.Name+"': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	case s.scripts.eng.Busy() && cmd.Flags&commands.AllowBusy == 0:
		s.replyBusy(c, cmd)
	case c.monitoring.Load() && cmd.Flags&(commands.Write|commands.Readonly|commands.MayReplicate) != 0:
		// A monitor is a replica to Redis, which keeps it off the keyspace.
		c.refuse(cmd, "ERR Replica can't interact with the keyspace")
	case c.tx.active && cmd.Flags&commands.NoMulti != 0:
		c.refuse(cmd, "ERR Command not allowed inside a transaction")
	case s.pause.Pausing() && s.holdIfPaused(c, cmd, args):
		// Last of the checks, as in Redis, and before MULTI queues: the
		// command runs afresh from here once the pause lets it (pause.go),
		// counted then.
		return
	case c.tx.active && cmd.Flags&commands.NoQueue == 0:
		if c.enqueue(cmd, args) {
			return // counted when EXEC runs it
		}
	case s.refusedShared(c, cmd):
	case s.opts.Shared != nil && cmd.shared():
		s.runShared(c, cmd, args)
		ran = true
	default:
		s.run(c, cmd, args)
		ran = true
	}
	if c.postponed { // held once inside the section: its rerun counts
		c.postponed = false
		c.next.counted, c.next.call = nil, nil
		return
	}
	if c.next.run != nil {
		c.next.counted = cmd // counted when it has answered
		if ran && timer.on {
			c.next.call = &resumedCall{cmd: cmd, args: copyArgs(args)}
		}
		return
	}
	c.endCaching(container)
	var usec int64
	if ran {
		usec = s.observed(c, cmd, args, timer)
	}
	countReply(cmd, c, before, usec)
}

// endCaching ends CLIENT CACHING once the command after it has answered
// (cmd, or its container), or the transaction after it, as Redis's
// resetClient ends it.
func (c *Conn) endCaching(cmd *command) {
	if c.track.Caching && !c.tx.active && cmd.Name != "client" && !strings.HasPrefix(cmd.Name, "client|") {
		c.track.Caching = false
	}
}

// run runs cmd's handler. One that reads or writes the keyspace runs
// inside the store's atomic section, shared, so that no EXEC or script
// runs between its store calls; the section is one uncontended TryRLock,
// taken on a lock of its own by each connection (engine.Section). When
// EXEC or a script holds it, the command waits at the gate, where it may
// wait: a script that turns busy meanwhile gets it answered BUSY.
func (s *Server) run(c *Conn, cmd *command, args [][]byte) {
	if !cmd.usesKeyspace() {
		cmd.Handler(&c.x, args)
		return
	}
	if cmd.Flags&commands.OwnSection != 0 {
		c.whereItMayWaitWith(args, func(args [][]byte) { s.handle(c, cmd, args) })
		return
	}
	hint := uint64(c.id)
	if s.gate.sec.TryRLock(hint) {
		if s.heldAfterAll(c, cmd, args, func() { s.gate.sec.RUnlock(hint) }) {
			return
		}
		s.handleShared(c, cmd, args, hint)
		return
	}
	c.whereItMayWaitWith(args, func(args [][]byte) {
		if !s.gate.rlock(hint, cmd.Flags&commands.AllowBusy != 0) {
			s.replyBusy(c, cmd)
			return
		}
		// The section was held, perhaps by the CLIENT PAUSE that began
		// since dispatch let this command through: it looks again.
		if s.heldAfterAll(c, cmd, args, func() { s.gate.sec.RUnlock(hint) }) {
			return
		}
		s.handleShared(c, cmd, args, hint)
	})
}

// handleShared runs cmd's handler in the section c entered shared on
// hint's lock, and leaves it.
func (s *Server) handleShared(c *Conn, cmd *command, args [][]byte, hint uint64) {
	// Deferred: a handler that panics must not leave the section held,
	// which would stop every later EXEC.
	defer s.gate.sec.RUnlock(hint)
	s.handle(c, cmd, args)
}

// handle runs a keyspace command's handler, holding the atomic section,
// and tells tracking (beforeCommand) when it needs to know.
func (s *Server) handle(c *Conn, cmd *command, args [][]byte) {
	if s.tracking.Concerns(&c.track) {
		defer s.beforeCommand(c, cmd, args)()
	}
	cmd.Handler(&c.x, args)
	if cmd.Flags&(commands.Write|commands.OwnSection) == commands.Write {
		// Its writes may have made keys that clients block on ready
		// (LPUSH, ZADD, RENAME, COPY...): they are served here, in the
		// section (blocking.go); the read-through commands that run
		// outside it write strings, which serve no blocked client.
		s.serveBlocked(c)
	}
}

// whereItMayWait runs fn, which may wait, where the connection may wait:
// on its event loop, which must not wait, in the continuation the loop runs
// on a goroutine once the handler has returned (c.next.run, netloop.Wait);
// at once off the loop (in a continuation already, or a script's caller).
// A caller that needs the command's arguments later copies them
// (whereItMayWaitWith), since the reader reuses its buffers.
func (c *Conn) whereItMayWait(fn func()) {
	if !c.looped {
		fn()
		return
	}
	c.next.then(fn)
}

// whereItMayWaitWith is whereItMayWait for an fn that needs the command's
// arguments, which are copied when fn runs later, since the reader reuses
// its buffers. It is the one way to finish a command off the event loop.
func (c *Conn) whereItMayWaitWith(args [][]byte, fn func(args [][]byte)) {
	if c.looped {
		args = copyArgs(args)
	}
	c.whereItMayWait(func() { fn(args) })
}

// countReply counts a call of cmd (nil: a command or subcommand the table
// lacks) by the reply written since before, as Redis's commandstats and
// errorstats count it: refused before it ran (Conn.refuse, or a deny-oom
// command the store refused for memory, which Redis refuses before it
// runs), failed (an error reply), or ok; and the µs it took. An error a
// script's command already counted (Conn.errorCounted) is not counted
// again in errorstats.
func countReply(cmd *command, c *Conn, before int, usec int64) {
	refused, counted := c.refused, c.errorCounted
	c.refused, c.errorCounted = false, false
	k := &c.srv.unknown
	if cmd != nil {
		k = &cmd.counters
	}
	if usec != 0 { // most calls, on the coarse clock: no write to a shared line
		k.usec.Add(usec)
	}
	if !c.w.IsErrorAt(before) {
		k.ok.Inc()
		return
	}
	if !counted {
		c.srv.errors.countAt(c, before)
	}
	if refused || cmd != nil && cmd.Flags&commands.DenyOOM != 0 && bytes.HasPrefix(c.w.Buffered()[before:], oomPrefix) {
		k.rejected.Inc()
		return
	}
	k.fail.Inc()
}

// oomPrefix starts the reply of a write the store refused for memory.
var oomPrefix = []byte("-OOM ")

// lookup finds a command by name, case-insensitively, without allocating.
// A connection mostly repeats the command it sent last (a pipeline of
// GETs): its name, lower-cased, is still in c.scratch, and comparing the
// name with it costs less than hashing the name into the table (a
// twentieth of a pipelined GETFILL hit's time).
func (s *Server) lookup(c *Conn, name []byte) *command {
	if len(name) > len(c.scratch) {
		return nil
	}
	if last := c.scratch[:c.lastLen]; c.lastCmd != nil && resp.EqualFold(name, last) {
		return c.lastCmd
	}
	lower := c.scratch[:len(name)]
	for i, b := range name {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		lower[i] = b
	}
	c.lastCmd, c.lastLen = s.table[string(lower)], len(name)
	return c.lastCmd
}

// unknownCommand is Redis's text for a command not in the table, quoting
// the first arguments up to about 128 bytes.
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.Write(commands.Truncate(args[0], 128))
	b.WriteString("', with args beginning with: ")
	n := 0
	for _, a := range args[1:] {
		if n >= 128 {
			break
		}
		a = commands.Truncate(a, 128-n)
		b.WriteByte('\'')
		b.Write(a)
		b.WriteString("' ")
		n += len(a) + 3
	}
	return b.String()
}

// refuse answers errText to a command refused before it could run (cmd,
// nil if unknown). Inside MULTI the transaction can then no longer be
// executed; an EXEC refused so ends it, and says why, as Redis does. The
// call is counted as refused (countReply).
func (c *Conn) refuse(cmd *command, errText string) {
	c.refused = true
	if cmd != nil && cmd.Name == "exec" {
		c.srv.txResults.aborted.Inc()
		c.endTransaction()
		c.w.Error("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(errText, "ERR "))
		return
	}
	if c.tx.active {
		c.tx.failed = true
	}
	c.w.Error(errText)
}
