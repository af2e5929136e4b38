package keyspace

import (
	"errors"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// The list commands (Redis's t_list.c): argument checks, their order and
// the reply shapes are Redis 7.0's; the engine does the rest atomically.
// The blocking ones are in block.go.

func cmdLPush(c *commands.Ctx, args [][]byte)  { listPush(c, args, true, false) }
func cmdRPush(c *commands.Ctx, args [][]byte)  { listPush(c, args, false, false) }
func cmdLPushX(c *commands.Ctx, args [][]byte) { listPush(c, args, true, true) }
func cmdRPushX(c *commands.Ctx, args [][]byte) { listPush(c, args, false, true) }

func listPush(c *commands.Ctx, args [][]byte, left, onlyExisting bool) {
	n, err := c.Store.LPush(args[1], args[2:], left, onlyExisting)
	if err == nil && n > 0 {
		c.Notify(commands.EventList, listEvent(left, "lpush", "rpush"), args[1])
	}
	writeIntOrErr(c, int64(n), err)
}

func cmdLPop(c *commands.Ctx, args [][]byte) { listPop(c, args, true) }
func cmdRPop(c *commands.Ctx, args [][]byte) { listPop(c, args, false) }

// listPop implements LPOP and RPOP key [count]: with a count, an array
// of the elements popped (a null array if key is missing); without, one
// element or nil.
func listPop(c *commands.Ctx, args [][]byte, left bool) {
	if len(args) > 3 {
		c.W.Error("ERR wrong number of arguments for '" + string(resp.Lower(args[0])) + "' command")
		return
	}
	count := int64(1)
	if len(args) == 3 {
		var ok bool
		if count, ok = resp.ParseInt(args[2]); !ok || count < 0 {
			c.W.Error(errPositiveCount)
			return
		}
	}
	single := len(args) == 2
	var elem []byte
	var popped [][]byte
	var found bool
	var err error
	if single { // one element, with no slice around it to allocate
		elem, found, err = c.Store.LPopOne(args[1], left)
	} else {
		popped, found, err = c.Store.LPop(args[1], int(min(count, maxListCount)), left)
	}
	if err == nil && found && (single || len(popped) > 0) {
		notifyPopped(c, args[1], left)
	}
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case single && !found:
		c.W.Null()
	case single:
		c.W.Bulk(elem)
	case !found:
		c.W.NullArray()
	default:
		writeBulks(c, popped)
	}
}

// maxListCount bounds the counts the engine is given: no list holds more.
const maxListCount = 1 << 40

// writeBulks replies elems as an array.
func writeBulks(c *commands.Ctx, elems [][]byte) {
	c.W.Array(len(elems))
	for _, e := range elems {
		c.W.Bulk(e)
	}
}

func cmdLLen(c *commands.Ctx, args [][]byte) {
	n, err := c.Store.LLen(args[1])
	writeIntOrErr(c, int64(n), err)
}

// parseIndexes parses two index arguments (LRANGE, LTRIM), or answers
// Redis's integer error.
func parseIndexes(c *commands.Ctx, a, b []byte) (start, stop int64, ok bool) {
	start, ok1 := resp.ParseInt(a)
	stop, ok2 := resp.ParseInt(b)
	if !ok1 || !ok2 {
		c.W.Error(commands.ErrNotInteger)
		return 0, 0, false
	}
	return start, stop, true
}

func cmdLRange(c *commands.Ctx, args [][]byte) {
	start, stop, ok := parseIndexes(c, args[2], args[3])
	if !ok {
		return
	}
	// The elements go straight from the list into the reply: copying them
	// out first was a third of LRANGE's time.
	if err := c.Store.LRangeTo(args[1], start, stop, c.W); err != nil {
		commands.WriteError(c.W, err)
	}
}

