package server

import (
	"context"
	"strings"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// Shared is the tier replicas share in --redis mode (cluster.Client). The
// dispatcher calls it around every Redis command that names keys or
// empties the keyspace, and around a transaction's whole queue, so that a
// command on one replica sees what clients wrote on another and its writes
// reach the others before it is acknowledged. It is never called inside
// the store's atomic section: it does I/O. Without it (nil) a server keeps
// its keys to itself.
type Shared interface {
	// Fault copies keys of database db from the shared tier into the
	// store where the store lacks them. It is called outside the atomic
	// section and enters it for its writes.
	Fault(ctx context.Context, db int, keys [][]byte)
	// Faults reports whether Fault would ask the shared tier for any of
	// keys of database db: a command that needs none of them runs on its
	// event loop.
	Faults(db int, keys [][]byte) bool
	// Written pushes the store's state of keys of database db (value or
	// absence) to the shared tier and drops them from the other replicas.
	Written(ctx context.Context, db int, keys [][]byte)
	// Flushed empties database db in the shared tier and the other
	// replicas, or every database with engine.AllDatabases.
	Flushed(ctx context.Context, db int)
	// Broadcast sends a pub/sub message (PUBLISH, or SPUBLISH if sharded)
	// to the other replicas, which give it to their subscribers through
	// the function set by Relay. It must not keep channel or message after
	// it returns. An error means the other replicas may not receive it.
	Broadcast(ctx context.Context, channel, message []byte, sharded bool) error
	// Relay sets the function the shared tier calls with each message
	// another replica published, never with this replica's own, in the
	// order each replica published them. New calls it once.
	Relay(deliver func(channel, message []byte, sharded bool))
	// Available reports whether the shared tier answers; Peers, how many
	// other replicas are heard; Prefix, the namespace in Redis. For INFO.
	Available() bool
	Peers() int
	Prefix() string
}

// keys returns the arguments of args that are keys, by the command's key
// positions.
func (cmd *command) keys(args [][]byte) [][]byte {
	if cmd.KeysOf != nil {
		return cmd.KeysOf(args)
	}
	if cmd.FirstKey <= 0 || cmd.FirstKey >= len(args) {
		return nil
	}
	last := cmd.LastKey
	if last < 0 {
		last = len(args) + last
	}
	if last < cmd.FirstKey {
		return nil
	}
	step := max(cmd.Step, 1)
	if step == 1 {
		// Contiguous keys are args's own: no copy, for GET on the shared
		// tier's hot path. Capped, so that an append copies.
		last = min(last, len(args)-1)
		return args[cmd.FirstKey : last+1 : last+1]
	}
	keys := make([][]byte, 0, (last-cmd.FirstKey)/step+1)
	for i := cmd.FirstKey; i <= last && i < len(args); i += step {
		keys = append(keys, args[i])
	}
	return keys
}

// shared reports whether cmd goes through the shared tier: a Redis command
// that names keys, or one that empties the keyspace. A script's command
// (EVAL) is one: its declared keys are faulted in before it runs, and its
// writes are written through by shareDeferred.
func (cmd *command) shared() bool { return cmd.sharesKeys() || cmd.Flush }

// sharesKeys reports whether cmd's keys are the shared tier's: a Redis
// command's that names keys (hasKeys: not a shard channel), not
// stampedeless's own, whose fill path shares them itself.
func (cmd *command) sharesKeys() bool { return cmd.hasKeys() && !cmd.Own }

// runShared runs a command with the shared tier: the keys it reads are
// faulted in first, and if it is a write that succeeded, what it changed is
// written through after. The shared tier's I/O is outside the atomic
// section the handler runs in.
func (s *Server) runShared(c *Conn, cmd *command, args [][]byte) {
	keys, db := cmd.faultKeys(args), int(c.db.Load())
	if c.looped && (cmd.Flags&commands.Write != 0 || s.opts.Shared.Faults(db, keys)) {
		// It waits on Redis: off the loop.
		c.whereItMayWaitWith(args, func(args [][]byte) { s.runShared(c, cmd, args) })
		return
	}
	ctx := context.Background()
	// On the loop Faults found nothing to copy: a read of local keys, the
	// tier's common case, asks the store once before it runs.
	if !c.looped && len(keys) > 0 {
		s.opts.Shared.Fault(ctx, db, keys)
	}
	before := c.w.Len()
	s.run(c, cmd, args)
	s.writeThrough(ctx, c, db, cmd, args, before)
}

// faultKeys returns the keys a call of cmd reads and must fault in from the
// shared tier first: none for a command outside it, or for a blind write.
func (cmd *command) faultKeys(args [][]byte) [][]byte {
	if !cmd.sharesKeys() || cmd.Blind != nil && cmd.Blind(args) {
		return nil
	}
	return cmd.keys(args)
}

// writeThrough tells the shared tier what a write in database db changed,
// if its reply, written at offset before, is not an error.
func (s *Server) writeThrough(ctx context.Context, c *Conn, db int, cmd *command, args [][]byte, before int) {
	if cmd.Flags&commands.Write != 0 && !c.w.IsErrorAt(before) {
		s.wrote(ctx, db, cmd, args)
	}
}

// sharedDBs is the database each command of queue runs in, from db on,
// as its SELECTs will choose (a SELECT that fails changes nothing, and
// only an index below databases can succeed).
func sharedDBs(db, databases int, queue []queuedCommand) []int {
	dbs := make([]int, len(queue))
	for i, q := range queue {
		dbs[i] = db
		if q.cmd.Name == "select" && len(q.args) == 2 {
			if n, ok := resp.ParseInt(q.args[1]); ok && n >= 0 && n < int64(databases) {
				db = int(n)
			}
		}
	}
	return dbs
}

// wrote tells the shared tier what a write that succeeded in database db
// changed: its keys (those KeysWritten finds, if set: a SORT without
// STORE changes none), or every key of the database (FLUSHDB) or of every
// database (FLUSHALL); MOVE and COPY ... DB also wrote their key in the
// other database.
func (s *Server) wrote(ctx context.Context, db int, cmd *command, args [][]byte) {
	switch {
	case cmd.Flush && cmd.Name == "flushall":
		s.opts.Shared.Flushed(ctx, engine.AllDatabases)
	case cmd.Flush:
		s.opts.Shared.Flushed(ctx, db)
	case cmd.shared() && cmd.KeysWritten != nil:
		if keys := cmd.KeysWritten(args); len(keys) > 0 {
			s.opts.Shared.Written(ctx, db, keys)
		}
	case cmd.shared():
		s.opts.Shared.Written(ctx, db, cmd.keys(args))
	}
	if to, key, ok := writtenInOtherDB(cmd, args); ok && to != db && to >= 0 && to < s.store.Databases() {
		s.opts.Shared.Written(ctx, to, [][]byte{key})
	}
}

// writtenInOtherDB returns the database and key that MOVE key db and COPY
// src dst DB db wrote besides their keys in the command's database.
func writtenInOtherDB(cmd *command, args [][]byte) (db int, key []byte, ok bool) {
	switch cmd.Name {
	case "move":
		if len(args) == 3 {
			n, ok := resp.ParseInt(args[2])
			return int(n), args[1], ok
		}
	case "copy":
		for i := 3; i+1 < len(args); i++ {
			if strings.EqualFold(string(args[i]), "db") {
				n, ok := resp.ParseInt(args[i+1])
				return int(n), args[2], ok
			}
		}
	}
	return 0, nil, false
}

// errSwapDBShared is SWAPDB's reply with --redis: the shared tier keeps
// each database's keys under its own names, and swapping them there would
// rewrite every key of both.
const errSwapDBShared = "ERR SWAPDB is not supported with --redis: the shared tier keeps each database's keys under its own names"

// refusedShared refuses, and reports true for, a command the shared tier
// cannot follow (SWAPDB).
func (s *Server) refusedShared(c *Conn, cmd *command) bool {
	if s.opts.Shared == nil || cmd.Name != "swapdb" {
		return false
	}
	c.refuse(cmd, errSwapDBShared)
	return true
}
