package keyspace

import (
	"bytes"
	"strconv"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// The set commands (Redis's t_set.c): argument checks, their order and
// the reply shapes are Redis 7's; the engine does the rest atomically.

// Errors of the set commands' counts, as Redis words them.
const (
	errPositiveCount = "ERR value is out of range, must be positive"
	errNumKeys       = "ERR numkeys should be greater than 0"
)

// maxRandomDraws bounds SRANDMEMBER's negative count, which Redis streams
// to the client however large it is, while a reply here is built whole
// before it is sent.
const maxRandomDraws = 1 << 24

func cmdSAdd(c *commands.Ctx, args [][]byte) {
	n, err := c.Store.SAdd(args[1], args[2:])
	if err == nil && n > 0 {
		c.Notify(commands.EventSet, "sadd", args[1])
	}
	writeIntOrErr(c, int64(n), err)
}

func cmdSRem(c *commands.Ctx, args [][]byte) {
	n, err := c.Store.SRem(args[1], args[2:])
	if err == nil && n > 0 {
		notifyRemoved(c, commands.EventSet, "srem", args[1])
	}
	writeIntOrErr(c, int64(n), err)
}

func cmdSCard(c *commands.Ctx, args [][]byte) {
	n, err := c.Store.SCard(args[1])
	writeIntOrErr(c, int64(n), err)
}

// writeIntOrErr replies err if there is one, else n.
func writeIntOrErr(c *commands.Ctx, n int64, err error) {
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Int(n)
}

func cmdSIsMember(c *commands.Ctx, args [][]byte) {
	has, err := c.Store.SIsMember(args[1], args[2:])
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Int(commands.BoolInt(has[0]))
}

func cmdSMIsMember(c *commands.Ctx, args [][]byte) {
	has, err := c.Store.SIsMember(args[1], args[2:])
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Array(len(has))
	for _, h := range has {
		c.W.Int(commands.BoolInt(h))
	}
}

// writeSet replies members as a set (an array in RESP2), or err.
func writeSet(c *commands.Ctx, members [][]byte, err error) {
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Set(len(members))
	for _, m := range members {
		c.W.Bulk(m)
	}
}

func cmdSMembers(c *commands.Ctx, args [][]byte) {
	members, err := c.Store.SMembers(args[1])
	writeSet(c, members, err)
}

// cmdSPop implements SPOP key [count]: with a count, a set of the members
// popped (empty if key is missing); without, one member or nil.
func cmdSPop(c *commands.Ctx, args [][]byte) {
	switch len(args) {
	case 2:
		popped, err := c.Store.SPop(args[1], 1)
		notifySPop(c, args[1], popped, err)
		writeOneOrNil(c, popped, err)
	case 3:
		count, ok := resp.ParseInt(args[2])
		if !ok || count < 0 {
			c.W.Error(errPositiveCount)
			return
		}
		popped, err := c.Store.SPop(args[1], count)
		notifySPop(c, args[1], popped, err)
		writeSet(c, popped, err)
	default:
		c.W.Error(commands.ErrSyntax)
	}
}

func notifySPop(c *commands.Ctx, key []byte, popped [][]byte, err error) {
	if err == nil && len(popped) > 0 {
		notifyRemoved(c, commands.EventSet, "spop", key)
	}
}

// writeOneOrNil replies the one member of members, nil if there is none,
// or err.
func writeOneOrNil(c *commands.Ctx, members [][]byte, err error) {
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case len(members) == 0:
		c.W.Null()
	default:
		c.W.Bulk(members[0])
	}
}

// cmdSRandMember implements SRANDMEMBER key [count]: with a count, an
// array of distinct members (count >= 0) or of -count independent draws;
// without, one member or nil.
func cmdSRandMember(c *commands.Ctx, args [][]byte) {
	switch len(args) {
	case 2:
		members, _, err := c.Store.SRandMember(args[1], 1)
		writeOneOrNil(c, members, err)
	case 3:
		count, ok := resp.ParseInt(args[2])
		if !ok {
			c.W.Error(commands.ErrNotInteger)
			return
		}
		if count < -maxRandomDraws {
			c.W.Error("ERR value is out of range, value must between " + strconv.Itoa(-maxRandomDraws) + " and 9223372036854775807")
			return
		}
		members, _, err := c.Store.SRandMember(args[1], count)
		if err != nil {
			commands.WriteError(c.W, err)
			return
		}
		c.W.Array(len(members))
		for _, m := range members {
			c.W.Bulk(m)
		}
	default:
		c.W.Error(commands.ErrSyntax)
	}
}