// cmdLIndex implements LINDEX key index: the key is looked at before the
// index is parsed, as in Redis.
func cmdLIndex(c *commands.Ctx, args [][]byte) {
	if !listKeyOK(c, args[1], func(w *resp.Writer) { c.Store.CountMiss(args[1]); w.Null() }) {
		return
	}
	i, ok := resp.ParseInt(args[2])
	if !ok {
		c.W.Error(commands.ErrNotInteger)
		return
	}
	elem, found, err := c.Store.LIndex(args[1], i)
	writeBulkOrNil(c, elem, found, err)
}

// writeBulkOrNil replies elem if found, else nil, or err.
func writeBulkOrNil(c *commands.Ctx, elem []byte, found bool, err error) {
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case !found:
		c.W.Null()
	default:
		c.W.Bulk(elem)
	}
}

// listKeyOK looks at key for a command that does so before parsing its
// arguments: missing, it answers missing's reply; of another type,
// -WRONGTYPE. It reports whether key holds a list.
func listKeyOK(c *commands.Ctx, key []byte, missing func(*resp.Writer)) bool {
	switch t, found := c.Store.TypeOf(key); {
	case !found:
		missing(c.W)
		return false
	case t != engine.TypeList:
		c.W.Error(commands.ErrWrongType)
		return false
	}
	return true
}

// cmdLSet implements LSET key index element.
func cmdLSet(c *commands.Ctx, args [][]byte) {
	if !listKeyOK(c, args[1], func(w *resp.Writer) { w.Error("ERR no such key") }) {
		return
	}
	i, ok := resp.ParseInt(args[2])
	if !ok {
		c.W.Error(commands.ErrNotInteger)
		return
	}
	switch err := c.Store.LSet(args[1], i, args[3]); {
	case errors.Is(err, engine.ErrNoSuchKey):
		c.W.Error("ERR no such key")
	case errors.Is(err, engine.ErrIndexOutOfRange):
		c.W.Error("ERR index out of range")
	case err != nil:
		commands.WriteError(c.W, err)
	default:
		c.Notify(commands.EventList, "lset", args[1])
		c.W.OK()
	}
}

// cmdLInsert implements LINSERT key BEFORE|AFTER pivot element.
func cmdLInsert(c *commands.Ctx, args [][]byte) {
	var before bool
	switch {
	case resp.EqualFold(args[2], "before"):
		before = true
	case resp.EqualFold(args[2], "after"):
	default:
		c.W.Error(commands.ErrSyntax)
		return
	}
	n, err := c.Store.LInsert(args[1], before, args[3], args[4])
	if err == nil && n > 0 {
		c.Notify(commands.EventList, "linsert", args[1])
	}
	writeIntOrErr(c, int64(n), err)
}

func cmdLRem(c *commands.Ctx, args [][]byte) {
	count, ok := resp.ParseInt(args[2])
	if !ok {
		c.W.Error(commands.ErrNotInteger)
		return
	}
	n, err := c.Store.LRem(args[1], count, args[3])
	if err == nil && n > 0 {
		notifyRemoved(c, commands.EventList, "lrem", args[1])
	}
	writeIntOrErr(c, int64(n), err)
}

func cmdLTrim(c *commands.Ctx, args [][]byte) {
	start, stop, ok := parseIndexes(c, args[2], args[3])
	if !ok {
		return
	}
	// Redis trims (and says so) only a key that exists.
	existed, err := c.Store.LTrim(args[1], start, stop)
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	if existed {
		notifyRemoved(c, commands.EventList, "ltrim", args[1])
	}
	c.W.OK()
}

