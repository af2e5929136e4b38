package server

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
)

// Replies of the transaction commands, as Redis 7 words them.
const (
	errExecAbort     = "EXECABORT Transaction discarded because of previous errors."
	errMultiNested   = "ERR MULTI calls can not be nested"
	errExecNoMulti   = "ERR EXEC without MULTI"
	errDiscardNoMult = "ERR DISCARD without MULTI"
	errWatchInMulti  = "ERR WATCH inside MULTI is not allowed"
)

// transaction is a connection's MULTI state. Its event loop (or its
// continuation, while it has the connection parked) owns it; CLIENT LIST
// reads Conn.multiLen instead.
type transaction struct {
	// active: between MULTI and EXEC or DISCARD, commands are queued.
	active bool
	// failed: a command was refused while queuing (unknown, wrong arity,
	// not authenticated), so EXEC answers EXECABORT and runs nothing.
	failed bool
	// inSection: EXEC is running the queue, or a script its calls,
	// holding the store's atomic section exclusively: no command may wait
	// or enter the section.
	inSection bool
	queue     []queuedCommand
	// queued is the size of the queued commands' arguments, bounded by the
	// memory bound: a transaction cannot hold more than the store may.
	queued int64
}

// txResults are the children of metrics.Registry.Transactions, resolved
// once.
type txResults struct {
	ran, watchChanged, aborted prometheus.Counter
}

// queuedCommand is a command MULTI queued: the (sub)command to run, the one
// its metrics count, and a copy of its arguments (the reader reuses its
// buffers).
type queuedCommand struct {
	cmd  *command
	args [][]byte
}

// enqueue queues a command for EXEC and answers +QUEUED, or refuses it
// with Redis's OOM error, failing the transaction, when the queue would
// outgrow the memory bound (if there is one). As in Redis, a transaction EXEC will not run
// keeps nothing more. It reports whether the command was queued.
func (c *Conn) enqueue(cmd *command, args [][]byte) bool {
	size := argsSize(args)
	if bound := c.srv.store.MaxMemory(); bound > 0 && c.tx.queued+size > bound {
		c.refuse(cmd, commands.ErrOOM)
		return false
	}
	c.w.Status("QUEUED")
	if c.tx.failed || c.srv.watches.Dirty(&c.watch) {
		return true
	}
	c.tx.queued += size
	c.tx.queue = append(c.tx.queue, queuedCommand{cmd: cmd, args: copyArgs(args)})
	c.multiLen.Store(int32(len(c.tx.queue)))
	c.multiMem.Store(c.tx.queued)
	return true
}

// argsSize is what a command's arguments take: their bytes and a slice
// header each.
func argsSize(args [][]byte) int64 {
	n := int64(len(args)) * 24
	for _, a := range args {
		n += int64(len(a))
	}
	return n
}

// copyArgs copies args into one allocation.
func copyArgs(args [][]byte) [][]byte {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(args))
	for i, a := range args {
		start := len(buf)
		buf = append(buf, a...)
		out[i] = buf[start:len(buf):len(buf)]
	}
	return out
}

// endTransaction leaves MULTI and forgets the watched keys, as EXEC and
// DISCARD do whatever their outcome, and as a closing connection does.
func (c *Conn) endTransaction() {
	c.tx = transaction{}
	c.multiLen.Store(-1)
	c.multiMem.Store(0)
	c.srv.watches.Unwatch(&c.watch)
}

func cmdMulti(c *Conn, _ [][]byte) {
	if c.tx.active {
		c.w.Error(errMultiNested)
		return
	}
	c.tx.active = true
	c.multiLen.Store(0)
	c.w.OK()
}

func cmdDiscard(c *Conn, _ [][]byte) {
	if !c.tx.active {
		c.w.Error(errDiscardNoMult)
		return
	}
	c.endTransaction()
	c.w.OK()
}

func cmdWatch(c *Conn, args [][]byte) {
	if c.tx.active {
		c.w.Error(errWatchInMulti)
		return
	}
	c.srv.watches.Watch(&c.watch, int(c.db.Load()), args[1:])
	c.w.OK()
}

func cmdUnwatch(c *Conn, _ [][]byte) {
	c.srv.watches.Unwatch(&c.watch)
	c.w.OK()
}

// cmdExec runs the queued commands as one atomic step: inside the store's
// atomic section, held exclusively, so no other client's command, fill or
// expiry sweep interleaves with them. It answers a null array, running
// nothing, when a watched key changed since WATCH.
func cmdExec(c *Conn, _ [][]byte) {
	tx := c.tx
	if !tx.active {
		c.w.Error(errExecNoMulti)
		return
	}
	if tx.failed {
		c.srv.txResults.aborted.Inc()
		c.endTransaction()
		c.w.Error(errExecAbort)
		return
	}
	s := c.srv
	locked := false
	if c.looped {
		// The event loop neither waits for the section's holder nor runs
		// a script, which may run long, nor writes through to Redis: the
		// transaction then runs in a continuation, off the loop.
		if hasScript(tx.queue) || s.opts.Shared != nil || !s.gate.tryLock() {
			c.whereItMayWait(func() { cmdExec(c, nil) })
			return
		}
		locked = true
	}
	defer func() {
		if !c.postponed { // held: its rerun ends it
			c.endTransaction()
		}
	}()
	s.exec(c, tx.queue, locked)
}

