// Package commands is the contract between the server and the command
// families: a command's Spec (its name, arity, flags, key positions, ACL
// categories and documentation, and its handler) and the Ctx a handler
// runs with. A family (commands/keyspace, commands/readthrough) declares
// its commands as Specs and never sees a connection; the server indexes
// the Specs it is given, decides where and when each handler runs (the
// atomic section, MULTI, scripts, the shared tier) and hands it a Ctx.
package commands

import (
	"github.com/stampedeless/stampedeless/acl"
)

// Handler runs one call of a command: args[0] is its name. It writes
// exactly one reply to x.W.
type Handler func(x *Ctx, args [][]byte)

// Spec is one command as its family declares it.
type Spec struct {
	Name  string
	Arity int // n: exactly n arguments with the name; -n: at least n
	Flags Flags
	// Key positions for COMMAND INFO: first and last argument index that
	// is a key (last -1: to the end) and the step between keys.
	FirstKey, LastKey, Step int

	Handler Handler

	// Subcommands, for a container such as CLIENT, are the commands its
	// first argument names, each with its full name ("client|list"),
	// arity and flags, as in Redis 7. A container's handler, if any, runs
	// when no subcommand is given (COMMAND alone).
	Subcommands []*Spec

	// Documentation for COMMAND DOCS, which redis-cli turns into help and
	// argument hints. Usage is the argument syntax as Redis's docs print it.
	Group   string
	Summary string
	Usage   string
	Since   string

	// ACL are the command's ACL categories beyond those the server derives
	// from its flags and group (@dangerous on KEYS, say). A container's are
	// its subcommands' too.
	ACL acl.Category
	// ACLNoGroup: the group adds no category; ACL says them all (WAIT is
	// in Redis's generic group, yet @connection rather than @keyspace).
	ACLNoGroup bool
	// Access says what the command does to its keys, for %R~ and %W~ key
	// patterns; VarAccess, if set, says it for one call (SET with GET reads).
	Access    KeyAccess
	VarAccess func(args [][]byte) KeyAccess
	// Channels says which arguments are pub/sub channels, for & patterns.
	Channels ChannelArgs
	// KeyPrefix, if not 0, is the argument that names a key prefix whose
	// keys the command changes (LOADER.REGISTER's): the ACL lets it run
	// only for a user who may write every key under the prefix.
	KeyPrefix int

	// Own marks stampedeless's commands, which Redis does not have.
	Own bool
	// Flush marks the commands that empty the keyspace (FLUSHALL,
	// FLUSHDB), which --redis mode writes through as a flush.
	Flush bool
	// KeysOf, if set, finds the keys of a command with movable keys
	// (EVAL's numkeys, MGETFILL's options before its keys); FirstKey is
	// 0 then, as COMMAND INFO shows, and MovableKeys is set.
	KeysOf func(args [][]byte) [][]byte
	// KeysWritten, if set, finds the keys a call changes, which --redis
	// mode writes through, where they are fewer than its keys (SORT's
	// destination, none without STORE); unset, a write's keys are all
	// written through.
	KeysWritten func(args [][]byte) [][]byte
	// Script marks the commands that run a script, which take the
	// section exclusively themselves.
	Script bool

	// Blind, if set, reports whether a call's reply and effect do not depend
	// on its keys' current values (SET without NX/XX/GET/KEEPTTL, MSET), so
	// --redis mode need not fetch them from the shared tier first.
	Blind func(args [][]byte) bool
}

// Always is the Blind test of commands that never read their keys.
func Always([][]byte) bool { return true }

// KeyAccess is what a command does to its keys, which %R~ and %W~ key
// patterns grant separately (Redis's key spec flags).
type KeyAccess uint8

const (
	// KeysFromFlags: a read-only command reads its keys; any other reads
	// and writes them.
	KeysFromFlags KeyAccess = iota
	KeysRead
	// KeysWrite: writes without reading the value (SETEX, DEL, EXPIRE).
	KeysWrite
	KeysReadWrite
	// KeysNone: neither reads nor writes the value, only sees whether the
	// key exists, its type or length (EXISTS, TYPE, STRLEN); any key
	// pattern grants it.
	KeysNone
	// KeysDestFirst: the first key is a destination written without
	// being read, the others sources read (the *STORE commands, BITOP).
	KeysDestFirst
	// KeysCopy: the first key is read, the second written (COPY).
	KeysCopy
	// KeysRename: the first key is read and changed, the second written
	// without being read (RENAME, RENAMENX, SMOVE: Redis's key specs
	// ACCESS DELETE, then UPDATE or INSERT).
	KeysRename
	// KeysMerge: the first key is read and written, the others read
	// (PFMERGE, which merges its destination too).
	KeysMerge
)

// ChannelArgs says which of a command's arguments are pub/sub channels.
type ChannelArgs uint8

const (
	ChannelsNone      ChannelArgs = iota
	ChannelsPublish               // the first (PUBLISH)
	ChannelsSubscribe             // every one (SUBSCRIBE)
	ChannelsPatterns              // every one, a pattern (PSUBSCRIBE)
)

// InfoSection is a section of INFO a family adds after the server's own:
// Write adds its "name:value" fields.
type InfoSection struct {
	Name  string
	Write func(field func(name string, value any))
}
