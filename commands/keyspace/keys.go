package keyspace

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// cmdDel, cmdExists and cmdTouch, like cmdMGet, act on all their keys at
// one instant, as a Redis command does: a write of several keys (MSET, DEL,
// RENAME, FLUSHALL) is seen whole or not at all.
func cmdDel(c *commands.Ctx, args [][]byte) {
	if c.Events.Classes()&commands.EventGeneric == 0 {
		c.W.Int(int64(c.Store.DeleteMulti(args[1:], nil)))
		return
	}
	keys := args[1:]
	var deleted []int
	n := c.Store.DeleteMulti(keys, func(i int) { deleted = append(deleted, i) })
	for _, i := range deleted {
		c.Notify(commands.EventGeneric, "del", keys[i])
	}
	c.W.Int(int64(n))
}

// EXISTS and TYPE count their lookups, as Redis's lookupKeyRead with
// LOOKUP_NOTOUCH: a hit or a miss (a keymiss event), no access.
func cmdExists(c *commands.Ctx, args [][]byte) {
	c.W.Int(int64(c.Store.ReadMulti(args[1:], engine.ReadCounts, func(int, engine.Type, []byte, bool) {})))
}

func cmdType(c *commands.Ctx, args [][]byte) {
	t, found := engine.Type(0), false
	c.Store.ReadMulti(args[1:2], engine.ReadCounts, func(_ int, typ engine.Type, _ []byte, ok bool) { t, found = typ, ok })
	if found {
		c.W.Status(t.String())
	} else {
		c.W.Status("none")
	}
}

func cmdTouch(c *commands.Ctx, args [][]byte) {
	c.W.Int(int64(c.Store.ReadMulti(args[1:], engine.ReadNotes|engine.ReadCounts, func(int, engine.Type, []byte, bool) {})))
}

// expireCommand implements EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT. As in
// Redis, the options are checked before the time.
func expireCommand(c *commands.Ctx, args [][]byte, unit int64, absolute bool, name string) {
	cond, errText := expireCondition(args[3:])
	if errText == "" {
		var at int64
		if at, errText = expiryArg(args[2], unit, absolute, false, name, nowMillis(c)); errText == "" {
			ok := c.Store.Expire(args[1], at, cond)
			if ok {
				// A deadline already past deletes the key, as Redis's
				// checkAlreadyExpired.
				if at <= c.Store.Now().UnixNano() {
					c.Notify(commands.EventGeneric, "del", args[1])
				} else {
					c.Notify(commands.EventGeneric, "expire", args[1])
				}
			}
			c.W.Int(commands.BoolInt(ok))
			return
		}
	}
	c.W.Error(errText)
}

// expireCondition parses the NX, XX, GT and LT options of the EXPIRE
// family, or returns the error to reply.
func expireCondition(opts [][]byte) (engine.ExpireCondition, string) {
	cond := engine.ExpireAlways
	var nx, xx, gt, lt bool
	for _, a := range opts {
		switch {
		case resp.EqualFold(a, "nx"):
			nx, cond = true, engine.ExpireIfNone
		case resp.EqualFold(a, "xx"):
			xx, cond = true, engine.ExpireIfSet
		case resp.EqualFold(a, "gt"):
			gt, cond = true, engine.ExpireIfLater
		case resp.EqualFold(a, "lt"):
			lt, cond = true, engine.ExpireIfEarlier
		default:
			return 0, "ERR Unsupported option " + string(a)
		}
	}
	switch {
	case nx && (xx || gt || lt):
		return 0, "ERR NX and XX, GT or LT options at the same time are not compatible"
	case gt && lt:
		return 0, "ERR GT and LT options at the same time are not compatible"
	case xx && gt:
		cond = engine.ExpireIfLater // GT already requires a deadline
	case xx && lt:
		cond = engine.ExpireIfSetEarlier
	}
	return cond, ""
}

func cmdExpire(c *commands.Ctx, args [][]byte)    { expireCommand(c, args, 1000, false, "expire") }
func cmdPExpire(c *commands.Ctx, args [][]byte)   { expireCommand(c, args, 1, false, "pexpire") }
func cmdExpireAt(c *commands.Ctx, args [][]byte)  { expireCommand(c, args, 1000, true, "expireat") }
func cmdPExpireAt(c *commands.Ctx, args [][]byte) { expireCommand(c, args, 1, true, "pexpireat") }

