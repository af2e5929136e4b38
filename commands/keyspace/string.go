package keyspace

import (
	"errors"
	"math"
	"math/big"
	"strconv"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// cmdGet writes the value from the store's arena into the reply without a
// copy of its own.
func cmdGet(c *commands.Ctx, args [][]byte) {
	if hit, ok := readOrMiss(c, args[1], func() bool { return view(c, args[1], c.W.Bulk) }); !hit && ok {
		c.W.Null()
	}
}

// Options of SET and GETEX.
const (
	optNX = 1 << iota
	optXX
	optGet
	optKeepTTL
	optPersist
	optEX
	optPX
	optEXAT
	optPXAT

	optExpiry = optEX | optPX | optEXAT | optPXAT
)

// stringOptions parses the options of SET (set) or GETEX (!set) as Redis's
// parseExtendedStringArgumentsOrReply does: an option may be repeated (the
// last expiry value counts) but not combined with one it conflicts with,
// and the expiry value is only read afterwards, so a bad option is a syntax
// error whatever the value. It returns the options and the expiry value.
func stringOptions(args [][]byte, set bool) (opts int, expiry []byte, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		var opt, conflicts int
		switch {
		case set && resp.EqualFold(a, "nx"):
			opt, conflicts = optNX, optXX
		case set && resp.EqualFold(a, "xx"):
			opt, conflicts = optXX, optNX
		case set && resp.EqualFold(a, "get"):
			opt = optGet
		case set && resp.EqualFold(a, "keepttl"):
			opt, conflicts = optKeepTTL, optExpiry
		case !set && resp.EqualFold(a, "persist"):
			opt, conflicts = optPersist, optExpiry
		case resp.EqualFold(a, "ex"):
			opt = optEX
		case resp.EqualFold(a, "px"):
			opt = optPX
		case resp.EqualFold(a, "exat"):
			opt = optEXAT
		case resp.EqualFold(a, "pxat"):
			opt = optPXAT
		default:
			return 0, nil, false
		}
		if opt&optExpiry != 0 {
			if i+1 == len(args) {
				return 0, nil, false
			}
			conflicts = optKeepTTL | optPersist | optExpiry&^opt
			i++
			expiry = args[i]
		}
		if opts&conflicts != 0 {
			return 0, nil, false
		}
		opts |= opt
	}
	return opts, expiry, true
}

// expiryDeadline reads the value of SET's or GETEX's expiry option.
func expiryDeadline(c *commands.Ctx, opts int, value []byte, cmd string) (int64, string) {
	unit := int64(1000)
	if opts&(optPX|optPXAT) != 0 {
		unit = 1
	}
	return expiryArg(value, unit, opts&(optEXAT|optPXAT) != 0, true, cmd, nowMillis(c))
}

// cmdSet implements SET key value [NX|XX] [GET] [EX|PX|EXAT|PXAT n|KEEPTTL].
func cmdSet(c *commands.Ctx, args [][]byte) {
	opts, expiry, ok := stringOptions(args[3:], true)
	if !ok {
		c.W.Error(commands.ErrSyntax)
		return
	}
	set := engine.SetOptions{KeepTTL: opts&optKeepTTL != 0}
	switch {
	case opts&optNX != 0:
		set.Condition = engine.IfAbsent
	case opts&optXX != 0:
		set.Condition = engine.IfPresent
	}
	if opts&optExpiry != 0 {
		var errText string
		if set.StaleUntil, errText = expiryDeadline(c, opts, expiry, "set"); errText != "" {
			c.W.Error(errText)
			return
		}
	}
	get := opts&optGet != 0
	set.Get = get
	res, err := c.Store.Set(args[1], args[2], set)
	if res.Written {
		notifySet(c, args[1], opts&optExpiry != 0)
	}
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case get && res.HadOld:
		c.W.Bulk(res.Old)
	case get || !res.Written:
		c.W.Null()
	default:
		c.W.OK()
	}
}

func setWithExpiry(c *commands.Ctx, args [][]byte, unit int64, cmd string) {
	at, errText := expiryArg(args[2], unit, false, true, cmd, nowMillis(c))
	if errText != "" {
		c.W.Error(errText)
		return
	}
	if _, err := c.Store.Set(args[1], args[3], engine.SetOptions{StaleUntil: at}); err != nil {
		commands.WriteError(c.W, err)
		return
	}
	notifySet(c, args[1], true)
	c.W.OK()
}

