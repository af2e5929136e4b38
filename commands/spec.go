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
	// KeySpecs are Redis 7's key specs of the command, as COMMAND INFO
	// shows them and COMMAND GETKEYSANDFLAGS reads their flags. Unset, one
	// is derived from FirstKey, LastKey, Step and Access.
	KeySpecs []KeySpec

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
	// then what COMMAND INFO shows (0, or the first key where Redis shows
	// one: SORT's, MIGRATE's), and MovableKeys is set.
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
	// KeysMove: every key is read and taken away (MIGRATE: Redis's key
	// specs RW ACCESS DELETE).
	KeysMove
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

// KeySpec is one of Redis 7's key specs, as COMMAND INFO shows it: the
// flags of the keys it finds, where the search for them begins
// (begin_search) and how they are found from there (find_keys).
//
// The search begins at argument Index; or, with Keyword, after the first
// Keyword found searching from argument StartFrom (from the end when
// negative); with neither, it is unknown. From there the keys are a
// range, LastKey (relative to the first key; -1 the last argument, -2 the
// one before) every Step, Limit saying which part of what remains when
// LastKey is -1 (0 and 1: all, 2: half); or, with KeyNum, a count at
// argument NumKeys (relative to the beginning) of keys starting at
// FirstKey, every Step. Unknown makes both unknown, as SORT's BY, GET and
// STORE keys are. A zero Step is 1.
type KeySpec struct {
	Notes string
	Flags KeySpecFlags

	Index     int
	Keyword   string
	StartFrom int

	LastKey, Step, Limit int
	KeyNum               bool
	NumKeys, FirstKey    int

	Unknown bool
}

// KeyAt is the key spec of the single key at argument index.
func KeyAt(index int, flags KeySpecFlags) KeySpec { return KeySpec{Flags: flags, Index: index} }

// KeySpecFlags are a key spec's flags (Redis's CMD_KEY_*): K and Redis's
// name.
type KeySpecFlags uint16

// The flags, in the order COMMAND INFO writes them.
const (
	KRO            KeySpecFlags = 1 << iota // read only
	KRW                                     // read and write
	KOW                                     // overwritten without being read
	KRM                                     // removed
	KAccess                                 // the value is returned, copied or used
	KUpdate                                 // the value is changed
	KInsert                                 // something is added to the value
	KDelete                                 // something is removed from the value
	KNotKey                                 // a key name, though no key is read or written (SUBSCRIBE's channel)
	KIncomplete                             // the spec may not find every key
	KVariableFlags                          // a call's flags depend on its arguments
)

// KeySpecFlagNames are the flags' names, as COMMAND INFO writes them.
var KeySpecFlagNames = []struct {
	Flag KeySpecFlags
	Name string
}{
	{KRO, "RO"}, {KRW, "RW"}, {KOW, "OW"}, {KRM, "RM"}, {KAccess, "access"}, {KUpdate, "update"},
	{KInsert, "insert"}, {KDelete, "delete"}, {KNotKey, "not_key"}, {KIncomplete, "incomplete"},
	{KVariableFlags, "variable_flags"},
}

// Names are the flags' names, in COMMAND INFO's order.
func (f KeySpecFlags) Names() []string {
	var out []string
	for _, n := range KeySpecFlagNames {
		if f&n.Flag != 0 {
			out = append(out, n.Name)
		}
	}
	return out
}
