package keyspace

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// Hash commands, as Redis 7.0's t_hash.c answers them: a missing key is an
// empty hash; a key of another type is -WRONGTYPE, checked after the
// arguments are parsed.

// Errors of HINCRBY and HINCRBYFLOAT about the field's current value.
var (
	errHashNotInteger = errors.New("hash value is not an integer")
	errHashNotFloat   = errors.New("hash value is not a float")
)

// cmdHSet implements HSET and HMSET key field value [field value ...].
func cmdHSet(c *commands.Ctx, args [][]byte) {
	if len(args)%2 == 1 {
		c.W.Error("ERR wrong number of arguments for '" + string(resp.Lower(args[0])) + "' command")
		return
	}
	added, err := c.Store.HSet(args[1], args[2:])
	if err == nil {
		c.Notify(commands.EventHash, "hset", args[1])
	}
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case resp.EqualFold(args[0], "hmset"):
		c.W.OK()
	default:
		c.W.Int(int64(added))
	}
}

func cmdHSetNX(c *commands.Ctx, args [][]byte) {
	set, err := c.Store.HSetNX(args[1], args[2], args[3])
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	if set {
		c.Notify(commands.EventHash, "hset", args[1])
	}
	c.W.Int(commands.BoolInt(set))
}

func cmdHGet(c *commands.Ctx, args [][]byte) {
	v, found, err := c.Store.HGet(args[1], args[2])
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case found:
		c.W.Bulk(v)
	default:
		c.W.Null()
	}
}

func cmdHMGet(c *commands.Ctx, args [][]byte) {
	values, err := c.Store.HMGet(args[1], args[2:])
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Array(len(values))
	for _, v := range values {
		if v == nil {
			c.W.Null()
		} else {
			c.W.Bulk(v)
		}
	}
}

func cmdHDel(c *commands.Ctx, args [][]byte) {
	n, err := c.Store.HDel(args[1], args[2:])
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	if n > 0 {
		notifyRemoved(c, commands.EventHash, "hdel", args[1])
	}
	c.W.Int(int64(n))
}

func cmdHLen(c *commands.Ctx, args [][]byte) {
	n, err := c.Store.HLen(args[1])
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Int(int64(n))
}

// hashField answers HEXISTS and HSTRLEN from the field's value.
func hashField(c *commands.Ctx, args [][]byte, reply func(v []byte, found bool) int64) {
	v, found, err := c.Store.HGet(args[1], args[2])
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Int(reply(v, found))
}

func cmdHExists(c *commands.Ctx, args [][]byte) {
	hashField(c, args, func(_ []byte, found bool) int64 { return commands.BoolInt(found) })
}

func cmdHStrLen(c *commands.Ctx, args [][]byte) {
	hashField(c, args, func(v []byte, _ bool) int64 { return int64(len(v)) })
}

// hashAll answers HGETALL (a map in RESP3), HKEYS and HVALS.
func hashAll(c *commands.Ctx, key []byte, keys, values bool) {
	flat, err := c.Store.HGetAll(key)
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	if keys && values {
		c.W.Map(len(flat) / 2)
	} else {
		c.W.Array(len(flat) / 2)
	}
	for i := 0; i < len(flat); i += 2 {
		if keys {
			c.W.Bulk(flat[i])
		}
		if values {
			c.W.Bulk(flat[i+1])
		}
	}
}

func cmdHGetAll(c *commands.Ctx, args [][]byte) { hashAll(c, args[1], true, true) }
func cmdHKeys(c *commands.Ctx, args [][]byte)   { hashAll(c, args[1], true, false) }
func cmdHVals(c *commands.Ctx, args [][]byte)   { hashAll(c, args[1], false, true) }