// notifySet sends a string write's events as Redis's setGenericCommand:
// "set", then "expire" if it gave the key a deadline.
func notifySet(c *commands.Ctx, key []byte, expires bool) {
	c.Notify(commands.EventString, "set", key)
	if expires {
		c.Notify(commands.EventGeneric, "expire", key)
	}
}

func cmdSetEx(c *commands.Ctx, args [][]byte)  { setWithExpiry(c, args, 1000, "setex") }
func cmdPSetEx(c *commands.Ctx, args [][]byte) { setWithExpiry(c, args, 1, "psetex") }

func cmdSetNX(c *commands.Ctx, args [][]byte) {
	res, err := c.Store.Set(args[1], args[2], engine.SetOptions{Condition: engine.IfAbsent})
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	if res.Written {
		notifySet(c, args[1], false)
	}
	c.W.Int(commands.BoolInt(res.Written))
}

// cmdGetEx implements GETEX key [EX|PX|EXAT|PXAT n|PERSIST].
func cmdGetEx(c *commands.Ctx, args [][]byte) {
	opts, expiry, ok := stringOptions(args[2:], false)
	if !ok {
		c.W.Error(commands.ErrSyntax)
		return
	}
	var at int64
	if opts&optExpiry != 0 {
		var errText string
		if at, errText = expiryDeadline(c, opts, expiry, "getex"); errText != "" {
			// Redis looks the key up before it reads the value: a
			// missing key is nil whatever the value.
			if _, exists := c.Store.Peek(args[1]); !exists {
				c.W.Null()
			} else {
				c.W.Error(errText)
			}
			return
		}
	}
	var v []byte
	var change engine.DeadlineChange
	hit, ok := readOrMiss(c, args[1], func() bool {
		var found bool
		v, found, change = c.Store.GetEx(args[1], at, opts&optPersist != 0)
		return found
	})
	switch {
	case !ok:
	case !hit:
		c.W.Null()
	default:
		switch change {
		case engine.DeadlineRemoved:
			c.Notify(commands.EventGeneric, "persist", args[1])
		case engine.DeadlinePassed:
			c.Notify(commands.EventGeneric, "del", args[1])
		case engine.DeadlineSet:
			c.Notify(commands.EventGeneric, "expire", args[1])
		}
		c.W.Bulk(v)
	}
}

func cmdGetDel(c *commands.Ctx, args [][]byte) {
	var v []byte
	hit, ok := readOrMiss(c, args[1], func() bool {
		var found bool
		v, found = c.Store.GetDel(args[1])
		return found
	})
	switch {
	case hit:
		c.Notify(commands.EventGeneric, "del", args[1])
		c.W.Bulk(v)
	case ok:
		c.Store.CountMiss(args[1])
		c.W.Null()
	}
}

func cmdGetSet(c *commands.Ctx, args [][]byte) {
	res, err := c.Store.Set(args[1], args[2], engine.SetOptions{Get: true})
	if res.Written {
		notifySet(c, args[1], false)
	}
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case res.HadOld:
		c.W.Bulk(res.Old)
	default:
		c.W.Null()
	}
}

// cmdMGet reads its keys at one instant (Conn.readMulti), so it never
// sees half of another command's write of several keys. The reply is
// written under the store's locks: the writer only appends to its buffer.
func cmdMGet(c *commands.Ctx, args [][]byte) {
	c.W.Array(len(args) - 1)
	readMulti(c, args[1:], func(_ int, t engine.Type, v []byte, found bool) {
		if found && t == engine.TypeString {
			c.W.Bulk(v)
		} else {
			c.W.Null()
		}
	})
}

func msetPairs(c *commands.Ctx, args [][]byte, cond engine.Condition) (bool, bool) {
	if len(args)%2 == 0 {
		c.W.Error("ERR wrong number of arguments for '" + string(resp.Lower(args[0])) + "' command")
		return false, false
	}
	written, err := c.Store.SetMulti(args[1:], cond)
	if err != nil {
		commands.WriteError(c.W, err)
		return false, false
	}
	if written {
		for i := 1; i < len(args); i += 2 {
			notifySet(c, args[i], false)
		}
	}
	return written, true
}

func cmdMSet(c *commands.Ctx, args [][]byte) {
	if _, ok := msetPairs(c, args, engine.Always); ok {
		c.W.OK()
	}
}

func cmdMSetNX(c *commands.Ctx, args [][]byte) {
	if written, ok := msetPairs(c, args, engine.IfAbsent); ok {
		c.W.Int(commands.BoolInt(written))
	}
}