func cmdSMove(c *commands.Ctx, args [][]byte) {
	moved, added, err := c.Store.SMove(args[1], args[2], args[3])
	if err == nil && moved && !bytes.Equal(args[1], args[2]) {
		notifyRemoved(c, commands.EventSet, "srem", args[1])
		// Redis says "sadd" only if dst did not hold the member.
		if added {
			c.Notify(commands.EventSet, "sadd", args[2])
		}
	}
	writeIntOrErr(c, commands.BoolInt(moved), err)
}

func cmdSInter(c *commands.Ctx, args [][]byte) { setCompute(c, engine.SetInter, args[1:]) }
func cmdSUnion(c *commands.Ctx, args [][]byte) { setCompute(c, engine.SetUnion, args[1:]) }
func cmdSDiff(c *commands.Ctx, args [][]byte)  { setCompute(c, engine.SetDiff, args[1:]) }

func setCompute(c *commands.Ctx, op engine.SetOp, keys [][]byte) {
	members, err := c.Store.SetCompute(op, keys)
	writeSet(c, members, err)
}

// setStoreEvents are the events of SINTERSTORE, SUNIONSTORE, SDIFFSTORE.
var setStoreEvents = map[engine.SetOp]string{
	engine.SetInter: "sinterstore", engine.SetUnion: "sunionstore", engine.SetDiff: "sdiffstore",
}

func cmdSInterStore(c *commands.Ctx, args [][]byte) { setStore(c, engine.SetInter, args) }
func cmdSUnionStore(c *commands.Ctx, args [][]byte) { setStore(c, engine.SetUnion, args) }
func cmdSDiffStore(c *commands.Ctx, args [][]byte)  { setStore(c, engine.SetDiff, args) }

func setStore(c *commands.Ctx, op engine.SetOp, args [][]byte) {
	n, changed, err := c.Store.SetStore(op, args[1], args[2:])
	if err == nil {
		notifyStored(c, commands.EventSet, setStoreEvents[op], args[1], n > 0, changed)
	}
	writeIntOrErr(c, int64(n), err)
}

