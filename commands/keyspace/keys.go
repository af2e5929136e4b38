package keyspace

import (
	"math"
	"strconv"
	"strings"
	"time"

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
