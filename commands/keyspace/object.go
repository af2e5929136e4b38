package keyspace

import (
	"math"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// OBJECT and MEMORY: what Redis's introspection commands can say about a
// store of plain strings.

// objectLookup finds OBJECT's key without making it more likely to stay,
// as Redis looks it up, or replies nil.
func objectLookup(c *commands.Ctx, key []byte) (engine.Envelope, bool) {
	env, ok := c.Store.Inspect(key)
	if !ok {
		c.W.Null()
	}
	return env, ok
}

// cmdObjectEncoding answers how Redis would hold the key's value: the
// store knows.
func cmdObjectEncoding(c *commands.Ctx, args [][]byte) {
	if enc, found := c.Store.Encoding(args[2]); found {
		c.W.BulkString(enc)
	} else {
		c.W.Null()
	}
}

// sharedRefCount is the count Redis answers for one of its shared
// objects (OBJ_SHARED_REFCOUNT).
const sharedRefCount = math.MaxInt32

// cmdObjectRefCount answers what Redis would: its shared count for an
// integer string from 0 to 9999, one of the objects Redis shares between
// keys unless a memory bound with an LRU or LFU policy needs each key's
// own access time; else 1, values here being each key's own.
func cmdObjectRefCount(c *commands.Ctx, args [][]byte) {
	env, ok := objectLookup(c, args[2])
	if !ok {
		return
	}
	n := int64(1)
	policy := c.Store.EvictionPolicy()
	if env.Type == engine.TypeString && (c.Store.MaxMemory() == 0 || !policy.LFU() && !policy.LRU()) {
		enc, _ := c.Store.Encoding(args[2])
		if v, isInt := resp.ParseInt(env.Value); isInt && enc == "int" && v >= 0 && v < 10000 {
			n = sharedRefCount
		}
	}
	c.W.Int(n)
}

// cmdObjectFreq answers the key's logarithmic access counter with the
// allkeys-lfu policy, and Redis's error with another (the store's access
// stamps, engine.Store.AccessFrequency); a missing key is nil first.
func cmdObjectFreq(c *commands.Ctx, args [][]byte) {
	freq, found, err := c.Store.AccessFrequency(args[2])
	writeAccess(c, freq, found, err)
}

// cmdObjectIdleTime answers the seconds since the key's last access
// without an LFU policy, and Redis's error with one
// (engine.Store.IdleTime).
func cmdObjectIdleTime(c *commands.Ctx, args [][]byte) {
	idle, found, err := c.Store.IdleTime(args[2])
	writeAccess(c, idle, found, err)
}

// writeAccess writes OBJECT FREQ's or IDLETIME's reply: nil for a missing
// key, as Redis looks the key up before it checks the policy.
func writeAccess(c *commands.Ctx, n int64, found bool, err error) {
	switch {
	case !found:
		c.W.Null()
	case err != nil:
		commands.WriteError(c.W, err)
	default:
		c.W.Int(n)
	}
}

func cmdObjectHelp(c *commands.Ctx, _ [][]byte) {
	commands.WriteHelp(c.W, "OBJECT",
		"ENCODING <key>",
		"    Return the kind of internal representation used in order to store the value",
		"    associated with a <key>.",
		"FREQ <key>",
		"    Return the access frequency index of the <key>. The returned integer is",
		"    proportional to the logarithm of the recent access frequency of the key.",
		"IDLETIME <key>",
		"    Return the idle time of the <key>, that is the approximated number of",
		"    seconds elapsed since the last access to the key.",
		"REFCOUNT <key>",
		"    Return the number of references of the value associated with the specified",
		"    <key>.")
}