// execArgs are EXEC's arguments, for an EXEC held by CLIENT PAUSE, which
// runs them again.
var execArgs = [][]byte{[]byte("exec")}

// deniesOOM reports whether a transaction queued a command Redis refuses
// when memory is full (deny-oom).
func deniesOOM(queue []queuedCommand) bool {
	for _, q := range queue {
		if q.cmd.Flags&commands.DenyOOM != 0 {
			return true
		}
	}
	return false
}

// hasScript reports whether a transaction runs a script.
func hasScript(queue []queuedCommand) bool {
	for _, q := range queue {
		if q.cmd.Script {
			return true
		}
	}
	return false
}

// exec runs queue for EXEC; locked says the section is held already. In
// --redis mode the keys the commands read are copied from the shared tier
// before, and what they wrote is written through after: the shared tier's
// I/O stays outside the section, so the transaction is atomic on this
// replica, not across the fleet.
func (s *Server) exec(c *Conn, queue []queuedCommand, locked bool) {
	ctx := context.Background()
	dbs := sharedDBs(int(c.db.Load()), s.store.Databases(), queue)
	if s.opts.Shared != nil {
		keys := make(map[int][][]byte) // by database
		for i, q := range queue {
			keys[dbs[i]] = append(keys[dbs[i]], q.cmd.faultKeys(q.args)...)
			if q.cmd.Flags&commands.TrackRead != 0 {
				// A read-through read inside the section cannot ask the
				// fleet (I/O): what the shared tier has is copied first.
				keys[dbs[i]] = append(keys[dbs[i]], q.cmd.keys(q.args)...)
			}
		}
		for db, keys := range keys {
			if len(keys) > 0 {
				s.opts.Shared.Fault(ctx, db, keys)
			}
		}
	}
	starts, ran := s.runQueue(c, queue, locked)
	defer s.shareDeferred(ctx, c)
	if !ran || s.opts.Shared == nil {
		return
	}
	for i, q := range queue {
		if q.cmd.shared() {
			s.writeThrough(ctx, c, dbs[i], q.cmd, q.args, starts[i])
		}
	}
}

// runQueue runs queue holding the atomic section (taken at the gate
// unless locked), unless a watched key changed (a null array then), and
// returns where each command's reply starts in the connection's writer.
// A script busy while EXEC waits for the section aborts the transaction
// with BUSY, as Redis refuses EXEC then.
func (s *Server) runQueue(c *Conn, queue []queuedCommand, locked bool) (starts []int, ran bool) {
	if !locked && !s.gate.lock() {
		s.replyBusy(c, c.lastCommand.Load())
		return nil, false
	}
	if s.heldAfterAll(c, s.table["exec"], execArgs, s.gate.unlock) {
		return nil, false
	}
	defer s.gate.unlock()
	// A queue that may use memory is refused whole when the store is over
	// its bound and nothing can go, as Redis refuses such an EXEC before
	// it runs (its deny-oom check), rather than run with its writes failing.
	if deniesOOM(queue) && errors.Is(s.store.Admit(), engine.ErrOOM) {
		s.txResults.aborted.Inc()
		c.w.Error("EXECABORT Transaction discarded because of: " + commands.ErrOOM)
		return nil, false
	}
	// Checked holding the section, so nothing can change a watched key
	// between the check and the commands.
	if !s.watches.Unchanged(&c.watch) {
		s.txResults.watchChanged.Inc()
		c.w.NullArray()
		return nil, false
	}
	s.txResults.ran.Inc()
	// Its keys expire by the time it started, as Redis's EXEC's do
	// (fixed_time_expire): none between two of its commands.
	defer s.store.HoldClock()()
	c.tx.inSection = true
	defer func() { c.tx.inSection = false }()
	defer s.tracking.BatchFor(c.tracker())()
	c.w.Array(len(queue))
	starts = make([]int, len(queue))
	for i, q := range queue {
		starts[i] = c.w.Len()
		if !c.permittedInExec(q.cmd, q.args) {
			continue // not called, so not counted, as in Redis
		}
		timer := s.startCall()
		if q.cmd.usesKeyspace() {
			s.handle(c, q.cmd, q.args)
		} else {
			q.cmd.Handler(&c.x, q.args)
		}
		countReply(q.cmd, c, starts[i], s.observed(c, q.cmd, q.args, timer))
	}
	// The transaction's pushes wake blocked clients as it ends, still
	// holding the section, as Redis serves them after EXEC as a whole.
	if s.blocked.HaveReady() {
		s.blocked.ServeReady()
	}
	return starts, true
}