// cmdSInterCard implements SINTERCARD numkeys key [key ...] [LIMIT limit].
func cmdSInterCard(c *commands.Ctx, args [][]byte) {
	numKeys, ok := resp.ParseInt(args[1])
	if !ok || numKeys < 1 {
		c.W.Error(errNumKeys)
		return
	}
	if numKeys > int64(len(args)-2) {
		c.W.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	var limit int64
	for i := 2 + int(numKeys); i < len(args); i++ {
		if !resp.EqualFold(args[i], "limit") || i+1 >= len(args) {
			c.W.Error(commands.ErrSyntax)
			return
		}
		i++
		if limit, ok = resp.ParseInt(args[i]); !ok || limit < 0 {
			c.W.Error("ERR LIMIT can't be negative")
			return
		}
	}
	n, err := c.Store.SInterCard(args[2:2+numKeys], int(limit))
	writeIntOrErr(c, int64(n), err)
}

// cmdSScan implements SSCAN key cursor [MATCH pattern] [COUNT count]. As
// in Redis, a missing key answers an empty scan and another type
// -WRONGTYPE before the options are looked at.
func cmdSScan(c *commands.Ctx, args [][]byte) {
	cursor, filter, count, ok := collScanArgs(c, args, engine.TypeSet)
	if !ok {
		return
	}
	next, members, err := c.Store.SScan(args[1], cursor, filter, count)
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	writeScanReply(c, next, members)
}

// collScanArgs reads HSCAN's and SSCAN's arguments (key cursor [MATCH
// pattern] [COUNT count]) in Redis's order: the cursor, then the key,
// which must hold t (a missing key is answered an empty scan), then the
// options. ok is false if it replied.
func collScanArgs(c *commands.Ctx, args [][]byte, t engine.Type) (cursor uint64, filter engine.ScanFilter, count int, ok bool) {
	if cursor, ok = parseCursor(args[2]); !ok {
		c.W.Error("ERR invalid cursor")
		return 0, filter, 0, false
	}
	switch held, found := c.Store.TypeOf(args[1]); {
	case !found:
		writeScanReply(c, 0, nil)
		return 0, filter, 0, false
	case held != t:
		c.W.Error(commands.ErrWrongType)
		return 0, filter, 0, false
	}
	filter, count, ok = scanOptions(c, args[3:], false)
	return cursor, filter, count, ok
}

// writeScanReply replies a step of SSCAN and the like: the next cursor and
// the elements.
func writeScanReply(c *commands.Ctx, next uint64, elems [][]byte) {
	c.W.Array(2)
	c.W.BulkString(strconv.FormatUint(next, 10))
	c.W.Array(len(elems))
	for _, e := range elems {
		c.W.Bulk(e)
	}
}

// setCommands are the set commands, for the family's table (Commands).
func setCommands() []*commands.Spec {
	return []*commands.Spec{
		{Name: "sadd", Arity: -3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSAdd,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KInsert)},
			Group:    "set", Summary: "Add one or more members to a set", Usage: "key member [member ...]", Since: "1.0.0"},
		{Name: "srem", Arity: -3, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSRem,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KDelete)},
			Group:    "set", Summary: "Remove one or more members from a set", Usage: "key member [member ...]",
			Since: "1.0.0"},
		{Name: "smembers", Arity: 2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSMembers,
			Group: "set", Summary: "Get all the members in a set", Usage: "key", Since: "1.0.0"},
		{Name: "sismember", Arity: 3, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSIsMember, Access: commands.KeysNone,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRO)},
			Group:    "set", Summary: "Determine if a given value is a member of a set", Usage: "key member",
			Since: "1.0.0"},
		{Name: "smismember", Arity: -3, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSMIsMember,
			Group: "set", Summary: "Returns the membership associated with the given elements for a set",
			Usage: "key member [member ...]", Since: "6.2.0"},
		{Name: "scard", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSCard, Access: commands.KeysNone,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRO)},
			Group:    "set", Summary: "Get the number of members in a set", Usage: "key", Since: "1.0.0"},
		{Name: "spop", Arity: -2, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSPop,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete)},
			Group:    "set", Summary: "Remove and return one or multiple random members from a set", Usage: "key [count]",
			Since: "1.0.0"},
		{Name: "srandmember", Arity: -2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSRandMember,
			Group: "set", Summary: "Get one or multiple random members from a set", Usage: "key [count]",
			Since: "1.0.0"},
		{Name: "smove", Arity: 4, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 2, Step: 1, Handler: cmdSMove, Access: commands.KeysRename,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete),
				commands.KeyAt(2, commands.KRW|commands.KInsert),
			},
			Group: "set", Summary: "Move a member from one set to another", Usage: "source destination member",
			Since: "1.0.0"},
		{Name: "sinter", Arity: -2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdSInter,
			Group: "set", Summary: "Intersect multiple sets", Usage: "key [key ...]", Since: "1.0.0"},
		{Name: "sintercard", Arity: -3, Flags: commands.Readonly | commands.MovableKeys,
			Handler: cmdSInterCard, KeysOf: numKeysFirst,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRO | commands.KAccess, Index: 1, KeyNum: true, NumKeys: 0, FirstKey: 1},
			},
			Group: "set", Summary: "Intersect multiple sets and return the cardinality of the result",
			Usage: "numkeys key [key ...] [LIMIT limit]", Since: "7.0.0"},
		{Name: "sunion", Arity: -2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdSUnion,
			Group: "set", Summary: "Add multiple sets", Usage: "key [key ...]", Since: "1.0.0"},
		{Name: "sdiff", Arity: -2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdSDiff,
			Group: "set", Summary: "Subtract multiple sets", Usage: "key [key ...]", Since: "1.0.0"},
		{Name: "sinterstore", Arity: -3, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdSInterStore, Access: commands.KeysDestFirst,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRW|commands.KUpdate),
				{Flags: commands.KRO | commands.KAccess, Index: 2, LastKey: -1},
			},
			Group: "set", Summary: "Intersect multiple sets and store the resulting set in a key",
			Usage: "destination key [key ...]", Since: "1.0.0"},
		{Name: "sunionstore", Arity: -3, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdSUnionStore, Access: commands.KeysDestFirst,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KOW|commands.KUpdate),
				{Flags: commands.KRO | commands.KAccess, Index: 2, LastKey: -1},
			},
			Group: "set", Summary: "Add multiple sets and store the resulting set in a key",
			Usage: "destination key [key ...]", Since: "1.0.0"},
		{Name: "sdiffstore", Arity: -3, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdSDiffStore, Access: commands.KeysDestFirst,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KOW|commands.KUpdate),
				{Flags: commands.KRO | commands.KAccess, Index: 2, LastKey: -1},
			},
			Group: "set", Summary: "Subtract multiple sets and store the resulting set in a key",
			Usage: "destination key [key ...]", Since: "1.0.0"},
		{Name: "sscan", Arity: -3, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSScan,
			Group: "set", Summary: "Incrementally iterate Set elements",
			Usage: "key cursor [MATCH pattern] [COUNT count]", Since: "2.8.0"},
	}
}
