package server

import (
	"errors"
	"time"

	"github.com/stampedeless/stampedeless/persist"
	"github.com/stampedeless/stampedeless/rdb"
	"github.com/stampedeless/stampedeless/resp"
)

func cmdDump(c *Conn, args [][]byte) {
	payload, found := persist.Dump(c.srv.store, args[1])
	if !found {
		c.w.Null()
		return
	}
	c.w.Bulk(payload)
}

// cmdRestore implements RESTORE key ttl serialized-value [REPLACE]
// [ABSTTL] [IDLETIME seconds] [FREQ frequency], checking in Redis's order
// (restoreCommand): the options, the key's existence, the TTL, the
// payload's footer, its value. IDLETIME and FREQ are checked and then
// ignored: the store keeps neither (OBJECT IDLETIME and FREQ, above).
func cmdRestore(c *Conn, args [][]byte) {
	replace, absTTL, idle, freq := false, false, false, false
	for j := 4; j < len(args); j++ {
		more := j+1 < len(args)
		switch {
		case equalFold(args[j], "replace"):
			replace = true
		case equalFold(args[j], "absttl"):
			absTTL = true
		case equalFold(args[j], "idletime") && more && !freq:
			n, ok := resp.ParseInt(args[j+1])
			switch {
			case !ok:
				c.w.Error(errNotInteger)
				return
			case n < 0:
				c.w.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle = true
			j++
		case equalFold(args[j], "freq") && more && !idle:
			n, ok := resp.ParseInt(args[j+1])
			switch {
			case !ok:
				c.w.Error(errNotInteger)
				return
			case n < 0 || n > 255:
				c.w.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			freq = true
			j++
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	key := args[1]
	if !replace {
		if _, exists := c.srv.store.TypeOf(key); exists {
			c.w.Error("BUSYKEY Target key name already exists.")
			return
		}
	}
	ttl, ok := resp.ParseInt(args[2])
	switch {
	case !ok:
		c.w.Error(errNotInteger)
		return
	case ttl < 0:
		c.w.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	e, err := rdb.ParseDump(args[3], c.srv.maxBulk.Load())
	var unsupported *rdb.UnsupportedError
	switch {
	case errors.Is(err, rdb.ErrDumpPayload):
		c.w.Error("ERR " + err.Error())
		return
	case errors.As(err, &unsupported):
		c.w.Error(unsupportedPayload(unsupported))
		return
	case err != nil:
		c.w.Error("ERR Bad data format")
		return
	}
	var at int64
	if ttl != 0 {
		// Past the store's last deadline (2262) is far enough.
		ttl = min(ttl, maxDeadlineMillis)
		if !absTTL {
			ttl = min(ttl+nowMillis(), maxDeadlineMillis)
		}
		at = max(ttl, 1) * int64(time.Millisecond)
	}
	if err := persist.Restore(c.srv.store, key, e, at, replace); err != nil {
		if errors.As(err, &unsupported) {
			c.w.Error(unsupportedPayload(unsupported))
			return
		}
		if errors.Is(err, rdb.ErrCorrupt) {
			c.w.Error("ERR Bad data format")
			return
		}
		writeErr(c, err)
		return
	}
	c.w.OK()
}

func unsupportedPayload(u *rdb.UnsupportedError) string {
	return "ERR the payload holds a " + u.Type + ", a type this server does not have"
}