// ttlReply answers TTL-family commands: -2 for a missing key, -1 for a key
// without a deadline, else what value computes from the stale deadline in
// Unix milliseconds.
func ttlReply(c *commands.Ctx, key []byte, value func(deadlineMs int64) int64) {
	// Counted, without an access, as Redis's LOOKUP_NOTOUCH.
	env, ok := c.Store.LookupNoTouch(key)
	switch {
	case !ok:
		c.W.Int(-2)
	case env.StaleUntil == 0:
		c.W.Int(-1)
	default:
		c.W.Int(value(env.StaleUntil / int64(time.Millisecond)))
	}
}

func cmdTTL(c *commands.Ctx, args [][]byte) {
	ttlReply(c, args[1], func(ms int64) int64 { return (max(ms-nowMillis(c), 0) + 500) / 1000 })
}

func cmdPTTL(c *commands.Ctx, args [][]byte) {
	ttlReply(c, args[1], func(ms int64) int64 { return max(ms-nowMillis(c), 0) })
}

func cmdExpireTime(c *commands.Ctx, args [][]byte) {
	ttlReply(c, args[1], func(ms int64) int64 { return (ms + 500) / 1000 })
}

func cmdPExpireTime(c *commands.Ctx, args [][]byte) {
	ttlReply(c, args[1], func(ms int64) int64 { return ms })
}

func cmdPersist(c *commands.Ctx, args [][]byte) {
	ok := c.Store.Persist(args[1])
	if ok {
		c.Notify(commands.EventGeneric, "persist", args[1])
	}
	c.W.Int(commands.BoolInt(ok))
}

func cmdKeys(c *commands.Ctx, args [][]byte) {
	keys := c.Store.Keys(args[1])
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}

// cmdScan implements SCAN cursor [MATCH pattern] [COUNT count] [TYPE type].
func cmdScan(c *commands.Ctx, args [][]byte) {
	cursor, ok := parseCursor(args[1])
	if !ok {
		c.W.Error("ERR invalid cursor")
		return
	}
	filter, count, ok := scanOptions(c, args[2:], true)
	if !ok {
		return
	}
	next, keys := c.Store.Scan(cursor, filter, count)
	c.W.Array(2)
	c.W.BulkString(strconv.FormatUint(next, 10))
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}

// scanOptions parses the options of SCAN (withType) and of SSCAN and the
// like: MATCH, COUNT and, for SCAN alone, TYPE, as Redis's
// scanGenericCommand does, into the store's one filter of scans. It writes
// the error itself.
func scanOptions(c *commands.Ctx, opts [][]byte, withType bool) (filter engine.ScanFilter, count int, ok bool) {
	count = 10
	for i := 0; i < len(opts); i += 2 {
		if i+1 >= len(opts) {
			c.W.Error(commands.ErrSyntax)
			return filter, 0, false
		}
		opt, val := opts[i], opts[i+1]
		switch {
		case resp.EqualFold(opt, "match"):
			filter.Pattern = val
		case resp.EqualFold(opt, "count"):
			n, ok := commands.CountArg(c.W, val, 1)
			if !ok {
				return filter, 0, false
			}
			count = int(min(n, 1<<20))
		case withType && resp.EqualFold(opt, "type"):
			// As Redis 7.0, a type name no key can hold matches nothing.
			t, known := engine.ParseType(strings.ToLower(string(val)))
			if !known {
				t = math.MaxUint8
			}
			filter.Type, filter.OfType = t, true
		default:
			c.W.Error(commands.ErrSyntax)
			return filter, 0, false
		}
	}
	return filter, count, true
}

func cmdRandomKey(c *commands.Ctx, _ [][]byte) {
	if k, ok := c.Store.RandomKey(); ok {
		c.W.BulkString(k)
	} else {
		c.W.Null()
	}
}