// errAppendToMissing stops APPEND's Grow at a missing key, which APPEND
// makes as SET does instead.
var errAppendToMissing = errors.New("append to a missing key")

// cmdAppend implements APPEND key value. A missing key gets the value as
// SET would store it (Redis's APPEND stores its argument, encoded as SET
// encodes it); an existing one grows in place, which makes it Redis's
// "raw" string.
func cmdAppend(c *commands.Ctx, args [][]byte) {
	limit := c.Client.MaxBulk()
	suffix := args[2]
	var at int
	for {
		n, err := c.Store.Grow(args[1], func(old []byte, exists bool) (int, error) {
			if !exists {
				return 0, errAppendToMissing
			}
			if int64(len(old)+len(suffix)) > limit {
				return 0, commands.ErrTooBigValue
			}
			at = len(old)
			return len(old) + len(suffix), nil
		}, func(v []byte) bool { copy(v[at:], suffix); return true })
		if errors.Is(err, errAppendToMissing) {
			// Made here unless another client made it meanwhile: then it
			// grows after all.
			var res engine.SetResult
			if res, err = c.Store.Set(args[1], suffix, engine.SetOptions{Condition: engine.IfAbsent}); err == nil && !res.Written {
				continue
			}
			n = len(suffix)
		}
		if err != nil {
			commands.WriteError(c.W, err)
			return
		}
		c.Notify(commands.EventString, "append", args[1])
		c.W.Int(int64(n))
		return
	}
}

func cmdStrlen(c *commands.Ctx, args [][]byte) {
	env, _ := c.Store.LookupNoTouch(args[1])
	writeLen(c, env)
}

// writeLen writes the length of env's string, or the wrong-type error.
func writeLen(c *commands.Ctx, env engine.Envelope) {
	if env.Type != engine.TypeString {
		c.W.Error(commands.ErrWrongType)
	} else {
		c.W.Int(int64(len(env.Value)))
	}
}

func cmdGetRange(c *commands.Ctx, args [][]byte) {
	start, ok1 := resp.ParseInt(args[2])
	end, ok2 := resp.ParseInt(args[3])
	if !ok1 || !ok2 {
		c.W.Error(commands.ErrNotInteger)
		return
	}
	if v, _, ok := readString(c, args[1]); ok {
		c.W.Bulk(substring(v, start, end))
	}
}

// substring applies GETRANGE's index rules: negative indexes count from the
// end, both ends are clamped and inclusive.
func substring(v []byte, start, end int64) []byte {
	n := int64(len(v))
	if start < 0 && end < 0 && start > end {
		return nil
	}
	if start < 0 {
		start = max(n+start, 0)
	}
	if end < 0 {
		end = max(n+end, 0)
	}
	end = min(end, n-1)
	if n == 0 || start > end {
		return nil
	}
	return v[start : end+1]
}

func cmdSetRange(c *commands.Ctx, args [][]byte) {
	offset, ok := resp.ParseInt(args[2])
	if !ok {
		c.W.Error(commands.ErrNotInteger)
		return
	}
	if offset < 0 {
		c.W.Error("ERR offset is out of range")
		return
	}
	patch := args[3]
	if len(patch) == 0 {
		// Redis neither creates nor changes the key for an empty patch,
		// and its lookup is a write's, no read to count.
		env, _ := c.Store.Peek(args[1])
		writeLen(c, env)
		return
	}
	if offset > c.Client.MaxBulk()-int64(len(patch)) { // not offset+len: that can overflow
		c.W.Error(commands.ErrStringLimit)
		return
	}
	// The offset is within proto-max-bulk-len, so it fits an int.
	n, err := c.Store.Grow(args[1], func([]byte, bool) (int, error) {
		return int(offset) + len(patch), nil
	}, func(v []byte) bool { copy(v[offset:], patch); return true })
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.Notify(commands.EventString, "setrange", args[1])
	c.W.Int(int64(n))
}

// incrBy adds delta to the integer at key and replies with the result.
func incrBy(c *commands.Ctx, key []byte, delta int64) {
	var result int64
	_, err := c.Store.Update(key, func(old []byte, exists bool) ([]byte, error) {
		var cur int64
		if exists {
			var ok bool
			if cur, ok = resp.ParseInt(old); !ok {
				return nil, commands.ErrNotIntegerValue
			}
		}
		if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
			return nil, commands.ErrOverflowValue
		}
		result = cur + delta
		return strconv.AppendInt(nil, result, 10), nil
	})
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.Notify(commands.EventString, "incrby", key)
	c.W.Int(result)
}

