package resp

import (
	"math"
	"strconv"

	"github.com/stampedeless/stampedeless/engine"
)

func cmdGet(c *Conn, args [][]byte) {
	if v, ok := c.srv.store.Get(args[1]); ok {
		c.w.Bulk(v)
	} else {
		c.w.Null()
	}
}

// expiryOption parses one of the options EX, PX, EXAT and PXAT and its
// value into a deadline, or returns the error text to reply.
func expiryOption(opt []byte, value []byte, cmd string) (int64, string) {
	switch {
	case equalFold(opt, "ex"):
		return expiryArg(value, 1000, false, true, cmd)
	case equalFold(opt, "px"):
		return expiryArg(value, 1, false, true, cmd)
	case equalFold(opt, "exat"):
		return expiryArg(value, 1000, true, true, cmd)
	case equalFold(opt, "pxat"):
		return expiryArg(value, 1, true, true, cmd)
	}
	return 0, errSyntax
}

func isExpiryOption(b []byte) bool {
	return equalFold(b, "ex") || equalFold(b, "px") || equalFold(b, "exat") || equalFold(b, "pxat")
}

// cmdSet implements SET key value [NX|XX] [GET] [EX|PX|EXAT|PXAT n|KEEPTTL].
func cmdSet(c *Conn, args [][]byte) {
	var opts engine.SetOptions
	var get, expiry bool
	for i := 3; i < len(args); i++ {
		a := args[i]
		switch {
		case equalFold(a, "nx") && opts.Condition == engine.Always:
			opts.Condition = engine.IfAbsent
		case equalFold(a, "xx") && opts.Condition == engine.Always:
			opts.Condition = engine.IfPresent
		case equalFold(a, "get") && !get:
			get = true
		case equalFold(a, "keepttl") && !expiry:
			opts.KeepTTL, expiry = true, true
		case isExpiryOption(a) && !expiry && i+1 < len(args):
			at, errText := expiryOption(a, args[i+1], "set")
			if errText != "" {
				c.w.Error(errText)
				return
			}
			opts.StaleUntil, expiry = at, true
			i++
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	res, err := c.srv.store.Set(args[1], args[2], opts)
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
	var at int64
	var persist, set bool
	for i := 2; i < len(args); i++ {
		a := args[i]
		switch {
		case equalFold(a, "persist") && !set:
			persist, set = true, true
		case isExpiryOption(a) && !set && i+1 < len(args):
			var errText string
			at, errText = expiryOption(a, args[i+1], "getex")
			if errText != "" {
				c.w.Error(errText)
				return
			}
			set = true
			i++
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	if v, ok := c.srv.store.GetEx(args[1], at, persist); ok {
		c.w.Bulk(v)
	} else {
		c.w.Null()
	}
}

func cmdGetDel(c *Conn, args [][]byte) {
	if v, ok := c.srv.store.GetDel(args[1]); ok {
		c.w.Bulk(v)
	} else {
		c.w.Null()
	}
}

func cmdGetSet(c *Conn, args [][]byte) {
	res, err := c.srv.store.Set(args[1], args[2], engine.SetOptions{})
	switch {
	case err != nil:
		writeErr(c, err)
	case res.HadOld:
		c.w.Bulk(res.Old)
	default:
		c.w.Null()
	}
}

func cmdMGet(c *Conn, args [][]byte) {
	c.w.Array(len(args) - 1)
	for _, k := range args[1:] {
		if v, ok := c.srv.store.Get(k); ok {
			c.w.Bulk(v)
		} else {
			c.w.Null()
		}
	}
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
	v, err := c.srv.store.Update(args[1], func(old []byte, _ bool) ([]byte, error) {
		if int64(len(old)+len(suffix)) > limit {
			return nil, errTooBigValue
		}
		return append(old, suffix...), nil
	})
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Int(int64(len(v)))
}

func cmdStrlen(c *Conn, args [][]byte) {
	env, _ := c.srv.store.Peek(args[1])
	c.w.Int(int64(len(env.Value)))
}

func cmdGetRange(c *Conn, args [][]byte) {
	start, ok1 := parseInteger(args[2])
	end, ok2 := parseInteger(args[3])
	if !ok1 || !ok2 {
		c.w.Error(errNotInteger)
		return
	}
	v, _ := c.srv.store.Get(args[1])
	c.w.Bulk(substring(v, start, end))
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
	offset, ok := parseInteger(args[2])
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
		env, _ := c.srv.store.Peek(args[1])
		c.w.Int(int64(len(env.Value)))
		return
	}
	if offset > c.srv.maxBulk.Load()-int64(len(patch)) { // not offset+len: that can overflow
		c.w.Error(errStringLimit)
		return
	}
	v, err := c.srv.store.Update(args[1], func(old []byte, _ bool) ([]byte, error) {
		size := max(int64(len(old)), offset+int64(len(patch)))
		// A fresh copy: bytes a reader already holds are never rewritten.
		out := make([]byte, size)
		copy(out, old)
		copy(out[offset:], patch)
		return out, nil
	})
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Int(int64(len(v)))
}

// incrBy adds delta to the integer at key and replies with the result.
func incrBy(c *Conn, key []byte, delta int64) {
	var result int64
	_, err := c.srv.store.Update(key, func(old []byte, exists bool) ([]byte, error) {
		var cur int64
		if exists {
			var ok bool
			if cur, ok = parseInteger(old); !ok {
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
	delta, ok := parseInteger(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	incrBy(c, args[1], delta)
}

func cmdDecrBy(c *Conn, args [][]byte) {
	delta, ok := parseInteger(args[2])
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

func cmdIncrByFloat(c *Conn, args [][]byte) {
	delta, ok := parseFloat(args[2])
	if !ok {
		c.w.Error(errNotFloat)
		return
	}
	v, err := c.srv.store.Update(args[1], func(old []byte, exists bool) ([]byte, error) {
		var cur float64
		if exists {
			var ok bool
			if cur, ok = parseFloat(old); !ok {
				return nil, errNotFloatValue
			}
		}
		sum := cur + delta
		if math.IsNaN(sum) || math.IsInf(sum, 0) {
			return nil, errNaNValue
		}
		// Redis prints fixed-point, never an exponent.
		return strconv.AppendFloat(nil, sum, 'f', -1, 64), nil
	})
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Bulk(v)
}