func cmdHIncrBy(c *commands.Ctx, args [][]byte) {
	incr, ok := resp.ParseInt(args[3])
	if !ok {
		c.W.Error(commands.ErrNotInteger)
		return
	}
	v, err := c.Store.HUpdate(args[1], args[2], func(old []byte, exists bool) ([]byte, error) {
		var cur int64
		if exists {
			var ok bool
			if cur, ok = resp.ParseInt(old); !ok {
				return nil, errHashNotInteger
			}
		}
		if incr < 0 && cur < 0 && incr < math.MinInt64-cur || incr > 0 && cur > 0 && incr > math.MaxInt64-cur {
			return nil, commands.ErrOverflowValue
		}
		return strconv.AppendInt(nil, cur+incr, 10), nil
	})
	if err != nil {
		writeHashErr(c, err)
		return
	}
	c.Notify(commands.EventHash, "hincrby", args[1])
	n, _ := resp.ParseInt(v)
	c.W.Int(n)
}

func cmdHIncrByFloat(c *commands.Ctx, args [][]byte) {
	incr, ok := parseLongDouble(args[3])
	if !ok {
		c.W.Error(commands.ErrNotFloat)
		return
	}
	if incr.IsInf() {
		c.W.Error("ERR value is NaN or Infinity")
		return
	}
	v, err := c.Store.HUpdate(args[1], args[2], func(old []byte, exists bool) ([]byte, error) {
		return addLongDouble(old, exists, incr, errHashNotFloat)
	})
	if err != nil {
		writeHashErr(c, err)
		return
	}
	c.Notify(commands.EventHash, "hincrbyfloat", args[1])
	c.W.Bulk(v)
}

// writeHashErr writes err, one of the hash's own errors or writeErr's.
func writeHashErr(c *commands.Ctx, err error) {
	switch {
	case errors.Is(err, errHashNotInteger), errors.Is(err, errHashNotFloat):
		c.W.Error("ERR " + err.Error())
	default:
		commands.WriteError(c.W, err)
	}
}

// cmdHScan implements HSCAN key cursor [MATCH pattern] [COUNT count]. As
// Redis, the options are read only when the key holds a hash.
func cmdHScan(c *commands.Ctx, args [][]byte) {
	cursor, filter, count, ok := collScanArgs(c, args, engine.TypeHash)
	if !ok {
		return
	}
	next, flat, err := c.Store.HScan(args[1], cursor, filter, count)
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	writeScanReply(c, next, flat)
}