// cmdLPos implements LPOS key element [RANK rank] [COUNT num-matches]
// [MAXLEN len], its options checked before the key, as in Redis.
func cmdLPos(c *commands.Ctx, args [][]byte) {
	q := engine.LPosQuery{Rank: 1, Count: -1}
	for i := 3; i < len(args); i++ {
		more := i+1 < len(args)
		switch {
		case resp.EqualFold(args[i], "rank") && more:
			i++
			r, ok := resp.ParseInt(args[i])
			if !ok {
				c.W.Error(commands.ErrNotInteger)
				return
			}
			if r == 0 {
				c.W.Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return
			}
			q.Rank = r
		case resp.EqualFold(args[i], "count") && more:
			i++
			var ok bool
			if q.Count, ok = nonNegative(c, args[i], "ERR COUNT can't be negative"); !ok {
				return
			}
		case resp.EqualFold(args[i], "maxlen") && more:
			i++
			var ok bool
			if q.MaxLen, ok = nonNegative(c, args[i], "ERR MAXLEN can't be negative"); !ok {
				return
			}
		default:
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	found, err := c.Store.LPos(args[1], args[2], q)
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case q.Count >= 0:
		c.W.Array(len(found))
		for _, i := range found {
			c.W.Int(i)
		}
	case len(found) == 0:
		c.W.Null()
	default:
		c.W.Int(found[0])
	}
}

// nonNegative parses an integer >= 0, or answers msg, as Redis's
// getPositiveLongFromObjectOrReply does for a bad integer too.
func nonNegative(c *commands.Ctx, arg []byte, msg string) (int64, bool) {
	n, ok := resp.ParseInt(arg)
	if !ok || n < 0 {
		c.W.Error(msg)
		return 0, false
	}
	return n, true
}

// listEnds parses LMOVE's and BLMOVE's LEFT|RIGHT LEFT|RIGHT, or answers
// a syntax error.
func listEnds(c *commands.Ctx, fromArg, toArg []byte) (from, to, ok bool) {
	if from, ok = listEnd(c, fromArg); !ok {
		return false, false, false
	}
	to, ok = listEnd(c, toArg)
	return from, to, ok
}

// listEnd parses LEFT or RIGHT, or answers a syntax error; left says
// which.
func listEnd(c *commands.Ctx, arg []byte) (left, ok bool) {
	switch {
	case resp.EqualFold(arg, "left"):
		return true, true
	case resp.EqualFold(arg, "right"):
		return false, true
	}
	c.W.Error(commands.ErrSyntax)
	return false, false
}

// cmdLMove implements LMOVE source destination LEFT|RIGHT LEFT|RIGHT.
func cmdLMove(c *commands.Ctx, args [][]byte) {
	from, to, ok := listEnds(c, args[3], args[4])
	if !ok {
		return
	}
	lmove(c, args[1], args[2], from, to)
}

// cmdRPopLPush implements RPOPLPUSH source destination: LMOVE source
// destination RIGHT LEFT.
func cmdRPopLPush(c *commands.Ctx, args [][]byte) { lmove(c, args[1], args[2], false, true) }

func lmove(c *commands.Ctx, src, dst []byte, from, to bool) {
	elem, found, err := c.Store.LMove(src, dst, from, to)
	if err == nil && found {
		notifyMoved(c, src, dst, from, to)
	}
	writeBulkOrNil(c, elem, found, err)
}

// notifyMoved sends LMOVE's events, in Redis's order: the push on dst,
// then the pop from src, then "del" if src is gone.
func notifyMoved(c *commands.Ctx, src, dst []byte, from, to bool) {
	c.Notify(commands.EventList, listEvent(to, "lpush", "rpush"), dst)
	notifyPopped(c, src, from)
}

// mpopArgs are LMPOP's and BLMPOP's arguments past the command (and
// BLMPOP's timeout): numkeys key [key ...] LEFT|RIGHT [COUNT count].
type mpopArgs struct {
	keys  [][]byte
	left  bool
	count int64
}

// parseMPop parses args, numkeys first, in Redis's order, or answers the
// error.
func parseMPop(c *commands.Ctx, args [][]byte) (m mpopArgs, ok bool) {
	numKeys, ok := resp.ParseInt(args[0])
	if !ok || numKeys < 1 {
		c.W.Error(errNumKeys)
		return m, false
	}
	if numKeys >= int64(len(args)-1) {
		c.W.Error(commands.ErrSyntax)
		return m, false
	}
	m.keys = args[1 : 1+numKeys]
	if m.left, ok = listEnd(c, args[1+numKeys]); !ok {
		return m, false
	}
	m.count = -1
	for i := 2 + int(numKeys); i < len(args); i++ {
		if m.count != -1 || !resp.EqualFold(args[i], "count") || i+1 >= len(args) {
			c.W.Error(commands.ErrSyntax)
			return m, false
		}
		i++
		if m.count, ok = resp.ParseInt(args[i]); !ok || m.count < 1 {
			c.W.Error("ERR count should be greater than 0")
			return m, false
		}
	}
	if m.count == -1 {
		m.count = 1
	}
	return m, true
}

// cmdLMPop implements LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT
// count]: the key popped from and its elements, or a null array.
func cmdLMPop(c *commands.Ctx, args [][]byte) {
	m, ok := parseMPop(c, args[1:])
	if !ok {
		return
	}
	key, popped, err := c.Store.LMPop(m.keys, int(min(m.count, maxListCount)), m.left)
	if err == nil && key != nil {
		notifyPopped(c, key, m.left)
	}
	writeMPop(c, key, popped, err)
}

// writeMPop replies an LMPOP: the key and its elements, a null array if
// key is nil, or err.
func writeMPop(c *commands.Ctx, key []byte, popped [][]byte, err error) {
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case key == nil:
		c.W.NullArray()
	default:
		c.W.Array(2)
		c.W.Bulk(key)
		writeBulks(c, popped)
	}
}

