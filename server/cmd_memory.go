package server

import (
	"runtime/debug"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

// cmdMemoryUsage implements MEMORY USAGE key [SAMPLES count]: what the key
// is charged against --max-memory. SAMPLES is checked and has nothing to
// sample.
func cmdMemoryUsage(c *Conn, args [][]byte) {
	for j := 3; j < len(args); j++ {
		if !resp.EqualFold(args[j], "samples") || j+1 == len(args) {
			c.w.Error(commands.ErrSyntax)
			return
		}
		j++
		if _, ok := commands.CountArg(c.w, args[j], 0); !ok {
			return
		}
	}
	if cost, ok := c.x.Store.Cost(args[2]); ok {
		c.w.Int(cost)
	} else {
		c.w.Null()
	}
}

// keyCount is the live keys of every database, as Redis's keys.count.
func (s *Server) keyCount() int {
	n := 0
	for db := range s.store.Databases() {
		n += s.store.DB(db).Len()
	}
	return n
}

// cmdMemoryStats reports the fields of Redis's MEMORY STATS that apply:
// the memory used (INFO's used_memory), and the keys and what they are
// charged.
func cmdMemoryStats(c *Conn, _ [][]byte) {
	heap, _ := goMemory()
	st := c.srv.store.Stats()
	used := usedMemory(heap, st)
	keys := int64(c.srv.keyCount())
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
	commands.WriteHelp(c.w, "MEMORY",
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