func cmdIncr(c *commands.Ctx, args [][]byte) { incrBy(c, args[1], 1) }
func cmdDecr(c *commands.Ctx, args [][]byte) { incrBy(c, args[1], -1) }

func cmdIncrBy(c *commands.Ctx, args [][]byte) {
	delta, ok := resp.ParseInt(args[2])
	if !ok {
		c.W.Error(commands.ErrNotInteger)
		return
	}
	incrBy(c, args[1], delta)
}

func cmdDecrBy(c *commands.Ctx, args [][]byte) {
	delta, ok := resp.ParseInt(args[2])
	if !ok {
		c.W.Error(commands.ErrNotInteger)
		return
	}
	if delta == math.MinInt64 {
		c.W.Error("ERR decrement would overflow")
		return
	}
	incrBy(c, args[1], -delta)
}

// cmdIncrByFloat adds in long double precision, as Redis does on x86-64,
// so that results such as 0.1+0.2 print as Redis prints them.
func cmdIncrByFloat(c *commands.Ctx, args [][]byte) {
	delta, ok := parseLongDouble(args[2])
	if !ok {
		c.W.Error(commands.ErrNotFloat)
		return
	}
	v, err := c.Store.Update(args[1], func(old []byte, exists bool) ([]byte, error) {
		return addLongDouble(old, exists, delta, commands.ErrNotFloatValue)
	})
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.Notify(commands.EventString, "incrbyfloat", args[1])
	c.W.Bulk(v)
}

// addLongDouble is the value old (0 if !exists) plus delta, as INCRBYFLOAT
// and HINCRBYFLOAT compute it; notFloat is the error for an old value that
// is no float.
func addLongDouble(old []byte, exists bool, delta *big.Float, notFloat error) ([]byte, error) {
	cur := new(big.Float)
	if exists {
		var ok bool
		if cur, ok = parseLongDouble(old); !ok {
			return nil, notFloat
		}
	}
	// Inf plus anything is Inf or NaN, which big.Float would panic on.
	if cur.IsInf() || delta.IsInf() {
		return nil, commands.ErrNaNValue
	}
	// Rounding to 64 bits is all: a sum of long doubles small enough to be
	// subnormal is exact.
	sum := new(big.Float).SetPrec(ldPrec).Add(cur, delta)
	if sum.MantExp(nil) > ldMaxExp {
		return nil, commands.ErrNaNValue
	}
	return formatLongDouble(sum), nil
}

// setKeys: SET writes its key, and reads it too with GET.
func setKeys(args [][]byte) commands.KeyAccess {
	for _, a := range args[3:] {
		if resp.EqualFold(a, "get") {
			return commands.KeysReadWrite
		}
	}
	return commands.KeysWrite
}

// setIsBlind reports whether a SET overwrites whatever is there: no NX, XX,
// GET or KEEPTTL. Arguments it cannot parse make it not blind, and the
// handler reports the error.
func setIsBlind(args [][]byte) bool {
	for _, a := range args[3:] {
		if resp.EqualFold(a, "nx") || resp.EqualFold(a, "xx") || resp.EqualFold(a, "get") || resp.EqualFold(a, "keepttl") {
			return false
		}
	}
	return true
}