// listCommands are the list commands, the blocking ones among them, for
// the family's table (Commands).
func listCommands() []*commands.Spec {
	return []*commands.Spec{
		{Name: "lpush", Arity: -3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdLPush, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KInsert)},
			Group:    "list", Summary: "Prepend one or multiple elements to a list", Usage: "key element [element ...]",
			Since: "1.0.0"},
		{Name: "rpush", Arity: -3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdRPush, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KInsert)},
			Group:    "list", Summary: "Append one or multiple elements to a list", Usage: "key element [element ...]",
			Since: "1.0.0"},
		{Name: "lpushx", Arity: -3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdLPushX, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KInsert)},
			Group:    "list", Summary: "Prepend an element to a list, only if the list exists",
			Usage: "key element [element ...]", Since: "2.2.0"},
		{Name: "rpushx", Arity: -3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdRPushX, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KInsert)},
			Group:    "list", Summary: "Append an element to a list, only if the list exists",
			Usage: "key element [element ...]", Since: "2.2.0"},
		{Name: "lpop", Arity: -2, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdLPop,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete)},
			Group:    "list", Summary: "Remove and get the first elements in a list", Usage: "key [count]", Since: "1.0.0"},
		{Name: "rpop", Arity: -2, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdRPop,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete)},
			Group:    "list", Summary: "Remove and get the last elements in a list", Usage: "key [count]", Since: "1.0.0"},
		{Name: "llen", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdLLen, Access: commands.KeysNone,
			Group: "list", Summary: "Get the length of a list", Usage: "key", Since: "1.0.0"},
		{Name: "lrange", Arity: 4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdLRange,
			Group: "list", Summary: "Get a range of elements from a list", Usage: "key start stop", Since: "1.0.0"},
		{Name: "lindex", Arity: 3, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdLIndex,
			Group: "list", Summary: "Get an element from a list by its index", Usage: "key index", Since: "1.0.0"},
		{Name: "lset", Arity: 4, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdLSet, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "list", Summary: "Set the value of an element in a list by its index", Usage: "key index element",
			Since: "1.0.0"},
		{Name: "linsert", Arity: 5, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdLInsert, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KInsert)},
			Group:    "list", Summary: "Insert an element before or after another element in a list",
			Usage: "key BEFORE|AFTER pivot element", Since: "2.2.0"},
		{Name: "lrem", Arity: 4, Flags: commands.Write,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdLRem, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KDelete)},
			Group:    "list", Summary: "Remove elements from a list", Usage: "key count element", Since: "1.0.0"},
		{Name: "ltrim", Arity: 4, Flags: commands.Write,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdLTrim, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KDelete)},
			Group:    "list", Summary: "Trim a list to the specified range", Usage: "key start stop", Since: "1.0.0"},
		{Name: "lpos", Arity: -3, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdLPos,
			Group: "list", Summary: "Return the index of matching elements on a list",
			Usage: "key element [RANK rank] [COUNT num-matches] [MAXLEN len]", Since: "6.0.6"},
		{Name: "lmove", Arity: 5, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 2, Step: 1, Handler: cmdLMove, Access: commands.KeysRename,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete),
				commands.KeyAt(2, commands.KRW|commands.KInsert),
			},
			Group: "list", Summary: "Pop an element from a list, push it to another list and return it",
			Usage: "source destination LEFT|RIGHT LEFT|RIGHT", Since: "6.2.0"},
		{Name: "rpoplpush", Arity: 3, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 2, Step: 1, Handler: cmdRPopLPush, Access: commands.KeysRename,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete),
				commands.KeyAt(2, commands.KRW|commands.KInsert),
			},
			Group: "list", Summary: "Remove the last element in a list, prepend it to another list and return it",
			Usage: "source destination", Since: "1.2.0"},
		{Name: "lmpop", Arity: -4, Flags: commands.Write | commands.MovableKeys,
			Handler: cmdLMPop, KeysOf: numKeysFirst,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRW | commands.KAccess | commands.KDelete, Index: 1, KeyNum: true, NumKeys: 0,
					FirstKey: 1},
			},
			Group: "list", Summary: "Pop elements from a list", Usage: "numkeys key [key ...] LEFT|RIGHT [COUNT count]",
			Since: "7.0.0"},
		{Name: "blpop", Arity: -3, Flags: commands.Write | commands.NoScript | commands.Blocking,
			FirstKey: 1, LastKey: -2, Step: 1, Handler: cmdBLPop,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRW | commands.KAccess | commands.KDelete, Index: 1, LastKey: -2},
			},
			Group: "list", Summary: "Remove and get the first element in a list, or block until one is available",
			Usage: "key [key ...] timeout", Since: "2.0.0"},
		{Name: "brpop", Arity: -3, Flags: commands.Write | commands.NoScript | commands.Blocking,
			FirstKey: 1, LastKey: -2, Step: 1, Handler: cmdBRPop,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRW | commands.KAccess | commands.KDelete, Index: 1, LastKey: -2},
			},
			Group: "list", Summary: "Remove and get the last element in a list, or block until one is available",
			Usage: "key [key ...] timeout", Since: "2.0.0"},
		{Name: "blmove", Arity: 6, Flags: commands.Write | commands.DenyOOM | commands.NoScript | commands.Blocking,
			FirstKey: 1, LastKey: 2, Step: 1, Handler: cmdBLMove, Access: commands.KeysRename,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete),
				commands.KeyAt(2, commands.KRW|commands.KInsert),
			},
			Group: "list",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is " +
				"available",
			Usage: "source destination LEFT|RIGHT LEFT|RIGHT timeout", Since: "6.2.0"},
		{Name: "brpoplpush", Arity: 4, Flags: commands.Write | commands.DenyOOM | commands.NoScript | commands.Blocking,
			FirstKey: 1, LastKey: 2, Step: 1, Handler: cmdBRPopLPush, Access: commands.KeysRename,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete),
				commands.KeyAt(2, commands.KRW|commands.KInsert),
			},
			Group: "list",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is " +
				"available",
			Usage: "source destination timeout", Since: "2.2.0"},
		{Name: "blmpop", Arity: -5, Flags: commands.Write | commands.Blocking | commands.MovableKeys,
			Handler: cmdBLMPop, KeysOf: numKeysSecond,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRW | commands.KAccess | commands.KDelete, Index: 2, KeyNum: true, NumKeys: 0,
					FirstKey: 1},
			},
			Group: "list", Summary: "Pop elements from a list, or block until one is available",
			Usage: "timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]", Since: "7.0.0"},
	}
}