// keyCommands are the commands of keys whatever their type: existence,
// expiry, RENAME, COPY and MOVE, DUMP and RESTORE, OBJECT, SORT, KEYS and
// SCAN, for the family's table (Commands).
func keyCommands() []*commands.Spec {
	return []*commands.Spec{
		{Name: "del", Arity: -2, Flags: commands.Write,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdDel, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{{Flags: commands.KRM | commands.KDelete, Index: 1, LastKey: -1}},
			Group:    "generic", Summary: "Deletes one or more keys.", Usage: "key [key ...]", Since: "1.0.0"},
		{Name: "unlink", Arity: -2, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdDel, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{{Flags: commands.KRM | commands.KDelete, Index: 1, LastKey: -1}},
			Group:    "generic", Summary: "Deletes one or more keys.", Usage: "key [key ...]", Since: "4.0.0"},
		{Name: "exists", Arity: -2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdExists, Access: commands.KeysNone,
			Group: "generic", Summary: "Determines whether one or more keys exist.", Usage: "key [key ...]",
			Since: "1.0.0"},
		{Name: "type", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdType, Access: commands.KeysNone,
			Group: "generic", Summary: "Determines the type of value stored at a key.", Usage: "key", Since: "1.0.0"},
		{Name: "touch", Arity: -2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdTouch, Access: commands.KeysNone,
			Group: "generic",
			Summary: "Returns the number of existing keys out of those specified after updating the time they " +
				"were last accessed.",
			Usage: "key [key ...]", Since: "3.2.1"},
		{Name: "expire", Arity: -3, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdExpire, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "generic", Summary: "Sets the expiration time of a key in seconds.",
			Usage: "key seconds [NX|XX|GT|LT]", Since: "1.0.0"},
		{Name: "pexpire", Arity: -3, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdPExpire, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "generic", Summary: "Sets the expiration time of a key in milliseconds.",
			Usage: "key milliseconds [NX|XX|GT|LT]", Since: "2.6.0"},
		{Name: "expireat", Arity: -3, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdExpireAt, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "generic", Summary: "Sets the expiration time of a key to a Unix timestamp.",
			Usage: "key unix-time-seconds [NX|XX|GT|LT]", Since: "1.2.0"},
		{Name: "pexpireat", Arity: -3, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdPExpireAt, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "generic", Summary: "Sets the expiration time of a key to a Unix milliseconds timestamp.",
			Usage: "key unix-time-milliseconds [NX|XX|GT|LT]", Since: "2.6.0"},
		{Name: "ttl", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdTTL,
			Group: "generic", Summary: "Returns the expiration time in seconds of a key.", Usage: "key", Since: "1.0.0"},
		{Name: "pttl", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdPTTL,
			Group: "generic", Summary: "Returns the expiration time in milliseconds of a key.", Usage: "key",
			Since: "2.6.0"},
		{Name: "expiretime", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdExpireTime,
			Group: "generic", Summary: "Returns the expiration time of a key as a Unix timestamp.", Usage: "key",
			Since: "7.0.0"},
		{Name: "pexpiretime", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdPExpireTime,
			Group: "generic", Summary: "Returns the expiration time of a key as a Unix milliseconds timestamp.",
			Usage: "key", Since: "7.0.0"},
		{Name: "persist", Arity: 2, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdPersist, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "generic", Summary: "Removes the expiration time of a key.", Usage: "key", Since: "2.2.0"},
		{Name: "rename", Arity: 3, Flags: commands.Write,
			FirstKey: 1, LastKey: 2, Step: 1, Handler: cmdRename, Access: commands.KeysRename,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete),
				commands.KeyAt(2, commands.KOW|commands.KUpdate),
			},
			Group: "generic", Summary: "Renames a key and overwrites the destination.", Usage: "key newkey",
			Since: "1.0.0"},
		{Name: "renamenx", Arity: 3, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 2, Step: 1, Handler: cmdRenameNX, Access: commands.KeysRename,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete),
				commands.KeyAt(2, commands.KOW|commands.KInsert),
			},
			Group: "generic", Summary: "Renames a key only when the target key name doesn't exist.",
			Usage: "key newkey", Since: "1.0.0"},
		{Name: "dump", Arity: 2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdDump,
			Group:   "generic",
			Summary: "Returns a serialized representation of the value stored at a key (Redis's RDB serialization).",
			Usage:   "key", Since: "2.6.0"},
		{Name: "restore", Arity: -4, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdRestore, Access: commands.KeysWrite, ACL: acl.Dangerous,
			Group:   "generic",
			Summary: "Creates a key from the serialized representation of a value (DUMP's, here or from redis-server).",
			Usage:   "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]", Since: "2.6.0"},
		{Name: "copy", Arity: -3, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 2, Step: 1, Handler: cmdCopy, Access: commands.KeysCopy,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRO|commands.KAccess),
				commands.KeyAt(2, commands.KOW|commands.KUpdate),
			},
			Group: "generic", Summary: "Copies the value of a key to a new key.",
			Usage: "source destination [DB destination-db] [REPLACE]", Since: "6.2.0"},
		{Name: "move", Arity: 3, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdMove, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KUpdate)},
			Group:    "generic", Summary: "Moves a key to another database.", Usage: "key db", Since: "1.0.0"},
		{Name: "object", Arity: -2, Subcommands: []*commands.Spec{
			{Name: "object|encoding", Arity: 3, Flags: commands.Readonly,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdObjectEncoding, Access: commands.KeysNone,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRO)}},
			{Name: "object|freq", Arity: 3, Flags: commands.Readonly,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdObjectFreq, Access: commands.KeysNone,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRO)}},
			{Name: "object|help", Arity: 2, Flags: commands.Loading | commands.Stale,
				Handler: cmdObjectHelp},
			{Name: "object|idletime", Arity: 3, Flags: commands.Readonly,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdObjectIdleTime, Access: commands.KeysNone,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRO)}},
			{Name: "object|refcount", Arity: 3, Flags: commands.Readonly,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdObjectRefCount, Access: commands.KeysNone,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRO)}},
		},
			Group: "generic", Summary: "Introspects a key's value: ENCODING, REFCOUNT, FREQ, IDLETIME.",
			Usage: "subcommand key", Since: "2.2.3"},
		{Name: "sort", Arity: -2, Flags: commands.Write | commands.DenyOOM | commands.MovableKeys,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSort, Access: commands.KeysCopy, KeysOf: sortKeys,
			KeysWritten: sortStoreKey, ACL: acl.Set | acl.SortedSet | acl.List | acl.Dangerous, ACLNoGroup: true,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRO|commands.KAccess),
				{Notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort",
					Flags: commands.KRO | commands.KAccess, Unknown: true},
				{Notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array",
					Flags: commands.KOW | commands.KUpdate, Unknown: true},
			},
			Group: "generic", Summary: "Sort the elements in a list, set or sorted set",
			Usage: "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA] " +
				"[STORE destination]",
			Since: "1.0.0"},
		{Name: "sort_ro", Arity: -2, Flags: commands.Readonly | commands.MovableKeys,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSortRO, KeysOf: sortROKeys,
			ACL: acl.Set | acl.SortedSet | acl.List | acl.Dangerous, ACLNoGroup: true,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRO|commands.KAccess),
				{Notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort",
					Flags: commands.KRO | commands.KAccess, Unknown: true},
			},
			Group: "generic", Summary: "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
			Usage: "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC] [ALPHA]",
			Since: "7.0.0"},
		{Name: "keys", Arity: 2, Flags: commands.Readonly,
			Handler: cmdKeys, ACL: acl.Dangerous,
			Group: "generic", Summary: "Returns all key names that match a pattern.", Usage: "pattern", Since: "1.0.0"},
		{Name: "scan", Arity: -2, Flags: commands.Readonly,
			Handler: cmdScan,
			Group:   "generic", Summary: "Iterates over the key names in the database.",
			Usage: "cursor [MATCH pattern] [COUNT count] [TYPE type]", Since: "2.8.0"},
		{Name: "randomkey", Arity: 1, Flags: commands.Readonly,
			Handler: cmdRandomKey,
			Group:   "generic", Summary: "Returns a random key name from the database.", Since: "1.0.0"},
	}
}
