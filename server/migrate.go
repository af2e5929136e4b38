package server

import (
	"context"
	"math"
	"time"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/persist"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/server/internal/migrate"
)

// migrateSpec is MIGRATE, with Redis 7.0's arity, flags, key specs and
// categories. It runs outside the atomic section (OwnSection), in its
// connection's continuation, and enters the section itself around its
// reads and its deletes: the wait for the target is between them.
func migrateSpec() *commands.Spec {
	moved := commands.KRW | commands.KAccess | commands.KDelete
	return &commands.Spec{Name: "migrate", Arity: -6, Flags: commands.Write | commands.MovableKeys | commands.OwnSection,
		FirstKey: 3, LastKey: 3, Step: 1, KeysOf: migrateKeys, Access: commands.KeysMove, ACL: acl.Dangerous,
		Handler: conn(cmdMigrate),
		KeySpecs: []commands.KeySpec{
			commands.KeyAt(3, moved),
			{Flags: moved | commands.KIncomplete, Keyword: "KEYS", StartFrom: -2, LastKey: -1},
		},
		Group: "generic", Summary: "Atomically transfer a key from a Redis instance to another one.",
		Usage: `host port (key|"") destination-db timeout [COPY] [REPLACE] [AUTH password|AUTH2 username password] [KEYS key [key ...]]`,
		Since: "2.6.0"}
}

// migrateKeys are MIGRATE's keys as Redis's migrateGetKeys finds them: the
// key argument, or those after KEYS (none when the key argument is not
// empty then, which the command refuses), skipping AUTH's and AUTH2's
// arguments on the way.
func migrateKeys(args [][]byte) [][]byte {
	keys := args[3:4]
	for i := 6; i < len(args); i++ {
		switch {
		case resp.EqualFold(args[i], "keys"):
			if len(args[3]) > 0 {
				return nil
			}
			return args[i+1:]
		case resp.EqualFold(args[i], "auth"):
			i++
		case resp.EqualFold(args[i], "auth2"):
			i += 2
		}
	}
	return keys
}

// migrateCall is a MIGRATE's arguments, as Redis's migrateCommand reads
// them.
type migrateCall struct {
	copy, replace bool
	auth          [][]byte // AUTH's arguments, nil for none
	// secrets are the indexes of AUTH's arguments in the call, which
	// Redis redacts as it reads them, before any error after them.
	secrets []int
	keys    [][]byte
	db      int64
	timeout time.Duration
}

