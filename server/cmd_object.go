package server

import (
	"runtime/debug"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// OBJECT and MEMORY: what Redis's introspection commands can say about a
// store of plain strings.

// objectEncoding is the encoding Redis gives a string value set by SET:
// "int" for a decimal integer in int64's range, written as Redis writes
// one, "embstr" up to 44 bytes and "raw" beyond. Redis also keeps a value
// changed in place (APPEND, SETRANGE, SETBIT) as "raw" however short; the
// store keeps no such history, so those read as SET would have made them;
// but an HLL is "raw", as the PF commands make every one they touch.
func objectEncoding(v []byte) string {
	if _, ok := resp.ParseInt(v); ok && len(v) <= 20 {
		return "int"
	}
	if len(v) <= 44 && !engine.IsHLL(v) {
		return "embstr"
	}
	return "raw"
}

// objectLookup finds OBJECT's key without making it more likely to stay,
// as Redis looks it up, or replies nil.
func objectLookup(c *Conn, key []byte) (engine.Envelope, bool) {
	env, ok := c.srv.store.LookupNoTouch(key)
	if !ok {
		c.w.Null()
	}
	return env, ok
}

func cmdObjectEncoding(c *Conn, args [][]byte) {
	env, ok := objectLookup(c, args[2])
	switch {
	case !ok:
	case env.Type == engine.TypeString:
		c.w.BulkString(objectEncoding(env.Value))
	default:
		// A hash or set: the store knows how Redis would hold it.
		if enc, found := c.srv.store.Encoding(args[2]); found {
			c.w.BulkString(enc)
		} else {
			c.w.Null() // removed meanwhile
		}
	}
}

// cmdObjectRefCount replies 1: values are not shared between keys, as in
// Redis with an LFU maxmemory-policy, which does not share integers.
func cmdObjectRefCount(c *Conn, args [][]byte) {
	if _, ok := objectLookup(c, args[2]); ok {
		c.w.Int(1)
	}
}

// cmdObjectFreq answers as Redis without an LFU policy does: ristretto's
// TinyLFU keeps its frequency sketch to itself, so there is no per-key
// counter to report.
func cmdObjectFreq(c *Conn, args [][]byte) {
	if _, ok := objectLookup(c, args[2]); ok {
		c.w.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	}
}

// cmdObjectIdleTime answers as Redis with the allkeys-lfu policy INFO and
// CONFIG report: no access time is kept per key.
func cmdObjectIdleTime(c *Conn, args [][]byte) {
	if _, ok := objectLookup(c, args[2]); ok {
		c.w.Error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	}
}

func cmdObjectHelp(c *Conn, _ [][]byte) {
	writeHelp(c, "OBJECT",
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

// cmdMemoryUsage implements MEMORY USAGE key [SAMPLES count]: what the key
// is charged against --max-memory. SAMPLES is checked and has nothing to
// sample.
func cmdMemoryUsage(c *Conn, args [][]byte) {
	for j := 3; j < len(args); j++ {
		if !equalFold(args[j], "samples") || j+1 == len(args) {
			c.w.Error(errSyntax)
			return
		}
		j++
		if _, ok := countArg(c, args[j], 0); !ok {
			return
		}
	}
	if cost, ok := c.srv.store.Cost(args[2]); ok {
		c.w.Int(cost)
	} else {
		c.w.Null()
	}
}

// cmdMemoryStats reports the fields of Redis's MEMORY STATS that apply:
// the memory used (INFO's used_memory), and the keys and what they are
// charged.
func cmdMemoryStats(c *Conn, _ [][]byte) {
	heap, _ := goMemory()
	st := c.srv.store.Stats()
	used := usedMemory(heap, st)
	keys := int64(c.srv.store.Len())
	perKey := int64(0)
	if keys > 0 {
		perKey = st.Cost / keys
	}
	c.w.Map(4)
	c.w.BulkString("total.allocated")
	c.w.Int(used)
	c.w.BulkString("keys.count")
	c.w.Int(keys)
	c.w.BulkString("keys.bytes-per-key")
	c.w.Int(perKey)
	c.w.BulkString("dataset.bytes")
	c.w.Int(st.Cost)
}

// cmdMemoryDoctor gives Redis's report for a healthy instance, or for one
// too small to judge (under 5 MB of keys, where Redis counts its whole
// allocation).
func cmdMemoryDoctor(c *Conn, _ [][]byte) {
	report := "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
	if c.srv.store.Stats().Cost < 5<<20 {
		report = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. " +
			"Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
	}
	c.w.Verbatim("txt", report)
}

func cmdMemoryMallocStats(c *Conn, _ [][]byte) {
	c.w.BulkString("Stats not supported for the current allocator")
}

// cmdMemoryPurge returns freed memory to the operating system, as jemalloc's
// purge does for Redis.
func cmdMemoryPurge(c *Conn, _ [][]byte) {
	debug.FreeOSMemory()
	c.w.OK()
}

func cmdMemoryHelp(c *Conn, _ [][]byte) {
	writeHelp(c, "MEMORY",
		"DOCTOR",
		"    Return memory problems reports.",
		"MALLOC-STATS",
		"    Return internal statistics report from the memory allocator.",
		"PURGE",
		"    Attempt to purge dirty pages for reclamation by the allocator.",
		"STATS",
		"    Return information about the memory usage of the server.",
		"USAGE <key> [SAMPLES <count>]",
		"    Return memory in bytes used by <key> and its value. Nested values are",
		"    sampled up to <count> times (default: 5, 0 means sample all).")
}
