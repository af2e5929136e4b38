package server

import (
	"math"
	"math/big"
	"strconv"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// cmdGet writes the value from the store's arena into the reply without a
// copy of its own.
func cmdGet(c *Conn, args [][]byte) {
	if !c.view(args[1], c.w.Bulk) && !c.wrongType(args[1]) {
		c.w.Null()
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
		case set && equalFold(a, "nx"):
			opt, conflicts = optNX, optXX
		case set && equalFold(a, "xx"):
			opt, conflicts = optXX, optNX
		case set && equalFold(a, "get"):
			opt = optGet
		case set && equalFold(a, "keepttl"):
			opt, conflicts = optKeepTTL, optExpiry
		case !set && equalFold(a, "persist"):
			opt, conflicts = optPersist, optExpiry
		case equalFold(a, "ex"):
			opt = optEX
		case equalFold(a, "px"):
			opt = optPX
		case equalFold(a, "exat"):
			opt = optEXAT
		case equalFold(a, "pxat"):
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
func expiryDeadline(opts int, value []byte, cmd string) (int64, string) {
	unit := int64(1000)
	if opts&(optPX|optPXAT) != 0 {
		unit = 1
	}
	return expiryArg(value, unit, opts&(optEXAT|optPXAT) != 0, true, cmd)
}

// cmdSet implements SET key value [NX|XX] [GET] [EX|PX|EXAT|PXAT n|KEEPTTL].
func cmdSet(c *Conn, args [][]byte) {
	opts, expiry, ok := stringOptions(args[3:], true)
	if !ok {
		c.w.Error(errSyntax)
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
		if set.StaleUntil, errText = expiryDeadline(opts, expiry, "set"); errText != "" {
			c.w.Error(errText)
			return
		}
	}
	get := opts&optGet != 0
	set.Get = get
	res, err := c.srv.store.Set(args[1], args[2], set)
	switch {
	case err != nil:
		writeErr(c, err)
	case get && res.HadOld:
		c.w.Bulk(res.Old)
	case get || !res.Written:
		c.w.Null()
	default:
		c.w.OK()
	}
}

func setWithExpiry(c *Conn, args [][]byte, unit int64, cmd string) {
	at, errText := expiryArg(args[2], unit, false, true, cmd)
	if errText != "" {
		c.w.Error(errText)
		return
	}
	if _, err := c.srv.store.Set(args[1], args[3], engine.SetOptions{StaleUntil: at}); err != nil {
		writeErr(c, err)
		return
	}
	c.w.OK()
}

func cmdSetEx(c *Conn, args [][]byte)  { setWithExpiry(c, args, 1000, "setex") }
func cmdPSetEx(c *Conn, args [][]byte) { setWithExpiry(c, args, 1, "psetex") }

func cmdSetNX(c *Conn, args [][]byte) {
	res, err := c.srv.store.Set(args[1], args[2], engine.SetOptions{Condition: engine.IfAbsent})
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Int(boolInt(res.Written))
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// cmdGetEx implements GETEX key [EX|PX|EXAT|PXAT n|PERSIST].
func cmdGetEx(c *Conn, args [][]byte) {
	opts, expiry, ok := stringOptions(args[2:], false)
	if !ok {
		c.w.Error(errSyntax)
		return
	}
	var at int64
	if opts&optExpiry != 0 {
		var errText string
		if at, errText = expiryDeadline(opts, expiry, "getex"); errText != "" {
			// Redis looks the key up before it reads the value: a
			// missing key is nil whatever the value.
			if _, exists := c.srv.store.Peek(args[1]); !exists {
				c.w.Null()
			} else {
				c.w.Error(errText)
			}
			return
		}
	}
	if v, ok := c.srv.store.GetEx(args[1], at, opts&optPersist != 0); ok {
		c.w.Bulk(v)
	} else if !c.wrongType(args[1]) {
		c.w.Null()
	}
}

func cmdGetDel(c *Conn, args [][]byte) {
	if v, ok := c.srv.store.GetDel(args[1]); ok {
		c.w.Bulk(v)
	} else if !c.wrongType(args[1]) {
		c.w.Null()
	}
}

func cmdGetSet(c *Conn, args [][]byte) {
	res, err := c.srv.store.Set(args[1], args[2], engine.SetOptions{Get: true})
	switch {
	case err != nil:
		writeErr(c, err)
	case res.HadOld:
		c.w.Bulk(res.Old)
	default:
		c.w.Null()
	}
}

// cmdMGet reads its keys at one instant (Conn.readMulti), so it never
// sees half of another command's write of several keys. The reply is
// written under the store's locks: the writer only appends to its buffer.
func cmdMGet(c *Conn, args [][]byte) {
	c.w.Array(len(args) - 1)
	c.readMulti(args[1:], func(_ int, t engine.Type, v []byte, found bool) {
		if found && t == engine.TypeString {
			c.w.Bulk(v)
		} else {
			c.w.Null()
		}
	})
}

func msetPairs(c *Conn, args [][]byte, cond engine.Condition) (bool, bool) {
	if len(args)%2 == 0 {
		c.w.Error("ERR wrong number of arguments for '" + string(lower(args[0])) + "' command")
		return false, false
	}
	written, err := c.srv.store.SetMulti(args[1:], cond)
	if err != nil {
		writeErr(c, err)
		return false, false
	}
	return written, true
}

func lower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

func cmdMSet(c *Conn, args [][]byte) {
	if _, ok := msetPairs(c, args, engine.Always); ok {
		c.w.OK()
	}
}

func cmdMSetNX(c *Conn, args [][]byte) {
	if written, ok := msetPairs(c, args, engine.IfAbsent); ok {
		c.w.Int(boolInt(written))
	}
}

func cmdAppend(c *Conn, args [][]byte) {
	limit := c.srv.maxBulk.Load()
	suffix := args[2]
	var at int
	n, err := c.srv.store.Grow(args[1], func(old []byte, _ bool) (int, error) {
		if int64(len(old)+len(suffix)) > limit {
			return 0, errTooBigValue
		}
		at = len(old)
		return len(old) + len(suffix), nil
	}, func(v []byte) { copy(v[at:], suffix) })
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Int(int64(n))
}

func cmdStrlen(c *Conn, args [][]byte) {
	if env, _ := c.srv.store.Peek(args[1]); env.Type != engine.TypeString {
		c.w.Error(errWrongType)
	} else {
		c.w.Int(int64(len(env.Value)))
	}
}

func cmdGetRange(c *Conn, args [][]byte) {
	start, ok1 := resp.ParseInt(args[2])
	end, ok2 := resp.ParseInt(args[3])
	if !ok1 || !ok2 {
		c.w.Error(errNotInteger)
		return
	}
	if v, _, ok := c.readString(args[1]); ok {
		c.w.Bulk(substring(v, start, end))
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

func cmdSetRange(c *Conn, args [][]byte) {
	offset, ok := resp.ParseInt(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	if offset < 0 {
		c.w.Error("ERR offset is out of range")
		return
	}
	patch := args[3]
	if len(patch) == 0 {
		// Redis neither creates nor changes the key for an empty patch.
		cmdStrlen(c, args)
		return
	}
	if offset > c.srv.maxBulk.Load()-int64(len(patch)) { // not offset+len: that can overflow
		c.w.Error(errStringLimit)
		return
	}
	// The offset is within proto-max-bulk-len, so it fits an int.
	n, err := c.srv.store.Grow(args[1], func([]byte, bool) (int, error) {
		return int(offset) + len(patch), nil
	}, func(v []byte) { copy(v[offset:], patch) })
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Int(int64(n))
}

// incrBy adds delta to the integer at key and replies with the result.
func incrBy(c *Conn, key []byte, delta int64) {
	var result int64
	_, err := c.srv.store.Update(key, func(old []byte, exists bool) ([]byte, error) {
		var cur int64
		if exists {
			var ok bool
			if cur, ok = resp.ParseInt(old); !ok {
				return nil, errNotIntegerValue
			}
		}
		if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
			return nil, errOverflowValue
		}
		result = cur + delta
		return strconv.AppendInt(nil, result, 10), nil
	})
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Int(result)
}

func cmdIncr(c *Conn, args [][]byte) { incrBy(c, args[1], 1) }
func cmdDecr(c *Conn, args [][]byte) { incrBy(c, args[1], -1) }

func cmdIncrBy(c *Conn, args [][]byte) {
	delta, ok := resp.ParseInt(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	incrBy(c, args[1], delta)
}

func cmdDecrBy(c *Conn, args [][]byte) {
	delta, ok := resp.ParseInt(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	if delta == math.MinInt64 {
		c.w.Error("ERR decrement would overflow")
		return
	}
	incrBy(c, args[1], -delta)
}

// cmdIncrByFloat adds in long double precision, as Redis does on x86-64,
// so that results such as 0.1+0.2 print as Redis prints them.
func cmdIncrByFloat(c *Conn, args [][]byte) {
	delta, ok := parseLongDouble(args[2])
	if !ok {
		c.w.Error(errNotFloat)
		return
	}
	v, err := c.srv.store.Update(args[1], func(old []byte, exists bool) ([]byte, error) {
		return addLongDouble(old, exists, delta, errNotFloatValue)
	})
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Bulk(v)
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
		return nil, errNaNValue
	}
	// Rounding to 64 bits is all: a sum of long doubles small enough to be
	// subnormal is exact.
	sum := new(big.Float).SetPrec(ldPrec).Add(cur, delta)
	if sum.MantExp(nil) > ldMaxExp {
		return nil, errNaNValue
	}
	return formatLongDouble(sum), nil
}