// parseMigrate reads args in Redis's order, or returns the error reply.
func parseMigrate(args [][]byte) (m migrateCall, errReply string) {
	m.keys = args[3:4]
	var user, pass []byte
	hasUser, hasPass := false, false
options:
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case resp.EqualFold(args[j], "copy"):
			m.copy = true
		case resp.EqualFold(args[j], "replace"):
			m.replace = true
		case resp.EqualFold(args[j], "auth"):
			if more < 1 {
				return m, commands.ErrSyntax
			}
			j++
			pass, hasPass = args[j], true
			m.secrets = append(m.secrets, j)
		case resp.EqualFold(args[j], "auth2"):
			if more < 2 {
				return m, commands.ErrSyntax
			}
			user, pass, hasUser, hasPass = args[j+1], args[j+2], true, true
			m.secrets = append(m.secrets, j+1, j+2)
			j += 2
		case resp.EqualFold(args[j], "keys"):
			if len(args[3]) != 0 {
				return m, "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
			}
			m.keys = args[j+1:]
			break options
		default:
			return m, commands.ErrSyntax
		}
	}
	switch {
	case hasUser:
		m.auth = [][]byte{user, pass}
	case hasPass:
		m.auth = [][]byte{pass}
	}
	timeout, ok := resp.ParseInt(args[5])
	if !ok {
		return m, commands.ErrNotInteger
	}
	if m.db, ok = resp.ParseInt(args[4]); !ok {
		return m, commands.ErrNotInteger
	}
	if timeout <= 0 {
		timeout = 1000
	}
	m.timeout = time.Duration(min(timeout, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
	return m, ""
}

// cmdMigrate implements MIGRATE host port key|"" destination-db timeout
// [COPY] [REPLACE] [AUTH password | AUTH2 username password] [KEYS key
// ...], as Redis 7.0 does, but for one thing. Redis blocks the whole
// server while it waits for the target; here only the client that sent
// MIGRATE waits, and others may write the keys meanwhile. So the keys are
// copied at one instant in the atomic section, each with a fence
// (engine.Store.SnapshotFenced); the section is left for the transfer;
// then, unless COPY, each key the target took is deleted in the section
// only if nothing wrote it since (DeleteUnwritten), so that a write made
// meanwhile is never lost: such a key stays here, with that write, as
// well as there. Inside EXEC or a script, which hold the section, nothing
// may wait, and MIGRATE is refused.
func cmdMigrate(c *Conn, args [][]byte) {
	m, errReply := parseMigrate(args)
	if errReply != "" {
		c.w.Error(errReply)
		return
	}
	if c.tx.inSection {
		c.w.Error("ERR MIGRATE cannot run inside MULTI or a script here: it waits for the target, and nothing may wait there")
		return
	}
	s, hint := c.srv, uint64(c.id)
	if !s.gate.rlock(hint, false) {
		s.replyBusy(c, s.table["migrate"])
		return
	}
	items, fences := c.x.Store.SnapshotFenced(m.keys, !m.copy)
	now := c.x.Store.Now().UnixMilli()
	s.gate.sec.RUnlock(hint)
	if len(items) == 0 {
		c.w.Status("NOKEY")
		return
	}
	tr := &migrate.Transfer{Host: string(args[1]), Port: string(args[2]), Timeout: m.timeout, Auth: m.auth,
		DB: m.db, Replace: m.replace}
	for i := range items {
		payload, at, _ := persist.DumpItem(&items[i])
		ttl := int64(0)
		if at != 0 {
			ttl = max(at-now, 1)
		}
		tr.Keys, tr.Payloads, tr.TTLs = append(tr.Keys, items[i].Key), append(tr.Payloads, payload), append(tr.TTLs, ttl)
	}
	out := s.migrate.Run(tr)
	if !m.copy {
		deleteTaken(c, items, fences, out)
	}
	switch {
	case out.Failure == migrate.Connecting:
		c.w.Error("IOERR error or timeout connecting to the client")
	case out.Refused:
		c.w.Error("ERR Target instance replied with error: " + out.TargetError)
	case out.Failure == migrate.Writing:
		c.w.Error("IOERR error or timeout writing to target instance")
	case out.Failure == migrate.Reading:
		c.w.Error("IOERR error or timeout reading to target instance")
	default:
		c.w.OK()
	}
}

// deleteTaken deletes, in the section, each key of items the target took
// (out.Taken) that nothing wrote since its fence was taken, with a del
// event each, as Redis deletes what its target acknowledged.
func deleteTaken(c *Conn, items []engine.SnapshotItem, fences []*engine.Fence, out migrate.Outcome) {
	s, hint := c.srv, uint64(c.id)
	// Allowed while a script is busy: the target has the keys, and leaving
	// them here too would be a copy no one asked for.
	s.gate.rlock(hint, true)
	var gone [][]byte
	c.x.Store.DeleteUnwritten(fences, func(i int) bool { return i < len(out.Taken) && out.Taken[i] },
		func(i int) { gone = append(gone, items[i].Key) })
	for _, key := range gone {
		c.x.Notify(commands.EventGeneric, "del", key)
	}
	s.gate.sec.RUnlock(hint)
	if len(gone) > 0 && (out.Refused || out.Failure != migrate.None) && s.opts.Shared != nil {
		// With --redis a write is written through once it answered OK
		// (runShared); these keys went though MIGRATE fails.
		s.opts.Shared.Written(context.Background(), int(c.db.Load()), gone)
	}
}

// migrateSecrets are the arguments of a MIGRATE call that the slow log
// and MONITOR redact: AUTH's password and AUTH2's user name and password,
// those Redis's parser reached.
func migrateSecrets(args [][]byte) []int {
	if len(args) < 6 {
		return nil
	}
	m, _ := parseMigrate(args)
	return m.secrets
}