// cmdHRandField implements HRANDFIELD key [count [WITHVALUES]] with Redis's
// rules: a positive count returns distinct fields, at most the hash's; a
// negative one returns that many, maybe repeated; WITHVALUES pairs each
// with its value (a two-element array each in RESP3).
func cmdHRandField(c *commands.Ctx, args [][]byte) {
	if len(args) == 2 {
		flat, err := c.Store.HGetAll(args[1])
		switch {
		case err != nil:
			commands.WriteError(c.W, err)
		case len(flat) == 0:
			c.W.Null()
		default:
			c.W.Bulk(flat[2*rand.IntN(len(flat)/2)])
		}
		return
	}
	n, ok := resp.ParseInt(args[2])
	if !ok {
		c.W.Error(commands.ErrNotInteger)
		return
	}
	if n == math.MinInt64 {
		c.W.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	withValues := len(args) == 4
	if len(args) > 4 || withValues && !resp.EqualFold(args[3], "withvalues") {
		c.W.Error(commands.ErrSyntax)
		return
	}
	if withValues && (n < -math.MaxInt64/2 || n > math.MaxInt64/2) {
		c.W.Error("ERR value is out of range")
		return
	}
	flat, err := c.Store.HGetAll(args[1])
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	size := int64(len(flat) / 2)
	if n == 0 || size == 0 {
		c.W.Array(0)
		return
	}
	// A negative count may repeat fields: that many picks, streamed.
	picks := -n
	if n > 0 {
		picks = min(n, size)
	}
	// All of them, as Redis, in the hash's order; else distinct ones.
	perm := make([]int, size)
	for i := range perm {
		perm[i] = i
	}
	if n < size {
		rand.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	}
	resp3 := c.W.Protocol() == 3
	if withValues && !resp3 {
		c.W.Array(int(2 * picks))
	} else {
		c.W.Array(int(picks))
	}
	for i := range picks {
		p := int64(perm[i%size])
		if n < 0 {
			p = rand.Int64N(size)
		}
		if withValues && resp3 {
			c.W.Array(2)
		}
		c.W.Bulk(flat[2*p])
		if withValues {
			c.W.Bulk(flat[2*p+1])
		}
	}
}

// hashCommands are the hash commands, for the family's table (Commands).
func hashCommands() []*commands.Spec {
	return []*commands.Spec{
		{Name: "hset", Arity: -4, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHSet, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "hash", Summary: "Creates or modifies the value of a field in a hash.",
			Usage: "key field value [field value ...]", Since: "2.0.0"},
		{Name: "hsetnx", Arity: 4, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHSetNX, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KInsert)},
			Group:    "hash", Summary: "Sets the value of a field in a hash only when the field doesn't exist.",
			Usage: "key field value", Since: "2.0.0"},
		{Name: "hmset", Arity: -4, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHSet, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "hash", Summary: "Sets the values of multiple fields (deprecated: HSET takes several).",
			Usage: "key field value [field value ...]", Since: "2.0.0"},
		{Name: "hget", Arity: 3, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHGet,
			Group: "hash", Summary: "Returns the value of a field in a hash.", Usage: "key field", Since: "2.0.0"},
		{Name: "hmget", Arity: -3, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHMGet,
			Group: "hash", Summary: "Returns the values of all fields in a hash.", Usage: "key field [field ...]",
			Since: "2.0.0"},
		{Name: "hgetall", Arity: 2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHGetAll,
			Group: "hash", Summary: "Returns all fields and values in a hash.", Usage: "key", Since: "2.0.0"},
		{Name: "hkeys", Arity: 2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHKeys,
			Group: "hash", Summary: "Returns all fields in a hash.", Usage: "key", Since: "2.0.0"},
		{Name: "hvals", Arity: 2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHVals,
			Group: "hash", Summary: "Returns all values in a hash.", Usage: "key", Since: "2.0.0"},
		{Name: "hdel", Arity: -3, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHDel, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KDelete)},
			Group:    "hash",
			Summary:  "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.",
			Usage:    "key field [field ...]", Since: "2.0.0"},
		{Name: "hexists", Arity: 3, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHExists, Access: commands.KeysNone,
			Group: "hash", Summary: "Determines whether a field exists in a hash.", Usage: "key field", Since: "2.0.0"},
		{Name: "hlen", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHLen, Access: commands.KeysNone,
			Group: "hash", Summary: "Returns the number of fields in a hash.", Usage: "key", Since: "2.0.0"},
		{Name: "hstrlen", Arity: 3, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHStrLen, Access: commands.KeysNone,
			Group: "hash", Summary: "Returns the length of the value of a field.", Usage: "key field", Since: "3.2.0"},
		{Name: "hincrby", Arity: 4, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHIncrBy,
			Group: "hash",
			Summary: "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if " +
				"the field doesn't exist.",
			Usage: "key field increment", Since: "2.0.0"},
		{Name: "hincrbyfloat", Arity: 4, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHIncrByFloat,
			Group: "hash",
			Summary: "Increments the floating point value of a field by a number. Uses 0 as initial value if the " +
				"field doesn't exist.",
			Usage: "key field increment", Since: "2.6.0"},
		{Name: "hscan", Arity: -3, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHScan,
			Group: "hash", Summary: "Iterates over fields and values of a hash.",
			Usage: "key cursor [MATCH pattern] [COUNT count]", Since: "2.8.0"},
		{Name: "hrandfield", Arity: -2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdHRandField,
			Group: "hash", Summary: "Returns one or more random fields from a hash.", Usage: "key [count [WITHVALUES]]",
			Since: "6.2.0"},
	}
}
