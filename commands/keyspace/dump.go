package keyspace

import (
	"errors"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/persist"
	"github.com/stampedeless/stampedeless/rdb"
	"github.com/stampedeless/stampedeless/resp"
)

func cmdDump(c *commands.Ctx, args [][]byte) {
	payload, found := persist.Dump(c.Store, args[1])
	if !found {
		c.Store.CountMiss(args[1])
		c.W.Null()
		return
	}
	c.W.Bulk(payload)
}

// cmdRestore implements RESTORE key ttl serialized-value [REPLACE]
// [ABSTTL] [IDLETIME seconds] [FREQ frequency], checking in Redis's order
// (restoreCommand): the options, the key's existence, the TTL, the
// payload's footer, its value. IDLETIME or FREQ, whichever the eviction
// policy keeps, sets the key's access stamp (OBJECT IDLETIME and FREQ).
func cmdRestore(c *commands.Ctx, args [][]byte) {
	replace, absTTL, idle, freq := false, false, false, false
	idleTime, frequency := int64(-1), int64(-1)
	for j := 4; j < len(args); j++ {
		more := j+1 < len(args)
		switch {
		case resp.EqualFold(args[j], "replace"):
			replace = true
		case resp.EqualFold(args[j], "absttl"):
			absTTL = true
		case resp.EqualFold(args[j], "idletime") && more && !freq:
			n, ok := resp.ParseInt(args[j+1])
			switch {
			case !ok:
				c.W.Error(commands.ErrNotInteger)
				return
			case n < 0:
				c.W.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle, idleTime = true, n
			j++
		case resp.EqualFold(args[j], "freq") && more && !idle:
			n, ok := resp.ParseInt(args[j+1])
			switch {
			case !ok:
				c.W.Error(commands.ErrNotInteger)
				return
			case n < 0 || n > 255:
				c.W.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			freq, frequency = true, n
			j++
		default:
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	key := args[1]
	if !replace {
		if _, exists := c.Store.TypeOf(key); exists {
			c.W.Error(busyKey)
			return
		}
	}
	ttl, ok := resp.ParseInt(args[2])
	switch {
	case !ok:
		c.W.Error(commands.ErrNotInteger)
		return
	case ttl < 0:
		c.W.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	e, err := rdb.ParseDump(args[3], c.Client.MaxBulk())
	var unsupported *rdb.UnsupportedError
	switch {
	case errors.Is(err, rdb.ErrDumpPayload):
		c.W.Error("ERR " + err.Error())
		return
	case errors.As(err, &unsupported):
		c.W.Error(unsupportedPayload(unsupported))
		return
	case err != nil:
		c.W.Error("ERR Bad data format")
		return
	}
	var at int64
	if ttl != 0 {
		// Past the store's last deadline (2262) is far enough.
		ttl = min(ttl, engine.MaxDeadlineMillis)
		if !absTTL {
			ttl = min(ttl+nowMillis(c), engine.MaxDeadlineMillis)
		}
		at = max(ttl, 1) * int64(time.Millisecond)
	}
	// The key is checked again as it is written, in one change with the
	// write: the check above only gives BUSYKEY Redis's precedence over
	// the TTL's and the payload's errors.
	if err := persist.Restore(c.Store, key, e, at, replace, idleTime, frequency); err != nil {
		switch {
		case errors.Is(err, engine.ErrBusyKey):
			c.W.Error(busyKey)
		case errors.As(err, &unsupported):
			c.W.Error(unsupportedPayload(unsupported))
		case errors.Is(err, rdb.ErrCorrupt):
			c.W.Error("ERR Bad data format")
		default:
			commands.WriteError(c.W, err)
		}
		return
	}
	c.Notify(commands.EventGeneric, "restore", key)
	c.W.OK()
}

// busyKey is Redis's error for RESTORE of a live key without REPLACE.
const busyKey = "BUSYKEY Target key name already exists."

func unsupportedPayload(u *rdb.UnsupportedError) string {
	return "ERR the payload holds a " + u.Type + ", a type this server does not have"
}
