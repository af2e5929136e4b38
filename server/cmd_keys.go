package server

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

// cmdDel, cmdExists and cmdTouch, like cmdMGet, act on all their keys at
// one instant, as a Redis command does: a write of several keys (MSET, DEL,
// RENAME, FLUSHALL) is seen whole or not at all.
func cmdDel(c *Conn, args [][]byte) {
	c.w.Int(int64(c.srv.store.DeleteMulti(args[1:])))
}

func cmdExists(c *Conn, args [][]byte) {
	c.w.Int(int64(c.srv.store.ReadMulti(args[1:], 0, func(int, engine.Type, []byte, bool) {})))
}

func cmdType(c *Conn, args [][]byte) {
	if t, ok := c.srv.store.TypeOf(args[1]); ok {
		c.w.Status(t.String())
	} else {
		c.w.Status("none")
	}
}

func cmdTouch(c *Conn, args [][]byte) {
	c.w.Int(int64(c.srv.store.ReadMulti(args[1:], engine.ReadNotes, func(int, engine.Type, []byte, bool) {})))
}

// expireCommand implements EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT. As in
// Redis, the options are checked before the time.
func expireCommand(c *Conn, args [][]byte, unit int64, absolute bool, name string) {
	cond, errText := expireCondition(args[3:])
	if errText == "" {
		var at int64
		if at, errText = expiryArg(args[2], unit, absolute, false, name); errText == "" {
			c.w.Int(boolInt(c.srv.store.Expire(args[1], at, cond)))
			return
		}
	}
	c.w.Error(errText)
}

// expireCondition parses the NX, XX, GT and LT options of the EXPIRE
// family, or returns the error to reply.
func expireCondition(opts [][]byte) (engine.ExpireCondition, string) {
	cond := engine.ExpireAlways
	var nx, xx, gt, lt bool
	for _, a := range opts {
		switch {
		case equalFold(a, "nx"):
			nx, cond = true, engine.ExpireIfNone
		case equalFold(a, "xx"):
			xx, cond = true, engine.ExpireIfSet
		case equalFold(a, "gt"):
			gt, cond = true, engine.ExpireIfLater
		case equalFold(a, "lt"):
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

func cmdExpire(c *Conn, args [][]byte)    { expireCommand(c, args, 1000, false, "expire") }
func cmdPExpire(c *Conn, args [][]byte)   { expireCommand(c, args, 1, false, "pexpire") }
func cmdExpireAt(c *Conn, args [][]byte)  { expireCommand(c, args, 1000, true, "expireat") }
func cmdPExpireAt(c *Conn, args [][]byte) { expireCommand(c, args, 1, true, "pexpireat") }

// ttlReply answers TTL-family commands: -2 for a missing key, -1 for a key
// without a deadline, else what value computes from the stale deadline in
// Unix milliseconds.
func ttlReply(c *Conn, key []byte, value func(deadlineMs int64) int64) {
	env, ok := c.srv.store.Peek(key)
	switch {
	case !ok:
		c.w.Int(-2)
	case env.StaleUntil == 0:
		c.w.Int(-1)
	default:
		c.w.Int(value(env.StaleUntil / int64(time.Millisecond)))
	}
}

func cmdTTL(c *Conn, args [][]byte) {
	ttlReply(c, args[1], func(ms int64) int64 { return (max(ms-nowMillis(), 0) + 500) / 1000 })
}

func cmdPTTL(c *Conn, args [][]byte) {
	ttlReply(c, args[1], func(ms int64) int64 { return max(ms-nowMillis(), 0) })
}

func cmdExpireTime(c *Conn, args [][]byte) {
	ttlReply(c, args[1], func(ms int64) int64 { return (ms + 500) / 1000 })
}

func cmdPExpireTime(c *Conn, args [][]byte) {
	ttlReply(c, args[1], func(ms int64) int64 { return ms })
}

func cmdPersist(c *Conn, args [][]byte) {
	c.w.Int(boolInt(c.srv.store.Persist(args[1])))
}

func cmdKeys(c *Conn, args [][]byte) {
	keys := c.srv.store.Keys(args[1])
	c.w.Array(len(keys))
	for _, k := range keys {
		c.w.BulkString(k)
	}
}

// cmdScan implements SCAN cursor [MATCH pattern] [COUNT count] [TYPE type].
func cmdScan(c *Conn, args [][]byte) {
	cursor, ok := parseCursor(args[1])
	if !ok {
		c.w.Error("ERR invalid cursor")
		return
	}
	pattern, count, only, ok := scanOptions(c, args[2:], true)
	if !ok {
		return
	}
	next, keys := c.srv.store.Scan(cursor, pattern, count)
	if only != nil {
		keys = slices.DeleteFunc(keys, func(k string) bool {
			t, found := c.srv.store.TypeOf([]byte(k))
			return !found || t != *only
		})
	}
	c.w.Array(2)
	c.w.BulkString(strconv.FormatUint(next, 10))
	c.w.Array(len(keys))
	for _, k := range keys {
		c.w.BulkString(k)
	}
}

// scanOptions parses the options of SCAN (withType) and of SSCAN and the
// like: MATCH, COUNT and, for SCAN alone, TYPE, as Redis's
// scanGenericCommand does. It writes the error itself.
func scanOptions(c *Conn, opts [][]byte, withType bool) (pattern []byte, count int, only *engine.Type, ok bool) {
	count = 10
	for i := 0; i < len(opts); i += 2 {
		if i+1 >= len(opts) {
			c.w.Error(errSyntax)
			return nil, 0, nil, false
		}
		opt, val := opts[i], opts[i+1]
		switch {
		case equalFold(opt, "match"):
			pattern = val
		case equalFold(opt, "count"):
			n, ok := countArg(c, val, 1)
			if !ok {
				return nil, 0, nil, false
			}
			count = int(min(n, 1<<20))
		case withType && equalFold(opt, "type"):
			// As Redis 7.0, a type name no key can hold matches nothing.
			t, known := engine.ParseType(strings.ToLower(string(val)))
			if !known {
				t = math.MaxUint8
			}
			only = &t
		default:
			c.w.Error(errSyntax)
			return nil, 0, nil, false
		}
	}
	return pattern, count, only, true
}

func cmdRandomKey(c *Conn, _ [][]byte) {
	if k, ok := c.srv.store.RandomKey(); ok {
		c.w.BulkString(k)
	} else {
		c.w.Null()
	}
}