// stringCommands are the string commands, for the family's table
// (Commands).
func stringCommands() []*commands.Spec {
	return []*commands.Spec{
		{Name: "get", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGet,
			Group: "string", Summary: "Returns the string value of a key.", Usage: "key", Since: "1.0.0"},
		{Name: "set", Arity: -3, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSet, VarAccess: setKeys, Blind: setIsBlind,
			KeySpecs: []commands.KeySpec{
				{Notes: "RW and ACCESS due to the optional `GET` argument",
					Flags: commands.KRW | commands.KAccess | commands.KUpdate | commands.KVariableFlags, Index: 1},
			},
			Group:   "string",
			Summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
			Usage: "key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT " +
				"unix-time-milliseconds|KEEPTTL]",
			Since: "1.0.0"},
		{Name: "setex", Arity: 4, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSetEx, Access: commands.KeysWrite, Blind: commands.Always,
			Group: "string", Summary: "Sets the string value and expiration time of a key.", Usage: "key seconds value",
			Since: "2.0.0"},
		{Name: "psetex", Arity: 4, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdPSetEx, Access: commands.KeysWrite, Blind: commands.Always,
			Group: "string", Summary: "Sets both string value and expiration time in milliseconds of a key.",
			Usage: "key milliseconds value", Since: "2.6.0"},
		{Name: "setnx", Arity: 3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSetNX, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KOW|commands.KInsert)},
			Group:    "string", Summary: "Sets the string value of a key only when the key doesn't exist.",
			Usage: "key value", Since: "1.0.0"},
		{Name: "getex", Arity: -2, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGetEx,
			KeySpecs: []commands.KeySpec{
				{Notes: "RW and UPDATE because it changes the TTL",
					Flags: commands.KRW | commands.KAccess | commands.KUpdate, Index: 1},
			},
			Group: "string", Summary: "Returns the string value of a key after setting its expiration time.",
			Usage: "key [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|PERSIST]",
			Since: "6.2.0"},
		{Name: "getdel", Arity: 2, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGetDel,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete)},
			Group:    "string", Summary: "Returns the string value of a key after deleting the key.", Usage: "key",
			Since: "6.2.0"},
		{Name: "getset", Arity: 3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGetSet,
			Group: "string", Summary: "Returns the previous string value of a key after setting it to a new value.",
			Usage: "key value", Since: "1.0.0"},
		{Name: "mget", Arity: -2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdMGet,
			Group: "string", Summary: "Atomically returns the string values of one or more keys.",
			Usage: "key [key ...]", Since: "1.0.0"},
		{Name: "mset", Arity: -3, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: -1, Step: 2, Handler: cmdMSet, Access: commands.KeysWrite, Blind: commands.Always,
			Group: "string", Summary: "Atomically creates or modifies the string values of one or more keys.",
			Usage: "key value [key value ...]", Since: "1.0.1"},
		{Name: "msetnx", Arity: -3, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: -1, Step: 2, Handler: cmdMSetNX, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{{Flags: commands.KOW | commands.KInsert, Index: 1, LastKey: -1, Step: 2}},
			Group:    "string",
			Summary:  "Atomically modifies the string values of one or more keys only when all keys don't exist.",
			Usage:    "key value [key value ...]", Since: "1.0.1"},
		{Name: "append", Arity: 3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdAppend, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KInsert)},
			Group:    "string", Summary: "Appends a string to the value of a key. Creates the key if it doesn't exist.",
			Usage: "key value", Since: "2.0.0"},
		{Name: "strlen", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdStrlen, Access: commands.KeysNone,
			Group: "string", Summary: "Returns the length of a string value.", Usage: "key", Since: "2.2.0"},
		{Name: "getrange", Arity: 4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGetRange,
			Group: "string", Summary: "Returns a substring of the string stored at a key.", Usage: "key start end",
			Since: "2.4.0"},
		{Name: "substr", Arity: 4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGetRange,
			Group: "string", Summary: "Returns a substring from a string value.", Usage: "key start end",
			Since: "1.0.0"},
		{Name: "setrange", Arity: 4, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSetRange, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "string",
			Summary: "Overwrites a part of a string value with another by an offset. Creates the key if it " +
				"doesn't exist.",
			Usage: "key offset value", Since: "2.2.0"},
		{Name: "incr", Arity: 2, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdIncr,
			Group:   "string",
			Summary: "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.",
			Usage:   "key", Since: "1.0.0"},
		{Name: "decr", Arity: 2, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdDecr,
			Group:   "string",
			Summary: "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.",
			Usage:   "key", Since: "1.0.0"},
		{Name: "incrby", Arity: 3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdIncrBy,
			Group: "string",
			Summary: "Increments the integer value of a key by a number. Uses 0 as initial value if the key " +
				"doesn't exist.",
			Usage: "key increment", Since: "1.0.0"},
		{Name: "decrby", Arity: 3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdDecrBy,
			Group: "string",
			Summary: "Decrements a number from the integer value of a key. Uses 0 as initial value if the key " +
				"doesn't exist.",
			Usage: "key decrement", Since: "1.0.0"},
		{Name: "incrbyfloat", Arity: 3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdIncrByFloat,
			Group: "string",
			Summary: "Increment the floating point value of a key by a number. Uses 0 as initial value if the " +
				"key doesn't exist.",
			Usage: "key increment", Since: "2.6.0"},
		{Name: "lcs", Arity: -3, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 2, Step: 1, Handler: cmdLCS,
			Group: "string", Summary: "Finds the longest common substring.",
			Usage: "key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]", Since: "7.0.0"},
	}
}
